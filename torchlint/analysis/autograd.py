"""The autograd model: what the code of one scope does to autograd graphs, in the order it runs.

A training step is a handful of events, and most bugs people hit while writing one are two
of them in the wrong order:

    fake = netG(noise)                    # a forward: netG saves its parameters for backward
    loss_d = bce(netD(fake.detach()), 0)
    loss_g = bce(netD(fake), 1)           # netD(fake) saves netD's parameters
    loss_d.backward(); optD.step()        # an optimizer step writes every parameter of netD in place
    loss_g.backward()                     # backward reads what netD(fake) saved: RuntimeError

The events are the forwards through modules (``ModuleForward``), the optimizer steps with the
modules whose parameters they update (``OptimizerStep``), and the backward calls with the
tensor they differentiate (``Backward``); ``flows_into`` says whether a tensor is computed from
a forward's result (through assignments, and not through a graph exit such as ``.detach()``,
``.item()`` or a ``no_grad`` block); the queries at the end combine them
(``stale_forwards``).  What an operation or a torch module saves comes from the torch facts;
this module only knows where things run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted, is_true, keyword
from torchlint.syntax.walk import iter_nodes
from torchlint.analysis import torch_facts
from torchlint.analysis.semantic import BindingKind, ClassInfo, Scope
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

_BACKWARD_FUNCTIONS = ("torch.autograd.backward", "torch.autograd.grad")
_PARAMETER_METHODS = ("parameters", "named_parameters")
_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)


@dataclass(frozen=True)
class Backward:
    """``tensor.backward(..)``, ``torch.autograd.backward(tensor)`` or
    ``torch.autograd.grad(tensor, ..)``; ``retains`` when ``retain_graph=True`` keeps the graph."""

    node: cst.Call
    tensor: cst.BaseExpression
    retains: bool


@dataclass(frozen=True)
class OptimizerStep:
    """``optimizer.step()``: an in-place write to every parameter of ``updates`` (the
    modules, as written where the optimizer was built, whose ``parameters()`` it was given)."""

    node: cst.Call
    optimizer: cst.BaseExpression
    updates: tuple[str, ...]
    built: cst.CSTNode  # the optimizer's construction


@dataclass(frozen=True)
class ModuleForward:
    """``module(x)``: a forward through a module whose parameters require grad; ``saves``
    says why it saves parameters for backward, or is None when it may not (one layer of
    torch applied to a tensor that does not require grad saves only that tensor)."""

    node: cst.Call
    module: str
    saves: Optional[str]


@dataclass(frozen=True)
class StaleForward:
    """``step`` writes the parameters that ``forward`` saved, and ``backward``, after the
    step, differentiates through that forward: autograd raises "modified by an inplace
    operation".  ``next_iteration``: the step comes after the backward in a loop, and the
    next iteration's backward goes through the same, retained, graph."""

    step: OptimizerStep
    forward: ModuleForward
    backward: Backward
    next_iteration: bool


