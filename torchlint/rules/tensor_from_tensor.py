"""TL403 tensor-from-tensor: ``torch.tensor(t)`` where ``t`` already is a tensor."""

from typing import Callable, Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Verdict, cst, edits,
    is_false, is_true, positional_args, torch_api,
)


class TensorFromTensor(Rule):
    code = "TL403"
    name = "tensor-from-tensor"
    summary = "`torch.tensor(t)` on a tensor: copies it, cuts the gradient, and warns"
    fix = Applicability.SAFE
    requires = (r"\btensor\b",)
    references = (
        ("torch.tensor", "https://pytorch.org/docs/stable/generated/torch.tensor.html"),
    )
    requires_may_be_imported = True
    message = "`{call}` copies a tensor and cuts it from the autograd graph (torch warns); use `{fixed}`"
    list_message = (
        "`{call}` copies the values of `{data}`, which holds tensors that require grad ({source}, line {line}), "
        "into a new leaf: no gradient flows back to them (`requires_grad=True` on the copy does not help); use "
        "`torch.stack(..)` or `torch.cat(..)` of the tensors"
    )
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

    ## Fix (safe)
    `torch.tensor(t)` becomes `t.detach().clone()`: a new tensor with the same values,
    dtype, device and strides that requires no grad, without the warning. `dtype=` and
    `device=` move into `.to(dtype=..., device=...)` after the copy, and
    `requires_grad=True` becomes `.requires_grad_()` at the end. Calls with other
    arguments (`pin_memory=`, `names=`) get no fix, nor does `torch.tensor([a, b])` on a
    list of tensors: `torch.stack` keeps the gradients that `torch.tensor` cuts, and
    needs tensors of one shape. The fix is unsafe when a comment inside the call would
    be lost. It assumes no default device is set (`torch.set_default_device`,
    `with torch.device(...)`): `torch.tensor(t)` moves the copy there, `.clone()` keeps
    it on `t`'s device.
    """
    bad = (
        Bad(
            """
            import torch

            weights = torch.ones(3, requires_grad=True)
            copy = torch.tensor(weights)
            doubled = torch.tensor(weights * 2, dtype=torch.float64)
            """,
            reported=(
                (4, "torch.tensor(weights)"),
                (5, "torch.tensor(weights * 2, dtype=torch.float64)"),
            ),
            fixed="""
            import torch

            weights = torch.ones(3, requires_grad=True)
            copy = weights.detach().clone()
            doubled = (weights * 2).detach().clone().to(dtype=torch.float64)
            """,
        ),
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
        qualname = self.ctx.qualname(node.func)
        if qualname not in ("torch.tensor", "torch.as_tensor"):
            return
        args = positional_args(node)
        if len(args) != 1 or any(arg.star for arg in node.args):
            return
        data = args[0].value
        if self._copies_graph_tensors(node, data):
            return
        if qualname != "torch.tensor":
            return
        evidence = self.ctx.tensor(data)
        if evidence is not None:
            fixed = _copy(node, data, self.ctx.snippet, self.ctx.receiver)
            code = _copy(node, data, self.ctx.code, self.ctx.receiver_code)
            fix = None
            if all(arg.keyword is None or arg.keyword.value in torch_api.TENSOR_CONVERSION_KEYWORDS
                   for arg in node.args):
                # A comment between the arguments would be lost (the arguments keep theirs).
                kept = sum(self.ctx.comment_count(arg.value) for arg in node.args)
                safe = self.ctx.comment_count(node) == kept
                fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE,
                          "Replace with `.detach().clone()`", (edits.replace(node, code),))
            self.report(node, evidence=evidence, call=node, fixed=fixed, fix=fix)
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

    def _copies_graph_tensors(self, node: cst.Call, data: cst.BaseExpression) -> bool:
        """``torch.tensor(losses)``, ``torch.as_tensor((a, b))``: a list or tuple of tensors
        that require grad, as the requires-grad analysis shows, copied into a new leaf."""
        source = self.ctx.grad_flow.container_requires_grad(data)
        if source is None:
            return False
        line = self.ctx.line_index.position(source.node.start)[0]
        self.report(node, self.list_message, call=node, data=data, source=source.what, line=line,
                    evidence=source.steps, related=((source.node, "the gradient comes from here"),))
        return True

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        call = run.first("copy-construct")
        if call is not None and call["requires_grad"] and call.get("new_leaf"):
            return Verdict(CONFIRMED, "the tensors given required grad, and what was made of their values is a new "
                                      "leaf without their graph: the gradient is cut here")
        if call is not None and call["requires_grad"] and not call["result_requires_grad"]:
            return Verdict(CONFIRMED, "torch.tensor() copied a tensor that requires grad into one that does not: "
                                      "the gradient is cut here (torch warned: \"To copy construct from a tensor, it "
                                      "is recommended to use sourceTensor.detach().clone()\")")
        if call is not None:
            return Verdict(NOT_REPRODUCED, "torch.tensor() copied a tensor that does not require grad: nothing is "
                                           "cut (torch still warns)")
        return Verdict(NOT_REPRODUCED, "torch.tensor() was not given a tensor on this run")


def _copy(call: cst.Call, data: cst.BaseExpression, text: Callable[[cst.CSTNode], str],
          receiver: Callable[[cst.BaseExpression], str]) -> str:
    """`data.detach().clone()` with the call's `dtype=`/`device=` as `.to(..)` and its
    `requires_grad=` as `.requires_grad_(..)`, written with ``text`` (a snippet for
    messages, the exact source for the fix)."""
    options = [f"{arg.keyword.value}={text(arg.value)}" for arg in call.args
               if arg.keyword is not None and arg.keyword.value in ("dtype", "device")]
    copy = f"{receiver(data)}.detach().clone()"
    if options:
        copy += f".to({', '.join(options)})"
    requires_grad: Optional[cst.BaseExpression] = next(
        (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "requires_grad"), None)
    if is_true(requires_grad):
        copy += ".requires_grad_()"
    elif requires_grad is not None and not is_false(requires_grad):
        copy += f".requires_grad_({text(requires_grad)})"
    return copy
