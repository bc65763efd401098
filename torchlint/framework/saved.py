"""Reads by ``backward()``: a tensor autograd saved for backward is read again when
backward runs, so an in-place write to it between the two is a write that something
reads afterwards, even when the code never mentions the tensor again.  What the
``forward`` of an ``nn.Module`` returns counts as differentiated after the method: the
training step's backward runs through it.

    e = w.exp()            # exp saves its result for backward
    e[0] = 0.0             # the write changes what was saved
    e.sum().backward()     # backward reads it: RuntimeError (or, through numpy, a wrong gradient)

Which operations save what is torch_facts' ``saves`` (generated from torch under
``saved_tensors_hooks``).  A tensor counts as saved by an operation that ran before the
write, outside ``no_grad``, on graph tensors (the inference says so), when that
operation's result reaches a ``backward()`` (or ``torch.autograd.grad``) that runs after
the write: the backward's tensor is computed from it, through assignments in between.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.walk import enclosing_loops, iter_nodes
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.autograd import view_root
from torchlint.analysis.semantic import Binding, BindingKind
from torchlint.analysis.values import Kind
from torchlint.framework.writes import (
    Write, basic_index, find_write, helper_write, written_expressions, written_through_alias,
)

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext

_OPERATORS = {cst.Multiply: "mul", cst.Divide: "div", cst.MatrixMultiply: "matmul", cst.Power: "pow",
              cst.Add: "add", cst.Subtract: "sub"}


@dataclass(frozen=True)
class SavedRead:
    """``saver`` saved the tensor (``what``: "its result", or the name it took as input)
    and ``backward``, after the write, reads what it saved."""

    saver: cst.CSTNode
    what: str
    backward: cst.CSTNode
    # The tensor the written view and the saved one are both views of (`z` of `z1, z2 =
    # halves(z)`), when the operation saved another view of it.
    shares: str = ""

    def related(self, ctx: Optional["FileContext"] = None) -> tuple[tuple[cst.CSTNode, str], ...]:
        reads = "`forward` returns it here: the backward of a training step reads what was saved" \
            if isinstance(self.backward, cst.Return) else "and backward reads it here, after the write"
        why = _module_why(ctx, self.saver) if ctx is not None else None
        saves = f"saves {self.what} for backward here" + (f": {why}" if why else "")
        found = ((self.saver, saves), (self.backward, reads))
        caller = ctx.cache.get("returns_backpropagated", {}).get(id(self.backward)) if ctx is not None else None
        if caller is not None and not caller.direct:
            # `return` here hands the tensor to the calls that take it to the backward.
            found = ((self.saver, saves),
                     (self.backward, "returns a result computed from it"),
                     *((call, "this call's result is taken on towards the backward") for call in caller.calls),
                     (caller.backward, "what `forward` returns is differentiated when the module trains"
                      if isinstance(caller.backward, cst.Return) else "and backward reads it here, after the write"))
        return found

    def reader(self, ctx: "FileContext") -> str:
        """The backward as a message names it: the call, or the backward through what a
        module's ``forward`` (or a function whose result a caller back-propagates) returns."""
        shown = ctx.snippet(self.backward)
        if isinstance(self.backward, cst.Return):
            caller = ctx.cache.get("returns_backpropagated", {}).get(id(self.backward))
            if caller is not None and not caller.direct:
                through = ", then ".join(f"`{ctx.snippet(call)}` (line {ctx.line_index.position(call.start)[0]})"
                                         for call in caller.calls)
                end = caller.backward
                line = ctx.line_index.position(end.start)[0]
                if isinstance(end, cst.Return):
                    owner = ctx.enclosing_function(end)
                    info = ctx.model.functions.get(id(owner)) if owner is not None else None
                    name = info.name if info is not None else "forward"
                    return (f"the backward through `{shown}` (its result goes, through {through}, to "
                            f"`{ctx.snippet(end)}`, line {line}, what `{name}` returns: a module's output is "
                            f"differentiated when it trains)")
                return (f"the backward through `{shown}` (its result goes, through {through}, to "
                        f"`{ctx.snippet(end)}`, line {line}, which back-propagates it)")
            if caller is not None:
                line = ctx.line_index.position(caller.backward.start)[0]
                return f"the backward through `{shown}` (`{ctx.snippet(caller.backward)}`, line {line}, " \
                    "back-propagates it)"
            return f"the backward through `{shown}` (a module's output is differentiated when it trains)"
        return f"`{shown}`"


def _module_why(ctx: "FileContext", saver: cst.CSTNode) -> Optional[str]:
    """Why calling a module saves its output (``conv(x)`` of a block whose ``forward`` ends in a
    ReLU when its activation is set), for a saver that is a module call."""
    if not isinstance(saver, cst.Call):
        return None
    module = ctx.infer(saver.func)
    if module is None or module.kind is not Kind.MODULE:
        return None
    behaviour = ctx.autograd.module_behaviour(saver.func)
    return behaviour.saves_output if behaviour is not None else None