class AutogradModel:
    """The events of every scope of one module, computed on first use."""

    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._events: Optional[dict[int, tuple[list, list, list]]] = None

    # --- events -----------------------------------------------------------------------

    def backwards(self, scope: Scope) -> list[Backward]:
        return self._scope_events(scope)[0]

    def steps(self, scope: Scope) -> list[OptimizerStep]:
        return self._scope_events(scope)[1]

    def forwards(self, scope: Scope) -> list[ModuleForward]:
        return self._scope_events(scope)[2]

    def _scope_events(self, scope: Scope) -> tuple[list, list, list]:
        if self._events is None:
            self._events = self._collect()
        return self._events.get(id(scope.node), ([], [], []))

    def _collect(self) -> dict[int, tuple[list, list, list]]:
        """One walk of the file: every backward, step and module forward, by the scope whose
        code runs it (a function's, or the module's)."""
        found: dict[int, tuple[list, list, list]] = {}
        text = self.analysis.text
        if "backward" not in text and "autograd" not in text:
            return found
        for node in iter_nodes(self.analysis.module):
            if not isinstance(node, cst.Call):
                continue
            event = self._backward(node)
            slot = 0
            if event is None:
                event, slot = self._step(node), 1
            if event is None:
                event, slot = self._forward(node), 2
            if event is not None:
                owner = _owner(node)
                found.setdefault(id(owner), ([], [], []))[slot].append(event)
        return found

    def _backward(self, call: cst.Call) -> Optional[Backward]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            if self.inference.tensor(func.value) is None:
                return None
            tensor = func.value
        elif isinstance(func, (cst.Attribute, cst.Name)) and \
                (func.attr.value if isinstance(func, cst.Attribute) else func.value) in ("grad", "backward") \
                and call.args and self.inference.qualname(func) in _BACKWARD_FUNCTIONS:
            tensor = call.args[0].value
        else:
            return None
        retain = keyword(call, "retain_graph")
        if retain is None and isinstance(func, cst.Attribute) and func.attr.value == "backward":
            positional = [arg for arg in call.args if arg.keyword is None]
            retain = positional[1].value if len(positional) > 1 else None
        return Backward(call, tensor, retain is not None and is_true(retain))

    def _step(self, call: cst.Call) -> Optional[OptimizerStep]:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
            return None
        optimizer = self.inference.infer(func.value)
        if optimizer is None or optimizer.kind is not Kind.OPTIMIZER:
            return None
        for built in self._constructions(func.value):
            updates = self._updated_modules(built)
            if updates:
                return OptimizerStep(call, func.value, updates, built)
        return None

    def _forward(self, call: cst.Call) -> Optional[ModuleForward]:
        module = dotted(call.func)
        if not module or self.inference.grad_disabled(call) is not None:
            return None
        value = self.inference.infer(call.func)
        if value is None or value.kind is not Kind.MODULE:
            return None
        first = next((arg.value for arg in call.args if arg.keyword is None and not arg.star), None)
        attached = first is not None and (self.inference.tensor(first) or _UNKNOWN).attached is True
        if value.qualname and not isinstance(value.cls, ClassInfo):
            fact = torch_facts.fact(value.qualname)
            if fact is not None and fact.kind == "module_class" and fact.parameters is not None:
                if not fact.parameters:
                    return None  # ReLU, Dropout: nothing of theirs to save
                if not attached and not value.qualname.endswith(("Sequential", "ModuleList", "ModuleDict")):
                    return ModuleForward(call, module, None)
                return ModuleForward(call, module, "its input requires grad, so its weights are saved to "
                                     "compute that gradient" if attached else "a stack of layers saves the "
                                     "weights of each layer after the first")
        if attached:
            return ModuleForward(call, module, "its input requires grad, so its layers save their weights")
        layers = self._parameter_layers(value.cls) if isinstance(value.cls, ClassInfo) else None
        if layers is not None and layers < 2:
            return ModuleForward(call, module, None)
        return ModuleForward(call, module, "each layer after the first saves its weights for the gradient of its input")

    # --- optimizers and modules -----------------------------------------------------------

    def _constructions(self, expression: cst.BaseExpression) -> list[cst.Call]:
        """The calls that built the object ``expression`` names: the values assigned to the
        name, or to ``self.<attribute>`` in the methods of the class."""
        values: list[cst.BaseExpression] = []
        if isinstance(expression, cst.Name):
            values = [b.value for b in self.model.resolve(expression)
                      if b.kind is BindingKind.ASSIGN and b.value is not None and not b.path and not b.iterates]
        elif isinstance(expression, cst.Attribute) and isinstance(expression.value, cst.Name):
            cls = self._self_class(expression.value)
            if cls is not None:
                values = [a.value for a in cls.assignments(expression.attr.value) if a.value is not None and not a.path]
        return [value for value in values if isinstance(value, cst.Call)]

    def _self_class(self, name: cst.Name) -> Optional[ClassInfo]:
        for binding in self.model.resolve(name):
            function = binding.scope.function
            if binding.kind is BindingKind.PARAM and function is not None and function.cls is not None \
                    and function.self_name == name.value:
                return function.cls
        return None

    def _updated_modules(self, built: cst.Call) -> tuple[str, ...]:
        """The modules whose ``parameters()`` went into the optimizer built by ``built``
        (``Adam(net.parameters())``, ``SGD([{"params": a.parameters()}, ..])``,
        ``Adam(chain(a.parameters(), b.parameters()))``, or a name bound to one of those)."""
        params = keyword(built, "params")
        if params is None:
            params = next((arg.value for arg in built.args if arg.keyword is None and not arg.star), None)
        if params is None:
            return ()
        sources = [params]
        if isinstance(params, cst.Name):
            sources = [b.value for b in self.model.resolve(params)
                       if b.kind is BindingKind.ASSIGN and b.value is not None and not b.path]
        found = []
        for source in sources:
            for node in iter_nodes(source):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                        and node.func.attr.value in _PARAMETER_METHODS:
                    receiver = dotted(node.func.value)
                    if receiver and receiver not in found:
                        found.append(receiver)
        return tuple(found)

    def _parameter_layers(self, cls: ClassInfo, depth: int = 0) -> Optional[int]:
        """How many layers with parameters a module class of this file builds (``self.x =
        nn.Linear(..)``, a ``Sequential`` of them, a module of this file), None when unknown."""
        init = cls.methods.get("__init__")
        if init is None or depth > 3:
            return None
        count = 0
        for node in iter_nodes(init.node):
            if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
                value = self.inference.infer(node.func)
                if value is None:
                    continue
                if value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
                    inner = self._parameter_layers(value.cls, depth + 1)
                    if inner is None:
                        return None
                    count += inner
                    continue
                name = self.inference.qualname(node.func)
                fact = torch_facts.fact(name) if name else None
                if fact is not None and fact.kind == "module_class" and fact.parameters:
                    count += 1
        return count

    # --- flow ---------------------------------------------------------------------------------

    def flows_into(self, scope: Scope, source: cst.CSTNode, target: cst.BaseExpression, before: cst.CSTNode) -> bool:
        """Whether ``target`` (read at ``before``) is computed from the result of ``source``,
        in the graph: it contains ``source``, or reads a name bound between the two to
        something computed from it, not through ``.detach()``, ``.item()``, ``.data``, a
        numpy array or a ``no_grad`` block."""
        tainted: set[int] = set()
        bindings = sorted((binding for group in scope.bindings.values() for binding in group
                           if binding.value is not None and source.end <= binding.value.end <= before.start
                           and binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN)),
                          key=lambda binding: binding.seq)
        for binding in bindings:
            if self.inference.grad_disabled(binding.node) is None and self._carries(binding.value, source, tainted):
                tainted.add(id(binding))
        return self._carries(target, source, tainted)

    def _carries(self, expression: cst.BaseExpression, source: cst.CSTNode, tainted: set[int]) -> bool:
        for node in iter_nodes(expression):
            hit = node is source or (isinstance(node, cst.Name)
                                     and any(id(b) in tainted for b in self.model.resolve(node)))
            if hit and not _exits_graph(node, expression):
                return True
        return False

    # --- queries ------------------------------------------------------------------------------

    def stale_forwards(self) -> list[StaleForward]:
        """Optimizer steps between a forward through the modules they update and a backward
        through that forward (class docstring of ``StaleForward``)."""
        found = []
        for scope in self.model.scopes:
            backwards, steps, forwards = self.backwards(scope), self.steps(scope), self.forwards(scope)
            if not (backwards and steps and forwards):
                continue
            for backward in backwards:
                for step in steps:
                    stale = self._stale(scope, step, backward, forwards)
                    if stale is not None:
                        found.append(stale)
        return found

    def _stale(self, scope: Scope, step: OptimizerStep, backward: Backward,
               forwards: list[ModuleForward]) -> Optional[StaleForward]:
        exclusive = self.model.exclusive
        if exclusive(step.node, backward.node):
            return None
        shared_loop = _common_loop(step.node, backward.node)
        next_iteration = step.node.start > backward.node.end
        if next_iteration and (shared_loop is None or not backward.retains):
            return None
        for forward in forwards:
            if forward.saves is None or not any(_related(forward.module, module) for module in step.updates):
                continue
            if forward.node.end > backward.node.start or exclusive(forward.node, step.node) \
                    or exclusive(forward.node, backward.node):
                continue
            if next_iteration:
                if _inside(forward.node, shared_loop):
                    continue  # computed again on every iteration, after the step
            elif not forward.node.end <= step.node.start:
                continue
            elif _common_loop(forward.node, backward.node) is not shared_loop:
                continue  # the forward runs again (an inner loop) between the step and the backward
            if self.flows_into(scope, forward.node, backward.tensor, backward.node):
                return StaleForward(step, forward, backward, next_iteration)
        return None


