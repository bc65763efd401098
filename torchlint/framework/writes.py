"""Where an expression is written to in place.

``p.data.add_(..)``, ``w.data[i] = v``, ``x.data *= 3``, ``x.data[0].fill_(1)``,
``torch.add(a, b, out=x.data)``, ``nn.init.normal_(w.data)``: all of these write into
the storage of the expression ``x.data``, either directly or through a view of it.
Rules about ``.data``, ``.detach()`` and view aliases share this one definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import is_true, keyword, positional_args
from torchlint.syntax.walk import iter_nodes, settle_upward
from torchlint.analysis import torch_api
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext


@dataclass(frozen=True)
class Write:
    node: cst.CSTNode  # the whole writing expression or statement target
    how: str  # "`add_()`", "item assignment", "`*=`", "`out=`", "`torch.nn.init.normal_()`"
    # A call that writes its argument: the write inside the function or module it runs
    # (None for a layer that works in place, `nn.ReLU(inplace=True)`).
    inner: Optional["Write"] = None
    by_call: bool = False


def is_store_target(ctx: "FileContext", node: cst.CSTNode) -> bool:
    """True when ``node`` is (part of) the target of an assignment, ``for`` or ``with``."""
    current = node
    parent = ctx.parent(current)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        current, parent = parent, ctx.parent(parent)
    if isinstance(parent, cst.AssignTarget):
        return parent.target is current
    if isinstance(parent, (cst.AnnAssign, cst.For, cst.CompFor)):
        return parent.target is current
    if isinstance(parent, cst.AsName):
        return True
    return False


def written_through_alias(ctx: "FileContext", node: cst.CSTNode, write: cst.CSTNode) -> bool:
    """Whether the write at ``write`` reaches ``node``'s tensor through ``.data`` or
    ``.detach()`` (an alias autograd does not track: the aliasing rules report those)."""
    current = node
    while current is not None and current is not write:
        parent = ctx.parent(current)
        if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value in ("data", "detach"):
            return True
        current = parent
    return False


def _augmented_operator(node: cst.AugAssign) -> str:
    return getattr(node.operator, "token", None) or "augmented assignment"


def find_write(ctx: "FileContext", node: cst.BaseExpression) -> Optional[Write]:
    """The in-place write into ``node``'s storage that ``node`` takes part in, if any
    (memoised per file: the walk up from ``x.data`` in ``x.data.data...`` passes through
    every outer ``.data``, each of which is asked too)."""
    return settle_upward(ctx.cache.setdefault("find_write", {}), node, lambda current: _write_step(ctx, current))


def _write_step(ctx: "FileContext", current: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Optional[Write]]:
    """Where ``current``'s value goes: an expression that shares its storage, to look
    at next, or else (None, the write into it if any)."""
    parent = ctx.parent(current)
    if isinstance(parent, cst.AugAssign) and parent.target is current:
        return None, Write(current, f"`{_augmented_operator(parent)}`")
    if isinstance(parent, cst.Subscript) and parent.value is current:
        if is_store_target(ctx, parent):
            return None, Write(parent, "item assignment")
        augmented = ctx.parent(parent)
        if isinstance(augmented, cst.AugAssign) and augmented.target is parent:
            return None, Write(parent, f"`{_augmented_operator(augmented)}`")
        return parent, None  # indexing gives a view (basic indexing) of the same storage
    if isinstance(parent, cst.Attribute) and parent.value is current:
        call = ctx.parent(parent)
        if not (isinstance(call, cst.Call) and call.func is parent):
            if parent.attr.value in torch_api.VIEW_ATTRIBUTES:
                return parent, None  # `x.data`, `x.T`: the same storage
            return None, None
        method = parent.attr.value
        if torch_api.is_inplace_method(method):
            return None, Write(call, f"`{method}()`")
        if method in torch_api.VIEW_METHODS:
            return call, None
        return None, None
    if isinstance(parent, cst.Arg) and parent.value is current:
        return None, _argument_write(ctx, parent)
    return None, None


def basic_index(ctx: "FileContext", node: cst.Subscript) -> bool:
    """Integers, slices, `...` and `None` index a view; anything else may copy."""
    for element in node.slice:
        if torch_api.literal_view_index(element):
            continue
        inferred = ctx.infer(element.slice.value)
        if inferred is not None and inferred.kind is Kind.OTHER:
            continue  # an int (a loop counter over range(), a len())
        return False
    return True


def helper_write(ctx: "FileContext", node: cst.BaseExpression) -> Optional[Write]:
    """``normalize(z)`` where ``normalize``, a function of this file, writes in place the
    parameter ``z`` is given for (``t -= t.mean()``), on every call (not under an ``if``,
    a loop, a ``try`` or a ``with``) and before binding it again: a write into ``z``'s
    storage at the call.  A call of a module of a class of this file (``self.block(z)``) runs
    its ``forward``, whose writes into its input are the call's (``nn.Module.__call__`` hands
    the tensor on as it is); so does a helper the function hands the parameter to in turn.
    Writes through ``.data``/``.detach()`` and writes with gradients off (a ``no_grad``
    decorator) are not autograd's, and are left out."""
    arg = ctx.parent(node)
    if not isinstance(arg, cst.Arg) or arg.value is not node:
        return None
    receiver = ctx.inference.receiving_parameter(arg, modules=True)
    if receiver is None:
        return None
    function, name, reads = receiver
    active = ctx.cache.setdefault("helper_write_active", set())
    if id(function.node) in active:
        return None  # a function that hands its parameter to itself: its writes are the ones seen
    active.add(id(function.node))
    try:
        call = ctx.parent(arg)
        for load in reads:
            write = find_write(ctx, load) or _nested_helper_write(ctx, load)
            if write is None or written_through_alias(ctx, load, write.node) \
                    or ctx.grad_disabled(write.node) is not None or ctx.inference.runs_without_grad(write.node):
                continue
            if not any(isinstance(node, (cst.If, cst.IfExp, cst.For, cst.While, cst.Try, cst.With))
                       for node in ctx.ancestors(write.node) if function.node.start < node.start):
                line = ctx.line_index.position(write.node.start)[0]
                what = "whose `forward` writes" if function.name == "forward" and \
                    not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "forward") else "which writes"
                return Write(call, f"`{ctx.snippet(call.func)}()`, {what} its parameter `{name}` in place "
                                   f"({write.how}, line {line})", write, True)
        return None
    finally:
        active.discard(id(function.node))