@dataclass(frozen=True)
class SavedWrite:
    """An in-place write to a tensor (``name``, or the expression written) that an
    operation saved for backward, and the backward that reads it after the write."""

    write: Write
    written: cst.BaseExpression
    read: SavedRead


# What a list of saved results (`feats = [F.relu(conv(x)) for ..]`) had saved: its items.
LIST_ITEMS = "its items"


def saved_writes(ctx: "FileContext") -> list[SavedWrite]:
    """Every in-place write to a saved tensor that a later backward reads, made on the
    tensor itself (a write through a ``.data``, ``.detach()``, view or numpy alias is the
    aliasing rules'): ``s = torch.sigmoid(h); s.mul_(2)``, ``F.relu(h.exp(), inplace=True)``."""
    if "saved_writes" in ctx.cache:
        return ctx.cache["saved_writes"]
    found: list[SavedWrite] = []
    ctx.cache["saved_writes"] = found
    scopes = [scope for scope in ctx.model.scopes if has_backward(ctx, scope)]
    if not scopes:
        return found
    # `out += x` reads `out` without a load of it: its target is asked too, in source order.
    augmented: dict[tuple[int, str], list[cst.Name]] = {}
    for statement in ctx.analysis.nodes_of(cst.AugAssign):
        if isinstance(statement.target, cst.Name):
            owner = ctx.enclosing_function(statement) or ctx.module
            augmented.setdefault((id(owner), statement.target.value), []).append(statement.target)
    for scope in scopes:
        names = set(scope.loads) | {name for owner, name in augmented if owner == id(scope.node)}
        for name in names:
            loads = sorted([load for _seq, load in scope.loads.get(name, ())] +
                           augmented.get((id(scope.node), name), []), key=lambda node: node.start)
            # The writes already reported, by saver: the first write on a path is the one to
            # change, and each arm of an `if` is a path of its own (`if 'scale_factor' in cfg:
            # feats[i] += ..` / `else: feats[i] += ..`), since only one of them runs.
            shown: dict[int, list[cst.CSTNode]] = {}
            for load in loads:
                write = find_write(ctx, load) or helper_write(ctx, load)
                if write is None or written_through_alias(ctx, load, write.node):
                    continue
                read = saved_read(ctx, ctx.model.resolve(load), write.node, name)
                if read is None:
                    continue
                earlier = shown.setdefault(id(read.saver), [])
                if all(ctx.model.exclusive(previous, write.node) for previous in earlier):
                    earlier.append(write.node)
                    found.append(SavedWrite(write, load, read))
    # A computed result written in place (`F.relu(h.exp(), inplace=True)`, `h.exp().relu_()`):
    # no name to load, so each call or operator is asked, as the loads are.
    by_owner = {id(scope.node): scope for scope in scopes}
    # Only the code of those scopes: a module's `forward`s are walked, not the rest of the file.
    roots = [scope.node for scope in scopes if not any(id(a) in by_owner for a in ctx.ancestors(scope.node))]
    for node in (node for root in roots for node in iter_nodes(root)):
        if not isinstance(node, (cst.Call, cst.BinaryOperation)):
            continue
        write = find_write(ctx, node)
        if write is None:
            continue
        scope = by_owner.get(id(ctx.enclosing_function(node) or ctx.module))
        if scope is None or not _saves_result(ctx, node):
            continue
        for backward in _backward_calls(ctx, scope):
            if backward.start > write.node.end and _reaches(ctx, scope, node, backward):
                found.append(SavedWrite(write, node, SavedRead(node, "its result", backward)))
                break
    return found


def saved_read(ctx: "FileContext", bindings: list[Binding], write: cst.CSTNode,
               name: str, through_base: bool = False) -> Optional[SavedRead]:
    """When the tensor bound by ``bindings`` (the name ``name``) was saved for backward
    before ``write`` and a backward after ``write`` reads it (module docstring).
    ``through_base``: the write is to the tensor ``name`` is a view of, not to ``name``
    (binding ``name`` again then does not take the saved view out of the write's way)."""
    scope = bindings[0].scope if bindings else None
    if scope is None or any(binding.scope is not scope for binding in bindings):
        return None
    backwards = [call for call in _backward_calls(ctx, scope)
                 if call.start > write.end and not ctx.model.exclusive(write, call)]
    if not backwards:
        return None
    for saver, what, *shares in _savers(ctx, bindings, name, write, through_base):
        if ctx.model.exclusive(saver, write):
            continue
        for backward in backwards:
            if _reaches(ctx, scope, saver, backward):
                return SavedRead(saver, what, backward, *shares)
    return None


