"""TL101 data-read: reading ``tensor.data``."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, DataUse, FileContext, Fix, Observation, Rule, Verdict, cst,
    edits, only_read, quote, tensor_data_use, torch_api,
)


class DataRead(Rule):
    code = "TL101"
    name = "data-read"
    summary = "reading `t.data` of a tensor: an alias autograd does not track"
    message = "`{base}.data` is an alias autograd does not track; use `{base}.detach()`"
    fix = Applicability.SAFE
    since = "0.4"
    requires = (r"\.[\s\\]*data\b",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
    )

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

    A statement such as `x.data.t_()` (or `squeeze_`, `unsqueeze_`, `transpose_`,
    `set_`, `requires_grad_`...) is worse: since PyTorch 0.4 `x.data` is a new tensor
    object each time, so the method changes that temporary and `x` keeps its shape and
    flags; the line does nothing. It was written for 0.3, where it changed `x`.

    ## What to do instead
    Use `.detach()`, which returns the same alias but lets autograd catch writes.

    ## Fix (safe)
    Replaces `x.data` with `x.detach()`; for metadata (`x.data.shape`,
    `x.data.size()`, `x.data.dtype`...) it drops `.data`. The fix is safe where the
    value is only read right away by something that neither writes into it nor keeps
    it: a metadata read, `x.data.cpu().numpy()`, `x.data.clone()`, `x.data.item()`,
    arithmetic and comparisons, `print(x.data)`, f-strings, `torch.max(x.data, 1)` and
    other torch functions that return new tensors, or an argument of a tensor method
    that only reads it (`y.copy_(x.data)`). Views and conversions in between
    (`x.data[0].cpu().numpy()`) are followed to that reader.

    It is unsafe where the `.data` value is bound to a name, returned, stored, or
    passed to any other function: a later in-place write through it would no longer
    go unnoticed, since `.detach()` shares `x`'s version counter (autograd then raises
    where `.data` silently corrupted the gradient). It is unsafe too when only the use
    of `x.data` says `x` is a tensor.

    Where such a statement does nothing (`x.data.t_()`), no rewrite is applied:
    `x.detach().t_()` would do nothing either; the message says to apply the method to
    `x` itself or rebind it.

    For `x.data[0]` the rewrite to `x.detach()[0]` is only shown, not applied, unless
    what `[0]` gives is indexed again or used as a tensor (`x.data[0].cpu()`, written
    when `[0]` of a 1-dim tensor was a Python number, so `[0]` picks a row). If `x` is
    a 0-dim loss, `x.data[0]` raises `IndexError` and so would `x.detach()[0]`:
    `x.item()` is what was meant, which TL203 reports and fixes where the engine can
    show that `x` is 0-dim.
    """
    bad = (
        Bad(
            """
            import torch

            w = torch.randn(3, requires_grad=True)
            snapshot = w.data.clone().detach()
            """,
            reported=((4, "w.data"),),
            fixed="""
            import torch

            w = torch.randn(3, requires_grad=True)
            snapshot = w.detach().clone()
            """,
        ),
        Bad(
            """
            import torch

            x = torch.rand(2, 3, requires_grad=True)
            y = x.data
            """,
            reported=((4, "x.data"),),
            fixed="""
            import torch

            x = torch.rand(2, 3, requires_grad=True)
            y = x.detach()
            """,
            unsafe=True,
        ),
        Bad(
            """
            import torch.nn as nn

            def predict(model: nn.Module, batch):
                output = model(batch)
                return output.data.cpu().numpy()
            """,
            reported=((5, "output.data"),),
            fixed="""
            import torch.nn as nn

            def predict(model: nn.Module, batch):
                output = model(batch)
                return output.detach().cpu().numpy()
            """,
        ),
        Bad(
            """
            import torch

            def to_batch_first(sequences: torch.Tensor) -> torch.Tensor:
                sequences.data.t_()
                return sequences
            """,
            reported=((4, "sequences.data"),),
        ),
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
        found = tensor_data_use(self.ctx, node, (DataUse.READ, DataUse.INDEX_ZERO))
        if found is None:
            return
        access, evidence = found
        if access.use is DataUse.INDEX_ZERO and evidence.scalar:
            return  # `loss.data[0]` on a 0-dim loss: TL203 reports it
        # Sure of `x` only when the inference is, not when `x.data`'s own use suggests it.
        known = self.ctx.tensor(node.value) is not None
        what = _needs_no_data(self.ctx, node, access.metadata)
        if what is not None:
            drop = Fix(Applicability.SAFE if known else Applicability.UNSAFE, "Drop `.data`",
                       (edits.replace(node, self.ctx.code(node.value)),))
            self.report(
                node,
                "`{base}.data.{what}` does not need `.data`; use `{base}.{what}`",
                evidence=evidence, base=node.value, what=what, fix=drop,
            )
            return
        parent = self.ctx.parent(node)
        call = self.ctx.parent(parent) if isinstance(parent, cst.Attribute) else None
        if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in torch_api.METADATA_ONLY_INPLACE \
                and isinstance(self.ctx.parent(call), cst.Expr):
            # `x.data.t_()` as a statement: transposes a temporary and drops it, and
            # `x.detach().t_()` would do nothing either.  (`y = x.data.squeeze_(0)` uses the result.)
            self.report(node, "`{base}.data.{method}(..)` changes only the temporary `{base}.data` returns: "
                              "`{base}` keeps its shape and flags since PyTorch 0.4; apply `{method}` to `{base}` "
                              "itself (under `torch.no_grad()`), or rebind it",
                        evidence=evidence, base=node.value, method=parent.attr.value,
                        fix=Fix(Applicability.DISPLAY_ONLY, f"Apply `{parent.attr.value}` to "
                                                            f"`{self.ctx.snippet(node.value)}` itself", ()))
            return
        detach = edits.method_call(self.ctx, node.value, "detach()")
        replace = (edits.replace(node, detach),)
        copy = _clone_then_detach(self.ctx, node)
        if copy is not None:
            # `x.data.clone().detach()`: one copy outside the graph is `x.detach().clone()`.
            detach = edits.method_call(self.ctx, node.value, "detach().clone()")
            replace = (edits.replace(copy, detach),)
        elif access.use is DataUse.READ and self.ctx.grad_disabled(node) is not None \
                and isinstance(self.ctx.parent(node), (cst.Arg, cst.BinaryOperation, cst.UnaryOperation)):
            # An operand under `torch.no_grad()` records nothing: `p.add_(-lr * p.grad)`.
            detach = self.ctx.code(node.value)
            replace = (edits.replace(node, detach),)
        if access.use is DataUse.INDEX_ZERO and not _row_used_as_tensor(self.ctx, access.subscript):
            # `x.data[0]` on a 0-dim `x` (a loss) raises IndexError, and so would `x.detach()[0]`.
            item = edits.method_call(self.ctx, node.value, "item()")
            fix = Fix(Applicability.DISPLAY_ONLY, f"Replace with `{detach}` if `[0]` picks a row of "
                                                  f"`{self.ctx.snippet(node.value)}`; if it is 0-dim, use `{item}`",
                      replace)
        else:
            safe = known and only_read(self.ctx, node)
            fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE, f"Replace with `{detach}`", replace)
        self.report(node, evidence=evidence, base=node.value, fix=fix)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        reads = run.every("other-read")
        read = next((details for details in reads if details.get("tracked")), None)
        if read is not None:
            return Verdict(CONFIRMED, f"{quote(read['write']['where'])} wrote through the `.data` alias made here, "
                                      f"and {quote(read['where'])} read the original afterwards: the change reached "
                                      "the tensor autograd tracks, with no record of it in the graph")
        if reads:
            return Verdict(NOT_REPRODUCED, f"{quote(reads[0]['write']['where'])} wrote through the `.data` alias made "
                                           f"here and {quote(reads[0]['where'])} read the original afterwards, but "
                                           "where autograd does not track it (under `no_grad`, as weight "
                                           "initialization runs, or of a tensor that requires no grad)")
        if run.has("write"):
            return Verdict(NOT_REPRODUCED, "the `.data` alias was written, but no tensor saved for backward was "
                                           "affected")
        return Verdict(NOT_REPRODUCED, "the `.data` alias was only read: nothing went wrong on this run")