def _nested_helper_write(ctx: "FileContext", load: cst.BaseExpression) -> Optional[Write]:
    """The parameter read at ``load`` handed on to a helper or module that writes it."""
    return helper_write(ctx, load) if isinstance(ctx.parent(load), cst.Arg) else None


def _argument_write(ctx: "FileContext", arg: cst.Arg) -> Optional[Write]:
    call = ctx.parent(arg)
    if not isinstance(call, cst.Call):
        return None
    if arg.keyword is not None:
        if arg.keyword.value == "out":
            return Write(call, "`out=`")
        return None
    positional = positional_args(call)
    if not positional or positional[0] is not arg:
        return None
    module = ctx.autograd.writes_input(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
    if module is not None:
        # `self.relu(x)` where `self.relu = nn.ReLU(inplace=True)`: the layer writes its input.
        line = ctx.line_index.position(module.start)[0]
        return Write(call, f"`{ctx.snippet(call.func)}(..)`, the in-place `{ctx.snippet(module.func)}` of line {line}")
    qualname = ctx.qualname(call.func) or ""
    last = qualname.rsplit(".", 1)[-1]
    if qualname.startswith("torch.nn.init.") and last in torch_api.DATA_WRITING_INIT:
        return Write(call, f"`{qualname}()`")
    if qualname.count(".") == 1 and qualname.startswith("torch.") and last in torch_api.DATA_WRITING_FUNCTIONS:
        return Write(call, f"`{qualname}()`")
    if qualname.startswith("torch.nn.functional."):
        if last in torch_api.DATA_WRITING_FUNCTIONAL:
            return Write(call, f"`{qualname}()`")
        if is_true(keyword(call, "inplace")):
            return Write(call, f"`{qualname}(inplace=True)`")
    return None


def shape_writes_with_grad(ctx: "FileContext") -> list[tuple[cst.CSTNode, Write]]:
    """(the name or attribute, the write) for every in-place change of a tensor's shape
    (``h.squeeze_(0)``, ``hx[i].t_()``, ``torch_api.SHAPE_CHANGING_METHODS``) on the tensor
    itself or a view of it, outside ``no_grad``: autograd treats them as in-place operations
    though they write no element. Computed once per file."""
    if "shape_writes_with_grad" in ctx.cache:
        return ctx.cache["shape_writes_with_grad"]
    found = []
    for candidate in written_expressions(ctx):
        current: cst.CSTNode = candidate
        write = None
        while write is None:
            parent = ctx.parent(current)
            if isinstance(parent, cst.Subscript) and parent.value is current and not is_store_target(ctx, parent):
                current = parent  # an item or a slice: a view
                continue
            if not isinstance(parent, cst.Attribute) or parent.value is not current:
                break
            call = ctx.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                break
            if parent.attr.value in torch_api.SHAPE_CHANGING_METHODS:
                write = Write(call, f"`{parent.attr.value}()`")
            elif parent.attr.value in torch_api.VIEW_METHODS:
                current = call
            else:
                break
        if write is None or ctx.grad_disabled(write.node) is not None or ctx.inference.runs_without_grad(write.node):
            continue
        found.append((candidate, write))
    ctx.cache["shape_writes_with_grad"] = found
    return found


_NAME_OR_ATTRIBUTE = frozenset({cst.Name, cst.Attribute})


def written_expressions(ctx: "FileContext") -> list[cst.CSTNode]:
    """The names and attributes that in-place writes may reach, found from the writes' side
    (an augmented assignment, an item assignment, an in-place method, `out=`): every
    name and attribute inside their targets and receivers, most files having few writes.
    Computed once per file."""
    if "written_expressions" in ctx.cache:
        return ctx.cache["written_expressions"]
    found: list[cst.CSTNode] = []
    # Node classes compared by identity (they have no subclasses): every call and argument
    # of the file passes here.
    for node in ctx.analysis.nodes_of(cst.AugAssign, cst.Assign, cst.Call, cst.Arg):
        cls = type(node)
        if cls is cst.AugAssign:
            roots = [node.target]
        elif cls is cst.Assign:
            roots = [target.target for target in node.targets if type(target.target) is cst.Subscript]
        elif cls is cst.Call:
            if type(node.func) is not cst.Attribute or not node.func.attr.value.endswith("_"):
                continue
            roots = [node.func.value]
        elif node.keyword is not None and node.keyword.value == "out":
            roots = [node.value]
        else:
            continue
        for root in roots:
            found.extend(inner for inner in iter_nodes(root) if type(inner) in _NAME_OR_ATTRIBUTE)
    ctx.cache["written_expressions"] = found
    return found


def call_written_expressions(ctx: "FileContext") -> list[cst.CSTNode]:
    """The names and attributes inside the arguments of calls that write their argument in
    place: a module of this file that works in place (``self.act(x)``, ``nn.ReLU(inplace=True)``),
    or whose ``forward`` writes its input, and a function of this file that writes its
    parameter (``helper_write``).  Computed once per file."""
    if "call_written_expressions" in ctx.cache:
        return ctx.cache["call_written_expressions"]
    found: list[cst.CSTNode] = []
    for call in ctx.analysis.nodes_of(cst.Call):
        if type(call.func) not in _NAME_OR_ATTRIBUTE or not call.args:
            continue
        for arg in call.args:
            if arg.keyword is not None or arg.star:
                continue
            if _call_write(ctx, arg) is not None:
                found.extend(inner for inner in iter_nodes(arg.value) if type(inner) in _NAME_OR_ATTRIBUTE)
    ctx.cache["call_written_expressions"] = found
    return found


def _call_write(ctx: "FileContext", arg: cst.Arg) -> Optional[Write]:
    """The write into ``arg``'s tensor that the call it is given to makes: a module that works
    in place (its first argument), or a function or module of this file that writes the
    parameter receiving it."""
    return _inplace_module_write(ctx, arg) or helper_write(ctx, arg.value)


def _inplace_module_write(ctx: "FileContext", arg: cst.Arg) -> Optional[Write]:
    """The write a module that works in place makes into ``arg``, its first argument."""
    call = ctx.parent(arg)
    positional = positional_args(call) if isinstance(call, cst.Call) else []
    if positional and positional[0] is arg and isinstance(call.func, (cst.Name, cst.Attribute)):
        module = ctx.autograd.writes_input(call.func)
        if module is not None:
            line = ctx.line_index.position(module.start)[0]
            return Write(call, f"`{ctx.snippet(call.func)}(..)`, the in-place `{ctx.snippet(module.func)}` of line {line}",
                         None, True)
    return None


def find_grad_write(ctx: "FileContext", node: cst.BaseExpression) -> Optional[Write]:
    """``find_write``, where a call that writes its argument in place (``_call_write``) is a
    write too: the writes autograd sees, whichever function makes them."""
    return settle_upward(ctx.cache.setdefault("find_grad_write", {}), node, lambda current: _grad_write_step(ctx, current))


def _grad_write_step(ctx: "FileContext", current: cst.CSTNode) -> tuple[Optional[cst.CSTNode], Optional[Write]]:
    parent = ctx.parent(current)
    if isinstance(parent, cst.Arg) and parent.value is current:
        # A function or module of this file first: its own write says where torch raises.
        inner = helper_write(ctx, current) if parent.keyword is None and not parent.star else None
        if inner is not None:
            return None, inner
        written = _argument_write(ctx, parent)
        if written is not None and written.how.startswith("`torch.nn.init."):
            return None, None  # the init functions write under `no_grad`
        # (`helper_write` was asked above: only a module working in place is left to ask)
        return None, written or (_inplace_module_write(ctx, parent) if parent.keyword is None and not parent.star
                                 else None)
    return _write_step(ctx, current)


def innermost_write(write: Write) -> Optional[Write]:
    """The write a call's callee makes itself, through helpers that hand the tensor on (None:
    not a call, or a layer that works in place)."""
    inner = write.inner
    while inner is not None and inner.inner is not None:
        inner = inner.inner
    return inner


def writes_with_grad(ctx: "FileContext") -> list[tuple[cst.CSTNode, Write]]:
    """(the name or attribute written, the write) for every in-place write the file makes on
    a tensor itself (not through ``.data`` or ``.detach()``), outside ``no_grad``: the writes
    autograd checks.  Computed once per file."""
    if "writes_with_grad" in ctx.cache:
        return ctx.cache["writes_with_grad"]
    found = []
    seen: set[int] = set()
    for candidate in [*written_expressions(ctx), *call_written_expressions(ctx)]:
        if id(candidate) in seen:
            continue
        seen.add(id(candidate))
        write = find_grad_write(ctx, candidate)
        if write is None or written_through_alias(ctx, candidate, write.node):
            continue
        if ctx.grad_disabled(write.node) is not None or ctx.inference.runs_without_grad(write.node):
            continue
        found.append((candidate, write))
    ctx.cache["writes_with_grad"] = found
    return found