def _savers(ctx: "FileContext", bindings: list[Binding], name: str, write: cst.CSTNode, through_base: bool = False):
    """(operation, what it saved) for each operation before ``write`` that saved the tensor."""
    ids = {id(binding) for binding in bindings}
    for binding in bindings:
        value = binding.value
        if binding.kind is BindingKind.ASSIGN and value is not None and value.end <= write.start:
            kept = _kept_item(ctx, value, binding.path)
            if kept is not None:
                yield kept, "its result"  # `evals, evecs = torch.linalg.eigh(k)`, `torch.sort(x)[1]`
                continue
        if binding.kind is not BindingKind.ASSIGN or binding.path or value is None or value.end > write.start:
            continue
        if _saves_result(ctx, value):
            yield value, "its result"
        elif isinstance(value, (cst.ListComp, cst.List)) and _item_written(ctx, write):
            # `feats = [F.relu(conv(x)) for ..]`, then `feats[i] += ..`: every item is a saved result.
            if isinstance(value, cst.ListComp):
                items = [value.elt]
            elif all(isinstance(element, cst.Element) for element in value.elements):
                items = [element.value for element in value.elements]
            else:
                items = []  # `[*rest, x]`: not every item is seen
            if items and all(_saves_result(ctx, item) for item in items):
                yield items[0], LIST_ITEMS
        elif isinstance(value, cst.Name):
            # `x = y`: the same tensor under another name, so what saved `y`'s result saved it.
            for aliased in ctx.model.resolve(value):
                if aliased.kind is BindingKind.ASSIGN and not aliased.path and aliased.value is not None \
                        and aliased.value.end <= value.start and _saves_result(ctx, aliased.value):
                    yield aliased.value, "its result"
    scope = bindings[0].scope
    value = _assigned_value(ctx, write)
    for _seq, load in scope.loads.get(name, ()):
        # The value of `x[0] = f(x)` or `x += f(x)` runs before its write, though written after.
        if load.end > write.start and not (value is not None and value.start <= load.start < value.end):
            if value is None or load.start >= value.end:
                break
            continue
        if not ids & {id(binding) for binding in ctx.model.resolve(load)} \
                or _rebound(scope, name, load, write, own_value=not through_base):
            continue
        operation = _saves_input(ctx, load)
        if operation is not None:
            yield operation, f"`{ctx.snippet(_view_of(ctx, load))}`"
    yield from _view_savers(ctx, scope, ids, name, write, value)
    if len(bindings) == 1:
        yield from _sibling_savers(ctx, scope, bindings[0], write, value)


def _viewed_base(ctx: "FileContext", binding: Binding) -> Optional[cst.Name]:
    """The name whose tensor ``binding`` binds a view of: ``b = x[:, c:]``, or ``a, b =
    halves(x)`` with a function of the file that returns views of its parameter."""
    value = binding.value
    if binding.kind is not BindingKind.ASSIGN or value is None:
        return None
    if not binding.path:
        return view_root(value)
    if not isinstance(value, cst.Call) or len(binding.path) != 1:
        return None
    function = ctx.autograd.local_function(value)
    param = ctx.autograd.returned_views(function) if function is not None else None
    passed = ctx.inference.passed_argument(value, function, param) if param is not None else None
    return passed if isinstance(passed, cst.Name) else None


def _sibling_savers(ctx: "FileContext", scope, binding: Binding, write: cst.CSTNode,
                    value: Optional[cst.BaseExpression]):
    """The tensor written is a view of a name (``z1, z2 = halves(z)``, ``z2 = z[:, c:]``): an
    operation that saved that name, or another view of it (``self.net(z1)``), before the write
    saved the storage and the version counter the write to ``z2`` changes."""
    base = _viewed_base(ctx, binding)
    if base is None:
        return
    base_ids = {id(each) for each in ctx.model.resolve(base)}
    if not base_ids:
        return
    for operation, what in _view_savers(ctx, scope, base_ids, base.value, write, value):
        yield operation, what, base.value
    for _seq, load in scope.loads.get(base.value, ()):
        if load.start >= write.start or not base_ids & {id(each) for each in ctx.model.resolve(load)}:
            continue
        operation = _saves_input(ctx, load)
        if operation is not None:
            yield operation, f"`{ctx.snippet(_view_of(ctx, load))}`", base.value
            continue
        # `a, b = halves(z)`: both names are views of `z`.
        arg = ctx.parent(load)
        call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        statement = ctx.parent(call) if isinstance(call, cst.Call) else None
        if not isinstance(statement, cst.Assign) or statement.value is not call or len(statement.targets) != 1 \
                or not isinstance(statement.targets[0].target, cst.Tuple):
            continue
        function = ctx.autograd.local_function(call)
        param = ctx.autograd.returned_views(function) if function is not None else None
        if param is None or ctx.inference.passed_argument(call, function, param) is not load:
            continue
        for element in statement.targets[0].target.elements:
            alias = element.value
            if not isinstance(alias, cst.Name):
                continue
            for _seq, other in scope.loads.get(alias.value, ()):
                inside = value is not None and value.start <= other.start < value.end
                if other.start < statement.end or (other.end > write.start and not inside):
                    continue
                if not any(each.node is statement or ctx.parent(each.node) is statement
                           or each.value is call for each in ctx.model.resolve(other)):
                    continue
                operation = _saves_input(ctx, other)
                if operation is not None:
                    yield operation, f"`{alias.value}`", base.value


