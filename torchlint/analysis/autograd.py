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
``.item()`` or a ``no_grad`` block).  The events of this file's functions are lifted to
their calls, one level deep.  The questions rules ask combine them:

- ``stale_forwards``: an optimizer step between a forward and a backward through it (TL409);
- ``reused_graphs``: a backward through a graph an earlier one freed (TL411);
- ``inplace_over_saved``: what calling a module does (``ModuleBehaviour``: saves its output,
  writes its input), and in-place layers run on a saved output (TL409);
- ``unregistered_layers``: layers kept in plain containers of a module (TL418);
- ``multi_output_view``: a name holding one of several views of a tensor (TL303);
- ``backward_without_grad``: training code called while gradients are off (TL408).

What an operation or a torch module saves comes from the torch facts; this module only
knows where things run and what flows where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import called_name, dotted, is_false, is_true, keyword, tuple_element
from torchlint.syntax.walk import ancestors, enclosing_code, enclosing_loops, in_branch, is_descendant, iter_nodes
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.graph_lifetime import GraphLifetime
from torchlint.analysis.semantic import BindingKind, ClassInfo, Scope
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

_DETACHES = re.compile(r"\.detach_?\(|\bno_grad\b|\.data\b")
# What may turn gradients back on: `enable_grad()`, `set_grad_enabled(..)` of any flag, `inference_mode(False)`.
_RE_ENABLES_GRAD = re.compile(
    r"enable_grad|set_grad_enabled\s*\(\s*(?!False\s*\))|inference_mode\s*\(\s*(?:mode\s*=\s*)?False")
_BACKWARD_FUNCTIONS = ("torch.autograd.backward", "torch.autograd.grad")
_PARAMETER_METHODS = ("parameters", "named_parameters")
_LOOPS = (cst.For, cst.While)
# Methods that return one view of their receiver (`view`, `reshape` when it can, `flatten`...).
# (`detach()` is a view autograd does not track: writing it is allowed.)
_SINGLE_VIEW_METHODS = torch_facts.methods(aliasing={"view", "maybe_view"}, returns="tensor") - {"detach"}
_MAX_MODULE_DEPTH = 24  # modules built of modules, through names, attributes and functions
# `self.<name> = [`, `= {`, `= (` or `= <name>`: an attribute that may be given a plain container.
_CONTAINER_ASSIGNMENT = re.compile(r"self\.(\w+)\s*=\s*(?:[\[{(]|[A-Za-z_]\w*\s*$)", re.MULTILINE)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)
# Gradients of all of a module's parameters turned off: `owner.requires_grad_(False)`, or a
# loop over `owner.parameters()` setting `requires_grad = False` / `requires_grad_(False)`;
# the owner is the group `owner` or `looped`.
_FREEZES_ALL = re.compile(
    r"(?<![\w.])(?P<owner>[A-Za-z_][\w.]*)\.requires_grad_\(\s*(?:requires_grad\s*=\s*)?False\s*\)"
    r"|for\s+(?P<each>\w+)\s+in\s+(?<![\w.])(?P<looped>[A-Za-z_][\w.]*)\.parameters\(\)\s*:\s*\n?\s*"
    r"(?P=each)\.requires_grad(?:_\(\s*(?:requires_grad\s*=\s*)?False\s*\)|\s*=\s*False)")


@dataclass(frozen=True)
class Backward:
    """``tensor.backward(..)``, ``torch.autograd.backward(tensor)`` or
    ``torch.autograd.grad(tensor, ..)``; ``retains`` when ``retain_graph=True`` keeps the graph."""

    node: cst.Call
    tensor: cst.BaseExpression
    retains: bool
    via: Optional[cst.Call] = None  # the call of this file's function whose body runs it
    index: int = 0  # its place among the events of that call

    @property
    def at(self) -> cst.CSTNode:
        """Where it happens in the code of the scope asked about."""
        return self.via or self.node


@dataclass(frozen=True)
class OptimizerStep:
    """``optimizer.step()``: an in-place write to every parameter of ``updates`` (the
    modules, as written where the optimizer was built, whose ``parameters()`` it was given)."""

    node: cst.Call
    optimizer: cst.BaseExpression
    updates: tuple[str, ...]
    built: cst.CSTNode  # the optimizer's construction
    via: Optional[cst.Call] = None
    index: int = 0

    @property
    def at(self) -> cst.CSTNode:
        return self.via or self.node


@dataclass(frozen=True)
class ModuleForward:
    """``module(x)``: a forward through a module whose parameters require grad; ``saves``
    says why it saves parameters for backward, or is None when it may not (one layer of
    torch applied to a tensor that does not require grad saves only that tensor).  With
    ``module`` empty: a computation outside loops from a tensor that requires grad
    (``_graph_sources``), which builds a graph the same way."""

    node: cst.BaseExpression  # the call, or a computation of `_graph_sources`
    module: str
    saves: Optional[str]
    via: Optional[cst.Call] = None
    index: int = 0
    # Lifted from a function returning a tuple: the positions of the elements it flows into.
    elements: Optional[frozenset[int]] = None
    # Run by another method of the class, its result kept in an attribute that this method
    # reads (`self.fake` here, `self.fake = self.netG(z)` there): the graph was built before
    # this method ran. The first read of the attribute here.
    held: Optional[cst.Attribute] = None

    @property
    def at(self) -> cst.CSTNode:
        return self.via or self.node


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


@dataclass(frozen=True)
class ReusedGraph:
    """``first`` (without ``retain_graph``) frees the buffers that ``forward`` saved, and
    ``second`` goes back through ``forward`` again: autograd raises "Trying to backward
    through the graph a second time".  ``how``: ``later``, a second backward after the
    first; ``next-iteration``, the forward runs above the loop whose backward frees it on
    the first iteration; ``carried``, the forward's result is carried by ``carrier`` (a
    hidden state) into the next iteration's forward; ``total``, a name the loop accumulates
    the forward's result into (``carrier``) is back-propagated on every iteration."""

    first: Backward
    second: Backward
    forward: ModuleForward
    how: str
    carrier: Optional[cst.CSTNode] = None


@dataclass(frozen=True)
class ModuleBehaviour:
    """What calling a module does to autograd: ``saves_output`` says why its output is
    saved for backward (its last layer saves its result: `nn.ReLU`, `nn.Sigmoid`, a block
    ending in one), ``writes_input`` is the construction (``inplace=True``) through which it
    writes its input in place."""

    saves_output: Optional[str] = None
    saver: Optional[cst.CSTNode] = None  # the layer whose result is saved
    writes_input: Optional[cst.Call] = None
    # What its first layer keeps of its input (the torch facts' letters): "i" the input when it
    # requires grad, "c" when it does not (a layer with parameters saves it for their gradients).
    saves_input: str = ""


@dataclass(frozen=True)
class InplaceOverSaved:
    """The module built by ``writer`` (with ``inplace=True``) runs on the output of
    ``saver``, which autograd saved: the backward through them raises "modified by an
    inplace operation".  ``at`` is where they meet: the ``nn.Sequential`` that chains
    them, or the call that gives one's output to the other."""

    writer: cst.Call
    saver: cst.CSTNode
    at: cst.CSTNode
    why: str


@dataclass(frozen=True)
class UnregisteredLayers:
    """``assignment`` (``self.layers = [..]``) keeps layers built here (``layer`` is one) in a
    plain list, tuple or dict of an ``nn.Module``: the module does not register them, so
    their parameters are not its parameters."""

    assignment: cst.Assign
    target: cst.Attribute
    layer: cst.CSTNode
    container: str  # "list", "tuple", "dict"


@dataclass(frozen=True)
class BackwardWithoutGrad:
    """``call`` runs, while ``disabled`` turns gradients off, a function of this file that
    computes a loss and calls ``backward`` on it: nothing it computes has a graph, and the
    backward raises "element 0 of tensors does not require grad"."""

    call: cst.Call
    disabled: cst.CSTNode
    backward: cst.Call


@dataclass(frozen=True)
class GradLeftOff:
    """``switch`` (``torch.set_grad_enabled(False)`` as a statement of ``function``'s body) turns
    gradients off for the rest of the thread, not for the function: after ``call`` of it
    returns, ``later`` (a statement after it in the same block) runs ``backward`` on what it
    computes, which has no graph."""

    switch: cst.Call
    function: str
    call: cst.Call
    later: cst.CSTNode
    backward: cst.Call


