"""TL403 tensor-from-tensor: ``torch.tensor(t)`` where ``t`` already is a tensor."""

import libcst as cst

from torchlint.nodes import positional_args
from torchlint.rule import Rule
from torchlint.values import Kind


class TensorFromTensor(Rule):
    code = "TL403"
    name = "tensor-from-tensor"
    summary = "`torch.tensor(t)` on a tensor: copies it, cuts the gradient, and warns"
    message = "`{call}` copies a tensor and cuts it from the autograd graph (torch warns); use `{fixed}`"
    docs = """
    ## What it does
    Flags `torch.tensor(t)` where `t` is already a tensor, and `torch.tensor([a, b])`
    where the elements are tensors.

    ## Why is this bad?
    `torch.tensor` always copies its data and the copy never requires grad: whatever
    gradient should have flowed back into `t` is silently cut. PyTorch warns ("To copy
    construct from a tensor, it is recommended to use sourceTensor.detach().clone()"),
    but only once per process, so the warning is easy to miss. On a list of tensors it
    also goes through Python numbers one element at a time.

    ## What to do instead
    `t.detach().clone()` when a detached copy is meant (add `.to(dtype=..., device=...)`
    for the other arguments), `t.clone()` when the gradient should flow, and
    `torch.stack([a, b])` for a list of tensors.
    """
    bad = (
        """
        import torch

        weights = torch.ones(3, requires_grad=True)
        copy = torch.tensor(weights)
        doubled = torch.tensor(weights * 2, dtype=torch.float64)
        """,
    )
    good = (
        """
        import torch

        weights = torch.ones(3, requires_grad=True)
        copy = weights.detach().clone()
        from_list = torch.tensor([1.0, 2.0, 3.0])
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != "torch.tensor":
            return
        args = positional_args(node)
        if len(args) != 1 or any(arg.star for arg in node.args):
            return
        data = args[0].value
        options = [self.ctx.snippet(arg) for arg in node.args if arg.keyword is not None
                   and arg.keyword.value in ("dtype", "device")]
        requires_grad = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value == "requires_grad"]
        evidence = self.ctx.tensor(data)
        if evidence is not None:
            fixed = f"{self.ctx.receiver(data)}.detach().clone()"
            if options:
                fixed += f".to({', '.join(options)})"
            if requires_grad:
                fixed += ".requires_grad_()"
            self.report(node, evidence=evidence, call=node, fixed=fixed)
            return
        if isinstance(data, (cst.List, cst.Tuple)) and data.elements:
            values = [self.ctx.infer(element.value) for element in data.elements]
            if all(value is not None and value.kind is Kind.TENSOR for value in values):
                self.report(
                    node,
                    "`{call}` builds a tensor from tensors one Python number at a time and cuts their "
                    "gradients; use `{fixed}`",
                    evidence=values[0], call=node,
                    fixed=f"torch.stack({self.ctx.snippet(data)})",
                )
