"""In-place writes that reach a caller's tensor through a helper's parameter.

``def save_image(t): grid = make_grid(t); grid.mul_(255)`` writes into the caller's ``t``
when ``make_grid`` returns a view of its argument (``return t.squeeze(0)`` for a single
image); ``make_grid(w.data)`` rescales a parameter when ``make_grid`` normalizes its input in
place (``img.clamp_(..)`` in a nested helper).  Helpers that mean to change their argument
change it on every path (``init_(w)``, ``normalize_(x)``); the writes reported here reach the
argument only on some paths: the written name is the parameter on one path and a new tensor
on another (``if ..: tensor = torch.cat(..)``), or the helper whose result is written
returns its argument on one path and a new tensor on another.  That is the aliasing no one
meant, and the caller, which reads the tensor again, sees it changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.analysis import torch_api
from torchlint.analysis.autograd import zipped_iterable
from torchlint.analysis.semantic import BindingKind, FunctionInfo
from torchlint.framework.writes import Write, find_write, written_expressions

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext

_DEPTH = 4  # helpers calling helpers: how far a write is followed up to the caller
_ALIAS_ATTRIBUTES = frozenset({"data"}) | torch_api.VIEW_ATTRIBUTES


@dataclass(frozen=True)
class ParamAlias:
    """The written name holds (a view of) the parameter ``param`` of ``function``."""

    function: FunctionInfo
    param: cst.Param
    partial: bool  # only on some paths
    via: Optional[cst.CSTNode]  # the node that makes it partial: a `return` of an alias, a rebinding


@dataclass(frozen=True)
class ArgumentWrite:
    write: Write  # the in-place write, inside a helper
    written: cst.Name  # the name it writes
    call: cst.Call  # the caller's call that passes the tensor
    argument: cst.BaseExpression  # what it passes
    read: Optional[cst.CSTNode]  # where the caller reads the tensor afterwards (None: a `.data`/`.detach()` alias)
    via: Optional[cst.CSTNode]  # where the alias is made on some paths only


def argument_writes(ctx: "FileContext") -> list[ArgumentWrite]:
    """In-place writes inside a function of this file that reach, on some paths only, a
    tensor its caller passed and reads afterwards (or passed as ``x.data``/``x.detach()``).
    Computed once per file."""
    if "argument_writes" in ctx.cache:
        return ctx.cache["argument_writes"]
    finder = _Finder(ctx)
    found: list[ArgumentWrite] = []
    seen: set[int] = set()
    for candidate in written_expressions(ctx):
        if not isinstance(candidate, cst.Name) or ctx.enclosing_function(candidate) is None:
            continue
        write = find_write(ctx, candidate)
        if write is None or id(write.node) in seen:
            continue
        alias = finder.param_alias(candidate, set())
        if alias is None:
            continue
        reached = finder.caller_reads(alias, alias.partial, alias.via, 0)
        if reached is not None:
            seen.add(id(write.node))
            call, argument, read, via = reached
            found.append(ArgumentWrite(write, candidate, call, argument, read, via))
    ctx.cache["argument_writes"] = found
    return found


class _Finder:
    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx
        self.model = ctx.model
        self.inference = ctx.inference
        self._entered: set[int] = set()  # the helpers whose returns are being read
        self._reads_memo: dict[tuple, Optional[tuple]] = {}

    # --- inside a function: what a name aliases -------------------------------------------------

    def param_alias(self, name: cst.Name, seen: set[int]) -> Optional[ParamAlias]:
        bindings = self.model.resolve(name)
        if not bindings or any(id(binding) in seen for binding in bindings):
            return None
        seen = seen | {id(binding) for binding in bindings}
        found = [self._binding_alias(binding, seen) for binding in bindings]
        aliases = [alias for alias in found if alias is not None]
        if not aliases or len({id(alias.param) for alias in aliases}) != 1:
            return None
        first = aliases[0]
        if len(aliases) < len(found):  # a new tensor on another path
            other = next(b for b, alias in zip(bindings, found) if alias is None)
            return ParamAlias(first.function, first.param, True, first.via or other.node)
        partial = next((alias for alias in aliases if alias.partial), None)
        return partial or first

    def _binding_alias(self, binding, seen: set[int]) -> Optional[ParamAlias]:
        if binding.kind is BindingKind.PARAM:
            function = binding.definition
            if isinstance(binding.node, cst.Param) and isinstance(function, FunctionInfo) \
                    and isinstance(function.node, cst.FunctionDef) and binding.node is not _self_param(function):
                return ParamAlias(function, binding.node, False, None)
            return None
        value = binding.value
        if value is None:
            return None
        if binding.kind is BindingKind.FOR and binding.iterates:
            if binding.path:
                value = zipped_iterable(self.model, value, binding.path)
            return self.expression_alias(value, seen) if value is not None else None
        if binding.kind is BindingKind.ASSIGN and not binding.path:
            return self.expression_alias(value, seen)
        return None

    def expression_alias(self, node: cst.BaseExpression, seen: set[int]) -> Optional[ParamAlias]:
        """The parameter whose storage ``node`` shares, if it does."""
        if isinstance(node, cst.Name):
            return self.param_alias(node, seen)
        if isinstance(node, cst.Attribute) and node.attr.value in _ALIAS_ATTRIBUTES:
            return self.expression_alias(node.value, seen)
        if isinstance(node, cst.Subscript) and _basic_index(node):
            return self.expression_alias(node.value, seen)
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and self.inference.qualname(func) is None and func.attr.value == "detach" \
                and not node.args:
            inner = self.expression_alias(func.value, seen)
            # `img = t.detach()` in a helper reads as a copy to detach from the caller's graph, but
            # shares its memory: a write to it is no more meant than one on some paths only.
            return ParamAlias(inner.function, inner.param, True, inner.via or node) if inner is not None else None
        if isinstance(func, cst.Attribute) and self.inference.qualname(func) is None \
                and func.attr.value in torch_api.VIEW_METHODS:
            return self.expression_alias(func.value, seen)
        function = self._local_function(node)
        if function is None:
            return None
        # A helper of this file whose result may be its argument (`return t.squeeze(0)`).
        if id(function) in self._entered or len(self._entered) > _DEPTH:
            return None
        self._entered.add(id(function))
        try:
            returns = function.returns
            aliases = [self.expression_alias(value, set()) for value in returns]
        finally:
            self._entered.discard(id(function))
        params = {id(alias.param) for alias in aliases if alias is not None and alias.function is function}
        if len(params) != 1:
            return None
        returned = next(alias for alias in aliases if alias is not None)
        argument = self.inference.passed_argument(node, function, returned.param)
        outer = self.expression_alias(argument, seen) if argument is not None else None
        if outer is None:
            return None
        if outer.partial:
            return outer
        if returned.partial or any(alias is None for alias in aliases):
            via = returned.via if returned.partial else next(v for v, a in zip(returns, aliases) if a is not None)
            return ParamAlias(outer.function, outer.param, True, via)
        return outer

    def _local_function(self, call: cst.Call) -> Optional[FunctionInfo]:
        function = self.ctx.autograd.local_function(call)
        return None if function is None or function.is_generator else function

    # --- the callers -------------------------------------------------------------------------------

    def caller_reads(self, alias: ParamAlias, partial: bool, via: Optional[cst.CSTNode], depth: int):
        """(call, argument, later read, via) for a call of ``alias.function`` that passes a
        tensor it reads afterwards, when the write reaches it on some paths only."""
        reached = self._caller_reads(alias.function, alias.param, partial, depth)
        if reached is None:
            return None
        call, argument, read, via_above = reached
        return call, argument, read, via or via_above

    def _caller_reads(self, function: FunctionInfo, param: cst.Param, partial: bool, depth: int):
        """``caller_reads`` for the parameter ``param``, with the ``via`` met on the way up
        (None: none). Memoised: helpers that pass a parameter on to each other (an
        interpreter's ``evaluate_*`` functions all passing ``state``) would otherwise be
        walked once per path, exponentially many."""
        key = (id(function), id(param), partial, depth)
        if key in self._reads_memo:
            return self._reads_memo[key]
        self._reads_memo[key] = None  # a cycle of callers says nothing
        found = self._find_caller_reads(function, param, partial, depth)
        self._reads_memo[key] = found
        return found

    def _find_caller_reads(self, function: FunctionInfo, param: cst.Param, partial: bool, depth: int):
        if depth > _DEPTH:
            return None
        for call in self.inference.calls_of(function):
            argument = self.inference.passed_argument(call, function, param)
            if argument is None:
                continue
            outer = self.expression_alias(argument, set()) if self.ctx.enclosing_function(call) else None
            if outer is not None:  # the caller passes its own parameter on: follow it up
                reached = self._caller_reads(outer.function, outer.param, partial or outer.partial, depth + 1)
                if reached is not None:
                    call_above, argument_above, read, via_above = reached
                    return call_above, argument_above, read, outer.via or via_above
                continue
            if not partial:
                detached = _detached_name(argument)
                computed = self.ctx.tensor(detached) if detached is not None else None
                if computed is not None and computed.attached is True and computed.leaf is False:
                    # `normalize_(x.detach())` writes `x`, read afterwards: the detach made no copy.
                    # (A leaf written so, `init_(w.detach())`, is being initialized.)
                    read = self._read_after(detached, call)
                    if read is not None:
                        return call, detached, read, argument
                continue
            if isinstance(argument, cst.Attribute) and argument.attr.value == "data" \
                    or isinstance(argument, cst.Call) and isinstance(argument.func, cst.Attribute) \
                    and argument.func.attr.value == "detach" and not argument.args:
                base = argument.value if isinstance(argument, cst.Attribute) else argument.func.value
                if self.ctx.tensor(base) is not None:
                    return call, argument, None, None
                continue
            if isinstance(argument, cst.Name) and self.ctx.tensor(argument) is not None:
                read = self._read_after(argument, call)
                if read is not None:
                    return call, argument, read, None
        return None

    def _read_after(self, name: cst.Name, call: cst.Call) -> Optional[cst.Name]:
        bindings = {id(binding) for binding in self.model.resolve(name)}
        if not bindings:
            return None
        ref = self.model.references.get(id(name))
        if ref is None:
            return None
        scope = ref[0]
        loop = next((a for a in self.ctx.ancestors(call) if isinstance(a, (cst.For, cst.While))
                     or isinstance(a, (cst.FunctionDef, cst.Module))), None)
        # In a loop, a read before the call sees the changed tensor in the next iteration,
        # unless the name is bound again in the loop first.
        looped = isinstance(loop, (cst.For, cst.While)) and not any(
            loop.start <= binding.node.start < loop.end for binding in self.model.resolve(name))
        for _seq, load in scope.loads.get(name.value, ()):
            seen = {id(b) for b in self.model.resolve(load)}
            if load is name or not seen or not seen <= bindings:  # surely the tensor passed
                continue
            if load.start > call.end or looped and loop.start <= load.start < loop.end:
                return load
        return None


def _detached_name(argument: cst.BaseExpression) -> Optional[cst.Name]:
    """``x`` of ``x.detach()``."""
    if isinstance(argument, cst.Call) and isinstance(argument.func, cst.Attribute) \
            and argument.func.attr.value == "detach" and not argument.args \
            and isinstance(argument.func.value, cst.Name):
        return argument.func.value
    return None


def _self_param(function: FunctionInfo) -> Optional[cst.Param]:
    params = function.positional_params()
    return params[0] if params and function.kind in ("method", "classmethod") else None


def _basic_index(node: cst.Subscript) -> bool:
    """``x[0]``, ``x[:, 1:]``, ``x[i]``: indexing that gives a view, not a copy (no masks)."""
    for element in node.slice:
        inner = element.slice
        if isinstance(inner, cst.Slice):
            continue
        value = getattr(inner, "value", None)
        if not isinstance(value, (cst.Integer, cst.UnaryOperation, cst.Ellipsis)) \
                and not (isinstance(value, cst.Name) and value.value == "None"):
            return False
    return True