def _item_written(ctx: "FileContext", write: cst.CSTNode) -> bool:
    """The write is to a tensor held as an item of the name (``feats[i] += ..``,
    ``feats[i].add_(..)``); ``feats[i] = t`` puts another tensor in a list, writing none."""
    if isinstance(write, cst.Subscript):
        return isinstance(ctx.parent(write), cst.AugAssign)
    return isinstance(write, cst.Call) and isinstance(write.func, cst.Attribute) \
        and isinstance(write.func.value, cst.Subscript)


def _view_savers(ctx: "FileContext", scope, ids: set[int], name: str, write: cst.CSTNode,
                 value: Optional[cst.BaseExpression]):
    """``h = outputs[:, t]``, then ``self.cell(x, h)`` before the write to ``outputs`` (or
    in its value, the view bound in an earlier iteration of a loop): what saves the view
    saves the storage of ``outputs`` and its version counter, which a write to any part of
    ``outputs`` bumps."""
    for _seq, load in scope.loads.get(name, ()):
        if not ids & {id(binding) for binding in ctx.model.resolve(load)}:
            continue
        view = _view_of(ctx, load)
        statement = ctx.parent(view)
        if view is load or not isinstance(statement, cst.Assign) or statement.value is not view \
                or len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
            continue
        alias = statement.targets[0].target.value
        loops = enclosing_loops(statement)
        loop = loops[0] if loops else None
        for _seq, other in scope.loads.get(alias, ()):
            inside = value is not None and value.start <= other.start < value.end
            if other.end > write.start and not inside:
                continue
            # Bound to the view here, or in the iteration before (the view is bound after
            # this read, in the same loop, and the name bound nowhere else in the loop).
            carried = loop is not None and other.start < statement.start \
                and (enclosing_loops(other) or [None])[0] is loop \
                and all(b.node.start < loop.start or b.node.start >= loop.end or b.value is view
                        for b in scope.bindings.get(alias, ()))
            if not carried and not any(binding.value is view for binding in ctx.model.resolve(other)):
                continue
            operation = _saves_input(ctx, other)
            if operation is not None:
                yield operation, f"`{alias}`"


