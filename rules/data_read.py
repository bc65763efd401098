"""TL101 data-read: reading ``tensor.data``."""

import libcst as cst

from torchlint.data_attribute import DataUse, base_evidence, data_access
from torchlint.rule import Rule


class DataRead(Rule):
    code = "TL101"
    name = "data-read"
    summary = "reading `t.data` of a tensor: an alias autograd does not track"
    message = "`{base}.data` is an alias autograd does not track; use `{base}.detach()`"

    docs = """
    ## What it does
    Flags reads of the `.data` attribute of a tensor, such as `x.data.cpu().numpy()`
    or `y = x.data`. Writes through `.data` are TL102, assignments to it TL103, and
    `loss.data[0]` on a 0-dim loss TL203.

    ## Why is this bad?
    `x.data` returns a tensor that shares `x`'s storage but is invisible to autograd:
    if anything later writes into it, the gradients computed from `x` are silently
    wrong, with no error. `x.detach()` returns the same alias, but autograd keeps
    counting writes to it and raises ("one of the variables needed for gradient
    computation has been modified by an inplace operation") instead of returning a
    wrong gradient. `.data` is a leftover of the `Variable` API from before PyTorch 0.4.

    Only objects the engine can show to be tensors are reported: `self.data` of a
    dataset, `packed.data` of a `PackedSequence`, `array.data` of numpy and
    `torch.utils.data` are not.

    ## What to do instead
    Use `.detach()`, which returns the same alias but lets autograd catch writes.
    """
    bad = (
        """
        import torch

        x = torch.rand(2, 3, requires_grad=True)
        y = x.data
        """,
        """
        import torch.nn as nn

        def predict(model: nn.Module, batch):
            output = model(batch)
            return output.data.cpu().numpy()
        """,
    )
    good = (
        """
        import torch

        x = torch.rand(2, 3, requires_grad=True)
        y = x.detach()
        """,
        """
        import torch.utils.data

        class Frames(torch.utils.data.Dataset):
            def __init__(self, data):
                self.data = data

            def __getitem__(self, index):
                return self.data[index]
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "data":
            return
        access = data_access(self.ctx, node)
        if access.use not in (DataUse.READ, DataUse.INDEX_ZERO):
            return
        evidence = base_evidence(self.ctx, node)
        if evidence is None:
            return
        if access.use is DataUse.INDEX_ZERO and evidence.scalar:
            return  # `loss.data[0]` on a 0-dim loss: TL203 reports it
        if access.metadata is not None:
            self.report(
                node,
                "`{base}.data.{what}` does not need `.data`; use `{base}.{what}`",
                evidence=evidence, base=node.value, what=access.metadata,
            )
            return
        self.report(node, evidence=evidence, base=node.value)
