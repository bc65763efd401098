"""TL103 data-assign: ``x.data = y``."""

import libcst as cst

from torchlint.data_attribute import DataUse, base_evidence, data_access
from torchlint.rule import Rule


class DataAssign(Rule):
    code = "TL103"
    name = "data-assign"
    summary = "`x.data = y` swaps a tensor's storage behind autograd (the shape may change silently)"
    message = (
        "Assigning to `{base}.data` swaps its storage behind autograd's back and may change its "
        "shape silently; use `with torch.no_grad(): {base}.copy_(...)`"
    )
    docs = """
    ## What it does
    Flags assignments to the `.data` attribute of a tensor: `w.data = new_w`.

    ## Why is this bad?
    Assigning `.data` replaces the tensor's storage without autograd knowing: any
    graph that saved the old tensor now computes gradients from something else, and
    nothing checks that the new value has the same shape, dtype or device. A
    parameter can silently change shape (the optimizer's state then no longer
    matches it), or move to another device.

    ## What to do instead
    Copy the values in place under `torch.no_grad()`: `with torch.no_grad():
    w.copy_(new_w)`. `copy_` checks that the shapes are compatible. To really give a
    parameter a new shape, create a new `nn.Parameter` and rebuild the optimizer.
    """
    bad = (
        """
        import torch
        import torch.nn as nn

        layer = nn.Linear(4, 2)
        layer.weight.data = torch.zeros(2, 4)
        """,
    )
    good = (
        """
        import torch
        import torch.nn as nn

        layer = nn.Linear(4, 2)
        with torch.no_grad():
            layer.weight.copy_(torch.zeros(2, 4))
        """,
        """
        class Batch:
            def __init__(self, data):
                self.data = data
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        if data_access(self.ctx, node).use is not DataUse.ASSIGN:
            return
        evidence = base_evidence(self.ctx, node)
        if evidence is not None:
            self.report(node, evidence=evidence, base=node.value)
