"""TL516 torchvision-to-tensor: ``torchvision.transforms.v2.ToTensor``, deprecated: it warns
when built; ``v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`` replaces it."""

from __future__ import annotations

from torchlint.framework.api import Bad, Observation, Rule, Verdict, cst, dotted, imported_module

_QUALNAME = "torchvision.transforms.v2.ToTensor"
_REPLACEMENT = "v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])"


class TorchvisionToTensor(Rule):
    code = "TL516"
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    name = "torchvision-to-tensor"
    torchfix = ("TOR202",)
    since = "2.1"  # torchvision 0.16
    summary = (f"`torchvision.transforms.v2.ToTensor` is deprecated: use `{_REPLACEMENT}`")
    message = f"`{{name}}` is `{_QUALNAME}`, deprecated: use `{_REPLACEMENT}`"
    requires = (r"torchvision", r"\bToTensor\b")
    docs = f"""
    ## What it does
    Flags the import of `torchvision.transforms.v2.ToTensor` (`from
    torchvision.transforms.v2 import ToTensor`, with or without `as`) and every use of it
    through a module (`v2.ToTensor`, `transforms.ToTensor` after `import
    torchvision.transforms.v2 as transforms`, `torchvision.transforms.v2.ToTensor`). The
    name is resolved through the file's imports: the classic
    `torchvision.transforms.ToTensor` (v1), which is not deprecated, is left alone, and
    so is a `ToTensor` of another library (albumentations' `ToTensorV2`, a project's own).

    ## Why is this bad?
    The v2 transforms deprecated `ToTensor` (torchvision 0.16, when `v2` became stable):
    building one warns "The transform `ToTensor()` is deprecated and will be removed in
    a future release". It only exists in v2 to ease the move from v1, and it mixes two
    steps v2 keeps apart: turning the image into a tensor and converting its dtype with
    scaling (`uint8` 0..255 to `float32` 0..1).

    ## What to do instead
    `{_REPLACEMENT}`: the same output, up to float precision, as the docstring of
    `v2.ToTensor` says.

    ## Fix
    None: the replacement is two transforms inside a `Compose`, and `torch` must be
    imported; the finding shows what to write.

    References: https://pytorch.org/vision/stable/generated/torchvision.transforms.v2.ToTensor.html;
    torchvision 0.16 release notes (https://github.com/pytorch/vision/releases/tag/v0.16.0).
    TorchFix: TOR202.
    """
    bad = (
        Bad(
            """
            from torchvision.transforms import v2
            from torchvision.transforms.v2 import Resize, ToTensor

            train = v2.Compose([v2.RandomHorizontalFlip(), v2.ToTensor()])
            test = v2.Compose([Resize(256), ToTensor()])
            """,
            reported=((2, "ToTensor"), (4, "v2.ToTensor")),
        ),
    )
    good = (
        """
        import torch
        import torchvision.transforms as T
        from torchvision.transforms import v2

        classic = T.Compose([T.Resize(256), T.ToTensor()])
        modern = v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])
        """,
        """
        from albumentations.pytorch import ToTensorV2

        class ToTensor:
            def __call__(self, image):
                return image

        steps = [ToTensor(), ToTensorV2()]
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = imported_module(node)
        if module is None:
            return
        for alias in node.names:
            if f"{module}.{dotted(alias.name)}" == _QUALNAME:
                self.report(alias, name=alias.name)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "ToTensor":
            return  # most attributes: no need to resolve the name
        if isinstance(self.ctx.parent(node), (cst.ImportFrom, cst.ImportAlias)):
            return
        if self.ctx.qualname(node) == _QUALNAME:
            self.report(node, evidence=self.ctx.origin(node, _QUALNAME), name=node)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or(
            "ToTensor()",
            "torchvision gave no deprecation warning here (an import does not warn: "
            "building the transform does; torchvision may be missing or older)",
            source="torchvision",
        )