def _assigned_value(ctx: "FileContext", write: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value of the assignment whose target ``write`` is (``x[0] = v``, ``x += v``)."""
    parent = ctx.parent(write)
    if isinstance(parent, cst.AssignTarget):
        parent = ctx.parent(parent)
        return parent.value if isinstance(parent, cst.Assign) else None
    if isinstance(parent, cst.AugAssign) and parent.target is write:
        return parent.value
    return None


def _rebound(scope, name: str, load: cst.Name, write: cst.CSTNode, own_value: bool = True) -> bool:
    """Whether ``name`` is bound again between ``load`` and ``write`` (``h = F.linear(h, w)``:
    the ``h`` written later is the new tensor, not the one the operation saved). The
    binding the write's own value makes (``x = F.relu(x, inplace=True)``) comes after it."""
    return any((load.end <= binding.node.start or own_value and binding.value is not None
                and binding.value.start <= load.start < binding.value.end)  # `x = self.bn(x)` reads, then binds
               and binding.node.start < write.start and binding.kind is not BindingKind.AUGASSIGN
               and not (binding.value is not None and binding.value.start <= write.start < binding.value.end)
               for binding in scope.bindings.get(name, ()))


def _letters(ctx: "FileContext", operation: cst.CSTNode) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    """The ``saves`` letters of ``operation`` and its tensor operands (receiver or first first)."""
    if isinstance(operation, cst.BinaryOperation):
        op = _OPERATORS.get(type(operation.operator))
        fact = torch_facts.method(op) if op is not None else None
        operands = [operation.left, operation.right]
    elif isinstance(operation, cst.Call):
        func = operation.func
        qualname = ctx.qualname(func)
        arguments = [arg.value for arg in operation.args if arg.keyword is None and arg.star == ""]
        if qualname is not None:
            fact = torch_facts.fact(qualname)
            if fact is not None and fact.kind == "module_class":
                return None  # a module's constructor
            operands = arguments
        elif isinstance(func, cst.Attribute) and ctx.tensor(func.value) is not None:
            fact = torch_facts.method(func.attr.value)
            operands = [func.value, *arguments]
        else:
            module = ctx.infer(func)
            if module is None or module.kind is not Kind.MODULE or not arguments:
                return None
            fact = torch_facts.fact(module.qualname) if module.qualname is not None else None
            # A module's letters: "i"/"c" its input (requiring grad or not), "o" its output.
            if fact is not None and fact.saves and module.qualname != "torch.nn.Sequential":
                # A layer with weights keeps what it multiplies them with: every tensor it is
                # given (`cell(x, h)` keeps `h` too); the probe gave others one tensor.
                given = arguments if fact.parameters else arguments[:1]
                return fact.saves.replace("O", "o").replace("I", "i"), given
            # A container or a module of the project: what its layers do, as built.
            behaviour = ctx.autograd.module_behaviour(func)
            if behaviour is None or not (behaviour.saves_output or behaviour.saves_input):
                return None
            return ("o" if behaviour.saves_output else "") + behaviour.saves_input, arguments[:1]
    else:
        return None
    if fact is None or not fact.saves or fact.saves in ("-", "n"):
        return None
    tensors = [operand for operand in operands if ctx.tensor(operand) is not None]
    unknown = [operand for operand in operands if ctx.tensor(operand) is None and not _number(ctx, operand)]
    if unknown:
        return None  # whether an operand is a tensor decides which letters apply
    if len(tensors) > 1:
        return "".join(letter for letter in fact.saves if letter.islower()), tensors
    return "".join(letter.lower() for letter in fact.saves if letter.isupper()), tensors


def _kept_item(ctx: "FileContext", value: cst.BaseExpression, path: tuple) -> Optional[cst.Call]:
    """The operation that saved for backward the tensor of its tuple result that a name is
    bound to (``evals, evecs = torch.linalg.eigh(k)``: the path ``(0,)``; ``v = torch.sort(x)[1]``),
    when torch's facts say it keeps that one (``kept_outputs``) and it runs on graph tensors."""
    call, index = value, path[0] if len(path) == 1 else None
    if not path and isinstance(value, cst.Subscript) and len(value.slice) == 1 \
            and isinstance(value.slice[0].slice, cst.Index) and isinstance(value.slice[0].slice.value, cst.Integer):
        call, index = value.value, int(value.slice[0].slice.value.value)
        if isinstance(call, cst.Name):  # `out = torch.linalg.eigh(k)`, then `out[0]`
            held = ctx.model.assigned_values(call)
            call = held[0] if held is not None and len(held) == 1 else None
    if index is None or not isinstance(call, cst.Call) or ctx.grad_disabled(call) is not None:
        return None
    func = call.func
    qualname = ctx.qualname(func)
    if qualname is not None:
        fact = torch_facts.fact(qualname)
        operands = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    elif isinstance(func, cst.Attribute) and ctx.tensor(func.value) is not None:
        fact = torch_facts.method(func.attr.value)
        operands = [func.value]
    else:
        return None
    if index not in torch_facts.kept_outputs(fact):
        return None
    tensors = [ctx.tensor(operand) for operand in operands]
    return call if any(each is not None and each.attached is True for each in tensors) else None


def _number(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return True
    inferred = ctx.infer(node)
    return inferred is not None and inferred.kind is Kind.OTHER


def _in_graph(ctx: "FileContext", operation: cst.CSTNode) -> bool:
    """The operation's result requires grad, and it does not run under ``no_grad``."""
    result = ctx.tensor(operation)
    return result is not None and result.attached is True and ctx.grad_disabled(operation) is None


def _saves_result(ctx: "FileContext", operation: cst.CSTNode) -> bool:
    found = _letters(ctx, operation)
    return found is not None and "o" in found[0] and _in_graph(ctx, operation)


def _view_of(ctx: "FileContext", load: cst.Name) -> cst.BaseExpression:
    """The outermost expression around ``load`` that is a view of its tensor (``x[0, :]``,
    ``x.transpose(1, 2)``, ``x.t()[0]``), or ``load`` itself: a view shares the tensor's
    storage and its version counter, so an operation that saves the view saves ``load``.
    When ``load`` is not known to be a tensor (a parameter), only what a layer is then
    called on asks this: a tensor, then."""
    current: cst.BaseExpression = load
    while True:
        parent = ctx.parent(current)
        if isinstance(parent, cst.Attribute) and parent.value is current:
            call = ctx.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                if parent.attr.value not in torch_api.TRACKED_VIEW_METHODS:
                    return current
                current = call
            elif parent.attr.value in torch_api.TRACKED_VIEW_ATTRIBUTES:
                current = parent
            else:
                return current
        elif isinstance(parent, cst.Subscript) and parent.value is current and basic_index(ctx, parent) \
                and (ctx.tensor(current) is not None or all(isinstance(e.slice, cst.Slice) for e in parent.slice)):
            current = parent  # (a dict's `d["key"]` is no view: unknown, only slices say tensor)
        else:
            return current


def _saves_input(ctx: "FileContext", load: cst.Name) -> Optional[cst.CSTNode]:
    """The operation that takes ``load`` (or a view of it) as an operand and saves it for
    backward, if any."""
    operand = _view_of(ctx, load)
    parent = ctx.parent(operand)
    if isinstance(parent, cst.Attribute) and parent.value is operand:
        operation = ctx.parent(parent)
        if not (isinstance(operation, cst.Call) and operation.func is parent):
            return None
    elif isinstance(parent, cst.Arg) and parent.value is operand:
        operation = ctx.parent(parent)
    elif isinstance(parent, cst.BinaryOperation):
        operation = parent
    else:
        return None
    found = _letters(ctx, operation)
    if found is None or not any(each is operand for each in found[1]):
        return None
    letters = found[0]
    value = ctx.tensor(operand)
    if not _in_graph(ctx, operation):
        return None
    if value is None:
        # A layer that keeps its input whether it requires grad or not (its parameters need
        # it): what it is called on is a tensor, and it is kept.
        return operation if "i" in letters and "c" in letters and _module_call(ctx, operation) else None
    if value.attached is True and "i" in letters:
        return operation
    if value.attached is False and "c" in letters:
        return operation
    if value.attached is None and "i" in letters and "c" in letters:
        return operation  # kept whether it requires grad or not
    return None


def _module_call(ctx: "FileContext", operation: cst.CSTNode) -> bool:
    if not isinstance(operation, cst.Call):
        return False
    module = ctx.infer(operation.func)
    return module is not None and module.kind is Kind.MODULE


def has_backward(ctx: "FileContext", scope) -> bool:
    """Whether the code of ``scope`` calls backward at all (most scopes do not)."""
    return bool(_backward_calls(ctx, scope))


def _backward_calls(ctx: "FileContext", scope) -> list[cst.CSTNode]:
    """The backward calls in the code of ``scope`` (the autograd model's, not those run
    by the functions it calls), in source order, and the ``return`` statements of a
    module's ``forward``: what it returns is differentiated when the module trains."""
    if "forward_returns" not in ctx.cache:
        found: dict[int, list[cst.CSTNode]] = {}
        for candidate in ctx.model.scopes:
            function = candidate.function
            if not _trained_method(ctx, function) or not function.returns:
                continue
            found.setdefault(id(candidate.node), []).extend(value.parent for value in function.returns)
            # `return self.extract_features(x)`: what that method returns is the module's output.
            for value in function.returns:
                method = _own_method(function, value)
                if method is not None and method.returns:
                    found.setdefault(id(method.node), []).extend(inner.parent for inner in method.returns)
        # A function whose result a caller back-propagates (`loss = nll(out, y)`, `loss.backward()`):
        # none where the file calls no backward (`backward()`, `torch.autograd.grad`) at all.
        returns_backpropagated: dict[int, Propagation] = {}
        callers_backpropagate = "backward" in ctx.text or "autograd" in ctx.text
        for candidate in ctx.model.scopes if callers_backpropagate else ():
            function = candidate.function
            if function is None or not isinstance(function.node, cst.FunctionDef) or not function.returns \
                    or function.is_generator or id(candidate.node) in found:
                continue
            backward = _backpropagated_result(ctx, function)
            if backward is not None:
                found.setdefault(id(candidate.node), []).extend(value.parent for value in function.returns)
                returns_backpropagated.update((id(value.parent), backward) for value in function.returns)
        # A function of the file that writes in place and whose result reaches, through the
        # calls of this file (one or two levels), a backward or what a module's `forward`
        # returns (`h = gate(self.fc(x))`, `return self.head(h)`): its returns are
        # differentiated too. Only functions that write are followed: the others have nothing
        # to report.
        seeds = dict(found)
        for candidate in ctx.model.scopes:
            function = candidate.function
            if function is None or not isinstance(function.node, cst.FunctionDef) or not function.returns \
                    or function.is_generator or id(candidate.node) in seeds or not _writes_in_place(ctx, function):
                continue
            chain = _result_reaches(ctx, function, seeds, returns_backpropagated, 2, ())
            if chain is not None:
                found.setdefault(id(candidate.node), []).extend(value.parent for value in function.returns)
                returns_backpropagated.update((id(value.parent), chain) for value in function.returns)
        ctx.cache["forward_returns"] = found
        ctx.cache["returns_backpropagated"] = returns_backpropagated
    calls = [backward.node for backward in ctx.autograd.backwards(scope) if backward.via is None]
    return calls + ctx.cache["forward_returns"].get(id(scope.node), [])


@dataclass(frozen=True)
class Propagation:
    """How what a function returns reaches a backward through the calls of the file:
    ``calls`` (the call of the function, then the call of the function that made it, ..),
    and ``backward``, a backward call or a ``return`` of a module's ``forward``."""

    calls: tuple[cst.Call, ...]
    backward: cst.CSTNode
    direct: bool = False  # one call, in the code that runs the backward


def _writes_in_place(ctx: "FileContext", function) -> bool:
    """Whether the code of ``function`` writes something in place (``x += ..``, ``x[i] =
    ..``, ``x.mul_(..)``, ``out=``, ``inplace=True``, an in-place layer held in an
    attribute): the functions worth following to a backward."""
    if "writing_functions" not in ctx.cache:
        # The functions whose own code holds a write a plain look finds (computed once per file).
        ctx.cache["writing_functions"] = {id(ctx.enclosing_function(node)) for node in written_expressions(ctx)} | {
            id(ctx.enclosing_function(arg)) for arg in ctx.analysis.nodes_of(cst.Arg)
            if arg.keyword is not None and arg.keyword.value == "inplace"}
    node = function.node
    if id(node) in ctx.cache["writing_functions"]:
        return True
    # `x = self.relu(x)` with `self.relu = nn.ReLU(inplace=True)`.
    return ctx.autograd.builds_inplace_layers() and any(
        isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.args
        and ctx.enclosing_function(inner) is node and ctx.autograd.writes_input(inner.func) is not None
        for inner in iter_nodes(node.body))


def _result_reaches(ctx: "FileContext", function, seeds: dict[int, list[cst.CSTNode]], known: dict,
                    depth: int, visited: tuple) -> Optional[Propagation]:
    """How a call of ``function`` in this file has its result reach a backward after it: one
    in the caller's code, a ``return`` of a caller that is a module's ``forward`` (or whose
    result is back-propagated: ``seeds``), or, ``depth`` allowing, a ``return`` of a caller
    whose own result gets there."""
    for call in ctx.inference.calls_of(function):
        owner = ctx.enclosing_function(call)
        info = ctx.model.functions.get(id(owner)) if owner is not None else None
        scope = info.scope if info is not None else ctx.model.module_scope if owner is None else None
        if scope is None or info is function or (info is not None and id(info.node) in visited):
            continue
        for backward in ctx.autograd.backwards(scope):
            if backward.via is None and backward.node.start >= call.end \
                    and _reaches(ctx, scope, call, backward.node):
                return Propagation((call,), backward.node)
        if info is None or info.is_generator:
            continue
        returns = [value.parent for value in info.returns if value.parent.end >= call.end]
        if not returns:
            continue
        if id(scope.node) in seeds:
            for node in seeds[id(scope.node)]:
                if node in returns and _reaches(ctx, scope, call, node):
                    earlier = known.get(id(node))  # a backward that a caller of `info` runs
                    if earlier is not None:
                        return Propagation((call, *earlier.calls), earlier.backward)
                    return Propagation((call,), node)
        elif depth > 1 and isinstance(info.node, cst.FunctionDef):
            reaching = [node for node in returns if _reaches(ctx, scope, call, node)]
            if reaching:
                outer = _result_reaches(ctx, info, seeds, known, depth - 1, (*visited, function.node))
                if outer is not None:
                    return Propagation((call, *outer.calls), outer.backward)
    return None


def _backpropagated_result(ctx: "FileContext", function) -> Optional[Propagation]:
    """A backward, in the code that calls ``function``, of a tensor computed from the
    call's result (``nll(out, y).backward()``, ``probs = softmax(z)``, ``loss =
    -probs.log().mean()`` then ``loss.backward()``), after the call."""
    for call in ctx.inference.calls_of(function):
        owner = ctx.enclosing_function(call)
        info = ctx.model.functions.get(id(owner)) if owner is not None else None
        scope = info.scope if info is not None else ctx.model.module_scope if owner is None else None
        if scope is None:
            continue
        for backward in ctx.autograd.backwards(scope):
            if backward.via is not None or backward.node.start < call.end:
                continue
            if _reaches(ctx, scope, call, backward.node):
                return Propagation((call,), backward.node, direct=True)
    return None


def _trained_method(ctx: "FileContext", function) -> bool:
    """``function`` is what calling an ``nn.Module`` runs: its ``forward``, or a ``__call__``
    the class defines in its place (``module(x)`` then runs that, with a graph)."""
    if ctx.is_module_forward(function):
        return True
    if function is None or function.name != "__call__" or function.cls is None or function.kind != "method":
        return False
    base = ctx.inference.torch_base(function.cls)
    return base is not None and torch_api.is_module_class(base)


def _own_method(function, value: cst.BaseExpression):
    """The method of ``function``'s class that ``value`` calls on ``self`` (``self.encode(x)``)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name) and value.func.value.value == function.self_name):
        return None
    method = function.cls.methods.get(value.func.attr.value)
    return method if method is not None and method is not function and method.kind == "method" else None


def _backward_tensor(node) -> cst.BaseExpression:
    if isinstance(node, cst.Return):
        return node.value
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        return func.value
    return node.args[0].value


def _reaches(ctx: "FileContext", scope, saver: cst.CSTNode, backward: cst.Call) -> bool:
    """Whether the tensor ``backward`` differentiates is computed from ``saver``'s result:
    it contains ``saver``, or a name bound (between the two) to something that does, or
    written with it (``x[0] = saver``: the result is copied into ``x``, and the gradient of
    ``x`` flows through it)."""
    tainted: set[int] = set()  # ids of bindings computed from the saver's result
    bindings = [(binding.value.end, binding) for group in scope.bindings.values() for binding in group
                if binding.value is not None and saver.end <= binding.value.end <= backward.start
                and binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN)]
    stores = [(node.value.end, node) for node in _item_assignments(ctx, scope)
              if saver.end <= node.value.end <= backward.start]
    appends = [(node.end, node) for node in _appends(ctx, scope) if saver.end <= node.end <= backward.start]
    for _end, event in sorted(bindings + stores + appends, key=lambda pair: pair[0]):
        if isinstance(event, cst.Call):
            if any(_mentions(ctx, arg.value, saver, tainted) for arg in event.args):
                tainted.update(id(binding) for binding in ctx.model.resolve(event.func.value))
        elif isinstance(event, cst.Assign):
            if _mentions(ctx, event.value, saver, tainted):
                for target in event.targets:
                    root = target.target
                    while isinstance(root, cst.Subscript):
                        root = root.value
                    if isinstance(root, cst.Name):
                        tainted.update(id(binding) for binding in ctx.model.resolve(root))
        elif _mentions(ctx, event.value, saver, tainted):
            tainted.add(id(event))
            if event.kind is BindingKind.AUGASSIGN and isinstance(event.node, cst.Name):
                # `out += x` writes `x` into the tensor `out` held: what reads that tensor
                # through another path (an `if` arm where `out` was not updated) reads it too.
                for before in ctx.model.resolve(event.node):
                    tainted.add(id(before))
                    # A view's storage is its base's: the base holds what was written (`move =
                    # x[:, 2:]`, `move += f(..)`, `return x.sum()`).
                    base = _viewed_base(ctx, before)
                    if base is not None:
                        tainted.update(id(each) for each in ctx.model.resolve(base))
        elif event.kind is BindingKind.AUGASSIGN and isinstance(event.node, cst.Name) \
                and any(id(before) in tainted for before in ctx.model.resolve(event.node)):
            tainted.add(id(event))  # `out += x`: the new `out` is computed from the old one too
    return _mentions(ctx, _backward_tensor(backward), saver, tainted)


def _item_assignments(ctx: "FileContext", scope) -> list[cst.Assign]:
    """The assignments to items of a name (``x[0] = v``) in the code of ``scope``."""
    return _by_code(ctx, "item_assignments", scope, lambda: [
        node for node in ctx.analysis.nodes_of(cst.Assign)
        if any(type(target.target) is cst.Subscript for target in node.targets)])


def _appends(ctx: "FileContext", scope) -> list[cst.Call]:
    """``outputs.append(v)`` (``extend``, ``insert``) on a name in the code of ``scope``: the
    list then holds ``v``, and what is computed from the list (``torch.stack(outputs)``) from it."""
    return _by_code(ctx, "appends", scope, lambda: [
        node for node in ctx.analysis.nodes_of(cst.Call)
        if type(node.func) is cst.Attribute and type(node.func.value) is cst.Name
        and node.func.attr.value in ("append", "extend", "insert")])


def _by_code(ctx: "FileContext", kind: str, scope, nodes) -> list:
    """The nodes ``nodes()`` finds in the file, those in the code of ``scope`` (its function,
    or the module outside functions): sorted by function once per file, not once per scope."""
    grouped = ctx.cache.get(kind)
    if grouped is None:
        grouped = ctx.cache[kind] = {}
        for node in nodes():
            grouped.setdefault(id(ctx.enclosing_function(node) or ctx.module), []).append(node)
    return grouped.get(id(scope.node), [])


def _mentions(ctx: "FileContext", expression: cst.BaseExpression, saver: cst.CSTNode, tainted: set[int]) -> bool:
    if saver.start >= expression.start and saver.end <= expression.end and \
            any(node is saver for node in iter_nodes(expression)):
        return True
    return any(isinstance(node, cst.Name) and any(id(binding) in tainted for binding in ctx.model.resolve(node))
               for node in iter_nodes(expression))
