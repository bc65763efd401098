"""TL517 torchvision-models-import: ``import torchvision.models as models`` where ``from
torchvision import models`` says the same thing plainly (also ``datasets``, ``transforms``)."""

from __future__ import annotations

from torchlint.framework.api import NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits

_MODULES = ("datasets", "models", "transforms")


class TorchvisionModelsImport(Rule):
    code = "TL517"
    name = "torchvision-models-import"
    torchfix = ("TOR203",)
    summary = ("`import torchvision.models as models` (or `datasets`, `transforms`): write "
               "`from torchvision import models`")
    message = "`import torchvision.{module} as {module}` is `from torchvision import {module}`, said plainly"
    fix = Applicability.SAFE
    requires = (r"import\s+torchvision\.(datasets|models|transforms)\s+as\b",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `import torchvision.models as models`, and the same for `torchvision.datasets`
    and `torchvision.transforms`: an import of a torchvision submodule under its own
    name. Only the first name of an `import` statement is looked at, as TorchFix does; an
    alias to another name (`import torchvision.models as cnn`) is left alone.

    ## Why is this bad?
    It is a style rule: the statement binds the same module as `from torchvision import
    models`, in a roundabout way (pylint calls it `consider-using-from-import`). Nothing
    behaves differently when it runs.

    ## What to do instead
    `from torchvision import models`.

    ## Fix (safe)
    The statement is rewritten as `from torchvision import models` when it imports that
    one name; a statement that imports other modules too (`import torchvision.models as
    models, torch`) is reported without a fix.

    References: pylint `consider-using-from-import` (R0402). TorchFix: TOR203.
    """
    bad = (
        Bad(
            """
            import torch
            import torchvision.models as models
            import torchvision.transforms as transforms, torchvision.datasets as datasets

            model = models.resnet18(weights=None)
            augment = transforms.RandomHorizontalFlip()
            """,
            reported=((2, "import torchvision.models as models"),
                      (3, "import torchvision.transforms as transforms, torchvision.datasets as datasets")),
            fixed="""
            import torch
            from torchvision import models
            import torchvision.transforms as transforms, torchvision.datasets as datasets

            model = models.resnet18(weights=None)
            augment = transforms.RandomHorizontalFlip()
            """,
        ),
    )
    good = (
        """
        from torchvision import models, transforms
        import torchvision.models as tvm
        import torchvision.models
        import torch.nn as nn

        model = models.resnet18(weights=None)
        other = tvm.vgg11(weights=None)
        """,
    )

    def visit_Import(self, node: cst.Import) -> None:
        first = node.names[0]
        name, asname = first.name, first.asname
        if not (isinstance(name, cst.Attribute) and isinstance(name.value, cst.Name)
                and name.value.value == "torchvision" and name.attr.value in _MODULES
                and asname is not None and isinstance(asname.name, cst.Name)
                and asname.name.value == name.attr.value):
            return
        module = name.attr.value
        if len(node.names) == 1:
            fix = Fix(Applicability.SAFE, f"Write `from torchvision import {module}`",
                      (edits.replace(node, f"from torchvision import {module}"),))
        else:
            fix = Fix(Applicability.DISPLAY_ONLY,
                      f"Import `{module}` on its own line: `from torchvision import {module}`", ())
        self.report(node, fix=fix, module=module)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "a style rule: the two imports bind the same module, nothing a run can show")
