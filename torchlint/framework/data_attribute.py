"""How a ``.data`` attribute is used: read, written through, assigned, or indexed with 0.

TL101, TL102, TL103 and TL203 each take one of these uses, so every ``x.data`` is
reported by exactly one of them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import looks_like_size
from torchlint.syntax.walk import settle_upward
from torchlint.analysis import torch_api
from torchlint.analysis.values import Kind, Step, Value
from torchlint.framework.writes import Write, find_write, is_store_target

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext


class DataUse(enum.Enum):
    READ = "read"
    WRITE = "write"  # in place, through .data or a view of it (TL102)
    ASSIGN = "assign"  # x.data = y (TL103)
    INDEX_ZERO = "index zero"  # x.data[0] read (TL203 when x is 0-dim, else a read)
    DELETE = "delete"  # del x.data: neither a read nor a write of the tensor (no rule)


@dataclass(frozen=True)
class DataAccess:
    use: DataUse
    write: Optional[Write] = None
    subscript: Optional[cst.Subscript] = None
    # `x.data.shape`, `x.data.size()`: a read of metadata, for which `.data` is not needed.
    metadata: Optional[str] = None


def data_access(ctx: "FileContext", node: cst.Attribute) -> DataAccess:
    """Classify the ``.data`` attribute ``node`` (memoised per file)."""
    cache = ctx.cache.setdefault("data_access", {})
    key = id(node)
    if key not in cache:
        cache[key] = _classify(ctx, node)
    return cache[key]


def _classify(ctx: "FileContext", node: cst.Attribute) -> DataAccess:
    if is_store_target(ctx, node):
        return DataAccess(DataUse.ASSIGN)
    if _is_deleted(ctx, node):
        return DataAccess(DataUse.DELETE)
    write = find_write(ctx, node)
    if write is not None:
        return DataAccess(DataUse.WRITE, write)
    parent = ctx.parent(node)
    if isinstance(parent, cst.Subscript) and parent.value is node and _is_index_zero(parent):
        return DataAccess(DataUse.INDEX_ZERO, subscript=parent)
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _METADATA:
        return DataAccess(DataUse.READ, metadata=parent.attr.value)
    return DataAccess(DataUse.READ)


def _is_deleted(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """``node`` is (an element of) the target of a ``del`` statement."""
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        node, parent = parent, ctx.parent(parent)
    return isinstance(parent, cst.Del) and parent.target is node


_METADATA = frozenset({"shape", "dtype", "device", "is_cuda", "ndim", "size", "dim", "numel",
                       "nelement", "ndimension", "requires_grad", "layout"})


# Tensor-only methods that return a tensor, whose names user classes are unlikely to have.
_TENSOR_MAKING_METHODS = frozenset({"detach", "contiguous", "unsqueeze", "index_select", "type_as", "expand_as",
                                    "view_as", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})


def base_evidence(ctx: "FileContext", node: cst.Attribute) -> Optional[Value]:
    """Evidence that the object of ``x.data`` is a tensor.

    Either the inference knows ``x`` is one, or ``x`` is unknown (not a known dataset,
    array or other object), torch is imported, and ``x.data`` itself is used the way only
    a tensor is: ``x.data.cpu()``, ``y.type_as(x.data)``, ``w.weight.data = torch.zeros(..)``,
    here or at another ``x.data`` of the same variable.
    """
    value = ctx.tensor(node.value)
    if value is not None:
        return value
    known = ctx.infer(node.value)
    # A torch.nn module has no `.data`: where the inference says `x` may be one (`pointer =
    # model`, then `pointer = getattr(pointer, name)` in a loop), it holds something else here.
    if (known is not None and known.kind is not Kind.MODULE) or not ctx.inference.uses_torch:
        return None
    elsewhere = "nothing says `{}` is anything else" if known is None else \
        "`{}` cannot be the torch.nn module it may also be (modules have no `.data`)"
    if _field_owner(node.value):
        return None
    busy = ctx.cache.setdefault("data evidence in progress", set())
    if id(node) in busy:  # `a.data = b.data` and `b.data = a.data`: each asks of the other
        return None
    busy.add(id(node))
    try:
        return _use_evidence(ctx, node, elsewhere)
    finally:
        busy.discard(id(node))


def _field_owner(node: cst.BaseExpression) -> bool:
    """``args``, ``self.config``, ``train_loader``: named the way objects with fields of their own are."""
    owner = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
    return isinstance(owner, str) and torch_api.is_field_owner(owner)


def _use_evidence(ctx: "FileContext", node: cst.Attribute, elsewhere: str) -> Optional[Value]:
    used = _used_as_tensor(ctx, node)
    if used is not None:
        return Value(Kind.TENSOR, (Step(used[0], f"{used[1]}, and {elsewhere.format(ctx.snippet(node.value))}"),))
    made = node.value
    if isinstance(made, cst.Call) and isinstance(made.func, cst.Attribute) \
            and made.func.attr.value in _TENSOR_MAKING_METHODS and ctx.infer(made.func.value) is None:
        # `param.detach().data`: only a tensor has `detach()`, and it returns a tensor.
        return Value(Kind.TENSOR, (Step(made, f"`{{code}}`: only a tensor has `{made.func.attr.value}()`, "
                                              f"and it returns a tensor"),))
    if isinstance(node.value, cst.Attribute) and torch_api.is_module_tensor_attribute(node.value.attr.value) \
            and ctx.infer(node.value.value) is None and not _field_owner(node.value.value):
        # `net.module_.dense0.weight.data`, `m.bias.data.zero_()` in a loop over `model.modules()`.
        return Value(Kind.TENSOR, (Step(node.value, f"`{node.value.attr.value}` is what torch.nn layers call their "
                                                    f"parameter, and nothing says `{ctx.snippet(node.value.value)}` "
                                                    f"is anything but a layer"),))
    if not isinstance(node.value, cst.Name):
        return None
    # `v.data = normalize(..)` then `torch.mv(w, v.data)`: the same `v` both times.
    bindings = ctx.model.resolve(node.value)
    if not bindings:
        return None
    for binding in bindings:
        for _seq, attribute, other in ctx.model.uses_of(binding):
            if attribute != "data" or other is node or ctx.model.resolve(other.value) != bindings:
                continue
            used = _used_as_tensor(ctx, other)
            if used is not None:
                line = ctx.analysis.line_index.position(other.start)[0]
                return Value(Kind.TENSOR, (Step(used[0], f"{used[1]} (line {line}), the same `{node.value.value}`, "
                                                         f"and {elsewhere.format(node.value.value)}"),))
    return None


def _used_as_tensor(ctx: "FileContext", node: cst.Attribute) -> Optional[tuple[cst.CSTNode, str]]:
    """How ``x.data`` itself is used as only a tensor is: the node to show, and the text of
    the step (``{code}`` for that node)."""
    parent = ctx.parent(node)
    if isinstance(parent, cst.Attribute) and parent.value is node:
        if parent.attr.value in torch_api.DATA_TENSOR_USES or _view_with_sizes(ctx, parent):
            return parent, f"`{{code}}` uses `{ctx.snippet(node)}` as a tensor"
        return None
    if isinstance(parent, cst.Element) and parent.value is node and not _packs_sequences(ctx):
        # `torch.cat([a.data, b.data])`: an element of the list a tensor-taking function gets.
        sequence = ctx.parent(parent)
        holder = ctx.parent(sequence) if isinstance(sequence, (cst.List, cst.Tuple)) else None
        call = ctx.parent(holder) if isinstance(holder, cst.Arg) and holder.value is sequence else None
        if isinstance(call, cst.Call) and call.args[0] is holder and ctx.qualname(call.func) in _TAKING_TENSOR_LISTS:
            return call, f"`{{code}}` takes only tensors, `{ctx.snippet(node)}` among them"
        return None
    if isinstance(parent, cst.Arg) and parent.value is node:
        call = ctx.parent(parent)
        if not isinstance(call, cst.Call):
            return None
        if isinstance(call.func, cst.Attribute) and ctx.tensor(call.func.value) is not None:
            return call, f"`{{code}}` passes `{ctx.snippet(node)}` to a tensor method"
        taker = _tensor_taker(ctx, call, parent)
        if taker is not None:
            return call, f"`{{code}}` {taker} `{ctx.snippet(node)}`"
        return None
    if isinstance(parent, cst.AssignTarget):
        assign = ctx.parent(parent)
        if isinstance(assign, cst.Assign) and is_tensor_expression(ctx, assign.value):
            return assign.value, f"a tensor, `{{code}}`, is assigned to `{ctx.snippet(node)}`"
    return None


# torch functions whose first argument is a sequence of tensors and nothing else (a numpy array
# in it raises TypeError).
_TAKING_TENSOR_LISTS = frozenset({"torch.cat", "torch.stack", "torch.hstack", "torch.vstack", "torch.dstack",
                                  "torch.concat", "torch.concatenate"})


def _tensor_taker(ctx: "FileContext", call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """How ``call`` shows that its argument ``arg`` must be a tensor, or None:
    ``Variable(x.data)`` and ``nn.Parameter(x.data)`` wrap only tensors; a torch function
    that is also a tensor method (``torch.dist(x.data, y)``, ``torch.mv(w, u.data)``) takes
    tensors where the method's receiver and tensor arguments go, and raises TypeError for a
    numpy array; ``isinstance(x.data, torch.cuda.FloatTensor)`` expects one."""
    function = ctx.qualname(call.func)
    if function is None or arg.keyword is not None or arg.star:
        return None
    first = call.args[0] is arg
    if function in (torch_api.VARIABLE, "torch.nn.Parameter", "torch.nn.parameter.Parameter") and first:
        return "wraps only a tensor,"
    if function == "builtins.isinstance" and first and len(call.args) == 2:
        if all(torch_api.is_tensor_type(option) for option in ctx.inference.checked_types(call.args[1].value)):
            return "expects a tensor in"
        return None
    # `x.data` is no number, so any argument of a torch operation counts, not only the input.
    return "takes tensors, and gets" if torch_api.tensor_positions(function) else None


# A file that makes or unpacks PackedSequences: their `.data` is a tensor too, and is
# concatenated as one (`torch.cat((lstm_out.data, packed.data))`).
_PACKED_SEQUENCES = re.compile(r"\b(?:PackedSequence|pack_padded_sequence|pack_sequence)\b")


def _packs_sequences(ctx: "FileContext") -> bool:
    found = ctx.cache.get("packs sequences")
    if found is None:
        found = ctx.cache["packs sequences"] = _PACKED_SEQUENCES.search(ctx.analysis.text) is not None
    return found


def tensor_data_use(ctx: "FileContext", node: cst.Attribute,
                    uses: tuple[DataUse, ...]) -> Optional[tuple[DataAccess, Value]]:
    """The opening of every `.data` rule: for ``node`` = ``x.data`` used in one of
    ``uses`` (a read, a write, an assignment, ``[0]``) with evidence that ``x`` is a
    tensor, that use and that evidence; None for anything else."""
    if node.attr.value != "data":
        return None
    access = data_access(ctx, node)
    if access.use not in uses:
        return None
    evidence = base_evidence(ctx, node)
    return (access, evidence) if evidence is not None else None


def _view_with_sizes(ctx: "FileContext", method: cst.Attribute) -> bool:
    """`x.data.view(-1)`, `x.data.view(y.size())`: numpy's `view` takes a dtype, never sizes."""
    call = ctx.parent(method)
    return method.attr.value == "view" and isinstance(call, cst.Call) and call.func is method \
        and bool(call.args) and all(looks_like_size(arg.value) for arg in call.args)