class _Unknown:
    attached = None


_UNKNOWN = _Unknown()


def _owner(node: cst.CSTNode) -> cst.CSTNode:
    """The function (or module) whose code runs ``node``."""
    parent = node.parent
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.Module)):
        parent = parent.parent
    return parent


def _loops(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The loops around ``node`` in its function, innermost first (not their `else`)."""
    found = []
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, _SCOPES):
        if isinstance(parent, _LOOPS) and child is parent.body:
            found.append(parent)
        child, parent = parent, parent.parent
    return found


def _common_loop(one: cst.CSTNode, other: cst.CSTNode) -> Optional[cst.CSTNode]:
    others = {id(loop) for loop in _loops(other)}
    return next((loop for loop in _loops(one) if id(loop) in others), None)


def _inside(node: cst.CSTNode, container: Optional[cst.CSTNode]) -> bool:
    return container is not None and container.start <= node.start and node.end <= container.end


def _related(one: str, other: str) -> bool:
    """One module is the other or contains it (``model`` and ``model.encoder``)."""
    return one == other or one.startswith(other + ".") or other.startswith(one + ".")


def _exits_graph(node: cst.CSTNode, top: cst.BaseExpression) -> bool:
    """Whether ``node``'s value leaves the graph before reaching ``top``: an attribute or
    method of it with no gradient (``.detach()``, ``.item()``, ``.data``, ``.numpy()``)."""
    current = node
    while current is not top and current.parent is not None:
        parent = current.parent
        if isinstance(parent, cst.Attribute) and parent.value is current:
            name = parent.attr.value
            fact = torch_facts.method(name)
            if fact is not None and (fact.differentiable is False or fact.returns in ("other", "ndarray")):
                return True
        current = parent
    return False
