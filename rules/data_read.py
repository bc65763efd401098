"""TL101 data-read: reading ``tensor.data``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from torchlint import edits
from torchlint.data_attribute import DataUse, base_evidence, data_access, is_tensor_expression
from torchlint.rule import Applicability, Fix, Rule

if TYPE_CHECKING:
    from torchlint.context import FileContext


class DataRead(Rule):
    code = "TL101"
    name = "data-read"
    summary = "reading `t.data` of a tensor: an alias autograd does not track"
    message = "`{base}.data` is an alias autograd does not track; use `{base}.detach()`"
    fix = Applicability.SAFE

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
        detach = edits.method_call(self.ctx, node.value, "detach()")
        safe = known and only_read(self.ctx, node)
        fix = Fix(Applicability.SAFE if safe else Applicability.UNSAFE, f"Replace with `{detach}`",
                  (edits.replace(node, detach),))
        self.report(node, evidence=evidence, base=node.value, fix=fix)


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


# Methods whose result may share memory with their receiver (or is the receiver itself,
# as `t.cpu()` on a CPU tensor is): what the caller does with that result decides.
_PASSING_METHODS = frozenset({
    "cpu", "cuda", "to", "float", "double", "half", "bfloat16", "long", "int", "short", "byte",
    "char", "bool", "contiguous", "detach", "view", "view_as", "reshape", "reshape_as", "flatten",
    "t", "transpose", "permute", "squeeze", "unsqueeze", "expand", "expand_as", "narrow", "select",
    "unfold", "diagonal", "unflatten", "movedim", "split", "chunk", "unbind", "type_as",
})
_PASSING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Methods that return a new tensor or a Python value and write into nothing. `numpy()`
# shares memory, but numpy writes bypass autograd's version counter for `.detach()` too.
_READING_METHODS = frozenset({
    "clone", "numpy", "tolist", "item", "sum", "mean", "max", "min", "argmax", "argmin", "std",
    "var", "norm", "abs", "neg", "exp", "log", "sqrt", "pow", "sign", "sigmoid", "tanh",
    "softmax", "log_softmax", "topk", "sort", "argsort", "eq", "ne", "lt", "gt", "le", "ge",
    "equal", "allclose", "any", "all", "nonzero", "masked_select", "index_select", "gather",
    "mm", "matmul", "dot", "add", "sub", "mul", "div", "round", "floor", "ceil", "clamp", "prod",
    "cumsum", "median", "mode", "unique", "size", "dim", "numel", "nelement", "ndimension",
    "data_ptr", "element_size", "is_contiguous", "is_floating_point", "new", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor",
})
_READ_ATTRIBUTES = frozenset({"shape", "dtype", "device", "is_cuda", "ndim", "layout",
                              "requires_grad", "is_leaf", "grad_fn", "is_sparse"})
# Tensor methods that only read their tensor arguments (`y.copy_(x.data)`).
_ARGUMENT_READERS = frozenset({
    "copy_", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "addcmul_", "addcdiv_",
    "lerp", "lerp_", "eq", "ne", "lt", "gt", "le", "ge", "equal", "allclose", "mm", "matmul",
    "dot", "max", "min", "clamp", "clamp_", "masked_fill", "masked_fill_", "index_select",
    "gather", "type_as", "view_as", "expand_as", "reshape_as", "dist",
})
# torch functions that return new tensors (or Python values) from the tensors they read.
_READING_FUNCTIONS = frozenset({
    "torch." + name for name in (
        "max", "min", "sum", "mean", "argmax", "argmin", "topk", "sort", "argsort", "norm", "abs",
        "exp", "log", "sigmoid", "tanh", "softmax", "log_softmax", "cat", "stack", "eq", "ne", "lt",
        "gt", "le", "ge", "equal", "allclose", "isclose", "isnan", "isinf", "isfinite", "any", "all",
        "matmul", "mm", "bmm", "dot", "dist", "cdist", "where", "masked_select", "nonzero", "clamp",
        "pow", "sqrt", "add", "mul", "sub", "div", "std", "var", "median", "mode", "cumsum",
        "prod", "round", "floor", "ceil", "sign", "histc", "bincount", "unique", "numel",
        "is_tensor", "clone", "index_select", "gather",
    )
})
_READING_BUILTINS = frozenset({"print", "len", "float", "int", "bool", "str", "repr", "format",
                               "isinstance", "type"})
_ALIASING_FUNCTIONS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def only_read(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """The value of ``node`` (``x.data``), or of views and conversions made from it, is
    consumed right away by something that neither writes into it nor keeps it."""
    current: cst.CSTNode = node
    while True:
        parent = ctx.parent(current)
        if isinstance(parent, cst.Attribute) and parent.value is current:
            call = ctx.parent(parent)
            method = parent.attr.value
            if isinstance(call, cst.Call) and call.func is parent:
                if method in _PASSING_METHODS or (method == "type" and call.args):
                    current = call
                    continue
                return method in _READING_METHODS or method == "type"
            if method in _PASSING_ATTRIBUTES:
                current = parent
                continue
            return method in _READ_ATTRIBUTES
        if isinstance(parent, cst.Subscript) and parent.value is current:
            current = parent
            continue
        if isinstance(parent, cst.IfExp) and parent.test is not current:
            current = parent
            continue
        if isinstance(parent, cst.Arg) and parent.value is current and not parent.star:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and ctx.qualname(call.func) in _ALIASING_FUNCTIONS:
                current = call
                continue
            return isinstance(call, cst.Call) and _reads_argument(ctx, call, parent)
        return isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison,
                                   cst.ComparisonTarget, cst.FormattedStringExpression, cst.Expr,
                                   cst.Index, cst.IfExp, cst.If, cst.While, cst.Assert))


def _reads_argument(ctx: "FileContext", call: cst.Call, arg: cst.Arg) -> bool:
    if arg.keyword is not None and arg.keyword.value in ("out", "inplace"):
        return False
    if any(a.keyword is not None and a.keyword.value == "out" for a in call.args):
        return False
    func = call.func
    if isinstance(func, cst.Name) and func.value in _READING_BUILTINS:
        return not ctx.model.resolve(func) and ctx.model.star_import_of(func.value) is None
    if ctx.qualname(func) in _READING_FUNCTIONS:
        return True
    return isinstance(func, cst.Attribute) and func.attr.value in _ARGUMENT_READERS \
        and is_tensor_expression(ctx, func.value)