def is_tensor_expression(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """A tensor by inference, or `x.data` / `x.data.method(..)` used as one."""
    if ctx.tensor(node) is not None:
        return True
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        node = node.func.value
    return isinstance(node, cst.Attribute) and node.attr.value == "data" and base_evidence(ctx, node) is not None


def _is_index_zero(node: cst.Subscript) -> bool:
    if len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) \
        and index.value.value == "0"


# --- is the value of `x.data` only read? (the safety of TL101's and TL103's fixes) ---------

# Methods whose result may share memory with their receiver (or is the receiver itself,
# as `t.cpu()` on a CPU tensor is), and attributes that do: what the caller does with that
# result decides.
_PASSING_METHODS = torch_api.VIEW_METHODS
_PASSING_ATTRIBUTES = torch_api.VIEW_ATTRIBUTES
# Methods that return a new tensor or a Python value and write into nothing: those listed,
# and every method whose tensor result is a copy (torch_facts). `numpy()` shares memory,
# but numpy writes bypass autograd's version counter for `.detach()` too.
_READING_METHODS = frozenset({
    "clone", "numpy", "tolist", "item", "sum", "mean", "max", "min", "argmax", "argmin", "std",
    "var", "norm", "abs", "neg", "exp", "log", "sqrt", "pow", "sign", "sigmoid", "tanh",
    "softmax", "log_softmax", "topk", "sort", "argsort", "eq", "ne", "lt", "gt", "le", "ge",
    "equal", "allclose", "any", "all", "nonzero", "masked_select", "index_select", "gather",
    "mm", "matmul", "dot", "add", "sub", "mul", "div", "round", "floor", "ceil", "clamp", "prod",
    "cumsum", "median", "mode", "unique", "size", "dim", "numel", "nelement", "ndimension",
    "data_ptr", "element_size", "is_contiguous", "is_floating_point", "new", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor",
}) | torch_api.COPYING_METHODS
_READ_ATTRIBUTES = frozenset({"shape", "dtype", "device", "is_cuda", "ndim", "layout",
                              "requires_grad", "is_leaf", "grad_fn", "is_sparse"})
