"""TL515 torchvision-pretrained: ``torchvision.models.resnet50(pretrained=True)``: the
``pretrained=`` / ``pretrained_backbone=`` flags torchvision 0.13 replaced by ``weights=``."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, cst, edits, is_false,
    is_true, torchvision_weights,
)

_PREFIX = "torchvision.models."
_NEW = {"pretrained": "weights", "pretrained_backbone": "weights_backbone"}
# The last part of every builder's path: most calls are something else and are left
# without resolving their name.
_BUILDER_NAMES = frozenset(path.rsplit(".", 1)[-1] for path in torchvision_weights.PATHS)


class TorchvisionPretrained(Rule):
    code = "TL515"
    references = (
        ("torchvision: model weights", "https://pytorch.org/vision/stable/models.html"),
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    name = "torchvision-pretrained"
    torchfix = ("TOR201",)
    summary = ("`torchvision.models.resnet50(pretrained=True)`: `pretrained=` and `pretrained_backbone=` are "
               "deprecated since torchvision 0.13, use `weights=` and `weights_backbone=`")
    message = "{old} of torchvision's `{builder}` {verb} deprecated since torchvision 0.13: use {new}"
    fix = Applicability.SAFE
    since = "1.12"
    requires = (r"torchvision", r"pretrained|\(\s*(True|False)\b")
    docs = f"""
    ## What it does
    Flags a call of a torchvision model builder (`torchvision.models.resnet50`,
    `models.detection.fasterrcnn_resnet50_fpn`, `models.resnet.resnet101` through the
    submodule, a builder imported by name...) given the deprecated `pretrained` flag, by
    keyword or as the first positional argument, or `pretrained_backbone` (by keyword or
    at its old position). The builder is resolved through the file's imports: a
    project's own `resnet50(pretrained=True)`, or timm's
    `timm.create_model(name, pretrained=True)`, is not torchvision's and is left alone.
    The builders and what `True` stands for are read from torchvision
    {torchvision_weights.TORCHVISION_VERSION}'s own source (its `@handle_legacy_interface`
    decorators) by `scripts/gen_torchvision_weights.py`.

    ## Why is this bad?
    torchvision 0.13 (June 2022) replaced the flags by the multi-weight API: every call
    with `pretrained=` prints a `UserWarning` ("The parameter 'pretrained' is deprecated
    since 0.13 and may be removed in the future"), and the flag does not say *which*
    weights are loaded: `pretrained=True` silently means the oldest set
    (`IMAGENET1K_V1`), while `DEFAULT` now points at better ones.

    ## What to do instead
    Name the weights: `weights=models.ResNet50_Weights.IMAGENET1K_V1` is exactly what
    `pretrained=True` loads (`ResNet50_Weights.DEFAULT` for the best available), and
    `weights=None` is `pretrained=False`; `weights_backbone=` likewise for
    `pretrained_backbone=`.

    ## Fix (safe)
    Only where the flag is a literal `True` or `False`: it becomes
    `weights=models.<Weights>.<NAME>` (the weights torchvision maps `True` to) or
    `weights=None`, and `from torchvision import models` is added when the file does not
    import it. A flag that is a variable, a positional flag followed by other positional
    arguments, a `models` name bound to something else, and the builders whose `True`
    has no single weights (the quantized builders, which pick by `quantize=`;
    `vit_h_14` and `regnet_y_128gf`, which have no `IMAGENET1K_V1`) are reported without
    a fix.

    References: torchvision 0.13 release notes, "Multi-weight support API"
    (https://github.com/pytorch/vision/releases/tag/v0.13.0);
    https://pytorch.org/vision/stable/models.html. TorchFix: TOR201.
    """
    bad = (
        Bad(
            """
            import torchvision

            backbone = torchvision.models.resnet50(pretrained=True)
            detector = torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=True)
            """,
            reported=((3, "torchvision.models.resnet50(pretrained=True)"),
                      (4, "torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained=False, "
                          "pretrained_backbone=True)")),
            fixed="""
            import torchvision
            from torchvision import models

            backbone = torchvision.models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)
            detector = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=models.ResNet50_Weights.IMAGENET1K_V1)
            """,
        ),
        Bad(
            """
            from torchvision import models
            from torchvision.models.segmentation import deeplabv3_resnet101

            def build(use_pretrained):
                encoder = models.vgg16(True)
                head = deeplabv3_resnet101(pretrained=use_pretrained)
                return encoder, head
            """,
            reported=((5, "models.vgg16(True)"), (6, "deeplabv3_resnet101(pretrained=use_pretrained)")),
            fixed="""
            from torchvision import models
            from torchvision.models.segmentation import deeplabv3_resnet101

            def build(use_pretrained):
                encoder = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1)
                head = deeplabv3_resnet101(pretrained=use_pretrained)
                return encoder, head
            """,
        ),
    )
    good = (
        """
        from torchvision import models

        backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V1)
        scratch = models.resnet50(weights=None)
        detector = models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None)
        """,
        """
        import timm

        def resnet50(pretrained=False):
            return timm.create_model("resnet50", pretrained=pretrained)

        model = resnet50(pretrained=True)
        other = timm.create_model("vit_base_patch16_224", pretrained=True)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = func.attr.value if isinstance(func, cst.Attribute) else \
            func.value if isinstance(func, cst.Name) else ""
        if called not in _BUILDER_NAMES:
            return  # most calls: no need to resolve the name
        qualname = self.ctx.qualname(func) or ""
        if not qualname.startswith(_PREFIX):
            return
        builder = torchvision_weights.PATHS.get(qualname[len(_PREFIX):])
        if builder is None:
            return
        positions = torchvision_weights.POSITIONS[builder]
        found = {old: arg for old in ("pretrained", "pretrained_backbone")
                 if old in positions and (arg := _argument(node, old, positions[old])) is not None}
        if not found:
            return
        olds = list(found)
        self.report(
            node, evidence=self.ctx.origin(func, qualname), fix=self._fix(node, builder, found),
            old=" and ".join(f"`{old}=`" if found[old].keyword is not None else f"the positional `{old}`"
                             for old in olds),
            verb="are" if len(olds) > 1 else "is", new=" and ".join(f"`{_NEW[old]}=`" for old in olds),
            builder=qualname,
        )

    def _fix(self, call: cst.Call, builder: str, found: dict[str, cst.Arg]) -> Fix:
        weights = torchvision_weights.BUILDERS[builder]
        given = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        replaced: list[tuple[cst.Arg, str, str]] = []
        needs_models = False
        for old, arg in found.items():
            new = _NEW[old]
            if new in given or not (is_true(arg.value) or is_false(arg.value)):
                continue
            if arg.keyword is None and _later_positional(call, arg):
                continue  # `resnet50(True, False)`: a keyword there would precede a positional
            if is_false(arg.value):
                replaced.append((arg, new, "None"))
            elif weights.get(old) is not None:
                replaced.append((arg, new, f"models.{weights[old]}"))
                needs_models = True
        if not replaced:
            return Fix(Applicability.DISPLAY_ONLY, "Pass `weights=` (weights or None) instead", ())
        imports: tuple[Edit, ...] = ()
        if needs_models:
            bound = self._models_binding()
            if bound is None:
                return Fix(Applicability.DISPLAY_ONLY,
                           "Pass `weights=` (`models` is another name here: import torchvision's models)", ())
            if not bound:
                imports = (self._import_models(),)
        described = ", ".join(f"`{new}={value}`" for _, new, value in replaced)
        changes: list[Edit] = []
        for arg, new, value in replaced:
            if arg.keyword is not None:
                changes += [edits.replace(arg.keyword, new), edits.replace(arg.value, value)]
            else:
                changes.append(edits.replace(arg.value, f"{new}={value}"))
        return Fix(Applicability.SAFE, f"Pass {described}", (*changes, *imports))

    def _models_binding(self) -> Optional[bool]:
        """True when the module binds ``models`` to torchvision.models by an import, False
        when nothing binds ``models``, None when something else does."""
        return self.ctx.binds_as_import("models", "torchvision.models")

    def _import_models(self) -> Edit:
        """``from torchvision import models`` after the module's first block of imports
        (where libcst's AddImportsVisitor, which TorchFix uses, puts it)."""
        body = list(self.ctx.module.body)
        index = 1 if body and _is_docstring(body[0]) else 0
        while index < len(body) and _is_import(body[index]):
            index += 1
        statement = "from torchvision import models"
        if index > 0 and _is_import(body[index - 1]):
            return edits.insert_after(body[index - 1], self.ctx.newline + statement)
        if index < len(body):
            return edits.insert_before(body[index], statement + self.ctx.newline)
        return edits.insert_after(body[-1], self.ctx.newline + statement)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or(
            "deprecated since 0.13",
            "torchvision gave no deprecation warning here (not installed, or a version "
            "before 0.13 where the flag is current)",
            source="torchvision",
        )


def _argument(call: cst.Call, name: str, position: int) -> Optional[cst.Arg]:
    """The argument ``name=`` of ``call``, or the one at ``position`` among the positional
    ones (when no ``*args`` comes before it)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    index: Optional[int] = 0
    for arg in call.args:
        if arg.star == "*":
            index = None  # the positions after `*args` are unknown
        elif arg.keyword is None and not arg.star and index is not None:
            if index == position:
                return arg
            index += 1
    return None


def _later_positional(call: cst.Call, arg: cst.Arg) -> bool:
    after = False
    for other in call.args:
        if other is arg:
            after = True
        elif after and other.keyword is None and other.star != "**":
            return True
    return False


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _is_import(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)))
