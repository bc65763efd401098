"""TL402 clone-detach-order: ``x.clone().detach()`` instead of ``x.detach().clone()``."""

import libcst as cst

from torchlint.rule import Rule
from torchlint.values import Step


class CloneDetachOrder(Rule):
    code = "TL402"
    name = "clone-detach-order"
    summary = "`x.clone().detach()` records a useless copy in the autograd graph; use `x.detach().clone()`"
    message = "`{expr}` records the copy in the autograd graph and then detaches it; use `{fixed}`"
    docs = """
    ## What it does
    Flags `x.clone().detach()` (and `torch.clone(x).detach()`) on a tensor.

    ## Why is this bad?
    Both orders give the same values, but `clone()` on a tensor that requires grad
    is recorded in the autograd graph (a `CloneBackward` node) before `detach()`
    throws it away: work and memory for nothing. PyTorch's own warning for copying a
    tensor recommends `x.detach().clone()`. This is a style and efficiency rule: the
    results are identical.

    Where `clone()` records nothing the order does not matter, so the rule stays
    quiet: under `torch.no_grad()` (optimizer steps, and functions the file only
    calls from there) and on tensors known to be outside the graph (`.data`, `.grad`, tensors created without `requires_grad`).

    ## What to do instead
    `x.detach().clone()`.
    """
    bad = (
        """
        import torch

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        snapshot = x.clone().detach()
        """,
    )
    good = (
        """
        import torch

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        snapshot = x.detach().clone()
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "detach" and not node.args):
            return
        inner = func.value
        if not isinstance(inner, cst.Call):
            return
        if isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "clone" and not inner.args:
            source = inner.func.value
        elif self.ctx.qualname(inner.func) == "torch.clone" and len(inner.args) == 1:
            source = inner.args[0].value
        else:
            return
        if self.ctx.inference.runs_without_grad(node):
            return  # the copy is not recorded, so the order does not matter
        value = self.ctx.tensor(source)
        evidence = value
        if value is None:
            if not self.ctx.inference.uses_torch or self.ctx.infer(source) is not None:
                return
            # Only tensors have both `clone()` and `detach()`.
            evidence = (Step(node, "`{code}`: only tensors have both `clone()` and `detach()`"),)
        elif value.attached is False:
            return  # not in the graph: nothing is recorded, `.detach()` is merely redundant
        message = self.message
        if value is None or value.attached is None:
            message = ("`{expr}` records the copy in the autograd graph (when `{source}` requires grad) and then "
                       "detaches it; use `{fixed}`")
        fixed = f"{self.ctx.receiver(source)}.detach().clone()"
        self.report(node, message, evidence=evidence, expr=node, source=source, fixed=fixed)
