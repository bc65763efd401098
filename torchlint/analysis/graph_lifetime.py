"""Graph lifetime: which values keep an autograd graph alive past the iteration that built it.

A training loop builds one graph per iteration and lets it go once ``backward()`` has run.
A value that is kept (added into a running total, appended to a history, added in place
into a statistic that outlives the step) keeps its graph, and the graphs of every iteration
before it, alive:

    for batch in loader:
        loss = criterion(model(batch.x), batch.y)
        loss.backward()                # the proof that `loss` carries a graph
        history.append(loss)           # kept: every iteration's graph stays reachable

This module answers, on top of the events of ``AutogradModel``:

- ``keeping_loop``: the loop a statement repeats in, or for a function called in a loop of
  this file, the function (one call, one iteration);
- ``persists``: a name bound before the loop that no unconditional statement of the loop
  binds again;
- ``backpropagated``: the backward that proves a value carries a graph: a backward of it, of
  an item of it (``loss["total"]``, ``losses[-1]``), in the same iteration, or one run by
  the function of this file whose result it is (``loss, stats = trainer.step(batch)``);
- ``graph_wanted``: the names whose graph a function still uses (back-propagated or returned,
  and what they were computed from);
- ``records_no_graph``: a forward of a module whose parameters all have gradients off, on
  inputs none of which requires grad, records nothing for a backward to free;
- ``state_detach``: how the loop treats the state object it carries into the next forward:
  a method of this file that replaces the object's tensors by detached ones cuts the graph;
  a ``t.detach()`` whose result is thrown away (a statement of its own) cuts nothing, since
  ``detach()`` returns a new tensor and leaves ``t`` as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import BindingKind, ClassInfo, Scope
from torchlint.analysis.values import Kind
from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted
from torchlint.syntax.walk import ancestors, enclosing_code, is_descendant, iter_nodes

if TYPE_CHECKING:
    from torchlint.analysis.autograd import AutogradModel

_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)


class GraphLifetime:
    """The questions above, for one module; results cached per function."""

    def __init__(self, autograd: "AutogradModel"):
        self.autograd = autograd
        self.model = autograd.model
        self.inference = autograd.inference
        self._scopes: Optional[dict[int, Scope]] = None
        self._returned: dict[int, Optional[frozenset[int] | bool]] = {}
        self._wanted: dict[int, set[str]] = {}
        self._wanted_attributes: dict[str, bool] = {}  # attribute -> read into what is back-propagated
        self._called_in_loop: Optional[set[int]] = None
        self._backward_calls: Optional[dict[int, list[cst.Call]]] = None

    # --- where a statement repeats ------------------------------------------------------

    def keeping_loop(self, statement: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The innermost loop of ``statement``'s function around it; without one, the
        function itself when this file calls it inside a loop (each call an iteration)."""
        child = statement
        for ancestor in ancestors(statement):
            if isinstance(ancestor, _LOOPS) and child is ancestor.body:
                return ancestor
            if isinstance(ancestor, (cst.Lambda, cst.ClassDef)):
                return None
            if isinstance(ancestor, cst.FunctionDef):
                return ancestor if id(ancestor) in self._functions_called_in_loops() else None
            child = ancestor
        return None

    def _functions_called_in_loops(self) -> set[int]:
        if self._called_in_loop is None:
            self._called_in_loop = set()
            for call in self.autograd.calls:
                if not _loops_around(call):
                    continue
                function = self.autograd.local_function(call)
                if function is not None:
                    self._called_in_loop.add(id(function.node))
        return self._called_in_loop

    def persists(self, total: cst.Name, loop: cst.CSTNode) -> bool:
        """``total`` keeps its value from one iteration of ``loop`` to the next: it is not
        bound anew by a statement the loop runs on every iteration (a reset under an ``if``,
        every few steps, keeps it between resets; ``total = total + x`` keeps it)."""
        bindings = self.model.resolve(total)
        if not bindings:
            return False
        if isinstance(loop, cst.FunctionDef):
            # One call is one iteration: only what outlives the call persists.
            return all(binding.scope.node is not loop or binding.kind is BindingKind.PARAM for binding in bindings)
        scope = bindings[0].scope
        for binding in scope.bindings.get(total.value, ()):
            if binding.kind not in (BindingKind.ASSIGN, BindingKind.FOR, BindingKind.WITH) \
                    or not _inside(binding.node, loop) or _accumulates(binding):
                continue
            if not _conditional_in(binding.node, loop):
                return False
        return True

    def outlives(self, target: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """A tensor written in place (``target.add_(x)``) that outlives an iteration of
        ``loop``: reached from ``self``, a parameter or a name bound outside the loop."""
        root = target
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name):
            return False
        bindings = self.model.resolve(root)
        if not bindings:
            return False
        if root is target:
            return self.persists(root, loop)
        return all(not _inside(binding.node, loop) or binding.kind is BindingKind.PARAM for binding in bindings)

    # --- what carries a graph -----------------------------------------------------------

    def backpropagated(self, expression: cst.BaseExpression, loop: cst.CSTNode,
                       container: Optional[cst.BaseExpression] = None) -> Optional[cst.Call]:
        """The backward call proving that ``expression`` (read inside ``loop``) holds a
        tensor in a graph (see the module docstring), or None.  ``container``: what the value
        is added to; a backward of one of its items (``losses[-1].backward()``) counts."""
        scope = self._scope_of(expression)
        if scope is None:
            return None
        # `at`: where the backward runs in this scope (the call of a function that runs it).
        backwards = [(tensor, call, at) for tensor, call, at in self._backwards(scope) if _inside(at, loop)]
        held = _dotted_root(container) if container is not None else None
        for tensor, call, at in backwards:
            if held is not None and _dotted_root(tensor) == held and isinstance(tensor, cst.Subscript) \
                    and not self._rebound_between(tensor, at, expression, loop):
                return call
        for root, node in _roots(expression):
            for tensor, call, at in backwards:
                if _dotted_root(tensor) == root and not self._rebound_between(tensor, at, expression, loop):
                    return call
            if isinstance(node, cst.Name):
                found = self._returned_by_call(node)
                if found is not None:
                    return found
        return None

    def backpropagated_by_callers(self, expression: cst.BaseExpression,
                                  function: cst.FunctionDef
                                  ) -> Optional[tuple[cst.Call, cst.BaseExpression, cst.Call]]:
        """``expression`` (read in ``function``) is computed from a parameter that a call of
        ``function`` in a loop of this file passes a value back-propagated in that iteration
        (``meter.update(loss)`` after ``loss.backward()``): (that call, the argument, the backward)."""
        info = self.model.functions.get(id(function))
        if info is None or _takes_values(expression):
            return None
        # parameters read as they were given (not rebound on the way: `val = val.item()`)
        read = {node.value for node in iter_nodes(expression) if isinstance(node, cst.Name)
                and all(binding.kind is BindingKind.PARAM for binding in self.model.resolve(node))}
        params = [param for param in info.positional_params() if param.name.value in read]
        for call in self.inference.calls_of(info):
            loop = self.keeping_loop(call)
            if loop is None or isinstance(loop, cst.FunctionDef):
                continue
            for param in params:
                argument = self.inference.passed_argument(call, info, param)
                backward = self.backpropagated(argument, loop) if argument is not None else None
                if backward is not None:
                    return call, argument, backward
        return None

    def runs_unconditionally(self, backward: cst.Call, statement: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Whenever ``statement`` runs in an iteration of ``loop``, so does ``backward`` (of a
        function, when one call is the iteration, only its own code counts): no ``if``,
        ``try`` or inner loop holds the backward that does not hold the statement too."""
        for ancestor in ancestors(backward):
            if ancestor is loop or isinstance(ancestor, _SCOPES):
                return True
            if isinstance(ancestor, (cst.If, cst.ExceptHandler, cst.Try, *_LOOPS)) and not _inside(statement, ancestor):
                return False
        return True

    def is_backpropagated_tensor(self, expression: cst.BaseExpression, backward: Optional[cst.Call]) -> bool:
        """``expression`` is, as written, the tensor ``backward`` differentiates (``loss``
        for ``loss.backward()``), not a container holding it."""
        if backward is None or not isinstance(backward.func, cst.Attribute) or backward.func.attr.value != "backward":
            return False
        text = self.autograd.analysis.text
        receiver = backward.func.value
        return text[receiver.start:receiver.end] == text[expression.start:expression.end]

    def _rebound_between(self, tensor: cst.BaseExpression, backward: cst.CSTNode, read: cst.CSTNode,
                         loop: cst.CSTNode) -> bool:
        """What was back-propagated is assigned again between the backward and the read
        (``out["loss"] = out["loss"].detach()``, ``loss = next_loss``): the read is of
        another value."""
        text = self.autograd.analysis.text
        written = {text[tensor.start:tensor.end], _dotted_root(tensor)}
        low, high = min(backward.end, read.start), max(backward.start, read.start)
        for assignment in self.autograd.analysis.nodes_of(cst.Assign):
            if not (low <= assignment.start < high and _inside(assignment, loop)):
                continue
            if any(text[target.target.start:target.target.end] in written for target in assignment.targets):
                return True
        return False

    def _returned_by_call(self, name: cst.Name) -> Optional[cst.Call]:
        """``name`` is bound (directly, or through one name) to the result of a call of this
        file's function whose returned value, at that position, it back-propagated."""
        bindings = [binding for binding in self.model.resolve(name) if binding.kind is BindingKind.ASSIGN]
        position: Optional[int] = None  # the element of the call's result `name` holds, if one
        for _ in range(2):
            if len(bindings) != 1 or bindings[0].value is None:
                return None
            binding = bindings[0]
            if binding.path:
                if position is not None:
                    return None
                position = binding.path[0]
            value = binding.value
            if isinstance(value, cst.Name):
                bindings = [b for b in self.model.resolve(value) if b.kind is BindingKind.ASSIGN]
                continue
            if not isinstance(value, cst.Call):
                return None
            function = self.autograd.local_function(value)
            proof = self._returns_backpropagated(function) if function is not None else None
            if proof is None:
                return None
            positions, backward = proof
            return backward if positions is True or position in positions else None
        return None

    def _returns_backpropagated(self, function) -> Optional[tuple[frozenset[int] | bool, cst.Call]]:
        """What ``function`` returns that it back-propagated first: True for the whole
        value, or the positions of a returned tuple; with the backward call."""
        key = id(function.node)
        if key in self._returned:
            return self._returned[key]  # type: ignore[return-value]
        self._returned[key] = None
        scope = function.scope
        if scope is None:
            return None
        roots: dict[str, cst.Call] = {}
        for tensor, call, _ in self._backwards(scope):
            root = _dotted_root(tensor)
            if root:
                roots.setdefault(root, call)
        roots.update((root, node) for root, node in self._self_backwards(function).items() if root not in roots)
        result = None
        for value in function.returns:
            if isinstance(value, cst.Tuple):
                positions = frozenset(position for position, element in enumerate(value.elements)
                                      if any(root in roots for root, _ in _roots(element.value)))
                hit = next((roots[root] for element in value.elements for root, _ in _roots(element.value)
                            if root in roots), None)
                if positions and hit is not None:
                    result = (positions, hit)
            else:
                hit = next((roots[root] for root, _ in _roots(value) if root in roots), None)
                if hit is not None:
                    result = (True, hit)
        self._returned[key] = result
        return result

    def _self_backwards(self, function) -> dict[str, cst.Call]:
        """``self.<attr>`` back-propagated by a method ``function`` calls on ``self``
        (``self.update()`` running ``self.loss.backward()``), as ``function`` names it."""
        found: dict[str, cst.Call] = {}
        name = function.self_name
        if name is None:
            return found
        for node in iter_nodes(function.node):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and isinstance(node.func.value, cst.Name) and node.func.value.value == name):
                continue
            callee = self.autograd.local_function(node)
            if callee is None or callee.self_name is None or callee.scope is None or callee.node is function.node:
                continue
            for tensor, call, _ in self._backwards(callee.scope):
                root = _dotted_root(tensor)
                if root and root.startswith(callee.self_name + "."):
                    found.setdefault(name + root[len(callee.self_name):], call)
        return found

    def _backwards(self, scope: Scope) -> list[tuple[cst.BaseExpression, cst.Call, cst.CSTNode]]:
        """(tensor, backward call, where it runs in ``scope``): the model's backward events,
        and ``x.backward()`` calls whose receiver the inference does not know as a tensor
        (``losses[-1].backward()`` of a list it cannot see into) but which pass no
        positional argument, as only ``Tensor.backward`` of a loss is called."""
        found = [(backward.tensor, backward.node, backward.at) for backward in self.autograd.backwards(scope)]
        known = {id(call) for _, call, _ in found}
        if self._backward_calls is None:
            self._backward_calls = {}
            for node in self.autograd.calls:
                if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward" \
                        and all(arg.keyword is not None for arg in node.args):
                    self._backward_calls.setdefault(id(enclosing_code(node)), []).append(node)
        found.extend((call.func.value, call, call) for call in self._backward_calls.get(id(scope.node), ())
                     if id(call) not in known)
        return found

    # --- what a function still needs the graph of ------------------------------------------

    def attribute_wanted(self, total: cst.Attribute) -> bool:
        """The attribute ``total`` names is read, through any object (``net.attention_sum``),
        into a value that is back-propagated or returned: a term of a loss, summed to be
        differentiated (``loss += net.attention_sum * 1e-7``)."""
        name = total.attr.value
        if name not in self._wanted_attributes:
            self._wanted_attributes[name] = False
            for read in self.model.analysis.nodes_of(cst.Attribute):
                if read.attr.value != name or read is total:
                    continue
                statement = next((node for node in ancestors(read) if isinstance(node, (cst.Assign, cst.AugAssign))
                                  or isinstance(node, cst.BaseStatement)), None)
                target = statement.target if isinstance(statement, cst.AugAssign) else \
                    statement.targets[0].target if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
                    else None
                if isinstance(target, cst.Name) and is_descendant(read, statement.value) \
                        and self.graph_wanted(target.value, statement):
                    self._wanted_attributes[name] = True
                    break
        return self._wanted_attributes[name]

    def graph_wanted(self, name: str, statement: cst.CSTNode) -> bool:
        """``name`` (or a value computed from it) is back-propagated or returned by the
        function of ``statement``: a total summed to be differentiated together."""
        function = enclosing_code(statement)
        key = id(function)
        if key not in self._wanted:
            self._wanted[key] = self._graph_consumers(function)
        return name in self._wanted[key]

    def _graph_consumers(self, function: cst.CSTNode) -> set[str]:
        names: set[str] = set()
        sources: dict[str, set[str]] = {}
        for node in iter_nodes(function):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                sources.setdefault(node.targets[0].target.value, set()).update(
                    n.value for n in iter_nodes(node.value) if isinstance(n, cst.Name))
            consumed: Optional[cst.CSTNode] = None
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == "backward":
                consumed = node.func.value
            elif isinstance(node, cst.Call) and self.inference.qualname(node.func) in (
                "torch.autograd.backward", "torch.autograd.grad"
            ):
                consumed = node
            elif isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
                consumed = node.value
            if consumed is not None:
                names.update(n.value for n in iter_nodes(consumed) if isinstance(n, cst.Name))
        pending = list(names)
        while pending:
            for source in sources.get(pending.pop(), ()):
                if source not in names:
                    names.add(source)
                    pending.append(source)
        return names

    # --- forwards that record no graph ------------------------------------------------------

    def records_no_graph(self, call: cst.CSTNode) -> bool:
        """``call`` runs a module whose parameters all have gradients off (the file freezes
        the module a class keeps as ``self.<name>``: ``unet.requires_grad_(False)`` for the
        ``unet`` its constructor is given), and every argument is known not to require grad:
        autograd records nothing for it, so no backward frees anything of it."""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                or not isinstance(call.func.value, cst.Name):
            return False
        for arg in call.args:
            if arg.star:
                return False
            tensor = self.inference.tensor(arg.value)
            if tensor is None:
                value = self.inference.infer(arg.value)
                if value is None or value.kind is Kind.TENSOR:
                    return False  # not known to be anything but a tensor that may require grad
            elif tensor.attached is not False and not self._row_of_plain_tensor(arg.value):
                return False
        return self._frozen_attribute(call.func)

    def _row_of_plain_tensor(self, expression: cst.BaseExpression) -> bool:
        """``expression`` is a loop's name bound only by iterating (through ``enumerate`` or
        ``zip``) a tensor that does not require grad: its rows do not either."""
        if not isinstance(expression, cst.Name):
            return False
        bindings = self.model.resolve(expression)
        if not bindings or any(binding.kind is not BindingKind.FOR or binding.value is None for binding in bindings):
            return False
        for binding in bindings:
            iterable = binding.value
            if binding.path:  # `for i, t in enumerate(timesteps)`: `t` iterates `timesteps`
                counted = isinstance(iterable, cst.Call) and dotted(iterable.func) == "enumerate" \
                    and len(iterable.args) == 1 and binding.path == (1,)
                iterable = iterable.args[0].value if counted else None
            tensor = self.inference.tensor(iterable) if iterable is not None else None
            if tensor is None or tensor.attached is not False:
                return False
        return True

    def _frozen_attribute(self, module: cst.Attribute) -> bool:
        """``self.<name>`` is, in every assignment of its class, the constructor's parameter,
        and every construction of the class in this file passes a module the file freezes."""
        function = self.model.functions.get(id(enclosing_code(module)))
        cls = function.cls if function is not None else None
        if not isinstance(cls, ClassInfo) or function.self_name != module.value.value:
            return False
        init = cls.methods.get("__init__")
        assignments = cls.assignments(module.attr.value)
        if init is None or not assignments:
            return False
        params = init.positional_params()
        given = []
        for assignment in assignments:
            value = assignment.value
            param = next((p for p in params if isinstance(value, cst.Name) and p.name.value == value.value), None)
            if assignment.function is not init or assignment.path or param is None:
                return False
            given.append(param)
        constructions = [call for call in self.autograd.calls if (lambda value: value is not None and value.kind is
                         Kind.CLASS and value.cls is cls)(self.inference.infer(call.func))]
        if not constructions:
            return False
        for construction in constructions:
            for param in given:
                passed = self.inference.passed_argument(construction, init, param)
                name = dotted(passed) if isinstance(passed, (cst.Name, cst.Attribute)) else None
                # (the file's freezes, as the autograd model reads them)
                if not name or not self.autograd.frozen(name, None):
                    return False
        return True

    def loop_iterates_result(self, forward: cst.CSTNode, elements: Optional[frozenset[int]],
                             backward: cst.CSTNode) -> bool:
        """The innermost loop around ``backward`` takes its items from ``forward``'s result
        (``for loss in model.losses(x)``, the batches of a tensor computed from it): the
        loop's backwards share that one graph, and what must change is the backward (one
        backward of the sum), not where ``forward`` runs."""
        loop = next((a for a in ancestors(backward) if isinstance(a, _LOOPS)), None)
        scope = self._scope_of(backward)
        if not isinstance(loop, cst.For) or scope is None:
            return False
        return self.autograd.flows_into(scope, forward, loop.iter, loop.iter, elements)

    def frozen_input_origin(self, call: cst.CSTNode) -> Optional[cst.CSTNode]:
        """For a call of a frozen module (see ``records_no_graph``) whose one argument that
        requires grad is a name computed, through graph-keeping methods and subscripts, from an
        attribute of ``self`` assigned once in its class (``c = self.context.chunk(2)``): the
        value assigned there. A frozen module records a graph only through that input, so the
        graph a later backward finds freed is the input's, made there."""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                or not isinstance(call.func.value, cst.Name) or not self._frozen_attribute(call.func):
            return None
        attached = [arg.value for arg in call.args if (lambda t: t is None or t.attached is not False)(
            self.inference.tensor(arg.value)) and not self._row_of_plain_tensor(arg.value)]
        if len(attached) != 1 or not isinstance(attached[0], (cst.Name, cst.Attribute)):
            return None
        roots = _roots(attached[0])  # `self.context` as it is given
        if isinstance(attached[0], cst.Name):
            bindings = self.model.resolve(attached[0])
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].value is None:
                return None
            roots = _roots(bindings[0].value)
        function = self.model.functions.get(id(enclosing_code(call)))
        if len(roots) != 1 or function is None or not isinstance(function.cls, ClassInfo):
            return None
        name, node = roots[0]
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == function.self_name):
            return None
        assignments = [a for a in function.cls.assignments(node.attr.value) if a.value is not None
                       and not (isinstance(a.value, cst.Name) and a.value.value == "None")]
        if len(assignments) != 1 or assignments[0].path:
            return None
        made = self.inference.tensor(assignments[0].value)
        return assignments[0].value if made is not None and made.attached is True else None

    # --- the state a loop carries ------------------------------------------------------------

    def state_detach(self, carrier: cst.CSTNode, backward: cst.CSTNode) -> tuple[bool, Optional[cst.Call]]:
        """What the loop around ``backward`` does, after ``carrier`` (a name bound in it) is bound, to the state
        that name carries: (detached, a thrown-away detach).  ``detached``: it calls a method
        of this file's class of the object (``state.detach()``) that assigns each of the
        object's attributes a detached value.  The thrown-away detach: a ``.detach()`` that is
        a statement of its own, on the name itself or, in a method the loop calls on it, on a
        tensor of the object (``for h in self._all: h.detach()``)."""
        loop = next((a for a in ancestors(backward) if isinstance(a, _LOOPS) and _inside(carrier, a)), None)
        if not isinstance(carrier, cst.Name) or loop is None:
            return False, None
        name = carrier.value
        discarded = None
        for statement in iter_nodes(loop):
            if not isinstance(statement, cst.Expr) or statement.start < carrier.end:
                continue
            call = statement.value
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and isinstance(call.func.value, cst.Name) and call.func.value.value == name):
                continue
            if call.func.attr.value == "detach" and not call.args and self.inference.tensor(call.func.value):
                discarded = discarded or call
                continue
            value = self.inference.infer(call.func.value)
            cls = value.cls if value is not None and value.kind is Kind.INSTANCE else None
            method = cls.methods.get(call.func.attr.value) if isinstance(cls, ClassInfo) else None
            if method is None or method.self_name is None or not isinstance(method.node, cst.FunctionDef):
                continue
            if _assigns_detached(method):
                return True, None
            discarded = discarded or _thrown_away_detach(method.node)
        return False, discarded

    def _scope_of(self, node: cst.CSTNode) -> Optional[Scope]:
        if self._scopes is None:
            self._scopes = {id(scope.node): scope for scope in self.model.scopes}
        return self._scopes.get(id(enclosing_code(node)))


