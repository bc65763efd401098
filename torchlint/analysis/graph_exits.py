"""Where a tensor of the autograd graph leaves torch inside a function, and whether those
values reach what the function returns: the gradient cut of ``forward`` (or of a loss
function that a ``backward()`` of the file differentiates).

``GraphExits.cut(call)`` says whether a call takes a tensor's values out of torch
(``.numpy()``, ``.item()``, ``.tolist()``, ``float()``, ``math.*``, ``np.*`` of a detached
tensor, ``torch.tensor(t)``) and which tensor; ``GraphExits.escape(cut, function)``
follows what comes out, through value positions and assignments, to a ``return`` of the
function, and answers only when the tensor is shown in the graph (with the inference's
evidence), its gradient is not zero anyway (a step function, an index), nothing else
carries the tensor itself to the result, and the code runs with gradients on while the
module trains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import Binding, BindingKind
from torchlint.analysis.values import Kind, Value
from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted
from torchlint.syntax.walk import ancestors, iter_nodes

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

# Calls whose arguments are only shown: a use there is no path to the output.
_SHOWING = frozenset({"print", "log", "info", "debug", "warning", "warn", "add_scalar", "add_histogram", "append_log"})
# Names of a flag that says the module is training (`self.training`, `is_training`).
_TRAINING_FLAGS = frozenset({"training", "is_training", "train", "train_mode"})
_KINDS_CARRYING = frozenset({Kind.TENSOR, Kind.SEQUENCE, Kind.TUPLE, Kind.DICT, Kind.PACKED})


@dataclass(frozen=True)
class Cut:
    """Where a tensor's values leave torch: ``node`` (the conversion), the tensor whose values
    it takes (``tensor``) and how it says so."""

    node: cst.Call
    tensor: cst.BaseExpression
    how: str


@dataclass(frozen=True)
class Flow:
    """How the cut's values reach the function's result: the assignments on the way and the
    returned expression they end in."""

    through: tuple[cst.CSTNode, ...]  # the assignments on the way
    returned: cst.BaseExpression
    numpy_call: Optional[cst.Call]  # the first numpy function the values go through


@dataclass(frozen=True)
class Escape:
    """A cut whose values reach the function's result: the tensor's inferred value (its
    evidence in ``value.why``), the way to the ``return`` and the first layer with
    parameters that computed the tensor (None when it is a leaf or not known)."""

    cut: Cut
    value: Value
    flow: Flow
    layer: Optional[cst.BaseExpression]


class GraphExits:
    """The gradient-cut analysis of one module, answers remembered."""

    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._scopes: Optional[dict[int, object]] = None
        self._differentiated_ids: Optional[set[int]] = None

    def _code(self, node: cst.CSTNode) -> str:
        start, end = self.analysis.outer_span(node)
        return self.analysis.text[start:end]

    def _line(self, node: cst.CSTNode) -> int:
        return self.analysis.line_index.position(node.start)[0]

    def _assigned_values(self, name: cst.Name) -> Optional[tuple[cst.BaseExpression, ...]]:
        bindings = self.model.resolve(name)
        if not bindings or any(b.kind is not BindingKind.ASSIGN or b.value is None or b.path or b.iterates
                               for b in bindings):
            return None
        return tuple(b.value for b in bindings)

    # --- which functions ----------------------------------------------------------

    def _scope(self, node: cst.FunctionDef):
        """The scope of the function ``node``."""
        if self._scopes is None:
            self._scopes = {id(scope.node): scope for scope in self.model.scopes}
        return self._scopes.get(id(node))

    def function_info(self, node: cst.FunctionDef):
        """The ``FunctionInfo`` of the function ``node`` (its class, its name), or None."""
        scope = self._scope(node)
        return scope.function if scope is not None else None

    def cuts(self, function: cst.FunctionDef) -> list[Cut]:
        """The places in ``function`` itself (not in functions nested in it) where a tensor's
        values leave torch."""
        found = []
        for inner in iter_nodes(function.body):
            if isinstance(inner, cst.Call) and _enclosing_function(inner) is function:
                cut = self.cut(inner)
                if cut is not None:
                    found.append(cut)
        return found

    def is_differentiated(self, node: cst.FunctionDef) -> bool:
        """A module-level function whose result a ``backward()`` of this file differentiates:
        ``loss = my_loss(out, y)`` (or ``loss = ce + my_loss(out, y)``), ``loss.backward()``."""
        if node.parent is not self.analysis.module:
            return False
        if self._differentiated_ids is None:  # the text is searched once, not for every function
            self._differentiated_ids = self._differentiated() if "backward" in self.analysis.text else set()
        return id(node) in self._differentiated_ids

    def _differentiated(self) -> set[int]:
        found: set[int] = set()
        for call in self.analysis.nodes_of(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"
                    and self.inference.tensor(func.value) is not None):
                continue
            expressions = [func.value]
            for _ in range(2):  # the loss, and the terms it adds up
                more = []
                for expression in expressions:
                    for name in iter_nodes(expression):
                        if isinstance(name, cst.Name):
                            more += self._assigned_values(name) or ()
                expressions += more
            for expression in expressions:
                for inner in iter_nodes(expression):
                    if isinstance(inner, cst.Call):
                        callee = self.inference.infer(inner.func)
                        if callee is not None and callee.kind is Kind.FUNCTION and callee.function is not None \
                                and isinstance(callee.function.node, cst.FunctionDef):
                            found.add(id(callee.function.node))
        return found

    def cut(self, node: cst.Call) -> Optional[Cut]:
        func = node.func
        arguments = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and func.attr.value in ("numpy", "item", "tolist") \
                and self.inference.tensor(func.value) is not None:
            tensor, detached = self._strip(func.value)
            if func.attr.value == "numpy" and not detached and not node.args:
                return None  # `.numpy()` of a tensor that requires grad raises at once
            return Cut(node, tensor, f"`.{func.attr.value}()`")
        qualname = self.inference.qualname(func)
        if qualname is None or len(arguments) != 1 and not qualname.startswith("numpy."):
            return None
        if not arguments or self.inference.tensor(arguments[0].value) is None:
            return None
        tensor, detached = self._strip(arguments[0].value)
        if qualname == "builtins.float" \
                or (qualname.startswith("math.") and qualname[5:] not in torch_api.STEP_FUNCTION_NAMES):
            return Cut(node, tensor, f"`{qualname.split('.', 1)[1]}()`")
        if qualname == "torch.tensor":
            return Cut(node, tensor, "`torch.tensor()`")
        if qualname.startswith("numpy.") and detached:  # without `.detach()` numpy raises at once
            return Cut(node, tensor, f"`{self.analysis.snippet(func)}()`")
        return None

    def _strip(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
        """The tensor whose values ``node`` holds, through moves, ``.detach()`` and ``.data``;
        and whether one of those detached it."""
        detached = False
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in torch_api.VALUE_KEEPING_MOVES | {"detach"} \
                    and self.inference.tensor(node.func.value) is not None:
                detached = detached or node.func.attr.value == "detach"
                node = node.func.value
            elif isinstance(node, cst.Attribute) and node.attr.value == "data" and self.inference.tensor(node.value):
                detached = True
                node = node.value
            else:
                return node, detached

    def escape(self, cut: "Cut", function: cst.FunctionDef) -> Optional["Escape"]:
        """How the values ``cut`` takes out of a tensor of the graph reach what ``function``
        returns, when nothing else carries the tensor's gradient there, its gradient is not
        zero anyway (a step function, an index), gradients are on, the module is training
        and its layers are not frozen; else None."""
        value = self.inference.tensor(cut.tensor)
        if value is None or value.attached is not True or self._zero_gradient(cut.tensor, 0):
            return None
        if self.inference.grad_disabled(cut.node) is not None or self._evaluation_only(cut.node, function):
            return None
        scope = self._scope(function)
        flow = self._flow(cut.node, scope) if scope is not None else None
        if flow is None:
            return None
        layer, roots, attributes = self._sources(cut.tensor, scope)
        if self.analysis.grad_flow.freezes_parameters:
            return None  # frozen layers: the cut is meant
        if self._reaches_directly(roots, attributes, cut, function, scope):
            return None
        return Escape(cut, value, flow, layer)

    def _zero_gradient(self, node: cst.BaseExpression, depth: int) -> bool:
        """``node`` is computed by a step function, a comparison or an index (``h.argmax()``,
        ``torch.round(h)``, ``h.max(1)[1]``): torch would give it no gradient either."""
        if depth > 8:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            tensors = [arg.value for arg in node.args if self.inference.tensor(arg.value) is not None]
            if isinstance(func, cst.Attribute) and self.inference.tensor(func.value) is not None:
                if func.attr.value in torch_api.STEP_FUNCTION_NAMES \
                        or func.attr.value in torch_api.NOT_DIFFERENTIABLE_METHODS:
                    return True
                tensors.insert(0, func.value)
            else:
                qualname = self.inference.qualname(func) or ""
                fact = torch_facts.fact(qualname) if qualname.startswith("torch.") else None
                if not qualname.startswith("torch."):
                    return False
                if qualname.rsplit(".", 1)[-1] in torch_api.STEP_FUNCTION_NAMES \
                        or (fact is not None and fact.differentiable is False):
                    return True
            return bool(tensors) and all(self._zero_gradient(tensor, depth + 1) for tensor in tensors)
        if isinstance(node, cst.Subscript):
            if self._indices_of(node.value, node.slice):
                return True
            return self._zero_gradient(node.value, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            tensors = [side for side in (node.left, node.right) if self.inference.tensor(side) is not None]
            return bool(tensors) and all(self._zero_gradient(side, depth + 1) for side in tensors)
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if not bindings or any(binding.kind is not BindingKind.ASSIGN or binding.value is None
                                   for binding in bindings):
                return False
            return all(self._indices_of(binding.value, binding.path) if binding.path
                       else self._zero_gradient(binding.value, depth + 1) for binding in bindings)
        return False

    @staticmethod
    def _indices_of(node: cst.BaseExpression, index) -> bool:
        """``node`` gives (values, indices) and ``index`` (a subscript, or an unpacking's path)
        takes the indices: ``h.max(1)[1]``, ``_, idx = h.topk(k)``."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, (cst.Attribute, cst.Name))):
            return False
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
        if name not in torch_api.WITH_INDICES_METHODS:
            return False
        if isinstance(index, tuple):
            return index == (1,)
        return len(index) == 1 and isinstance(index[0].slice, cst.Index) and \
            isinstance(index[0].slice.value, cst.Integer) and index[0].slice.value.value == "1"

    # --- inference-only code ------------------------------------------------------

    def _evaluation_only(self, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """``node`` runs only when the module is not training: under ``if not self.training:``,
        in the ``else`` of ``if self.training:``, or after ``if self.training: return ...``."""
        child = node
        for ancestor in ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
                training = _training_test(ancestor.test)
                if training is not None:
                    in_body = child is ancestor.body
                    if in_body != training:
                        return True
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and self._after_training_return(ancestor, child):
                return True
            child = ancestor
        return False

    @staticmethod
    def _after_training_return(block, child: cst.CSTNode) -> bool:
        for statement in block.body:
            if statement is child:
                return False
            if isinstance(statement, cst.If) and statement.orelse is None and _training_test(statement.test) is True \
                    and isinstance(statement.body, cst.IndentedBlock) and statement.body.body:
                last = statement.body.body[-1]
                if isinstance(last, cst.SimpleStatementLine) and any(isinstance(small, cst.Return)
                                                                      for small in last.body):
                    return True
        return False

    # --- how the values flow to the result ----------------------------------------

    def _flow(self, start: cst.CSTNode, scope) -> Optional[Flow]:
        """The way the value of ``start`` reaches a ``return`` of the function as a value, in
        a tensor: through value positions and assignments to names."""
        queue: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...], Optional[cst.Call]]] = [(start, (), None)]
        seen: set[int] = set()
        while queue:
            node, assignments, numpy_call = queue.pop(0)
            climbed = self._climb(node)
            if climbed is None:
                continue
            last, statement, numpy_here = climbed
            if not assignments:  # the numpy function the cut's values go straight into
                numpy_call = numpy_here
            if isinstance(statement, cst.Return):
                if self.inference.tensor(last) is not None:
                    return Flow(assignments, statement.value, numpy_call)
                continue
            for binding in self._bound(statement, scope):
                if id(binding) in seen:
                    continue
                seen.add(id(binding))
                for load in self._loads(binding, scope):
                    queue.append((load, assignments + (statement,), numpy_call))
        return None

    def _climb(self, node: cst.CSTNode):
        """From ``node`` up through the positions that carry its value: (the last expression
        that is not a container, the statement reached, the first numpy function passed), or
        None when the value ends as a size, an index, a condition or an argument of a call
        whose use of it is not known."""
        current = node
        last = node
        numpy_call = None
        while True:
            parent = current.parent
            if parent is None:
                return None
            if isinstance(parent, (cst.Return, cst.Assign, cst.AugAssign, cst.AnnAssign)):
                return (last, parent, numpy_call) if getattr(parent, "value", None) is current else None
            if isinstance(parent, (cst.Element, cst.DictElement)) and parent.value is current:
                current = parent.parent  # the list, tuple or dict
                continue
            if isinstance(parent, cst.Arg):
                call = parent.parent
                if not self._argument_carries(call, parent):
                    return None
                qualname = self.inference.qualname(call.func) or ""
                if numpy_call is None and qualname.startswith("numpy."):
                    numpy_call = call
                current = last = call
                continue
            following = self._carries(parent, current)
            if following is None:
                return None
            current = last = following

    def _carries(self, parent: cst.CSTNode, child: cst.CSTNode) -> Optional[cst.CSTNode]:
        if isinstance(parent, cst.CompFor) and child is parent.iter:
            return _comprehension_of(parent)  # `[[f(v) for v in row] for row in h.tolist()]`
        if isinstance(parent, cst.BinaryOperation) and not isinstance(
                parent.operator, (cst.LeftShift, cst.RightShift, cst.BitOr, cst.BitAnd, cst.BitXor, cst.FloorDivide)):
            return parent
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
            return parent
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            return parent
        if isinstance(parent, cst.Subscript) and parent.value is child:
            return parent
        if isinstance(parent, cst.Attribute) and parent.value is child \
                and parent.attr.value in torch_api.VALUE_CARRYING_METHODS:
            if parent.attr.value == "T":
                return parent
            call = parent.parent
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
            if parent.attr.value in ("astype", "type", "to") and any(
                    torch_api.INTEGER_DTYPE.search(self._code(arg.value)) for arg in call.args):
                return None  # an integer conversion: a step function
            return call
        return None

    def _argument_carries(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether ``call`` computes its result from the value of ``arg`` (not a size, a
        dimension, or a function of the user's, which may do anything with it)."""
        if arg.star or arg.keyword is not None or call.func is arg:
            return False
        position = next(index for index, other in enumerate(call.args) if other is arg)
        func = call.func
        qualname = self.inference.qualname(func)
        if qualname is not None:
            root, _, name = qualname.partition(".")
            short = qualname.rsplit(".", 1)[-1]
            if short in torch_api.STEP_FUNCTION_NAMES:
                return False
            if root == "builtins":
                return name in torch_api.VALUE_BUILTINS
            if root in torch_api.ARRAY_LIBRARIES:  # `gaussian_filter(a, 1.0)`, `cv2.resize(a, size)`
                return position == 0
            if root not in ("torch", "numpy", "math") or short in torch_api.SIZE_FUNCTION_NAMES:
                return False
            return position == 0 or short in torch_api.ARITHMETIC_FUNCTION_NAMES
        if isinstance(func, cst.Attribute) and self.inference.tensor(func.value) is not None:
            return func.attr.value in torch_api.ARITHMETIC_METHODS
        callee = self.inference.infer(func)
        return position == 0 and callee is not None and callee.kind is Kind.MODULE  # a layer's input

    def _bound(self, statement: cst.CSTNode, scope) -> list[Binding]:
        """The bindings of the names ``statement`` assigns (only plain names)."""
        if isinstance(statement, cst.Assign):
            targets = [target.target for target in statement.targets]
        else:
            targets = [statement.target]
        if not all(isinstance(target, cst.Name) for target in targets):
            return []
        return [binding for target in targets for binding in scope.bindings.get(target.value, ())
                if binding.node is target]

    def _loads(self, binding: Binding, scope) -> list[cst.Name]:
        return [load for _seq, load in scope.loads.get(binding.name, ())
                if any(other is binding for other in self.model.resolve(load))]

    # --- does the tensor itself reach the result? --------------------------------------

    def _sources(self, tensor: cst.BaseExpression, scope):
        """What ``tensor`` is computed from in this function, back to the layers with
        parameters that compute it: (the first such layer, the bindings of the names it
        comes from, the ``self.<name>`` tensors it comes from)."""
        layer = None
        roots: dict[int, Binding] = {}
        attributes: set[str] = set()
        stack = [tensor]
        while stack:
            expression = stack.pop()
            skipped: list[cst.Call] = []
            for node in iter_nodes(expression):
                if any(call.start <= node.start and node.end <= call.end for call in skipped):
                    continue
                if isinstance(node, cst.Call) and self._trainable(node):
                    skipped.append(node)
                    layer = layer or node.func
                elif isinstance(node, cst.Name) and self._may_carry(node):
                    for binding in self.model.resolve(node):
                        if binding.scope is not scope or id(binding) in roots:
                            continue
                        roots[id(binding)] = binding
                        if binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) and binding.value is not None:
                            stack.append(binding.value)
                        if binding.kind is BindingKind.AUGASSIGN:
                            prior = self.model.prior_binding(binding)
                            if prior is not None and id(prior) not in roots and prior.scope is scope:
                                roots[id(prior)] = prior
                                if prior.value is not None:
                                    stack.append(prior.value)
                elif isinstance(node, cst.Attribute) and dotted(node) and self.inference.tensor(node) is not None:
                    attributes.add(dotted(node))
        return layer, list(roots.values()), attributes

    def _trainable(self, call: cst.Call) -> bool:
        """A call of a layer with parameters of its own (a module of the user's, a torch layer
        with weights, a module the inference does not know the class of)."""
        callee = self.inference.infer(call.func)
        if callee is None or callee.kind is not Kind.MODULE:
            return False
        if callee.qualname is None:
            return True
        fact = torch_facts.fact(callee.qualname)
        return fact is not None and (fact.parameters is True or bool(fact.saves) and "c" in fact.saves)

    def _may_carry(self, name: cst.Name) -> bool:
        value = self.inference.infer(name)
        return value is None or value.kind in _KINDS_CARRYING

    def _reaches_directly(self, roots: list[Binding], attributes: set[str], cut: Cut,
                          function: cst.FunctionDef, scope) -> bool:
        """Whether the tensor (or what it is computed from, this side of its layer) reaches
        the result other than through the cut: its gradient then still flows."""
        loads: list[cst.CSTNode] = []
        for binding in roots:
            loads += self._loads_anywhere(binding, function)
        if attributes:
            loads += [node for node in iter_nodes(function.body)
                      if isinstance(node, cst.Attribute) and dotted(node) in attributes]
        queue = [load for load in loads if not (cut.node.start <= load.start and load.end <= cut.node.end)]
        seen: set[int] = {id(binding) for binding in roots}
        while queue:
            load = queue.pop()
            statement = self._any_climb(load)
            if statement is None:
                continue
            if statement is True:
                return True
            bound = self._bound(statement, scope)
            if not bound:
                return True  # an attribute, an item, an unpacking: perhaps the result
            for binding in bound:
                if id(binding) not in seen:
                    seen.add(id(binding))
                    queue += self._loads_anywhere(binding, function)
        return False

    def _loads_anywhere(self, binding: Binding, function: cst.FunctionDef) -> list[cst.Name]:
        """The reads of ``binding`` in the function and in the comprehensions and lambdas in it."""
        found = []
        for scope in self.model.scopes:
            node = scope.node
            if node is function or (function.start <= node.start and node.end <= function.end
                                    and not isinstance(node, (cst.FunctionDef, cst.ClassDef))):
                found += [load for _seq, load in scope.loads.get(binding.name, ())
                          if any(other is binding for other in self.model.resolve(load))]
        return found

    def _any_climb(self, node: cst.CSTNode):
        """From a use of the tensor up to its statement: None when the use carries no
        gradient to the result (a cut, a condition, a print), True when it may reach the
        result, or the assignment that binds what it computes."""
        current = node
        while True:
            parent = current.parent
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return True
            if isinstance(parent, cst.Call) and self.cut(parent) is not None:
                return None
            if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value in (
                    "data", "detach", "shape", "size", "dim", "ndim", "ndimension", "numel", "dtype", "device",
                    "requires_grad", "is_cuda", "grad_fn"):
                return None
            if isinstance(parent, (cst.If, cst.While)) and current is parent.test:
                return None
            if isinstance(parent, (cst.Assert, cst.Raise, cst.Del)):
                return None
            if isinstance(parent, cst.Call) and parent.func is not current and \
                    (isinstance(parent.func, (cst.Name, cst.Attribute))) and \
                    (parent.func.value if isinstance(parent.func, cst.Name) else parent.func.attr.value) in _SHOWING:
                return None
            if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                return parent if getattr(parent, "value", None) is current else None
            if isinstance(parent, cst.Return):
                return True
            if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
                return True
            current = parent


def _training_test(test: cst.BaseExpression) -> Optional[bool]:
    """True for a test that the module is training (``self.training``, ``training``), False
    for its negation, None for any other test."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated = not negated
        test = test.expression
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        other = comparison.comparator
        if isinstance(other, cst.Name) and other.value in ("True", "False") and \
                isinstance(comparison.operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)):
            if isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)):
                negated = not negated
            if other.value == "False":
                negated = not negated
            test = test.left
    name = test.attr.value if isinstance(test, cst.Attribute) else test.value if isinstance(test, cst.Name) else None
    if name not in _TRAINING_FLAGS:
        return None
    return not negated


def _enclosing_function(node: cst.CSTNode) -> Optional[cst.FunctionDef]:
    return next((a for a in ancestors(node) if isinstance(a, cst.FunctionDef)), None)


def _comprehension_of(loop: cst.CompFor) -> Optional[cst.BaseExpression]:
    """The list (or generator, set) comprehension whose ``for`` is ``loop``, when its element
    reads the loop's variables: what it makes is computed from the values iterated."""
    comprehension = loop.parent
    while isinstance(comprehension, cst.CompFor):
        comprehension = comprehension.parent
    if not isinstance(comprehension, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return None
    targets = {name.value for name in iter_nodes(loop.target) if isinstance(name, cst.Name)}
    reads = [name for name in iter_nodes(comprehension.elt) if isinstance(name, cst.Name) and name.value in targets]
    if not reads and isinstance(loop.inner_for_in, cst.CompFor):
        reads = [name for name in iter_nodes(loop.inner_for_in.iter)
                 if isinstance(name, cst.Name) and name.value in targets]  # read by the inner loop
    return comprehension if reads else None