# Tensor methods that only read their tensor arguments (`y.copy_(x.data)`).
_ARGUMENT_READERS = frozenset({
    "copy_", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "addcmul_", "addcdiv_",
    "lerp", "lerp_", "eq", "ne", "lt", "gt", "le", "ge", "equal", "allclose", "mm", "matmul",
    "dot", "max", "min", "clamp", "clamp_", "masked_fill", "masked_fill_", "index_select",
    "gather", "type_as", "view_as", "expand_as", "reshape_as", "dist",
})
# torch functions that return new tensors (or Python values) from the tensors they read:
# those listed, and every torch function whose tensor result is a copy (torch_facts).
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
} | {"torch." + name for name in torch_api.COPYING_FUNCTIONS})
_READING_BUILTINS = frozenset({"print", "len", "float", "int", "bool", "str", "repr", "format",
                               "isinstance", "type"})
_ALIASING_FUNCTIONS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def only_read(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """The value of ``node`` (``x.data``), or of views and conversions made from it, is
    consumed right away by something that neither writes into it nor keeps it."""
    # `a.data if c else b.data if ...` share the walk up.
    return settle_upward(ctx.cache.setdefault("only_read", {}), node, lambda current: _read_step(ctx, current))


def _read_step(ctx: "FileContext", current: cst.CSTNode) -> tuple[Optional[cst.CSTNode], bool]:
    """What takes ``current``'s value: an expression whose value is still it or a view of
    it, to look at next, or else (None, whether that taker only reads it)."""
    parent = ctx.parent(current)
    if isinstance(parent, cst.Attribute) and parent.value is current:
        call = ctx.parent(parent)
        method = parent.attr.value
        if isinstance(call, cst.Call) and call.func is parent:
            if method in _PASSING_METHODS or (method == "type" and call.args):
                return call, False
            return None, method in _READING_METHODS or method == "type"
        if method in _PASSING_ATTRIBUTES:
            return parent, False
        return None, method in _READ_ATTRIBUTES
    if isinstance(parent, cst.Subscript) and parent.value is current:
        return parent, False
    if isinstance(parent, cst.IfExp) and parent.test is not current:
        return parent, False
    if isinstance(parent, cst.Arg) and parent.value is current and not parent.star:
        call = ctx.parent(parent)
        if isinstance(call, cst.Call) and ctx.qualname(call.func) in _ALIASING_FUNCTIONS:
            return call, False
        return None, isinstance(call, cst.Call) and _reads_argument(ctx, call, parent)
    return None, isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison,
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