_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
_LOOP_CLASSES = frozenset(_LOOPS)
_SCOPE_CLASSES = frozenset(_SCOPES)


def _loops_around(node: cst.CSTNode) -> bool:
    # Node classes compared by identity (no subclasses): asked for every name of a file.
    child, ancestor = node, node.parent
    while ancestor is not None:
        cls = type(ancestor)
        if cls in _LOOP_CLASSES and child is ancestor.body or cls in _COMPREHENSIONS:
            return True
        if cls in _SCOPE_CLASSES:
            return False
        child, ancestor = ancestor, ancestor.parent
    return False


def _takes_values(expression: cst.BaseExpression) -> bool:
    """``expression`` takes its tensors' values out of the graph somewhere (`val.item() * n`,
    `float(val)`, `val.detach()`, `val.data`)."""
    for node in iter_nodes(expression):
        if isinstance(node, cst.Attribute) and node.attr.value in (*torch_api.TO_PLAIN_METHODS, "detach", "data"):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("float", "int"):
            return True
    return False


def _inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return container.start <= node.start and node.end <= container.end


def _conditional_in(node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """``node`` runs only on some iterations of ``loop``: under an ``if``, ``try`` handler
    or inner loop of its body."""
    for ancestor in ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, (cst.If, cst.ExceptHandler, *_LOOPS)):
            return True
    return False