class AutogradModel:
    """The events of every scope of one module, computed on first use."""

    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._events: Optional[dict[int, tuple[list, list, list]]] = None
        self._behaviours: dict[int, Optional[ModuleBehaviour]] = {}
        self._switches: Optional[dict[str, cst.Assign]] = None
        self._builds_inplace: Optional[bool] = None
        self._passes_inplace: Optional[bool] = None
        self._lifetime: Optional[GraphLifetime] = None
        self._freezes: Optional[list[tuple[str, int]]] = None
        self._parameter_flows: dict[tuple[int, str], bool] = {}  # (function, parameter) -> returned in the graph
        self._returned_views: dict[int, Optional[cst.Param]] = {}

    @property
    def lifetime(self) -> GraphLifetime:
        """Which values keep a graph alive past their iteration (``graph_lifetime``)."""
        if self._lifetime is None:
            self._lifetime = GraphLifetime(self)
        return self._lifetime

    @property
    def calls(self) -> list[cst.Call]:
        """Every call of the module, in source order (one walk, shared by the questions)."""
        return self.analysis.nodes_of(cst.Call)

    # --- events -----------------------------------------------------------------------

    def backwards(self, scope: Scope) -> list[Backward]:
        return self._scope_events(scope)[0]

    def retains_graph(self, call: cst.Call) -> bool:
        """The backward ``call`` keeps the graph it runs through (`retain_graph=True`, or
        `create_graph=True`, whose default it is): what it went through can be differentiated again."""
        backward = self._backward(call)
        return backward is not None and backward.retains

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
        code runs it (a function's, or the module's); then, one level deep, the events of this
        file's functions where they are called (``update(optimizer, loss)``, ``self.compute_loss()``)."""
        found: dict[int, tuple[list, list, list]] = {}
        text = self.analysis.text
        if "backward" not in text and "autograd" not in text:
            return found
        calls: list[tuple[cst.Call, object]] = []
        for node in self.calls:
            event = self._backward(node)
            slot = 0
            if event is None:
                event, slot = self._step(node), 1
            if event is None:
                event, slot = self._forward(node), 2
            if event is not None:
                found.setdefault(id(enclosing_code(node)), ([], [], []))[slot].append(event)
                continue
            value = self.inference.infer(node.func)
            if value is not None and value.kind is Kind.FUNCTION and value.function is not None \
                    and value.function.model is self.model and isinstance(value.function.node, cst.FunctionDef):
                calls.append((node, value.function))
        for source in self._graph_sources():
            found.setdefault(id(enclosing_code(source)), ([], [], []))[2].append(
                ModuleForward(source, "", "it is computed from a tensor that requires grad"))
        direct = {key: (list(b), list(st), list(f)) for key, (b, st, f) in found.items()}
        for call, function in calls:
            events = direct.get(id(function.node))
            if events is None or enclosing_code(call) is function.node:
                continue
            lifted = self._lifted(call, function, events)
            if any(lifted):
                slots = found.setdefault(id(enclosing_code(call)), ([], [], []))
                for slot, items in enumerate(lifted):
                    slots[slot].extend(items)
        for slots in found.values():
            for items in slots:
                items.sort(key=lambda event: (event.at.start, event.index))
        return found

    def _graph_sources(self) -> list[cst.BaseExpression]:
        """Values computed, outside any loop, from a tensor that requires grad by torch
        operations (not a module's forward, an event already): `Y = X @ true_w + true_b`
        with `true_w` made with `requires_grad=True`.  They carry a graph like a forward's
        output, and a backward through them frees it."""
        found = []
        for assignment in self.analysis.nodes_of(cst.Assign):
            value = assignment.value
            if len(assignment.targets) != 1 or not isinstance(assignment.targets[0].target, cst.Name) \
                    or not isinstance(value, (cst.Call, cst.BinaryOperation)) or enclosing_loops(assignment):
                continue
            if isinstance(value, cst.Call) and self.local_function(value):
                continue
            tensor = self.inference.tensor(value)
            if tensor is None or tensor.attached is not True or tensor.leaf is not False \
                    or self.inference.grad_disabled(assignment) is not None:
                continue
            if any(isinstance(node, cst.Call) and self._module_call(node) for node in iter_nodes(value)):
                continue  # a module's forward: an event of its own when its parameters require grad
            if not any(self._saves_tensors(node) for node in iter_nodes(value)):
                continue  # `w.to(dtype)`, `a + b`: nothing saved, so a second backward works
            found.append(value)
        return found

    def _saves_tensors(self, node: cst.CSTNode) -> bool:
        """An operation autograd saves tensors for (the torch facts' ``saves``): `torch.mm`,
        `x.pow(2)`, `a @ b`, `a * b` of two tensors (not of a number)."""
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.MatrixMultiply):
                return True
            if isinstance(node.operator, (cst.Multiply, cst.Divide, cst.Power)):
                return all(self.inference.tensor(side) is not None for side in (node.left, node.right)) \
                    or isinstance(node.operator, cst.Power)
            return False
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        qualname = self.inference.qualname(func)
        fact = torch_facts.fact(qualname) if qualname else None
        if fact is None and isinstance(func, cst.Attribute) and self.inference.tensor(func.value) is not None:
            fact = torch_facts.method(func.attr.value)
        return fact is not None and fact.saves is not None and fact.saves != "n"

    def _module_call(self, call: cst.Call) -> bool:
        value = self.inference.infer(call.func)
        return value is not None and value.kind is Kind.MODULE

    def _lifted(self, call: cst.Call, function, events: tuple[list, list, list]) -> tuple[list, list, list]:
        """The events of ``function``'s body as they happen at ``call``: a backward of the
        tensor passed for its parameter, a step of the optimizer passed or held on the
        instance, a forward whose result the function returns."""
        backwards, steps, forwards = events
        # The body's order: a forward counts where it ends, a step or backward where it starts.
        order = sorted([*backwards, *steps, *forwards],
                       key=lambda event: event.node.end if isinstance(event, ModuleForward) else event.node.start)
        indices = {id(event): index for index, event in enumerate(order, start=1)}
        arguments = _arguments(call, function)
        receiver = dotted(call.func.value) if isinstance(call.func, cst.Attribute) else ""
        lifted: tuple[list, list, list] = ([], [], [])
        for index, event in enumerate(order, start=1):
            if isinstance(event, ModuleForward):
                continue
            if isinstance(event, Backward):
                tensor = _parameter_argument(event.tensor, function, arguments)
                if tensor is not None:
                    retains = self._retains(event.node, function, arguments)
                    lifted[0].append(Backward(event.node, tensor, retains, call, index))
            else:
                optimizer = _parameter_argument(event.optimizer, function, arguments)
                if optimizer is not None:
                    for built in self._constructions(optimizer):
                        updates = self._updated_modules(built)
                        if updates:
                            lifted[1].append(OptimizerStep(event.node, optimizer, updates, built, call, index))
                            break
                elif _rooted_at(event.optimizer, function.self_name) and receiver:
                    updates = tuple(_rebased(module, function.self_name, receiver) for module in event.updates)
                    lifted[1].append(OptimizerStep(event.node, event.optimizer, updates, event.built, call, index))
        scope = function.scope
        for forward in forwards:
            module = forward.module
            root = module.split(".")[0]
            if root == function.self_name:
                if not receiver:
                    continue
                module = _rebased(module, root, receiver)
            elif root in arguments:
                argument = dotted(arguments[root])
                if not argument:
                    continue
                module = argument + module[len(root):]
            if scope is None:
                continue
            elements: set[int] = set()
            whole = False
            for value in function.returns:
                if isinstance(value, cst.Tuple):
                    elements.update(position for position, element in enumerate(value.elements)
                                    if self.flows_into(scope, forward.node, element.value, value))
                elif self.flows_into(scope, forward.node, value, value):
                    whole = True
            if whole or elements:
                lifted[2].append(ModuleForward(forward.node, module, forward.saves, call, indices[id(forward)],
                                               None if whole else frozenset(elements)))
        return lifted

    def _retains(self, backward: cst.Call, function, arguments: dict) -> bool:
        """``retain_graph=`` of a backward in ``function``, where it may be one of the
        function's parameters (``retain_graph=retain_graph``): the argument given, or its default."""
        value = _retain_argument(backward)
        if isinstance(value, cst.Name) and value.value in _parameter_names(function):
            given = arguments.get(value.value)
            if given is None:
                given = next((param.default for param in function.node.params.params + function.node.params.kwonly_params
                              if param.name.value == value.value), None)
            value = given
        return value is not None and is_true(value)

    def _backward(self, call: cst.Call) -> Optional[Backward]:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward" and \
                self.inference.tensor(func.value) is not None:
            tensor = func.value
        elif isinstance(func, (cst.Attribute, cst.Name)) and \
                (func.attr.value if isinstance(func, cst.Attribute) else func.value) in ("grad", "backward") \
                and call.args and self.inference.qualname(func) in _BACKWARD_FUNCTIONS:
            tensor = call.args[0].value
        elif isinstance(func, cst.Attribute) and call.args and call.args[0].keyword is None and \
                not call.args[0].star and self._library_backward(func):
            tensor = call.args[0].value  # `accelerator.backward(loss)`
        else:
            return None
        retain = _retain_argument(call)
        # `retain_graph=keep` or `True if i < n - 1 else None`: it may keep the graph
        return Backward(call, tensor, retain is not None and not is_false(retain) and
                        not (isinstance(retain, cst.Name) and retain.value == "None"))

    def _library_backward(self, func: cst.Attribute) -> bool:
        """``accelerator.backward`` on ``accelerator = Accelerator(..)``: a library's method
        that back-propagates its first argument."""
        receiver = func.value
        if not isinstance(receiver, cst.Name):
            return False
        values = self.model.assigned_values(receiver)
        if not values or not all(isinstance(value, cst.Call) for value in values):
            return False
        classes = {self.inference.qualname(value.func) for value in values}  # type: ignore[union-attr]
        return len(classes) == 1 and torch_api.LIBRARY_BACKWARDS.get(classes.pop() or "") == func.attr.value

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
        if isinstance(func.value, cst.Name) and any(binding.kind is BindingKind.PARAM
                                                   for binding in self.model.resolve(func.value)):
            # The optimizer a function is given: what it updates is known at each call (lifted).
            return OptimizerStep(call, func.value, (), call)
        return None

    def _forward(self, call: cst.Call) -> Optional[ModuleForward]:
        module = dotted(call.func)
        if not module or self.inference.grad_disabled(call) is not None:
            return None
        value = self.inference.infer(call.func)
        if value is None or value.kind is not Kind.MODULE:
            return None
        first = next((arg.value for arg in call.args if arg.keyword is None and not arg.star), None)
        tensor = self.inference.tensor(first) if first is not None else None
        attached = tensor is not None and tensor.attached is True
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
        if self.frozen(module, value.cls):
            return None  # no parameter requires grad: nothing of this forward is in a graph
        layers = self._parameter_layers(value.cls) if isinstance(value.cls, ClassInfo) else None
        if layers is not None and layers < 2 or isinstance(value.cls, ClassInfo) and self._layers_on_input(value.cls):
            return ModuleForward(call, module, None)
        return ModuleForward(call, module, "each layer after the first saves its weights for the gradient of its input")

    def hooked_leaf(self, node: cst.BaseExpression) -> Optional[tuple[cst.Call, cst.CSTNode]]:
        """``node`` (a name) holds the output of a module whose parameters all have gradients
        off, on which a forward hook of the file calls ``output.requires_grad_()`` (what
        `enable_input_require_grads()` does for a frozen embedding): the output is made by no
        operation of the graph, so it is a leaf, and the hook makes it require grad. The
        module call and the hook's registration."""
        if not isinstance(node, cst.Name):
            return None
        bindings = self.model.resolve(node)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
            return None
        call = bindings[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or not dotted(call.func) \
                or self.inference.grad_disabled(call) is not None:
            return None
        module = self.inference.infer(call.func)
        if module is None or module.kind is not Kind.MODULE:
            return None
        owner = self.inference.infer(call.func.value)
        user = self.model.functions.get(id(enclosing_code(call)))
        for kind, registration in self.model.hook_calls:
            hooked = registration.func.value if isinstance(registration.func, cst.Attribute) else None
            method = self.model.functions.get(id(enclosing_code(registration)))
            if kind != "forward" or method is None or not isinstance(hooked, cst.Attribute) or \
                    dotted(hooked.value) != method.self_name or hooked.attr.value != call.func.attr.value:
                continue
            same = dotted(call.func.value) == (user.self_name if user is not None else None) and \
                user.cls is method.cls  # `self.embed(..)` in the class that hooks `self.embed`
            if not (same or owner is not None and owner.cls is method.cls and method.cls is not None):
                continue
            if method.name != "__init__" and not self.inference.calls_of(method):
                continue  # the registering method never runs
            if self._sets_output_grad(registration) and self._frozen_within(dotted(call.func), call):
                return call, registration
        return None

    def _sets_output_grad(self, registration: cst.Call) -> bool:
        """The forward hook ``registration`` registers calls ``output.requires_grad_()`` (or
        sets ``output.requires_grad = True``) on its third parameter, in its body's top level."""
        registered = registration.args[0].value if registration.args else None
        functions = [binding.definition for binding in self.model.resolve(registered)
                     if binding.kind is BindingKind.FUNCTION] if isinstance(registered, cst.Name) else []
        if len(functions) != 1 or not isinstance(functions[0].node, cst.FunctionDef):
            return False
        params = functions[0].positional_params()
        if len(params) != 3:
            return False
        output = params[2].name.value
        for line in functions[0].node.body.body:
            for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
                value = small.value if isinstance(small, cst.Expr) else None
                if isinstance(value, cst.Call) and dotted(value.func) == f"{output}.requires_grad_" and \
                        (not value.args or is_true(value.args[0].value)):
                    return True
                if isinstance(small, cst.Assign) and is_true(small.value) and len(small.targets) == 1 and \
                        dotted(small.targets[0].target) == f"{output}.requires_grad":
                    return True
        return False

    def _frozen_within(self, module: str, use: cst.CSTNode) -> bool:
        """Every parameter of ``module`` (as the code at ``use`` names it) has gradients off:
        the file turns them off for it or for a module holding it (`self.llm` of
        `self.llm.embed_tokens`), in the class of ``use`` for a name rooted at `self`."""
        self.frozen(module, None)  # (fills the file's freezes)
        function = self.model.functions.get(id(enclosing_code(use)))
        cls = function.cls if function is not None else None
        for owner, start in self._freezes or ():
            if module != owner and not module.startswith(owner + "."):
                continue
            if owner.split(".")[0] == "self" and not (cls is not None and cls.node.start <= start < cls.node.end):
                continue
            return True
        return False

    def frozen(self, module: str, cls) -> bool:
        """Every parameter of ``module`` has gradients off: its class turns off its own in
        ``__init__``, or the file does it for this module (``model.requires_grad_(False)``,
        ``for p in model.parameters(): p.requires_grad = False``)."""
        if self._freezes is None:  # one scan of the file: (what is frozen, where)
            text = self.analysis.text
            self._freezes = [(match.group("owner") or match.group("looped"), match.start())
                             for match in _FREEZES_ALL.finditer(text)] if "requires_grad" in text else []
        if isinstance(cls, ClassInfo) and cls.model is self.model and any(
                owner == "self" and cls.node.start <= start < cls.node.end for owner, start in self._freezes):
            return True
        return any(owner == module for owner, _ in self._freezes)

    # --- optimizers and modules -----------------------------------------------------------

    def optimizer_updates(self, optimizer: cst.BaseExpression) -> tuple[str, ...]:
        """The modules whose parameters the optimizer ``optimizer`` names was given, as written
        where it was built (``netD`` for ``Adam(netD.parameters())``); () when not known."""
        for built in self._constructions(optimizer):
            updates = self._updated_modules(built)
            if updates:
                return updates
        if isinstance(optimizer, cst.Attribute) and not (isinstance(optimizer.value, cst.Name)
                                                         and self._self_class(optimizer.value) is not None):
            # `self.discriminator.optimizer`, built in the module's class over `self.parameters()`.
            owner = self.inference.infer(optimizer.value)
            cls = owner.cls if owner is not None else None
            receiver = dotted(optimizer.value)
            if isinstance(cls, ClassInfo) and cls.model is self.model and receiver:
                for assignment in cls.assignments(optimizer.attr.value):
                    if isinstance(assignment.value, cst.Call) and not assignment.path:
                        updates = self._updated_modules(assignment.value)
                        if updates and all(module.split(".")[0] == "self" for module in updates):
                            return tuple(_rebased(module, "self", receiver) for module in updates)
        return ()

    def _constructions(self, expression: cst.BaseExpression) -> list[cst.Call]:
        """The calls that built the object ``expression`` names: the values assigned to the
        name, or to ``self.<attribute>`` in the methods of the class."""
        values: list[cst.BaseExpression] = []
        if isinstance(expression, cst.Name):  # `opt = Adam(..)`, `opt_g, opt_d = Adam(..), Adam(..)`
            values = [tuple_element(b.value, b.path) for b in self.model.resolve(expression)
                      if b.kind is BindingKind.ASSIGN and b.value is not None and not b.iterates]
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

    def parameter_layers(self, cls: ClassInfo) -> Optional[int]:
        """How many layers with parameters a module class of this file builds, None when unknown."""
        return self._parameter_layers(cls)

    def _layers_on_input(self, cls: ClassInfo) -> bool:
        """Every layer with parameters that ``forward`` calls is given one of its inputs as it
        came (``self.actor(state)``, ``self.critic(state)``): none is given another layer's
        output, so none saves its weights when the input does not require grad. Any other
        read of the instance (a parameter used directly, a helper method) leaves it unknown."""
        forward = cls.methods.get("forward")
        if forward is None or forward.scope is None or forward.self_name is None \
                or not isinstance(forward.node, cst.FunctionDef):
            return False
        inputs = {param.name.value for param in forward.positional_params()[1:]}
        if not inputs or any(name in forward.scope.bindings and any(
                binding.kind is not BindingKind.PARAM for binding in forward.scope.bindings[name]) for name in inputs):
            return False
        called = False
        for node in iter_nodes(forward.node.body):
            if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                    and node.value.value == forward.self_name):
                continue
            call = node.parent
            value = self.inference.infer(node)
            if value is None or value.kind is not Kind.MODULE or not isinstance(call, cst.Call) \
                    or call.func is not node:
                return False
            fact = torch_facts.fact(value.qualname) if value.qualname and not isinstance(value.cls, ClassInfo) \
                else None
            if fact is not None and fact.kind == "module_class" and fact.parameters is False:
                continue  # `self.act(..)`: nothing of its own to save
            first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star \
                else None
            if not (isinstance(first, cst.Name) and first.value in inputs and len(call.args) == 1):
                return False
            called = True
        return called

    def _parameter_layers(self, cls: ClassInfo, depth: int = 0) -> Optional[int]:
        """How many layers with parameters a module class of this file builds (``self.x =
        nn.Linear(..)``, a ``Sequential`` of them, a module of this file), None when unknown."""
        init = cls.methods.get("__init__")
        if init is None or depth > 3:
            return None
        cls.model.materialize(init)  # (a class of a module another file imports: its bodies are built on demand)
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

    def flows_into(self, scope: Scope, source: cst.CSTNode, target: cst.BaseExpression, before: cst.CSTNode,
                   elements: Optional[frozenset[int]] = None, held: str = "") -> bool:
        """Whether ``target`` (read at ``before``) is computed from the result of ``source``,
        in the graph: it contains ``source``, or reads a name bound between the two to
        something computed from it, not through ``.detach()``, ``.item()``, ``.data``, a
        numpy array or a ``no_grad`` block.  With ``elements``, only those positions of the
        tuple ``source`` gives carry it (``loss, _ = source`` with ``elements={0}``). With
        ``held``, the result is also every read of that attribute (``self.fake``)."""
        tainted = self._tainted(scope, source, before, elements, held)
        return self._carries(target, source, {id(binding) for binding in tainted}, held)

    def _tainted(self, scope: Scope, source: cst.CSTNode, before: cst.CSTNode,
                 elements: Optional[frozenset[int]] = None, held: str = "") -> list:
        """The bindings between ``source`` and ``before`` whose values carry its result."""
        tainted: list = []
        ids: set[int] = set()
        bindings = sorted((binding for group in scope.bindings.values() for binding in group
                           if binding.value is not None and source.end <= binding.value.end <= before.start
                           and binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN, BindingKind.FOR)),
                          key=lambda binding: binding.seq)
        for binding in bindings:
            if elements is not None and binding.value is source and binding.path:
                carries = binding.path[0] in elements
            else:
                carries = self.inference.grad_disabled(binding.node) is None \
                    and self._carries(binding.value, source, ids, held)
            if not carries and binding.kind is BindingKind.AUGASSIGN:  # `loss += part` keeps what `loss` held
                prior = self.model.prior_binding(binding)
                carries = prior is not None and id(prior) in ids
            if carries:
                tainted.append(binding)
                ids.add(id(binding))
        return tainted

    def _carries(self, expression: cst.BaseExpression, source: cst.CSTNode, tainted: set[int],
                 held: str = "") -> bool:
        for node in iter_nodes(expression):
            hit = node is source or (isinstance(node, cst.Name)
                                     and any(id(b) in tainted for b in self.model.resolve(node))) or \
                bool(held) and isinstance(node, cst.Attribute) and dotted(node) == held
            if hit and held and isinstance(node, cst.Attribute) and isinstance(node.parent, cst.AssignTarget):
                continue
            if hit and not _exits_graph(node, expression) and not _detaching_comprehension(node, expression) \
                    and not self._inside_gradient(node, expression) and not self._cut_by_callee(node, expression):
                return True
        return False

    def _cut_by_callee(self, node: cst.CSTNode, top: cst.CSTNode) -> bool:
        """``node`` is passed (as it is) to a function or method of this file whose returned
        values are not computed from that parameter in the graph: `netD.adv_loss(real, fake)`
        that uses only `fake.detach()`."""
        arg = node.parent
        if node is top or not isinstance(arg, cst.Arg) or arg.value is not node or arg.star:
            return False
        call = arg.parent
        if not isinstance(call, cst.Call):
            return False
        function = self.local_function(call)
        if function is None or function.scope is None or not function.returns or function.is_generator:
            return False
        name = next((name for name, value in _arguments(call, function).items() if value is node), None)
        return name is not None and not self._returns_from_parameter(function, name)

    def _returns_from_parameter(self, function, name: str) -> bool:
        """Some value ``function`` returns may be computed, in the graph, from its parameter
        ``name`` (True when that cannot be followed)."""
        key = (id(function.node), name)
        if key in self._parameter_flows:
            return self._parameter_flows[key]
        self._parameter_flows[key] = True  # while it is being computed (a cycle proves nothing)
        scope = function.scope
        tainted = {id(binding) for binding in scope.bindings.get(name, ()) if binding.kind is BindingKind.PARAM}
        found = True
        if tainted:
            for binding in sorted((b for group in scope.bindings.values() for b in group
                                   if b.value is not None and b.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN,
                                                                         BindingKind.FOR)), key=lambda b: b.seq):
                if self._carries(binding.value, function.node, tainted) or \
                        binding.kind is BindingKind.AUGASSIGN and any(id(before) in tainted for before in
                                                                      self.model.resolve(binding.node)):
                    tainted.add(id(binding))
            found = any(self._carries(value, function.node, tainted) for value in function.returns)
        self._parameter_flows[key] = found
        return found

    def _inside_gradient(self, node: cst.CSTNode, top: cst.CSTNode) -> bool:
        """``node`` is differentiated by a ``torch.autograd.grad(..)`` inside ``top`` that
        does not build a graph of its own: the gradients it gives are out of the graph."""
        current = node
        while current is not top and current.parent is not None:
            current = current.parent
            if isinstance(current, cst.Call) and isinstance(current.func, (cst.Name, cst.Attribute)) \
                    and dotted(current.func).endswith("grad") and self.inference.qualname(current.func) == "torch.autograd.grad":
                create = keyword(current, "create_graph")
                return create is None or not is_true(create)
        return False

    # --- queries ------------------------------------------------------------------------------

    def stale_forwards(self) -> list[StaleForward]:
        """Optimizer steps between a forward through the modules they update and a backward
        through that forward (class docstring of ``StaleForward``)."""
        found = []
        for scope in self.model.scopes:
            backwards, steps, forwards = self.backwards(scope), self.steps(scope), self.forwards(scope)
            if backwards and steps:
                forwards = [*forwards, *self._held_forwards(scope)]
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
        if exclusive(step.at, backward.at):
            return None
        next_iteration = _before(backward, step)
        shared_loop = _common_loop(step.at, backward.at)
        if next_iteration and (shared_loop is None or not backward.retains):
            return None
        updates = step.updates or self._lifted_updates(step)
        for forward in forwards:
            if forward.saves is None:
                continue
            if forward.held is not None:  # built before this method ran, and not again in it
                if not next_iteration and _updated_by(forward.module, updates) and self.flows_into(
                        scope, forward.held, backward.tensor, backward.at, held=dotted(forward.held)):
                    return StaleForward(step, forward, backward, next_iteration)
                continue
            if not _updated_by(forward.module, updates) and not self._updated_part(scope, forward, step, backward):
                continue
            if not _before(forward, backward) or exclusive(forward.at, step.at) or exclusive(forward.at, backward.at):
                continue
            if next_iteration:
                if _inside(forward.at, shared_loop):
                    continue  # computed again on every iteration, after the step
            elif not _before(forward, step):
                continue
            elif _common_loop(forward.at, backward.at) is not shared_loop:
                continue  # the forward runs again (an inner loop) between the step and the backward
            if self.flows_into(scope, forward.at, backward.tensor, backward.at, forward.elements):
                return StaleForward(step, forward, backward, next_iteration)
        return None

    def _held_forwards(self, scope: Scope) -> list[ModuleForward]:
        """The forwards whose results the method of ``scope`` reads from attributes of its
        instance (`self.fake`), each attribute set only to a module's forward by other methods
        of the class (`self.fake = self.netG(z)` in `forward`), and by no method this one calls:
        graphs built before the method ran, which it does not build again."""
        function = scope.function
        cls = function.cls if function is not None else None
        if cls is None or not function.self_name or function.kind != "method":
            return []
        called: list = []  # the methods it runs through `self.<method>(..)`, and the ones those run
        pending = [function]
        while pending and len(called) < 32:
            caller = pending.pop()
            for node in iter_nodes(caller.node):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and caller.self_name and \
                        dotted(node.func.value) == caller.self_name and \
                        (method := cls.methods.get(node.func.attr.value)) is not None and method not in called:
                    called.append(method)
                    pending.append(method)
        found: list[ModuleForward] = []
        seen: set[str] = set()
        for node in iter_nodes(function.node):
            if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                    and node.value.value == function.self_name) or node.attr.value in seen \
                    or isinstance(node.parent, cst.AssignTarget) or isinstance(node.parent, cst.Call) \
                    and node.parent.func is node:
                continue
            seen.add(node.attr.value)
            assignments = cls.assignments(node.attr.value)
            if not assignments or any(
                    assignment.path or assignment.function is function or not isinstance(assignment.value, cst.Call)
                    or not isinstance(assignment.node, cst.Attribute) or assignment.function.self_name is None
                    or any(method is assignment.function for method in called) for assignment in assignments):
                continue
            forwards = [self._forward(assignment.value) for assignment in assignments]
            if any(forward is None or forward.saves is None for forward in forwards):
                continue
            for forward, assignment in zip(forwards, assignments):
                root = assignment.function.self_name
                if forward.module.split(".")[0] == root:
                    module = _rebased(forward.module, root, function.self_name)
                    found.append(ModuleForward(forward.node, module, forward.saves, held=node))
                    break
        return found

    def _lifted_updates(self, step: OptimizerStep) -> tuple[str, ...]:
        """For the step of an optimizer its function is given (``train_step(model, optimizer,
        ..)``): the parameters of that function to which a call passes a module that the
        optimizer passed there updates (``model``, at ``train_step(model, optimizer, ..)`` with
        ``optimizer = SGD(model.parameters())``)."""
        if not isinstance(step.optimizer, cst.Name):
            return ()
        bindings = self.model.resolve(step.optimizer)
        function = bindings[0].scope.function if len(bindings) == 1 else None
        if function is None or bindings[0].kind is not BindingKind.PARAM \
                or not isinstance(function.node, cst.FunctionDef):
            return ()
        params = function.positional_params()
        holder = next((param for param in params if param.name.value == step.optimizer.value), None)
        found: list[str] = []
        for call in self.inference.calls_of(function) if holder is not None else ():
            argument = self.inference.passed_argument(call, function, holder)
            updates = next((updated for built in self._constructions(argument) if argument is not None
                            for updated in [self._updated_modules(built)] if updated), ())
            for param in params:
                passed = self.inference.passed_argument(call, function, param) if updates else None
                name = dotted(passed) if passed is not None else None
                if name and _updated_by(name, updates) and param.name.value not in found:
                    found.append(param.name.value)
        return tuple(found)

    def _updated_part(self, scope: Scope, forward: ModuleForward, step: OptimizerStep, backward: Backward) -> bool:
        """``step`` updates a part of ``forward``'s module (``critic.Q1`` of ``critic``) whose
        own forward computes an element of the tuple ``forward`` returns (``return
        self.Q1(x), self.Q2(x)``), and ``backward`` differentiates that element."""
        parts = self._part_modules(forward)
        updated = [position for position, modules in enumerate(parts or ())
                   if any(_updated_by(module, step.updates) for module in modules)]
        if not updated:
            return False
        if forward.via is None:
            return any(self.flows_into(scope, forward.at, backward.tensor, backward.at, frozenset({position}))
                       for position in updated)
        function = self.local_function(forward.via)  # the element, through what the function returns
        inner = function.scope if function is not None else None
        if inner is None:
            return False
        for position in updated:
            for value in function.returns:
                if isinstance(value, cst.Tuple):
                    carried = frozenset(index for index, element in enumerate(value.elements) if self.flows_into(
                        inner, forward.node, element.value, value, frozenset({position})))
                    if carried and self.flows_into(scope, forward.at, backward.tensor, backward.at, carried):
                        return True
                elif self.flows_into(inner, forward.node, value, value, frozenset({position})) \
                        and self.flows_into(scope, forward.at, backward.tensor, backward.at):
                    return True
        return False

    def _part_modules(self, forward: ModuleForward) -> Optional[list[set[str]]]:
        """For a module whose ``forward`` returns a tuple, the submodules (as ``forward``'s
        module names them: ``critic.Q1``) whose forwards compute each element."""
        if not isinstance(forward.node, cst.Call) or not forward.module:
            return None
        value = self.inference.infer(forward.node.func)
        cls = value.cls if value is not None else None
        method = cls.methods.get("forward") if isinstance(cls, ClassInfo) else None
        if method is None or method.scope is None or not method.self_name or len(method.returns) != 1 \
                or not isinstance(method.returns[0], cst.Tuple):
            return None
        returned = method.returns[0]
        inner = [f for f in self.forwards(method.scope) if f.module.split(".")[0] == method.self_name]
        return [{_rebased(f.module, method.self_name, forward.module) for f in inner
                 if self.flows_into(method.scope, f.at, element.value, returned, f.elements)}
                for element in returned.elements]

    # --- modules: what calling one does --------------------------------------------------------

    def inplace_over_saved(self) -> list[InplaceOverSaved]:
        """In-place modules (``nn.ReLU(inplace=True)``, ``nn.Dropout(p, inplace=True)``) run on
        the saved output of the layer before them: next to it in an ``nn.Sequential`` (built
        from arguments or from a list of appended layers), or called on a value a module or
        function returned (``x = self.block(x); x = self.dropout(x)``)."""
        found: dict[int, InplaceOverSaved] = {}
        calls = self.calls
        # The layers that may work in place are built here (by their names, checked below), and
        # the names they are kept under: only the calls of those can write their input.
        writers = [call for call in calls if _called(call) in torch_api.INPLACE_ARGUMENT_POSITION
                   and torch_api.inplace_argument(call, "torch.nn." + _called(call)) is not None]
        if not writers:
            return []
        holders = {_called(call) for call in calls if _called(call) == "Sequential"}
        for writer in writers:
            holders.update(_holder_names(writer))
        for node in calls:
            called = _called(node)
            if called not in holders:
                continue
            if called == "Sequential" and self.inference.qualname(node.func) == "torch.nn.Sequential":
                layers = [self._behaviour(element) for element in self._sequence(node)]
                for before, after in zip(layers, layers[1:]):
                    if before is not None and after is not None and after.writes_input is not None \
                            and before.saves_output is not None:
                        found.setdefault(id(after.writes_input), InplaceOverSaved(
                            after.writes_input, before.saver, node, before.saves_output))
                continue
            if not isinstance(node.func, (cst.Name, cst.Attribute)) or not node.args or node.args[0].keyword:
                continue
            writer = self._behaviour(node.func)
            if writer is None or writer.writes_input is None or self.inference.grad_disabled(node) is not None:
                continue
            source = self._output_behaviour(node.args[0].value)
            if source is not None and source.saves_output is not None:
                found.setdefault(id(writer.writes_input), InplaceOverSaved(
                    writer.writes_input, source.saver, node, source.saves_output))
        return list(found.values())

    def inplace_switches(self) -> dict[str, cst.Assign]:
        """The torch.nn classes whose instances this file switches to work in place after they
        are built, with the switch: ``m.inplace = True`` in a loop over ``model.modules()``
        (``children()``, ``named_modules()``), for the classes the type tests around it name
        (``isinstance(m, nn.ReLU)``, ``type(m) in [nn.ReLU, ..]``, ``t is nn.ReLU`` with
        ``t = type(m)``), or for every class with an ``inplace`` flag when none names one."""
        if self._switches is not None:
            return self._switches
        self._switches = {}
        if ".inplace" not in self.analysis.text:
            return self._switches
        for assign in self.analysis.nodes_of(cst.Assign):
            if len(assign.targets) != 1 or not is_true(assign.value):
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Attribute) and target.attr.value == "inplace"
                    and isinstance(target.value, cst.Name) and self._iterates_modules(target.value)):
                continue
            named = self._tested_classes(assign, target.value.value)
            for name, position in torch_api.INPLACE_ARGUMENT_POSITION.items():
                qualname = "torch.nn." + name
                if named is None or qualname in named:
                    self._switches.setdefault(qualname, assign)
        return self._switches

    def _iterates_modules(self, name: cst.Name) -> bool:
        bindings = self.model.resolve(name)
        return bool(bindings) and all(
            binding.kind is BindingKind.FOR and isinstance(binding.value, cst.Call)
            and isinstance(binding.value.func, cst.Attribute)
            and binding.value.func.attr.value in ("modules", "children", "named_modules", "named_children")
            for binding in bindings)

    def _tested_classes(self, assign: cst.Assign, name: str) -> Optional[set[str]]:
        """The torch classes the ``if`` tests around ``assign`` name (None: no test names one)."""
        named: set[str] = set()
        current = assign.parent
        while current is not None and not isinstance(current, (cst.For, cst.FunctionDef, cst.Module)):
            if isinstance(current, cst.If):
                for node in iter_nodes(current.test):
                    if isinstance(node, (cst.Attribute, cst.Name)):
                        qualname = self.inference.qualname(node)
                        if qualname is not None and qualname.startswith("torch.nn.") \
                                and qualname.rsplit(".", 1)[-1] in torch_api.INPLACE_ARGUMENT_POSITION:
                            named.add("torch.nn." + qualname.rsplit(".", 1)[-1])
            current = current.parent
        return named or None

    def _sequence(self, sequential: cst.Call) -> list[cst.BaseExpression]:
        """The layers an ``nn.Sequential(..)`` chains, in order: its arguments, or the items
        of a list built in the same function (``layers = [..]; layers.append(..)``,
        ``nn.Sequential(*layers)``)."""
        args = sequential.args
        if len(args) == 1 and args[0].star == "*" and isinstance(args[0].value, cst.Name):
            return self._list_items(args[0].value)
        if any(arg.star or arg.keyword for arg in args):
            return []
        return [arg.value for arg in args]

    def _sequence_ends(self, sequential: cst.Call) -> tuple[Optional[cst.BaseExpression], Optional[cst.BaseExpression]]:
        """The first and the last layer of an ``nn.Sequential(..)``, each where it is sure: a
        layer appended under an ``if`` (or in a ``try``) may not be there (None for that end)."""
        layers = self._sequence(sequential)
        if not layers:
            return None, None
        args = sequential.args
        if not (len(args) == 1 and args[0].star == "*"):
            return layers[0], layers[-1]
        # `_sequence` read the layers of `nn.Sequential(*layers)` off the one `layers = [..]`.
        written = [element.value for element in self.model.resolve(args[0].value)[0].value.elements]

        def sure(layer: cst.BaseExpression) -> bool:
            if any(layer is element for element in written):
                return True
            for node in ancestors(layer):
                if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.Module)):
                    return True
                if isinstance(node, (cst.If, cst.IfExp, cst.Try)):
                    return False  # (a loop that builds the layers is taken to run)
            return True
        head = layers[0] if written or sure(layers[0]) else None
        return head, layers[-1] if sure(layers[-1]) else None

    def _list_items(self, name: cst.Name) -> list[cst.BaseExpression]:
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN \
                or not isinstance(bindings[0].value, cst.List):
            return []
        binding = bindings[0]
        if any(isinstance(element, cst.StarredElement) for element in binding.value.elements):
            return []
        scope = binding.scope.node
        if re.search(rf"(?<![\w.]){re.escape(name.value)}\s*(?:\.\s*(?:extend|insert)\b|\+=|\[[^\]\n]*\]\s*=(?!=))",
                     self.analysis.text[slice(*self.analysis.outer_span(scope))]):
            return []  # grown some other way too: which layer comes last is not seen
        items = [element.value for element in binding.value.elements]
        for call in iter_nodes(binding.scope.node):
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append" \
                    and isinstance(call.func.value, cst.Name) and call.func.value.value == name.value \
                    and binding.node.start < call.start and call.end < name.start and len(call.args) == 1 \
                    and binding in self.model.resolve(call.func.value):
                items.append(call.args[0].value)
        return items

    def module_behaviour(self, module: cst.BaseExpression) -> Optional[ModuleBehaviour]:
        """What calling the module ``module`` (``self.block``, a name, a construction) does to
        autograd: whether it saves its output, keeps its input, writes its input (None: unknown)."""
        return self._behaviour(module)

    def builds_inplace_layers(self) -> bool:
        """Whether this file builds a layer that works in place (``nn.ReLU(inplace=True)``,
        ``nn.LeakyReLU(0.2, True)``) or switches layers to (``m.inplace = True``): where it does
        not, no module call of it writes its input."""
        if self._builds_inplace is None:
            self._builds_inplace = bool(self.inplace_switches()) or any(
                _called(call) in torch_api.INPLACE_ARGUMENT_POSITION
                and torch_api.inplace_argument(call, "torch.nn." + _called(call)) is not None for call in self.calls)
        return self._builds_inplace

    def writes_input(self, module: cst.BaseExpression) -> Optional[cst.Call]:
        """The construction through which calling the module ``module`` evaluates to writes
        its input in place (``nn.ReLU(inplace=True)``, or one an ``inplace_switches`` loop
        switches), or None."""
        if not self._may_build_inplace():
            return None
        behaviour = self._behaviour(module)
        return behaviour.writes_input if behaviour is not None else None

    def _may_build_inplace(self) -> bool:
        """Whether any construction of this file can work in place: every one that does is a
        call of this file passing a literal ``True`` (``inplace=True``, ``nn.ReLU(True)``: what
        ``inplace_argument`` reads), or a class ``inplace_switches`` names.  Most files pass none,
        and then no module call is followed to its construction to learn it."""
        if self._passes_inplace is None:
            self._passes_inplace = bool(self.inplace_switches()) or any(
                is_true(arg.value) and (arg.keyword is None or arg.keyword.value == "inplace")
                for call in self.calls for arg in call.args)
        return self._passes_inplace

    def _behaviour(self, expression: cst.BaseExpression, depth: int = 0) -> Optional[ModuleBehaviour]:
        """What calling the module ``expression`` evaluates to does (None: unknown)."""
        key = id(expression)
        if key in self._behaviours:
            return self._behaviours[key]
        if depth > _MAX_MODULE_DEPTH:
            return None
        self._behaviours[key] = None  # a module built from itself says nothing
        found = self._find_behaviour(expression, depth)
        self._behaviours[key] = found
        return found

    def _find_behaviour(self, expression: cst.BaseExpression, depth: int) -> Optional[ModuleBehaviour]:
        if isinstance(expression, cst.Call):
            return self._construction_behaviour(expression, depth)
        if isinstance(expression, cst.IfExp):
            # `nn.ReLU() if act else None`: a call of it runs the module, never the None.
            built = [branch for branch in (expression.body, expression.orelse)
                     if not (isinstance(branch, cst.Name) and branch.value == "None")]
            return _agreed([self._behaviour(branch, depth + 1) for branch in built])
        values: list[cst.BaseExpression] = []
        if isinstance(expression, cst.Name):
            bindings = self.model.resolve(expression)
            if len(bindings) == 1 and bindings[0].iterates and bindings[0].value is not None:
                # `for conv in self.convs`, `[conv(x) for i, conv in enumerate(self.convs)]`
                held = bindings[0].value
                iterated = zipped_iterable(self.model, held, bindings[0].path) if bindings[0].path else held
                return self._element_behaviour(iterated, depth) if iterated is not None else None
            if not bindings or any(b.kind is not BindingKind.ASSIGN or b.value is None or b.path for b in bindings):
                return None
            values = [b.value for b in bindings]
        elif isinstance(expression, cst.Subscript) and len(expression.slice) == 1 \
                and isinstance(expression.slice[0].slice, cst.Index):
            return self._element_behaviour(expression.value, depth)  # `self.convs[i]`
        elif isinstance(expression, cst.Attribute) and isinstance(expression.value, cst.Name):
            cls = self._self_class(expression.value)
            if cls is None:
                return None
            values = [a.value for a in _held(cls, expression)]
        return _agreed([self._behaviour(value, depth + 1) for value in values])

    def _element_behaviour(self, container: cst.BaseExpression, depth: int) -> Optional[ModuleBehaviour]:
        """What every module held by the container ``container`` does (``self.convs`` of
        ``nn.ModuleList([Conv(c) for c in channels])``, or of ``nn.ModuleList()`` filled by
        ``self.convs.append(Conv(..))``): one behaviour when all of them agree."""
        if not (isinstance(container, cst.Attribute) and isinstance(container.value, cst.Name)):
            return None
        cls = self._self_class(container.value)
        if cls is None:
            return None
        elements: list[cst.BaseExpression] = []
        for assignment in _held(cls, container):
            value = assignment.value
            qualname = self.inference.qualname(value.func) if isinstance(value, cst.Call) else None
            if qualname not in ("torch.nn.ModuleList", "torch.nn.Sequential") or \
                    any(arg.keyword or arg.star for arg in value.args):
                return None
            given = [arg.value for arg in value.args]
            if qualname == "torch.nn.Sequential":
                elements += given
            elif not given:
                appended = self._appended(cls, container.attr.value)
                if appended is None:
                    return None
                elements += appended
            elif len(given) == 1 and isinstance(given[0], (cst.ListComp, cst.GeneratorExp)):
                elements.append(given[0].elt)
            elif len(given) == 1 and isinstance(given[0], cst.List) \
                    and all(isinstance(element, cst.Element) for element in given[0].elements):
                elements += [element.value for element in given[0].elements]
            else:
                return None
        return _agreed([self._behaviour(element, depth + 1) for element in elements])

    def _appended(self, cls: ClassInfo, attribute: str,
                  every: bool = False) -> Optional[list[cst.BaseExpression]]:
        """What the class's methods put into ``self.<attribute>`` one item at a time
        (``append``, ``insert``, ``self.<attribute>[key] = ..``), or None when they also
        add what is not seen item by item (``extend``), unless ``every`` asks only for
        the items seen."""
        found = []
        for method in cls.methods.values():
            if method.self_name is None:
                continue
            held = f"{method.self_name}.{attribute}"
            for node in iter_nodes(method.node):
                cls = type(node)  # no subclasses: compared by identity, for every node of every method
                if cls is cst.Call and type(node.func) is cst.Attribute \
                        and dotted(node.func.value) == held:
                    if node.func.attr.value in ("append", "insert") and node.args:
                        found.append(node.args[-1].value)
                    elif node.func.attr.value in ("extend", "update", "__setitem__") and not every:
                        return None
                elif cls is cst.Assign and len(node.targets) == 1 \
                        and type(node.targets[0].target) is cst.Subscript \
                        and dotted(node.targets[0].target.value) == held:
                    found.append(node.value)
        return found

    def _construction_behaviour(self, call: cst.Call, depth: int,
                                func: Optional[cst.BaseExpression] = None) -> Optional[ModuleBehaviour]:
        """What the module ``call`` builds does; ``func`` is the class called when ``call.func``
        names it indirectly (an entry of a dict of classes)."""
        func = call.func if func is None else func
        if isinstance(func, cst.Subscript):
            keys, classes = self._keyed_classes(func)
            found = _agreed([self._construction_behaviour(call, depth + 1, cls) for cls in classes]) \
                if classes and depth < _MAX_MODULE_DEPTH else None
            if found is None or not found.saves_output:
                return found
            said = " or ".join(f'"{key}"' for key in keys)
            why = f"{found.saves_output}: `{self.analysis.snippet(func)}` is that class, the key being {said} " \
                  f"where it is built"
            return ModuleBehaviour(why, found.saver, found.writes_input, found.saves_input)
        qualname = self.inference.qualname(func)
        if qualname == "torch.nn.Sequential":
            # Its output is its last layer's, its input its first layer's: a layer in between
            # that is not known (imported from elsewhere, built by a function) changes neither.
            head, tail = self._sequence_ends(call)
            first = self._behaviour(head, depth + 1) if head is not None else None
            last = self._behaviour(tail, depth + 1) if tail is not None else None
            if first is None and last is None:
                return None
            return ModuleBehaviour(last.saves_output if last is not None else None,
                                   last.saver if last is not None else None,
                                   first.writes_input if first is not None else None,
                                   first.saves_input if first is not None else "")
        if qualname is not None and torch_api.is_module_class(qualname):
            fact = torch_facts.fact(qualname)
            inplace = torch_api.inplace_argument(call, qualname) is not None or qualname in self.inplace_switches()
            if fact is None or fact.saves is None:  # what it saves is not known: not its output, then
                return ModuleBehaviour(None, None, call if inplace else None)
            name = qualname.rsplit(".", 1)[-1]
            # Working in place, what it would keep of its input is its output.
            keeps = "" if inplace else "".join(letter for letter in "ic" if letter in fact.saves.lower())
            if "o" in fact.saves.lower() or inplace and "i" in fact.saves.lower():
                why = f"`nn.{name}` saves its output for backward" if "o" in fact.saves.lower() else \
                    f"`nn.{name}` working in place saves its output for backward"
                return ModuleBehaviour(why, call, call if inplace else None, keeps)
            return ModuleBehaviour(None, None, call if inplace else None, keeps)
        value = self.inference.infer(func)
        if value is None:
            return None
        cls = value.cls if value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo) else \
            self.inference.project_class(func) if value.kind is Kind.EXTERNAL else None
        if cls is not None:
            owner = cls.model.analysis if cls.model is not self.model else None
            if owner is not None:
                # A class of another module of the project: that module's model reads its forward.
                found = owner.autograd._class_behaviour(cls, depth)
                if found is None or not found.saves_output:
                    return found
                where = owner.file_path.name if owner.file_path is not None else owner.path
                return ModuleBehaviour(f"{found.saves_output} (in `{where}`)", found.saver, found.writes_input,
                                       found.saves_input)
            return self._class_behaviour(cls, depth)
        if value.kind is Kind.FUNCTION and value.function is not None and value.function.model is self.model:
            return _agreed([self._behaviour(returned, depth + 1) for returned in value.function.returns])
        return None

    def _keyed_classes(self, entry: cst.Subscript) -> tuple[list[str], list[cst.BaseExpression]]:
        """``ACTIVATIONS[activation]``: the entries of a dict written out in this module under the
        keys ``activation`` can be (a string, or a parameter given strings by every call of its
        function, or else its default), with those keys; nothing when not known."""
        table = self._string_dict(entry.value)
        if table is None or len(entry.slice) != 1 or not isinstance(entry.slice[0].slice, cst.Index):
            return [], []
        keys = sorted(self._strings(entry.slice[0].slice.value))
        if not keys or any(key not in table for key in keys):
            return [], []
        return keys, [table[key] for key in keys]

    def _string_dict(self, expression: cst.BaseExpression) -> Optional[dict[str, cst.BaseExpression]]:
        if not isinstance(expression, cst.Name):
            return None
        bindings = self.model.resolve(expression)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                or not isinstance(bindings[0].value, cst.Dict):
            return None
        table: dict[str, cst.BaseExpression] = {}
        for element in bindings[0].value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            table[element.key.evaluated_value] = element.value
        return table

    def _strings(self, expression: cst.BaseExpression) -> set[str]:
        """The strings ``expression`` can be: a literal, or a parameter as its calls give it."""
        if isinstance(expression, cst.SimpleString):
            return {expression.evaluated_value}
        if not isinstance(expression, cst.Name):
            return set()
        bindings = self.model.resolve(expression)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or not isinstance(bindings[0].node, cst.Param):
            return set()
        param, function = bindings[0].node, bindings[0].definition
        calls = self.analysis.grad_flow.call_sites(function) if function is not None else []
        if not calls:
            return set()  # never called here: what it is given is not known
        found: set[str] = set()
        for call in calls:
            if any(arg.star for arg in call.args):
                return set()
            passed = _passed(call, function, param.name.value)
            value = passed if passed is not None else param.default
            if not isinstance(value, cst.SimpleString):
                return set()
            found.add(value.evaluated_value)
        return found

    def _class_behaviour(self, cls: ClassInfo, depth: int) -> Optional[ModuleBehaviour]:
        """A module class of this file: its output is saved when every value its
        ``forward`` returns is the result of a layer or function that saves its result."""
        forward = cls.methods.get("forward")
        if forward is None or not forward.returns:
            return None
        writes = self._forward_writes_input(forward, depth)
        outputs = [self._output_behaviour(value, depth + 1) for value in forward.returns]
        if all(output is not None and output.saves_output for output in outputs):
            first = outputs[0]
            return ModuleBehaviour(f"`{cls.name}`'s forward returns a saved result: {first.saves_output}",
                                   first.saver, writes)
        saving = [index for index, output in enumerate(outputs) if output is not None and output.saves_output]
        if saving:
            # `if self.act is None: return x`, then `return self.act(x)`: saved when that return runs.
            index = saving[0]
            when = self._arm_condition(forward.returns[index].parent)
            if when is None:
                early = [self._arm_condition(value.parent, exits=True) for position, value in enumerate(forward.returns)
                         if position not in saving]
                when = early[0] if len(early) == 1 else None
            if when is not None:
                return ModuleBehaviour(f"`{cls.name}`'s forward returns a saved result: "
                                       f"{outputs[index].saves_output}, {when}", outputs[index].saver, writes)
        return ModuleBehaviour(None, None, writes)

    def _forward_writes_input(self, forward, depth: int) -> Optional[cst.Call]:
        """The construction of the in-place layer through which ``forward`` writes its input (the
        parameter after ``self``) on every call: ``self.act(x)`` with ``self.act = nn.ReLU(inplace=True)``
        (or a module of a class whose forward does so) applied to the parameter itself, before it is
        bound again, not under an ``if``, a loop, a ``try`` or a ``with``.  A module is a call of its
        forward (``nn.Module.__call__`` hands the tensor on as it is), so such a module writes the
        tensor it is called on as the in-place layer would."""
        params = forward.positional_params()
        if len(params) < 2 or forward.scope is None or not self._may_build_inplace():
            return None
        name = params[1].name.value
        for _seq, load in forward.scope.loads.get(name, ()):
            if not all(binding.kind is BindingKind.PARAM for binding in self.model.resolve(load)):
                continue
            arg = load.parent
            call = arg.parent if isinstance(arg, cst.Arg) and arg.value is load and arg.keyword is None else None
            if not isinstance(call, cst.Call) or not call.args or call.args[0] is not arg \
                    or not isinstance(call.func, (cst.Name, cst.Attribute)):
                continue
            if any(isinstance(node, (cst.If, cst.IfExp, cst.For, cst.While, cst.Try, cst.With, cst.Lambda,
                                     cst.ListComp, cst.GeneratorExp))
                   for node in ancestors(call) if forward.node.start < node.start):
                continue
            if self.inference.grad_disabled(call) is not None:
                continue
            behaviour = self._behaviour(call.func, depth + 1)
            if behaviour is not None and behaviour.writes_input is not None:
                return behaviour.writes_input
        return None

    def _arm_condition(self, node: cst.CSTNode, exits: bool = False) -> Optional[str]:
        """When ``node`` runs, as the test of the nearest ``if`` of its function around it says
        ("when `self.act is not None` holds, line 12"); ``exits``: when the code after that ``if``
        runs instead (``node`` returning from its body)."""
        child, parent = node, node.parent
        while parent is not None and not isinstance(parent, (cst.If, cst.IfExp, cst.FunctionDef, cst.Lambda)):
            child, parent = parent, parent.parent
        if not isinstance(parent, (cst.If, cst.IfExp)) or (exits and (isinstance(parent, cst.IfExp)
                                                                     or child is not parent.body)):
            return None
        test = self.analysis.snippet(parent.test)
        line = self.analysis.line_index.position(parent.start)[0]
        holds = (child is parent.body) != exits
        return f"when `{test}` holds, line {line}" if holds else f"when `{test}` does not hold, line {line}"

    def _output_behaviour(self, value: cst.BaseExpression, depth: int = 0) -> Optional[ModuleBehaviour]:
        """Whether the tensor ``value`` is the saved output of the call that made it."""
        if depth > _MAX_MODULE_DEPTH:
            return None
        if isinstance(value, cst.Name):
            bindings = self.model.resolve(value)
            if not bindings or any(binding.kind is not BindingKind.ASSIGN or binding.path or binding.value is None
                                   for binding in bindings):
                return None
            if len(bindings) == 1:
                return self._output_behaviour(bindings[0].value, depth + 1)
            return self._branch_output(bindings, depth)
        if isinstance(value, cst.IfExp):
            # `self.act(x) if self.act is not None else x`: saved when the arm that saves runs.
            arms = [(arm, self._output_behaviour(arm, depth + 1)) for arm in (value.body, value.orelse)]
            saving = [(arm, output) for arm, output in arms if output is not None and output.saves_output]
            if len(saving) == 2:
                return saving[0][1]
            if not saving:
                return None
            when = self._arm_condition(saving[0][0])
            return ModuleBehaviour(f"{saving[0][1].saves_output}, {when}", saving[0][1].saver, None)
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        qualname = self.inference.qualname(func)
        fact = torch_facts.fact(qualname) if qualname else None
        if fact is None and isinstance(func, cst.Attribute) and self.inference.tensor(func.value) is not None:
            fact = torch_facts.method(func.attr.value)
        if fact is not None and fact.kind != "module_class":
            if fact.saves and "o" in fact.saves.lower() and self.inference.tensor(value) is not None:
                return ModuleBehaviour(f"`{self.analysis.snippet(func)}` saves its result for backward", value, None)
            return None
        module = self.inference.infer(func)
        if module is not None and module.kind is not Kind.MODULE:
            return None
        # A module the inference does not follow (`self.act = ACTIVATIONS[name]()`) is known
        # by its construction, when that is.
        return self._behaviour(func, depth + 1)

    def _branch_output(self, bindings: list, depth: int) -> Optional[ModuleBehaviour]:
        """A returned name bound on several paths (``x = self.conv(x)``, then ``if self.act is
        not None: x = self.act(x)``): when the binding made in one arm of an ``if`` is a saved
        result, so is the output whenever that arm runs, and the why says when."""
        outputs = [self._output_behaviour(binding.value, depth + 1) for binding in bindings]
        saving = [(binding, output) for binding, output in zip(bindings, outputs)
                  if output is not None and output.saves_output]
        if not saving:
            return None
        if len(saving) == len(bindings):
            return saving[0][1]
        binding, output = saving[-1]
        when = self._arm_condition(binding.node)
        return ModuleBehaviour(f"{output.saves_output}, {when}", output.saver, None) if when is not None else None

    # --- training code called while gradients are off ------------------------------------------

    def backward_without_grad(self) -> list[BackwardWithoutGrad]:
        """Calls made under ``no_grad`` (``set_grad_enabled(False)``, ``inference_mode``) of
        this file's functions that, themselves or through the functions they call (three
        deep), differentiate what they compute without turning gradients back on: an
        adversarial attack run inside an evaluation's ``no_grad`` block."""
        found = []
        if "backward" not in self.analysis.text and "autograd" not in self.analysis.text:
            return found
        for node in self.calls:
            disabled = self.inference.grad_disabled(node)
            if disabled is None:
                continue
            function = self.local_function(node)
            backward = self._runs_backward(function, 0, set()) if function is not None else None
            if backward is not None:
                found.append(BackwardWithoutGrad(node, disabled, backward))
        return found

    def gradients_left_off(self) -> list[GradLeftOff]:
        """Functions of this file that turn gradients off with ``torch.set_grad_enabled(False)``
        written as a statement (always run, never turned back on in them), called before a
        statement of the same block that runs a backward, itself or through a function of
        this file, with nothing turning gradients on in between: the mode outlives the call
        (an ``evaluate()`` that leaves the training after it without gradients)."""
        found: list[GradLeftOff] = []
        text = self.analysis.text
        if "set_grad_enabled" not in text or "backward" not in text and "autograd" not in text:
            return found
        for function in self.model.functions.values():
            switch = self._switches_grad_off(function)
            if switch is None:
                continue
            # The functions that leave gradients off when they return: this one, and those
            # that call it as a statement of their own body with nothing turning them on after.
            leaving = [(function, None)]
            seen = {id(function)}
            while leaving:
                callee, first = leaving.pop(0)
                for call in self._calls_running(callee):
                    where = self._left_off_after(call, text)
                    if where is not None:
                        found.append(GradLeftOff(switch, function.name, first or call, *where))
                        leaving = []
                        break
                    caller = self._leaves_off(call, text)
                    if caller is not None and id(caller) not in seen and len(seen) < 4:
                        seen.add(id(caller))
                        leaving.append((caller, first or call))
        return found

    def _calls_running(self, function) -> list[cst.Call]:
        """The calls of ``function`` in this file; of the ``forward`` of a module class, also the
        calls of a name the inference knows holds an instance of it (`model = build()` of a
        function of the file that returns one, then `model(x)`)."""
        calls = list(self.inference.calls_of(function))
        if function.name != "forward" or function.cls is None or function.kind != "method":
            return calls
        seen = {id(call) for call in calls}
        for call in self.analysis.nodes_of(cst.Call):
            if id(call) in seen or not isinstance(call.func, cst.Name):
                continue
            value = self.inference.infer(call.func)
            if value is not None and value.kind is Kind.MODULE and value.cls is function.cls:
                calls.append(call)
        return calls

    def _left_off_after(self, call: cst.Call, text: str) -> Optional[tuple[cst.CSTNode, cst.Call]]:
        """A statement that runs a backward after ``call`` (of a function that leaves
        gradients off), with nothing turning gradients on in between: later in its block, or,
        in a loop, on the next iteration: (the statement, the backward)."""
        statement = _statement_of(call)
        block = statement.parent if statement is not None else None
        if not isinstance(block, (cst.IndentedBlock, cst.Module)) or in_branch(call, statement):
            return None
        for later in block.body[block.body.index(statement) + 1:]:
            if _RE_ENABLES_GRAD.search(text, later.start, later.end):
                return None
            backward = self._backward_in(later)
            if backward is not None:
                return later, backward
        loop = block.parent if isinstance(block, cst.IndentedBlock) else None
        if isinstance(loop, (cst.For, cst.While)) and not _RE_ENABLES_GRAD.search(text, loop.start, loop.end):
            for earlier in block.body[:block.body.index(statement) + 1]:  # the next iteration runs them again
                backward = self._backward_in(earlier)
                if backward is not None:
                    return earlier, backward
        return None

    def _leaves_off(self, call: cst.Call, text: str):
        """The function of this file whose body has ``call`` as a statement of its own (not in a
        branch or a loop), with nothing after it that may turn gradients on: it leaves them as
        ``call`` left them."""
        statement = _statement_of(call)
        definition = statement.parent.parent if statement is not None and \
            isinstance(statement.parent, cst.IndentedBlock) else None
        if not isinstance(definition, cst.FunctionDef) or not isinstance(statement, cst.SimpleStatementLine) \
                or in_branch(call, statement) or _RE_ENABLES_GRAD.search(text, statement.end, definition.end):
            return None
        return self.model.functions.get(id(definition))

    def _switches_grad_off(self, function) -> Optional[cst.Call]:
        """``torch.set_grad_enabled(False)`` as a statement of ``function``'s own body (not in
        a branch), with nothing after it in the function that may turn gradients back on."""
        definition = function.node
        if function.model is not self.model or not isinstance(definition, cst.FunctionDef) \
                or not isinstance(definition.body, cst.IndentedBlock):
            return None
        for statement in definition.body.body:
            lines = [statement]
            if isinstance(statement, cst.If) and statement.orelse is None:
                # `if not self.training: torch.set_grad_enabled(False)`: off whenever the test holds
                lines = list(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else []
            for line in lines:
                small = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
                call = small.value if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) else None
                if call is not None and self.inference.grad_mode(call, strict=True) is False and \
                        "set_grad_enabled" in (self.inference.qualname(call.func) or ""):
                    rest = self.analysis.text[line.end:definition.end]
                    return None if _RE_ENABLES_GRAD.search(rest) else call
        return None

    def _backward_in(self, statement: cst.CSTNode) -> Optional[cst.Call]:
        """A backward that ``statement`` runs unconditionally: its own, or one a function of
        this file it calls runs."""
        for node in iter_nodes(statement):
            if not isinstance(node, cst.Call) or in_branch(node, statement):
                continue
            if called_name(node.func) == "backward" and isinstance(node.func, cst.Attribute) \
                    and self.inference.tensor(node.func.value) is not None:
                return node
            callee = self.local_function(node)
            if callee is not None and not _RE_ENABLES_GRAD.search(self.analysis.text, callee.node.start,
                                                                  callee.node.end):
                backward = self._runs_backward(callee, 0, set(), strict=True)
                if backward is not None:
                    return backward
        return None

    def returned_views(self, function) -> Optional[cst.Param]:
        """The parameter whose tensor every tensor ``function`` returns is a view of: ``return
        t[:, :c], t[:, c:]`` (a tuple of views), ``return t.transpose(1, 2)``.  What a caller
        binds from such a call shares the storage and the version counter of what it passed."""
        key = id(function)
        if key not in self._returned_views:
            self._returned_views[key] = self._find_returned_views(function)
        return self._returned_views[key]

    def _find_returned_views(self, function) -> Optional[cst.Param]:
        if not function.returns or function.is_generator:
            return None
        roots: set[str] = set()
        for value in function.returns:
            parts = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
            for part in parts:
                root = view_root(part)
                if root is None:
                    return None
                roots.add(root.value)
        if len(roots) != 1:
            return None
        name = roots.pop()
        for param in function.positional_params():
            if param.name.value == name:
                # Not bound again in the function: the name returned is the tensor passed.
                scope = function.scope
                if scope is not None and len(scope.bindings.get(name, ())) == 1:
                    return param
        return None

    def local_function(self, call: cst.Call):
        """The function of this file that ``call`` calls (its ``FunctionInfo``), or None."""
        value = self.inference.infer(call.func)
        if value is None or value.kind is not Kind.FUNCTION or value.function is None \
                or value.function.model is not self.model or not isinstance(value.function.node, cst.FunctionDef):
            return None
        return value.function

    def _runs_backward(self, function, depth: int, seen: set[int], strict: bool = False) -> Optional[cst.Call]:
        """A backward that ``function`` (or a function of this file it calls) runs on a value
        it computes, with gradients not turned back on around it; ``strict``: in functions
        that nowhere may turn them on (a `set_grad_enabled(True)` statement included)."""
        if id(function.node) in seen or depth > 3 or function.scope is None:
            return None
        seen.add(id(function.node))
        if _enables_grad(function.node, self.inference) or strict and \
                _RE_ENABLES_GRAD.search(self.analysis.text, function.node.start, function.node.end):
            return None
        parameters = _parameter_names(function)
        for backward in self.backwards(function.scope):
            if backward.via is not None or _enables_grad(backward.node, self.inference, stop=function.node) \
                    or in_branch(backward.node, function.node):
                continue  # `if train: loss.backward()`: the call under no_grad may not reach it
            if isinstance(backward.tensor, cst.Name) and backward.tensor.value in parameters:
                continue  # a loss computed by the caller, before gradients went off, has its graph
            return backward.node
        for node in iter_nodes(function.node):
            if isinstance(node, cst.Call) and not _enables_grad(node, self.inference, stop=function.node) \
                    and not in_branch(node, function.node):
                callee = self.local_function(node)
                if callee is not None:
                    found = self._runs_backward(callee, depth + 1, seen, strict)
                    if found is not None:
                        return found
        return None

    # --- layers a module does not register -----------------------------------------------------

    def unregistered_layers(self) -> list[UnregisteredLayers]:
        """Layers built into a plain container held by an ``nn.Module`` subclass of this file
        (``self.layers = [nn.Linear(..) for ..]``, ``self.heads = []`` then
        ``self.heads.append(nn.Linear(..))``), in a class that registers nothing by hand
        (``add_module``, ``register_module``, ``setattr``, ``register_parameter``) and never turns the attribute
        into an ``nn.ModuleList``/``nn.ModuleDict``."""
        found = []
        for cls in self.model.classes.values():
            if cls.model is not self.model:
                continue
            base = self.inference.torch_base(cls)
            if base is None or not torch_api.is_module_class(base):
                continue
            source = self.analysis.text[cls.node.start:cls.node.end]
            if any(word in source for word in ("add_module", "register_module", "setattr(", "register_parameter")):
                continue  # registered by hand (`register_parameter` of the layers' own parameters)
            # Only attributes assigned a container or a name can hold one: found in the text first.
            for attribute in dict.fromkeys(_CONTAINER_ASSIGNMENT.findall(source)):
                for assignment in cls.assignments(attribute):
                    node = assignment.value.parent if assignment.value is not None else None
                    if not (isinstance(node, cst.Assign) and len(node.targets) == 1) or assignment.path:
                        continue
                    target = node.targets[0].target
                    if not isinstance(target, cst.Attribute):
                        continue
                    layer = self._layer_in(node.value, cls, attribute, assignment.function)
                    if layer is None or self._registered_later(cls, attribute):
                        continue
                    container = "dict" if isinstance(node.value, (cst.Dict, cst.DictComp)) else \
                        "tuple" if isinstance(node.value, cst.Tuple) else "list"
                    found.append(UnregisteredLayers(node, target, layer, container))
        return found

    def _layer_in(self, value: cst.BaseExpression, cls: ClassInfo, attribute: str, method,
                  depth: int = 0) -> Optional[cst.CSTNode]:
        """A layer built into the container ``value`` (directly, nested, or appended to it
        later through ``self.<attribute>``), if any."""
        if depth > 4:
            return None
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            for element in value.elements:
                found = self._layer_or_container(element.value, cls, attribute, method, depth)
                if found is not None:
                    return found
            if not value.elements:
                return self._appended_layer(cls, attribute, method, depth)
            return None
        if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._layer_or_container(value.elt, cls, attribute, method, depth)
        if isinstance(value, cst.Dict):
            for element in value.elements:
                found = self._layer_or_container(getattr(element, "value", None), cls, attribute, method, depth)
                if found is not None:
                    return found
            return self._appended_layer(cls, attribute, method, depth) if not value.elements else None
        if isinstance(value, cst.DictComp):
            return self._layer_or_container(value.value, cls, attribute, method, depth)
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
            return self._layer_in(value.left, cls, attribute, method, depth + 1)  # `[nn.Linear(..)] * n`
        if isinstance(value, cst.Name):
            bindings = self.model.resolve(value)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and bindings[0].value is not None \
                    and not bindings[0].path:
                found = self._layer_in(bindings[0].value, cls, attribute, method, depth + 1)
                if found is not None:
                    return found
                return self._appended_to_name(value.value, bindings[0], cls, attribute, method, depth)
        return None

    def _layer_or_container(self, value, cls, attribute, method, depth) -> Optional[cst.CSTNode]:
        if value is None:
            return None
        if self._builds_layer(value):
            return value
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.Dict)):
            return self._layer_in(value, cls, attribute, method, depth + 1)
        return None

    def _builds_layer(self, value: cst.BaseExpression) -> bool:
        """``value`` makes a new module with parameters of its own or of its layers (not a
        reference to one the module already holds)."""
        if not isinstance(value, cst.Call):
            return False
        built = self.inference.infer(value)
        if built is None or built.kind is not Kind.MODULE:
            return False
        qualname = self.inference.qualname(value.func)
        fact = torch_facts.fact(qualname) if qualname else None
        return fact is None or fact.parameters is not False

    def _appended_layer(self, cls: ClassInfo, attribute: str, method, depth: int) -> Optional[cst.CSTNode]:
        """A layer appended (or stored by key) into ``self.<attribute>`` in the class's methods."""
        for item in self._appended(cls, attribute, every=True) or ():
            found = self._layer_or_container(item, cls, attribute, method, depth)
            if found is not None:
                return found
        return None

    def _appended_to_name(self, name: str, binding, cls, attribute, method, depth) -> Optional[cst.CSTNode]:
        """A layer appended to the local list ``name`` before it is kept on the instance."""
        for node in iter_nodes(binding.scope.node):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ("append", "insert") and node.args \
                    and isinstance(node.func.value, cst.Name) and node.func.value.value == name \
                    and binding in self.model.resolve(node.func.value):
                found = self._layer_or_container(node.args[-1].value, cls, attribute, method, depth)
                if found is not None:
                    return found
        return None

    def _registered_later(self, cls: ClassInfo, attribute: str) -> bool:
        """Some assignment of ``self.<attribute>`` in the class makes a module of it
        (``nn.ModuleList(self.layers)``)."""
        for assignment in cls.assignments(attribute):
            value = assignment.value
            if value is None:
                continue
            inferred = self.inference.infer(value)
            if inferred is not None and inferred.kind is Kind.MODULE:
                return True
        return False

    # --- views autograd will not let be written --------------------------------------------------

    def no_grad_view(self, name: cst.Name) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression, cst.CSTNode]]:
        """When ``name`` holds a view (``w[0]``, ``w.view(-1)``, ``w.t()``) made under
        ``no_grad`` of a tensor that requires grad (a parameter): (the view, the tensor, the
        ``no_grad`` that made it).  Autograd refuses an in-place write to such a view with
        grad mode on ("A view was created in no_grad mode and is being modified inplace")."""
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
            return None
        value = bindings[0].value
        disabled = self.inference.grad_disabled(bindings[0].node) if value is not None else None
        if disabled is None:
            return None
        if isinstance(value, cst.Subscript) and all(
                isinstance(element.slice, cst.Slice) or isinstance(element.slice.value, (cst.Integer, cst.Ellipsis))
                for element in value.slice):
            base = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _SINGLE_VIEW_METHODS and self.inference.qualname(value.func) is None:
            base = value.func.value
        else:
            return None
        tensor = self.inference.tensor(base)
        if tensor is None or tensor.attached is not True or not tensor.leaf:
            return None
        return value, base, disabled

    def multi_output_view(self, name: cst.Name) -> Optional[tuple[cst.CSTNode, cst.BaseExpression]]:
        """When ``name`` holds one of several views a call returned of a tensor that requires
        grad (``a, b = x.chunk(2)``, ``x.split(3)[0]``, ``for row in x`` which unbinds ``x``):
        (the call or the loop that made it, the tensor it views).  Autograd refuses an
        in-place write to such a view."""
        return self._multi_view_name(name, set())

    def held_multi_output_views(self, name: cst.Name) -> Optional[tuple[cst.CSTNode, cst.BaseExpression]]:
        """When ``name`` holds, on every binding that reaches it, the tuple of views a call
        returned of a tensor that requires grad (``hx = h.unbind(0)``, ``parts = x.split(3)``):
        (the call, the tensor). Each item of it (``hx[i]``, whatever the index) is one of
        those views."""
        bindings = self.model.resolve(name)
        found = None
        for binding in bindings:
            if binding.kind is not BindingKind.ASSIGN or binding.path or binding.value is None:
                return None
            base = self._multi_view_call(binding.value)
            if base is None:
                return None
            found = found or (binding.value, base)
        return found

    def _multi_view_name(self, name: cst.Name, seen: set[int]) -> Optional[tuple[cst.CSTNode, cst.BaseExpression]]:
        bindings = self.model.resolve(name)
        if not bindings or any(id(binding) in seen for binding in bindings):
            return None
        seen.update(id(binding) for binding in bindings)
        found = None
        for binding in bindings:
            made = self._multi_view_source(binding, seen)
            if made is None:
                return None
            found = found or made
        return found

    def _multi_view_source(self, binding, seen: set[int]) -> Optional[tuple[cst.CSTNode, cst.BaseExpression]]:
        value = binding.value
        if value is None:
            return None
        if binding.kind is BindingKind.FOR and binding.iterates:
            if binding.path:  # `for c, m in zip(x, means)`: `c` iterates `x`
                value = zipped_iterable(self.model, value, binding.path)
                if value is None:
                    return None
            held = self._held_call(value)
            base = self._multi_view_call(held) if held is not None else None
            if base is not None:
                return held, base  # `for c in x.chunk(3)`, `rows = out.unbind(0); for r in rows`
            tensor = self.inference.tensor(value)
            if tensor is not None and tensor.attached is True and not tensor.scalar:
                return value, value  # iterating a tensor unbinds it
            return None
        if binding.kind is not BindingKind.ASSIGN:
            return None
        if binding.path:
            base = self._multi_view_call(value)
            return (value, base) if base is not None else None
        if isinstance(value, cst.Subscript) and len(value.slice) == 1 \
                and isinstance(value.slice[0].slice, cst.Index) \
                and isinstance(value.slice[0].slice.value, (cst.Integer, cst.UnaryOperation)):
            base = self._multi_view_call(value.value)
            return (value.value, base) if base is not None else None
        # A view of one of them (`flat = u.view(-1)`, `u.reshape(-1)` when it is one) is one too.
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and isinstance(value.func.value, cst.Name) and value.func.attr.value in _SINGLE_VIEW_METHODS:
            return self._multi_view_name(value.func.value, seen)
        return None

    def _held_call(self, value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """``value``, or the value of the one plain assignment of the name ``value`` is."""
        if isinstance(value, cst.Name):
            values = self.model.assigned_values(value)
            return values[0] if values is not None and len(values) == 1 else None
        return value

    def _multi_view_call(self, call: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The tensor requiring grad that ``call`` returns several views of, if it does."""
        if not isinstance(call, cst.Call):
            return None
        func = call.func
        qualname = self.inference.qualname(func)
        if qualname is not None and qualname.startswith("torch."):  # `torch.split(x, ..)`, not a method
            if qualname not in torch_api.MULTI_OUTPUT_VIEW_FUNCTIONS or not call.args:
                return None
            base = call.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value in torch_api.MULTI_OUTPUT_VIEW_METHODS:
            base = func.value
        else:
            return None
        tensor = self.inference.tensor(base)
        if tensor is None or tensor.attached is not True or self.inference.grad_disabled(call) is not None:
            return None
        return base

    def reused_graphs(self) -> list[ReusedGraph]:
        """Backwards through a graph an earlier backward freed (``ReusedGraph``)."""
        found = []
        for scope in self.model.scopes:
            backwards, forwards = self.backwards(scope), self.forwards(scope)
            if not (backwards and forwards):
                continue
            for second in backwards:
                reused = self._reused(scope, second, backwards, forwards)
                if reused is not None:
                    found.append(reused)
        return found

    def _reused(self, scope: Scope, second: Backward, backwards: list[Backward],
                forwards: list[ModuleForward]) -> Optional[ReusedGraph]:
        exclusive = self.model.exclusive
        for forward in forwards:
            if not _before(forward, second) or exclusive(forward.at, second.at) or not self.flows_into(
                    scope, forward.at, second.tensor, second.at, forward.elements):
                continue
            for first in backwards:
                if first is second or first.retains or not _before(forward, first) or not _before(first, second) \
                        or exclusive(first.at, second.at) or exclusive(forward.at, first.at):
                    continue
                if not {id(loop) for loop in enclosing_loops(forward.at)} <= {id(loop) for loop in enclosing_loops(first.at)} \
                        & {id(loop) for loop in enclosing_loops(second.at)}:
                    continue  # the forward runs again between them
                if self._share(scope, forward, first, second):
                    return ReusedGraph(first, second, forward, "later")
            if second.retains:
                continue
            loop = enclosing_loops(second.at)[0] if enclosing_loops(second.at) else None
            if loop is None:
                continue
            if not _inside(forward.at, loop.body):  # above the loop, or in its header (run once)
                tainted = self._tainted(scope, forward.at, second.at, forward.elements)
                if any(_bound_in(scope, binding.name, loop) for binding in tainted if not _inside(binding.node, loop)):
                    continue  # the loop binds the name again: a later iteration may see a new value
                targets = [binding for binding in tainted if binding.kind is BindingKind.FOR and binding.value is loop.iter]
                if targets and not self._one_graph_per_element(scope, forward, loop.iter):
                    continue
                return ReusedGraph(second, second, forward, "next-iteration")
            carrier = self._carrier(scope, forward, loop) or self._state_kept_by_module(forward, loop)
            if carrier is not None:
                return ReusedGraph(second, second, forward, "carried", carrier)
            total = self._backpropagated_total(scope, forward, second, loop)
            if total is not None:
                return ReusedGraph(second, second, forward, "total", total)
        return None

    def _backpropagated_total(self, scope: Scope, forward: ModuleForward, second: Backward,
                              loop: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The binding of a name the loop only accumulates into (``total = total + loss``,
        ``total += loss``) from ``forward``'s result, when ``second`` back-propagates that name
        on every iteration: the next iteration's backward goes back through the graphs the
        previous ones freed."""
        read = {node.value for node in iter_nodes(second.tensor) if isinstance(node, cst.Name)}
        for name in read:
            inside = [binding for binding in scope.bindings.get(name, ()) if _inside(binding.node, loop)]
            if not inside or any(binding.value is None or not (
                    binding.kind is BindingKind.AUGASSIGN or binding.kind is BindingKind.ASSIGN and not binding.path
                    and any(isinstance(node, cst.Name) and node.value == name for node in iter_nodes(binding.value)))
                    for binding in inside):
                continue  # bound afresh in the loop: no total of the iterations
            last = max(inside, key=lambda binding: binding.node.start)
            if last.node.start > second.at.start or _detached_in_place(name, last.node, loop) or \
                    not self.flows_into(scope, forward.at, last.value, last.value, forward.elements):
                continue
            return last.node
        return None

    def _one_graph_per_element(self, scope: Scope, forward: ModuleForward, iterable: cst.BaseExpression) -> bool:
        """Whether the elements a loop takes from ``iterable`` share ``forward``'s graph: the
        rows of its result, or two values of a list or tuple computed from it, but not a
        list of values of which only one is."""
        while isinstance(iterable, cst.Call) and len(iterable.args) == 1 and not isinstance(iterable.func, cst.Attribute) \
                and (self.inference.infer(iterable.func) is None or self._passes_through(iterable)) \
                or (isinstance(iterable, cst.Call) and dotted(iterable.func) in ("tuple", "list")):
            if not iterable.args:
                return False
            iterable = iterable.args[0].value  # `ensure_tuple(losses)`, `tuple(losses)`
        if isinstance(iterable, (cst.List, cst.Tuple)):
            reached = [element for element in iterable.elements
                       if self.flows_into(scope, forward.at, element.value, iterable, forward.elements)]
            return len(reached) > 1
        return forward.elements is None or len(forward.elements) > 1

    def _passes_through(self, call: cst.Call) -> bool:
        """``call`` is of a function of this file that returns its one argument, as it is or
        as the one element of a tuple or list (``ensure_tuple(x)``)."""
        function = self.local_function(call)
        if function is None or len(function.positional_params()) != 1 or not function.returns:
            return False
        name = function.positional_params()[0].name.value

        def same(value: cst.BaseExpression) -> bool:
            if isinstance(value, cst.IfExp):
                return same(value.body) and same(value.orelse)
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == 1:
                value = value.elements[0].value
            return isinstance(value, cst.Name) and value.value == name

        return all(same(value) for value in function.returns)

    def _share(self, scope: Scope, forward: ModuleForward, first: Backward, second: Backward) -> bool:
        """Both backwards go through one part of ``forward``'s graph.  The elements of a
        tuple that separate modules compute (``return self.q1(x), self.q2(x)``) are separate
        graphs: freeing one leaves the other."""
        parts = self._separate_outputs(forward)
        if forward.via is not None and parts is not None:
            return False  # which part reaches which returned value is not followed through the call
        if parts is None:
            return self.flows_into(scope, forward.at, first.tensor, first.at, forward.elements)
        return any(self.flows_into(scope, forward.at, first.tensor, first.at, frozenset({part}))
                   and self.flows_into(scope, forward.at, second.tensor, second.at, frozenset({part}))
                   for part in parts)

    def _separate_outputs(self, forward: ModuleForward) -> Optional[frozenset[int]]:
        """The tuple positions of ``forward``'s result that are separate graphs, or None."""
        if not isinstance(forward.node, cst.Call) or not forward.module:
            return None
        value = self.inference.infer(forward.node.func)
        cls = value.cls if value is not None else None
        method = cls.methods.get("forward") if isinstance(cls, ClassInfo) else None
        if method is None or method.scope is None or len(method.returns) != 1 \
                or not isinstance(method.returns[0], cst.Tuple):
            return None
        returned = method.returns[0]
        inner = self.forwards(method.scope)
        sources = [{id(f) for f in inner if self.flows_into(method.scope, f.at, element.value, returned)}
                   for element in returned.elements]
        if not all(sources) or any(a & b for i, a in enumerate(sources) for b in sources[i + 1:]):
            return None
        return frozenset(range(len(sources)))

    def _carrier(self, scope: Scope, forward: ModuleForward, loop: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The name that carries ``forward``'s result into its own arguments on the next
        iteration of ``loop`` (``out, hidden = rnn(x, hidden)``), still in the graph: the
        last binding of that name in the loop is computed from the forward, and nothing
        detaches it in place afterwards."""
        call = forward.at
        if not isinstance(call, cst.Call) or self._may_detach_state(call.func):
            return None
        for arg in call.args:
            for node in iter_nodes(arg.value):
                if not isinstance(node, cst.Name) or _exits_graph(node, arg.value):
                    continue
                inside = [b for b in scope.bindings.get(node.value, ()) if _inside(b.node, loop)
                          and b.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) and b.value is not None]
                if not inside:
                    continue
                if any(b.node.start < call.start for b in inside if b.value is not call) \
                        and not self._carried_through(node, scope, inside, call):
                    continue  # rebound in the loop before the forward: `hidden = repackage_hidden(hidden)`
                last = max(inside, key=lambda binding: binding.node.start)
                if last.value is not call and not self.flows_into(scope, call, last.value, last.value, forward.elements):
                    continue
                if last.value is call and forward.elements is not None and last.path and last.path[0] not in forward.elements:
                    continue
                if _detached_in_place(node.value, last.node, loop):
                    continue
                return last.node
        return None

    def _state_kept_by_module(self, forward: ModuleForward, loop: cst.CSTNode) -> Optional[cst.CSTNode]:
        """``self.hidden`` that the module's own ``forward`` (a class of this file) both gives
        a layer and sets from that layer's result (``out, self.hidden = self.rnn(x,
        self.hidden)``), when nothing in the class detaches or resets it outside ``__init__``
        and nothing in ``loop`` reaches into the module but its forward: each call carries
        the previous call's graph, which the previous iteration's backward freed."""
        call = forward.at
        value = self.inference.infer(call.func) if isinstance(call, cst.Call) and forward.via is None else None
        cls = value.cls if value is not None and value.kind is Kind.MODULE else None
        method = cls.methods.get("forward") if isinstance(cls, ClassInfo) and cls.model is self.model else None
        if method is None or method.self_name is None or not isinstance(method.node, cst.FunctionDef):
            return None
        module = dotted(call.func)
        loop_text = self.analysis.text[loop.start:loop.end]
        if not module or re.search(rf"(?<![\w.]){re.escape(module)}\.(?!parameters\b|train\b|eval\b|zero_grad\b)"
                                   rf"\w+\s*(?:\(|=(?!=))", loop_text):
            return None  # `model.reset_hidden()`, `model.hidden = None` in the loop
        class_text = self.analysis.text[cls.node.start:cls.node.end]
        for node in iter_nodes(method.node.body):
            if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
                continue
            targets = [element.value for target in node.targets for element in (
                target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target])]
            for target in targets:
                if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == method.self_name):
                    continue
                name = target.attr.value
                given = any(isinstance(inner, cst.Attribute) and inner.attr.value == name
                            and isinstance(inner.value, cst.Name) and inner.value.value == method.self_name
                            for arg in node.value.args for inner in iter_nodes(arg.value))
                others = [a for a in cls.assignments(name)
                          if not is_descendant(a.node, method.node) and self._function_of(a.node) != "__init__"]
                if given and not others and not in_branch(node, method.node) and not re.search(
                        rf"\.{re.escape(name)}\b[^\n]*\.detach|detach_?\([^\n]*\.{re.escape(name)}\b", class_text):
                    return target
        return None

    def _function_of(self, node: cst.CSTNode) -> Optional[str]:
        """The name of the function ``node`` is written in."""
        return next((a.name.value for a in ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def _may_detach_state(self, module: cst.BaseExpression) -> bool:
        """Some class the module ``module`` names may be built from (through the calls that
        build it, `.to(device)`, and the modules those wrap: `DataParallel(model)`), in this
        file or another of the project, detaches or computes without gradients in its own
        code, or is out of sight: it may hand back its state already out of the graph
        (Transformer-XL's `mems`)."""
        seen: set[int] = set()
        pending: list[cst.BaseExpression] = [module]
        for _ in range(8):
            if not pending:
                return False
            expression = pending.pop()
            while isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute) \
                    and expression.func.attr.value in ("to", "cuda", "cpu", "float", "half", "double"):
                expression = expression.func.value
            builds = [expression] if isinstance(expression, cst.Call) else self._constructions(expression)
            for built in builds:
                if id(built) in seen:
                    continue
                seen.add(id(built))
                value = self.inference.infer(built.func)
                cls = value.cls if value is not None else None
                if isinstance(cls, ClassInfo):
                    code = cls.model.module.code
                    if _DETACHES.search(code, cls.node.start, cls.node.end):
                        return True
                elif value is not None and value.kind is Kind.EXTERNAL and value.qualname \
                        and not value.qualname.startswith("torch."):
                    return True  # a class whose code is out of sight
                pending += [arg.value for arg in built.args if arg.keyword is None and not arg.star]
                pending += [built.func.value] if isinstance(built.func, cst.Attribute) else []
        return False

    def _carried_through(self, load: cst.Name, scope: Scope, inside: list, call: cst.CSTNode) -> bool:
        """Whether the value bound to ``load``'s name in the loop, before ``call``, still
        carries the previous iteration's graph: it reads the name, and not through a graph
        exit or a function of this file that detaches what it returns."""
        for binding in (b for b in inside if b.node.start < call.start and b.value is not call):
            value = binding.value
            reads = [node for node in iter_nodes(value) if isinstance(node, cst.Name) and node.value == load.value
                     and not _exits_graph(node, value)]
            if not reads:
                return False
            if isinstance(value, cst.Call):
                callee = self.inference.infer(value.func)
                if callee is not None and callee.kind is Kind.FUNCTION and callee.function is not None \
                        and _returns_detached(callee.function):
                    return False
        return True


def _returns_detached(function) -> bool:
    """Every value ``function`` returns is out of the graph: its parameters are read only
    through a graph exit (``h.detach()``, ``Variable(h.data)``), or handed to the function
    itself (``tuple(repackage_hidden(v) for v in h)``)."""
    parameters = _parameter_names(function)
    returns = function.returns
    if not returns:
        return False
    for value in returns:
        for node in iter_nodes(value):
            if not isinstance(node, cst.Name) or _exits_graph(node, value):
                continue
            if node.value in parameters and not _recursive_use(node, value, function):
                return False
    return True


def _recursive_use(node: cst.CSTNode, top: cst.CSTNode, function) -> bool:
    """``node`` is an argument of a call of ``function`` itself, or the iterable of a
    comprehension whose element is such a call."""
    current = node
    while current is not top and current.parent is not None:
        parent = current.parent
        if isinstance(parent, cst.Call) and current is not parent.func and isinstance(parent.func, cst.Name) \
                and parent.func.value == function.name:
            return True
        if isinstance(parent, cst.CompFor) and current is parent.iter:
            element = getattr(parent.parent, "elt", None)
            if isinstance(element, cst.Call) and isinstance(element.func, cst.Name) \
                    and element.func.value == function.name:
                return True
        current = parent
    return _detaching_comprehension(node, top)


def _detaching_comprehension(node: cst.CSTNode, top: cst.CSTNode) -> bool:
    """``node`` is the iterable of a comprehension whose element takes each item out of the
    graph: ``tuple(h.detach() for h in hidden)``."""
    current = node
    while current is not top and current.parent is not None:
        parent = current.parent
        if isinstance(parent, cst.CompFor) and current is parent.iter:
            element = getattr(parent.parent, "elt", None)
            targets = {n.value for n in iter_nodes(parent.target) if isinstance(n, cst.Name)}
            uses = [n for n in iter_nodes(element) if isinstance(n, cst.Name) and n.value in targets] \
                if element is not None else []
            return bool(uses) and all(_exits_graph(n, element) for n in uses)
        current = parent
    return False


def _enables_grad(node: cst.CSTNode, inference, stop: Optional[cst.CSTNode] = None) -> bool:
    """``node`` runs under ``torch.enable_grad()`` (a ``with`` block up to ``stop``, or the
    decorator of the function ``node`` is)."""
    current = node
    while current is not None:
        if isinstance(current, cst.With) and any(inference.grad_mode(item.item) is True for item in current.items):
            return True
        if isinstance(current, cst.FunctionDef):
            return any(inference.grad_mode(decorator.decorator) is True for decorator in current.decorators)
        if current is stop:
            return False
        current = current.parent
    return False


def _called(call: cst.Call) -> str:
    """The last name of what ``call`` calls (``Dropout`` of ``nn.Dropout(..)``), or ""."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _holder_names(construction: cst.Call) -> set[str]:
    """The last names of what keeps ``construction``, or the layers built around it:
    ``self.drop = nn.Dropout(p, inplace=True)`` gives ``drop``; inside
    ``self.e2 = nn.Sequential(..)`` or a function that returns it, ``e2`` or the function."""
    names: set[str] = set()
    current: Optional[cst.CSTNode] = construction
    while current is not None and not isinstance(current, (cst.ClassDef, cst.Module)):
        parent = current.parent
        if isinstance(parent, cst.Assign):
            for target in parent.targets:
                last = dotted(target.target).rsplit(".", 1)[-1]
                if last:
                    names.add(last)
            break
        if isinstance(parent, cst.FunctionDef):
            names.add(parent.name.value)
            break
        current = parent
    return names


def view_root(expression: cst.BaseExpression) -> Optional[cst.Name]:
    """The name ``expression`` is a view of, through one or more plain indexings (integers,
    slices, ``...``, ``None``), view methods (``view``, ``transpose``, ``narrow``) and view
    attributes (``.T``): ``x[:, :c, ...]`` -> ``x``; None for the name itself or anything else."""
    current = expression
    while True:
        if isinstance(current, cst.Subscript) \
                and all(torch_api.literal_view_index(element) for element in current.slice):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value in torch_api.TRACKED_VIEW_METHODS:
            current = current.func.value
        elif isinstance(current, cst.Attribute) and current.attr.value in torch_api.TRACKED_VIEW_ATTRIBUTES:
            current = current.value
        else:
            break
    return current if isinstance(current, cst.Name) and current is not expression else None


def _agreed(behaviours: list) -> Optional[ModuleBehaviour]:
    """What every one of ``behaviours`` does (a name bound in several places, a function
    with several returns): a property holds only when it holds for all."""
    if not behaviours or any(b is None for b in behaviours):
        return None
    saves = all(b.saves_output for b in behaviours)
    writes = all(b.writes_input is not None for b in behaviours)
    keeps = "".join(letter for letter in "ic" if all(letter in b.saves_input for b in behaviours))
    first = behaviours[0]
    return ModuleBehaviour(first.saves_output if saves else None, first.saver if saves else None,
                           first.writes_input if writes else None, keeps)


def _held(cls: ClassInfo, attribute: cst.Attribute) -> list:
    """The assignments whose value ``self.<name>`` may hold where ``attribute`` reads it: inside
    ``self.conv = nn.Sequential(self.conv, ..)`` the one before; when every assignment is a
    plain statement of one method (``__init__`` building, then wrapping a layer) the last one;
    else all of them."""
    assignments = [a for a in cls.assignments(attribute.attr.value) if a.value is not None and not a.path]
    for index, assignment in enumerate(assignments):
        if assignment.value.start <= attribute.start < assignment.value.end:
            return assignments[index - 1:index] if index else []
    if len(assignments) > 1 and all(a.function is assignments[0].function and _plain_statement(a.node)
                                    for a in assignments):
        return assignments[-1:]
    return assignments


def _plain_statement(node: cst.CSTNode) -> bool:
    """``node`` is (in) a statement of its function's own body, not under ``if``/``for``/``try``."""
    current = node
    while current is not None and not isinstance(current, cst.SimpleStatementLine):
        current = current.parent
    if current is None:
        return False
    block = current.parent
    return isinstance(block, cst.IndentedBlock) and isinstance(block.parent, cst.FunctionDef)


def _bound_in(scope: Scope, name: str, container: cst.CSTNode) -> bool:
    return any(_inside(binding.node, container) for binding in scope.bindings.get(name, ()))


def _detached_in_place(name: str, after: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """``name.detach_()`` (or ``name.requires_grad_(False)``) in ``loop`` after ``after``."""
    for node in iter_nodes(loop):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.start > after.start \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == name \
                and node.func.attr.value == "detach_":
            return True
    return False


def _common_loop(one: cst.CSTNode, other: cst.CSTNode) -> Optional[cst.CSTNode]:
    others = {id(loop) for loop in enclosing_loops(other)}
    return next((loop for loop in enclosing_loops(one) if id(loop) in others), None)


def _inside(node: cst.CSTNode, container: Optional[cst.CSTNode]) -> bool:
    return container is not None and container.start <= node.start and node.end <= container.end


def modules_overlap(one: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """Two sets of modules (as written: ``model``, ``model.encoder``) share parameters: one
    is, contains or is inside one of the other."""
    return any(a == b or a.startswith(b + ".") or b.startswith(a + ".") for a in one for b in other)


def _updated_by(module: str, updates: tuple[str, ...]) -> bool:
    """Every parameter of ``module`` is among those of ``updates``: it is one of them or
    inside one (``model.encoder`` when the optimizer has ``model.parameters()``).  A module
    that only contains an updated one (``critic`` when the step is ``critic.q1``'s) is not:
    whether a backward through it reaches that part is not known."""
    return any(module == updated or module.startswith(updated + ".") for updated in updates)


def _before(one, other) -> bool:
    """Event ``one`` is over before ``other`` starts, in source order (arguments run before
    the call they are passed to; the events of one call in the order its body runs them)."""
    if one.at is other.at:
        return one.index < other.index
    if other.at.start <= one.at.start and one.at.end <= other.at.end:
        return True
    return one.at.end <= other.at.start


def _arguments(call: cst.Call, function) -> dict[str, cst.BaseExpression]:
    """Parameter name -> the expression ``call`` passes for it (no starred arguments)."""
    names = [param.name.value for param in function.positional_params()]
    if function.kind in ("method", "classmethod") and names and isinstance(call.func, cst.Attribute):
        names = names[1:]  # `obj.method(a)`, `Cls.build(a)`: `a` is the parameter after `self`/`cls`
    found: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return found
        if arg.keyword is not None:
            found[arg.keyword.value] = arg.value
        elif position < len(names):
            found[names[position]] = arg.value
            position += 1
    return found


def _passed(call: cst.Call, function, name: str) -> Optional[cst.BaseExpression]:
    """What ``call`` passes for the parameter ``name`` of ``function`` (``Cls(..)`` for an
    ``__init__``, ``obj.method(..)``: after ``self``)."""
    names = [param.name.value for param in function.positional_params()]
    if function.kind == "method" and names:
        names = names[1:]
    position = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
        elif position < len(names):
            if names[position] == name:
                return arg.value
            position += 1
    return None


def _parameter_names(function) -> set[str]:
    params = function.node.params
    return {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}


def _parameter_argument(expression: cst.BaseExpression, function, arguments: dict) -> Optional[cst.BaseExpression]:
    """What the call passes for ``expression`` when it is a parameter of ``function``."""
    if isinstance(expression, cst.Name) and expression.value in _parameter_names(function):
        return arguments.get(expression.value)
    return None


def _rooted_at(expression: cst.BaseExpression, name: Optional[str]) -> bool:
    return name is not None and dotted(expression).split(".")[0] == name


def _rebased(module: str, root: str, receiver: str) -> str:
    """``self.critic`` seen from a call on ``agent``: ``agent.critic``."""
    return receiver + module[len(root):]


def _retain_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The ``retain_graph`` a backward call passes (by keyword, or second to ``t.backward``;
    also under its pre-0.4 name ``retain_variables``, which TL206 renames); without one,
    ``create_graph``, its default."""
    retain = keyword(call, "retain_graph") or keyword(call, "retain_variables")
    func = call.func
    if retain is None and isinstance(func, cst.Attribute) and func.attr.value == "backward":
        positional = [arg for arg in call.args if arg.keyword is None]
        retain = positional[1].value if len(positional) > 1 else None
    return retain if retain is not None else keyword(call, "create_graph")


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


def zipped_iterable(model, value: cst.BaseExpression, path: tuple) -> Optional[cst.BaseExpression]:
    """What the loop target at ``path`` iterates, in ``for a, b in zip(x, y)`` (``x`` for
    ``a``) and ``for i, a in enumerate(x)`` (``x`` for ``a``); None otherwise."""
    if len(path) != 1 or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name) \
            or model.resolve(value.func) or any(arg.keyword is not None or arg.star for arg in value.args):
        return None
    if value.func.value == "zip" and path[0] < len(value.args):
        return value.args[path[0]].value
    if value.func.value == "enumerate" and path[0] == 1 and len(value.args) == 1:
        return value.args[0].value
    return None


def _statement_of(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The statement ``node`` is part of: its line, or the compound statement it heads."""
    return next((a for a in ancestors(node) if isinstance(a, (cst.SimpleStatementLine, cst.BaseCompoundStatement))),
                None)
