"""TL402 clone-detach-order: ``x.clone().detach()`` instead of ``x.detach().clone()``."""

from typing import Callable, Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, FileContext, Fix, Kind, Observation, Rule, Step, Verdict, cst, edits,
    torch_api,
)


class CloneDetachOrder(Rule):
    code = "TL402"
    name = "clone-detach-order"
    summary = "`x.clone().detach()` records a useless copy in the autograd graph; use `x.detach().clone()`"
    fix = Applicability.SAFE
    requires = (r"\bclone\b", r"\bdetach\b")
    references = (
        ("torch.Tensor.clone", "https://pytorch.org/docs/stable/generated/torch.Tensor.clone.html"),
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
    )
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

    Where `clone()` records nothing the order does not matter, so the rule reports only
    a tensor shown to require grad: a parameter (of a model, or a layer's `.weight` and
    `.bias`), a module's output, a tensor created with `requires_grad=True`, or a result
    computed from those. It stays quiet under `torch.no_grad()` (optimizer steps, and
    functions the file only calls from there) and on tensors that may be outside the
    graph: `.data`, `.grad`, checkpoint and `state_dict()` tensors, batches, running totals
    of detached losses, and anything the engine cannot show to require grad.

    ## What to do instead
    `x.detach().clone()`.

    ## Fix (safe)
    Swaps the two calls: `x.clone().detach()` and `torch.clone(x).detach()` become
    `x.detach().clone()`, with any arguments of `clone()` (`memory_format=`) kept on the
    clone. Both orders give a new tensor with the same values, dtype, device and strides
    that requires no grad. The fix is unsafe when `x` is not known to be a tensor (another
    class with both methods could mean something else by them), or when a comment inside
    the expression would be lost.
    """
    bad = (
        Bad(
            """
            import torch

            x = torch.tensor([1.0, 2.0], requires_grad=True)
            snapshot = x.clone().detach()
            """,
            reported=((4, "x.clone().detach()"),),
            fixed="""
            import torch

            x = torch.tensor([1.0, 2.0], requires_grad=True)
            snapshot = x.detach().clone()
            """,
        ),
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
        if any(arg.star for arg in inner.args):
            return
        if self.ctx.qualname(inner.func) == "torch.clone":
            if not inner.args or inner.args[0].keyword is not None:
                return
            source, clone_args = inner.args[0].value, list(inner.args[1:])
        elif isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "clone":
            source, clone_args = inner.func.value, list(inner.args)
        else:
            return
        if self.ctx.inference.runs_without_grad(node):
            return  # the copy is not recorded, so the order does not matter
        value = self.ctx.tensor(source)
        evidence = value
        if value is None or value.attached is not True:
            # Only where a gradient is involved: a checkpoint tensor, a batch, a total of
            # detached losses record nothing, and the order does not matter.
            parameter = _layer_parameter(self.ctx, source) if value is None or value.attached is None else None
            if parameter is None:
                return
            evidence = (parameter,) if value is None else (parameter, *value.why)
        fixed = _swapped(source, clone_args, self.ctx.snippet, self.ctx.receiver)
        code = _swapped(source, clone_args, self.ctx.code, self.ctx.receiver_code)
        # Unsafe when another class could mean something else by the two methods, or a comment
        # inside the chain would be lost.
        kept = sum(self.ctx.comment_count(part) for part in [source, *(arg.value for arg in clone_args)])
        safe = value is not None and self.ctx.comment_count(node) == kept
        fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE, "Detach before cloning",
                  (edits.replace(node, code),))
        self.report(node, evidence=evidence, expr=node, source=source, fixed=fixed, fix=fix)

    runtime_signature = False

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "a style rule: `x.clone().detach()` and `x.detach().clone()` give the same "
                                       "values; the first only records a needless copy in the graph")


def _layer_parameter(ctx: FileContext, source: cst.BaseExpression) -> Optional[Step]:
    """`layer.weight`, `module.bias[index]`, `layer.weight.index_select(0, index)`: a
    torch.nn layer's parameter (or what indexing or a tensor method makes of it), which
    requires grad, on an owner the inference knows nothing else of."""
    current = source
    while True:
        if isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value in torch_api.GRAD_KEEPING_METHODS:
            current = current.func.value
        else:
            break
    if not (isinstance(current, cst.Attribute) and current.attr.value in ("weight", "bias")):
        return None
    owner = ctx.infer(current.value)
    if owner is not None and owner.kind is not Kind.MODULE:
        return None
    return Step(current, f"`{{code}}`: `{current.attr.value}` is what torch.nn layers call their parameter, "
                         "which requires grad")


def _swapped(source: cst.BaseExpression, clone_args: list[cst.Arg], text: Callable[[cst.CSTNode], str],
             receiver: Callable[[cst.BaseExpression], str]) -> str:
    """`source.detach().clone(args)`, written with ``text`` (a snippet for messages, the exact
    source for the fix)."""
    args = ", ".join(f"{arg.keyword.value}={text(arg.value)}" if arg.keyword else text(arg.value)
                     for arg in clone_args)
    return f"{receiver(source)}.detach().clone({args})"