def _accumulates(binding) -> bool:
    value = binding.value
    return isinstance(value, cst.BinaryOperation) and isinstance(value.left, cst.Name) \
        and value.left.value == binding.name


def _dotted_root(expression: Optional[cst.BaseExpression]) -> Optional[str]:
    """``loss`` of ``loss["total"]`` and ``loss[-1].mean()``; ``self.loss`` of ``self.loss``."""
    node = expression
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _keeps_graph(node.func.attr.value):
            node = node.func.value
        else:
            break
    if isinstance(node, (cst.Name, cst.Attribute)):
        return dotted(node) or None
    return None


def _roots(expression: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    """The names whose tensors ``expression`` is computed from in the graph (``a / n + b``:
    ``a`` and ``b``), with the node that reads each; nothing through ``.item()``, calls of
    other functions, or comparisons."""
    if isinstance(expression, cst.BinaryOperation):
        return _roots(expression.left) + _roots(expression.right)
    if isinstance(expression, cst.UnaryOperation):
        return _roots(expression.expression)
    if isinstance(expression, cst.Call):
        func = expression.func
        if isinstance(func, cst.Attribute) and _keeps_graph(func.attr.value):
            return _roots(func.value)
        return []
    if isinstance(expression, cst.Subscript):
        return _roots(expression.value)
    if isinstance(expression, (cst.Name, cst.Attribute)):
        name = dotted(expression)
        return [(name, expression)] if name else []
    return []


def _keeps_graph(method: str) -> bool:
    """A tensor method whose result stays in the graph of its receiver (``mean``, ``sum``, ``view``)."""
    fact = torch_facts.method(method)
    return fact is not None and fact.differentiable is True and fact.returns not in ("other", "ndarray")


def _assigns_detached(method) -> bool:
    """``method`` assigns attributes of its ``self`` (``self.hidden = tuple(h.detach() for h
    in self.hidden)``), and each value it assigns reads the object only through a detach."""
    found = False
    for node in iter_nodes(method.node):
        if not isinstance(node, cst.Assign):
            continue
        targets = [target.target for target in node.targets]
        if not all(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == method.self_name
                   for t in targets):
            continue
        reads = [n for n in iter_nodes(node.value) if isinstance(n, cst.Name)]
        if not any(_read_detached(n, node.value) for n in reads):
            return False
        found = True
    return found


def _read_detached(node: cst.CSTNode, top: cst.CSTNode) -> bool:
    """``node``'s value passes through ``.detach()`` before reaching ``top``."""
    current = node
    while current is not top and current.parent is not None:
        parent = current.parent
        if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value == "detach":
            return True
        current = parent
    return False


def _thrown_away_detach(function: cst.FunctionDef) -> Optional[cst.Call]:
    """A ``x.detach()`` that is a statement of its own in ``function``: its result, the
    detached tensor, is dropped."""
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) \
                and isinstance(node.value.func, cst.Attribute) and node.value.func.attr.value == "detach" \
                and not node.value.args:
            return node.value
    return None