def _row_used_as_tensor(ctx: "FileContext", subscript: cst.Subscript) -> bool:
    """`x.data[0][i]`, `x.data[0].cpu()`: the code indexes or calls tensor methods on what
    `[0]` gives. Before PyTorch 0.4 `[0]` of a 1-dim tensor was a Python number, so the
    code was written for an `x` whose `[0]` is a row: `.detach()[0]` keeps it working."""
    parent = ctx.parent(subscript)
    if isinstance(parent, cst.Subscript) and parent.value is subscript:
        return True
    return isinstance(parent, cst.Attribute) and parent.value is subscript \
        and parent.attr.value not in torch_api.NUMBER_ATTRIBUTES


def _needs_no_data(ctx: "FileContext", node: cst.Attribute, metadata) -> Optional[str]:
    """What follows `x.data` when it gives the same without `.data`: metadata, or a
    Python value (`x.data.item()`; `item` and `tolist` work on tensors that require grad)."""
    if metadata is not None:
        # `x.data.requires_grad` is always False, `x.requires_grad` is not.
        return None if metadata == "requires_grad" else metadata
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr.value in ("item", "tolist"):
        call = ctx.parent(parent)
        if isinstance(call, cst.Call) and call.func is parent and not call.args:
            return parent.attr.value + "()"
    return None


def _clone_then_detach(ctx: FileContext, node: cst.Attribute) -> Optional[cst.Call]:
    """``x.data.clone().detach()``: the outer call, whose whole text the fix replaces."""
    clone = ctx.parent(node)
    clone_call = ctx.parent(clone) if isinstance(clone, cst.Attribute) and clone.attr.value == "clone" else None
    if not (isinstance(clone_call, cst.Call) and clone_call.func is clone and not clone_call.args):
        return None
    detach = ctx.parent(clone_call)
    detach_call = ctx.parent(detach) if isinstance(detach, cst.Attribute) and detach.attr.value == "detach" else None
    if isinstance(detach_call, cst.Call) and detach_call.func is detach and not detach_call.args:
        return detach_call
    return None
