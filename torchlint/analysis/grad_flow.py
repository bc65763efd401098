"""Which tensors require grad, and why: the graph-attachment analysis rules share.

A tensor requires grad when it is a parameter (``model.fc.weight``, ``model.parameters()``),
was made with ``requires_grad=True`` (or ``requires_grad_()``), is the output of a module
with parameters called while gradients are on (``model(x)``, ``self.net(x)``), or is
computed by differentiable operations from such a tensor.  The graph is cut by
``.detach()``, ``.data``, ``.item()``, ``.tolist()``, ``.numpy()``, a new tensor made
from values (``torch.tensor(..)``, ``torch.from_numpy(..)``), integer-valued operations
(``argmax``, comparisons, the indices of ``max(dim)``), and ``no_grad`` regions.

``GradFlow.requires_grad(expression)`` answers with the evidence, a ``GradSource``: the
place the gradient comes from (a ``related`` location for findings) and the steps from the
expression back to it.  The answer is only "yes, shown" or "not shown": rules report only
what it shows.  Values cross one or two calls of this file's functions: a function's
returns, and a parameter that a call site passes a tensor requiring grad (the helper
receives it on that call); ``self.<attr>`` across the methods of a class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted, is_false, keyword, requires_grad_switch, tuple_element
from torchlint.syntax.walk import ancestors, iter_nodes
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.graph_exits import GraphExits
from torchlint.analysis.no_graph import NoGraph
from torchlint.analysis.semantic import BindingKind, ClassInfo, FunctionInfo
from torchlint.analysis.values import Kind, Step, Value

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

# Methods that take values out of the graph.
CUT_METHODS = frozenset({"detach", "detach_", "item", "tolist", "numpy"})
# Methods whose result has no gradient whatever the input: integer-valued results and
# the ones torch marks not differentiable (`argmax`, `long`, `nonzero`, `sign`...).
_NO_GRAD_METHODS = (torch_facts.methods(integer="always") | torch_facts.methods(differentiable=False)) - {
    "requires_grad_"}
# Of the results of these, item 1 holds indices: `h.max(1)[1]`, `_, idx = h.topk(k)`.
_WITH_INDICES = torch_facts.methods(integer="indices")
_NO_GRAD_FUNCTIONS = frozenset("torch." + name for name in
                               torch_facts.functions(integer="always") | torch_facts.functions(differentiable=False))
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power, cst.Modulo)
# Attributes of a tensor that are tensors of the same graph.
_SAME_GRAPH_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
_MAX_DEPTH = 30
# Turning gradients of existing tensors off: `p.requires_grad = False`, `requires_grad_(False)`,
# `requires_grad_(flag)`, a `Parameter(.., requires_grad=False)`; not the keyword of a call that
# makes a new tensor (`Variable(x, requires_grad=False)`, `torch.zeros(3, requires_grad=False)`).
_FREEZES = re.compile(r"\.\s*requires_grad\s*=\s*False|requires_grad_\(\s*(?!(?:requires_grad\s*=\s*)?True\b)\w"
                      r"|Parameter\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*requires_grad\s*=\s*False")
_MAX_CALLS = 5  # parameters followed back through this many call sites
# A dict written out is followed through this many calls: a parameter passed the dict a
# function of the file returns (`opdict = decoder.decode(codes)` ... `visualizer.render(opdict)`).
_DICT_HOPS = 2
# torch functions that join a sequence of tensors: their result requires grad when an item does.
# Builtins that copy what they are given into a new list or tuple of the same items.
_COPYING_BUILTINS = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.reversed"})
# Methods of a module that give it back: moves, and switches of mode.
_SAME_MODULE_METHODS = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half"})
# Functions that give back a whole model saved with it: called, it runs that model.
_MODEL_LOADERS = frozenset({"torch.load", "torch.jit.load"})
_JOINS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate", "torch.vstack", "torch.hstack"})


@dataclass(frozen=True)
class GradSource:
    """Why a tensor requires grad: ``node`` is where the gradient comes from (a module's
    output, a parameter, a tensor made with ``requires_grad=True``), ``what`` says it in a
    few words ("the output of `model`"), ``steps`` lead from the expression asked about to it."""

    node: cst.CSTNode
    what: str
    steps: tuple[Step, ...] = ()
    located: bool = False  # ``what`` says which file and line it is at (it was found in another file)

    def then(self, step: Step) -> "GradSource":
        return GradSource(self.node, self.what, (step,) + self.steps, self.located)

    def told_in(self, analysis: "ModuleAnalysis") -> str:
        """``what``, with where it is when it is in ``analysis``'s file and nothing says so yet."""
        return self.what if self.located else f"{self.what} ({analysis.location(self.node)})"


class GradFlow:
    """The requires-grad analysis of one module, answers remembered."""

    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._memo: dict[tuple, Optional[GradSource]] = {}
        # The calls whose result is being read, innermost last: (id of the function's node, the
        # call): there, a parameter is what that call passes, not what any call passes.
        self._context: tuple[tuple[int, cst.Call], ...] = ()
        self._flags: Optional[dict] = None
        self._freezes: Optional[bool] = None
        self._call_sites: dict[int, list[cst.Call]] = {}
        self._no_graph: Optional[NoGraph] = None
        self._no_graph_unset: Optional[NoGraph] = None
        self._graph_exits: Optional[GraphExits] = None
        self._hooks: Optional[dict[int, list[cst.Call]]] = None
        self._converted: dict[int, frozenset] = {}  # function -> the parameters it converts with numpy
        self._stores: Optional[dict[str, list]] = None  # name -> (target, value) of `name[i] = value`
        self._extends: Optional[dict[str, list]] = None  # name -> `name.extend(v)`, `name += v`

    @property
    def no_graph(self) -> NoGraph:
        """The other side: values shown to have no graph, and where it was cut."""
        if self._no_graph is None:
            self._no_graph = NoGraph(self.analysis)
        return self._no_graph

    @property
    def no_graph_but_requires_grad(self) -> NoGraph:
        """``no_graph`` read as if nothing set `requires_grad` on what the code computes: a
        value made a leaf that requires grad (`loss.requires_grad = True`) still has no path
        back to what it was computed from."""
        if self._no_graph_unset is None:
            self._no_graph_unset = NoGraph(self.analysis, requires_grad_set=False)
        return self._no_graph_unset

    @property
    def graph_exits(self) -> GraphExits:
        """Where values of the graph leave torch in a function, and reach its result."""
        if self._graph_exits is None:
            self._graph_exits = GraphExits(self.analysis)
        return self._graph_exits

    # --- questions -------------------------------------------------------------------

    def requires_grad(self, node: cst.BaseExpression) -> Optional[GradSource]:
        """The evidence that ``node`` (a tensor, or a list or tuple holding one) requires
        grad where it is evaluated, or None when that is not shown."""
        return self._requires(node, 0, 0)

    def container_requires_grad(self, node: cst.BaseExpression) -> Optional[GradSource]:
        """The evidence that ``node`` is a list or tuple (written out here, or bound or passed
        to a name) holding a tensor that requires grad, or None."""
        found = self.item_requiring_grad(node)
        return found[1] if found is not None else None

    def item_requiring_grad(self, node: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, GradSource]]:
        """The item of the list or tuple ``node`` that requires grad (an element written
        out, or what a `.append(..)` adds), with the evidence, or None."""
        found = self._container(node, 0)
        if found is None or self._type_tested(node):
            return None
        container, steps = found
        values = container if isinstance(container, list) else [container]
        for value in values:
            source = self._parameters_of(value) or self._requires(value, 0, 0 if not steps else 1)
            if source is not None:
                for step in reversed(steps):
                    source = source.then(step)
                return value, source
        return None

    def converts_arrays(self, call: cst.Call) -> bool:
        """``call`` converts each tensor given as a positional argument with numpy (which
        raises on one that requires grad): a function of numpy, scikit-learn, pandas or pyplot
        that does (``roc_auc_score(y, out)``, ``plt.plot(losses)``), or a plotting method of a
        matplotlib Axes (``fig, axs = plt.subplots(2, 2)`` ... ``axs[0, 0].plot(epochs, losses)``)."""
        func = call.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return False
        qualname = self.inference.qualname(func)
        if qualname in torch_api.ARRAY_CONVERTING_FUNCTIONS:
            return True
        return qualname is None and isinstance(func, cst.Attribute) and \
            func.attr.value in torch_api.AXES_ARRAY_METHODS and self._made_by(func.value, axes=True, depth=0)

    def converted_arguments(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The arguments of ``call`` that the function of another module of the project it
        calls converts with numpy on every run (``plot_curve(losses)`` where utils.py's
        ``plot_curve`` runs ``plt.plot(values)``), as that module's analysis reads it."""
        if not call.args or any(arg.star for arg in call.args) or not isinstance(call.func, (cst.Name, cst.Attribute)):
            return []
        function = self.inference.project_callee(call.func)  # `save_curve(..)`, `plotter.plot(..)`
        other = self.analysis.defining(function) if function is not None else None
        if other is None or not isinstance(function.node, cst.FunctionDef):
            return []
        converted = other.grad_flow.converted_parameters(function)
        offset = 1 if function.kind in ("method", "classmethod") else 0
        found = []
        for index, param in enumerate(function.positional_params()[offset:]):
            if param.name.value in converted:
                argument = _argument(call, param.name.value, index)
                if argument is not None:
                    found.append(argument)
        return found

    def converted_parameters(self, function: FunctionInfo) -> frozenset:
        """The names of the parameters of ``function`` (of this module) that it converts with
        numpy as it was handed them, outside any condition: given to a function that
        converts its arguments (``plt.plot(values)``, ``np.asarray(x)``), or ``x.numpy()``,
        ``x.cpu().numpy()``."""
        key = id(function.node)
        found = self._converted.get(key)
        if found is None:
            self.model.materialize(function)  # (a module another file imports: bodies built on demand)
            names = set()
            for param in function.positional_params():
                name = param.name.value
                binding = next((b for b in function.scope.bindings.get(name, ()) if b.kind is BindingKind.PARAM), None) \
                    if function.scope is not None else None
                if binding is None or name == function.self_name:
                    continue
                for _seq, read in function.scope.loads.get(name, ()):
                    if self.model.resolve(read) == [binding] and self._converts_read(read, function.node):
                        names.add(name)
                        break
            found = self._converted[key] = frozenset(names)
        return found

    def _converts_read(self, read: cst.Name, definition: cst.FunctionDef) -> bool:
        parent = self.model.parent(read)
        if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value == "cpu":
            call = self.model.parent(parent)
            parent = self.model.parent(call) if isinstance(call, cst.Call) and not call.args else None
            read = call
        if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value == "numpy":
            converting = self.model.parent(parent)
            converts = isinstance(converting, cst.Call) and not converting.args
        else:
            argument, converting = parent, self.model.parent(parent) if isinstance(parent, cst.Arg) else None
            converts = isinstance(converting, cst.Call) and argument.keyword is None and not argument.star and (
                self.inference.qualname(converting.func) in torch_api.NUMPY_TENSOR_CONVERSIONS
                or self.converts_arrays(converting))
        if not converts:
            return False
        for ancestor in ancestors(converting):
            if ancestor is definition:
                return True
            if isinstance(ancestor, (cst.If, cst.IfExp, cst.While, cst.Try, cst.BooleanOperation, cst.Lambda,
                                     cst.FunctionDef, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                return False
        return False

    def _made_by(self, node: cst.BaseExpression, axes: bool, depth: int) -> bool:
        """``node`` is a matplotlib Axes (``axes``; also an item of the array of them
        ``plt.subplots`` gives) or Figure, by every binding of the name it reads."""
        while isinstance(node, cst.Subscript) and axes:  # `axs[0, 0]`, `axes[i][j]`
            node = node.value
        if isinstance(node, cst.Call):
            func = node.func
            qualname = self.inference.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
            table = torch_api.AXES_FUNCTIONS if axes else torch_api.FIGURE_FUNCTIONS
            if qualname in table:
                return table[qualname] is None
            return axes and qualname is None and isinstance(func, cst.Attribute) and depth < 3 and \
                func.attr.value in torch_api.FIGURE_AXES_METHODS and self._made_by(func.value, False, depth + 1)
        if not isinstance(node, cst.Name) or depth >= 3:
            return False
        bindings = self.model.resolve(node)
        if not bindings:
            return False
        for binding in bindings:
            value = binding.value
            if binding.kind is BindingKind.FOR and axes and value is not None:
                inner = value.func.value if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in ("ravel", "flatten") else \
                    value.value if isinstance(value, cst.Attribute) and value.attr.value == "flat" else value
                if not self._made_by(inner, True, depth + 1):  # `for ax in axs.flat:`
                    return False
                continue
            if binding.kind is not BindingKind.ASSIGN or not isinstance(value, cst.Call) or binding.iterates:
                return False
            if binding.path:
                func = value.func
                qualname = self.inference.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
                table = torch_api.AXES_FUNCTIONS if axes else torch_api.FIGURE_FUNCTIONS
                if len(binding.path) != 1 or qualname not in table or table[qualname] != binding.path[0]:
                    return False  # `fig, axs = plt.subplots(..)`: item 1 holds the Axes, item 0 the Figure
                continue
            if not self._made_by(value, axes, depth + 1):
                return False
        return True

    def _container(self, node: cst.BaseExpression, calls: int):
        """(the list or tuple written out that ``node`` is, the steps to it)."""
        if isinstance(node, (cst.List, cst.Tuple, cst.ListComp)):
            return node, ()
        if isinstance(node, cst.Attribute) and dotted(node):
            return self._appended(node)
        if isinstance(node, cst.Subscript):
            return self._dict_list(node)  # `history["loss"]` filled by `history["loss"].append(loss)`
        if isinstance(node, cst.Call) and calls < _MAX_CALLS:
            copied = self._copied_container(node, calls)
            if copied is not None:
                return copied
            return self._returned_container(node, calls)
        if not isinstance(node, cst.Name) or calls >= _MAX_CALLS:
            return None
        bindings = self.model.resolve(node)
        bindings = self._before_additions(bindings)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        literal = _list_written(tuple_element(binding.value, binding.path)) \
            if binding.kind is BindingKind.ASSIGN else None
        if literal is not None and not binding.iterates:  # `preds, targets = [], []`, `out = [None] * n`
            appended = self.analysis.appended_to(binding)
            stored = self._item_stores(binding)
            extended = self._extended(binding)
            if appended or stored or extended:
                items = [element.value for element in literal.elements
                         if not isinstance(element, cst.StarredElement)] + [arg.value for arg in appended] \
                    + [value for _target, value in stored] + [value for _call, value in extended]
                step = Step(appended[0], f"`{binding.name}` holds what is appended to it: `{{code}}`") if appended \
                    else Step(stored[0][1], f"`{self.analysis.snippet(stored[0][0])}` = `{{code}}`") if stored \
                    else Step(extended[0][0], f"`{binding.name}` holds the items of what `{{code}}` adds")
                return items, (step,)
        if binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.path:
            found = self._container(binding.value, calls)
            if found is not None:
                return found[0], (Step(binding.value, f"`{binding.name}` = `{{code}}`"),) + found[1]
            return None
        if binding.kind is BindingKind.FOR and binding.iterates and not binding.path and binding.value is not None:
            return self._nested_container(binding, calls)  # `for d in data:` of a tuple of lists
        function = binding.definition
        if binding.kind is not BindingKind.PARAM or not isinstance(function, FunctionInfo) \
                or not isinstance(binding.node, cst.Param):
            return None
        if binding.path == (None,):
            return self._star_container(binding, function)
        index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
        for call in self.call_sites(function):
            argument = _argument(call, binding.name, index) if index >= 0 else None
            found = self._container(argument, calls + 1) if argument is not None else None
            if found is not None and self.grad_off(call) is None:
                step = Step(argument, f"a call of `{function.name}` passes `{{code}}` for its parameter "
                                      f"`{binding.name}`")
                return found[0], (step,) + found[1]
        return None

    def _before_additions(self, bindings: list) -> list:
        """``bindings`` with each ``name += value`` statement (which adds to the list in place)
        replaced by the bindings its target had before it."""
        for _ in range(3):
            grown = [b for b in bindings if b.kind is BindingKind.AUGASSIGN]
            if not grown:
                return bindings
            before = []
            for binding in grown:
                statement = self.model.parent(binding.node)
                if not isinstance(statement, cst.AugAssign) or not isinstance(statement.operator, cst.AddAssign):
                    return bindings
                before += [b for b in self.model.resolve(statement.target) if b not in before]
            bindings = [b for b in bindings if b not in grown] + [b for b in before if b not in bindings]
        return bindings

    def _nested_container(self, binding, calls: int):
        """The list an item of a list of lists is (``for d in data:`` where ``data`` holds
        ``history``): (the items of the item lists, the steps to them)."""
        outer = self._container(binding.value, calls + 1)
        if outer is None:
            return None
        for item in outer[0] if isinstance(outer[0], list) else [outer[0]]:
            inner = self._container(item, calls + 1)
            if inner is not None:
                step = Step(item, f"`{binding.name}` is an item of `{self.analysis.snippet(binding.value)}`: "
                                  f"`{{code}}`")
                return inner[0], outer[1] + (step,) + inner[1]
        return None

    def _star_container(self, binding, function: FunctionInfo):
        """``*args`` of ``function``: the positional arguments its calls pass beyond its
        named parameters, the receiver first where a decorator of this file wraps a method
        into it (``def result(*args, **kwargs)`` returned by ``pytorch_wrap``, ``vis.images(out)``
        on the decorated ``images``): (the items, the steps to them)."""
        if binding.node is not function.node.params.star_arg:
            return None
        named = len(function.positional_params())
        items = []
        for call, receiver in self.star_calls(function):
            positional = ([receiver] if receiver is not None else []) + [arg.value for arg in call.args
                                                                         if arg.keyword is None]
            offset = 1 if function.kind in ("method", "classmethod") and receiver is None else 0
            items.extend(positional[named - offset:])
        if not items:
            return None
        return items, (Step(binding.node, f"`{binding.name}` holds the positional arguments of the calls of "
                                          f"`{function.name}`"),)

    def star_calls(self, function: FunctionInfo) -> list:
        """The calls that run ``function`` with the arguments they are written with, each with
        the receiver it gets as its first argument (or None): its calls in this file, not under
        ``no_grad``; for the function a decorator of this file returns (a wrapper taking
        ``*args, **kwargs``), the calls of each function of the file decorated with it, and for
        a decorated method, the object it is called on."""
        found = [(call, None) for call in self.call_sites(function)
                 if not any(arg.star for arg in call.args) and self.grad_off(call) is None]
        for decorated in self._decorated_with(function):
            for call in self.analysis.nodes_of(cst.Call):
                if any(arg.star for arg in call.args) or self.grad_off(call) is not None:
                    continue
                func = call.func
                if decorated.kind == "function" and isinstance(func, cst.Name) and func.value == decorated.name \
                        and any(b.definition is decorated for b in self.model.resolve(func)):
                    found.append((call, None))
                elif decorated.kind == "method" and isinstance(func, cst.Attribute) \
                        and func.attr.value == decorated.name:
                    receiver = self.value_of(func.value)
                    if receiver is not None and receiver.kind in (Kind.INSTANCE, Kind.MODULE) \
                            and self._inherits(receiver.cls, decorated.cls, decorated.name):
                        found.append((call, func.value))
        return found

    def _decorated_with(self, wrapper: FunctionInfo) -> list[FunctionInfo]:
        """The functions of this file decorated with the function that returns ``wrapper`` (a
        function defined inside it), when that decorator is its only one."""
        if wrapper.model is not self.model or not isinstance(wrapper.node, cst.FunctionDef):
            return []
        factory = self._function_of(wrapper.node)
        if factory is None or not factory.returns or not all(
                isinstance(returned, cst.Name) and any(b.definition is wrapper for b in self.model.resolve(returned))
                for returned in factory.returns):
            return []
        found = []
        for function in self.model.functions.values():
            decorators = getattr(function.node, "decorators", ())
            if len(decorators) == 1 and isinstance(decorators[0].decorator, cst.Name) and any(
                    b.definition is factory for b in self.model.resolve(decorators[0].decorator)):
                found.append(function)
        return found

    def _item_stores(self, binding) -> list:
        """(target, value) of the ``name[i] = value`` statements writing into the list that
        ``binding`` binds (``output[xi] = x`` after ``output = [None] * n``)."""
        if self._stores is None:
            self._stores = {}
            for assign in self.analysis.nodes_of(cst.Assign):
                for target in assign.targets:
                    if isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                        self._stores.setdefault(target.target.value.value, []).append((target.target, assign.value))
        return [(target, value) for target, value in self._stores.get(binding.name, ())
                if binding in self.model.resolve(target.value)]

    def _extended(self, binding) -> list:
        """(statement, value) of the ``name.extend(value)`` calls and ``name += value``
        statements adding the items of ``value`` (a tensor: its rows; a list) to the list that
        ``binding`` binds (``preds.extend(out)``, ``preds += [out]``)."""
        if self._extends is None:
            self._extends = {}
            for call in self.analysis.nodes_of(cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "extend" and len(call.args) == 1 \
                        and isinstance(func.value, cst.Name) and not call.args[0].star \
                        and call.args[0].keyword is None:
                    self._extends.setdefault(func.value.value, []).append((call, func.value, call.args[0].value))
            for statement in self.analysis.nodes_of(cst.AugAssign):
                if isinstance(statement.operator, cst.AddAssign) and isinstance(statement.target, cst.Name):
                    self._extends.setdefault(statement.target.value, []).append(
                        (statement, statement.target, statement.value))
        return [(statement, value) for statement, receiver, value in self._extends.get(binding.name, ())
                if binding in self.model.resolve(receiver)]

    def _dict_list(self, node: cst.Subscript):
        """``history["loss"]``: the list a dict keeps under a key (a string, or the variable of a
        loop over strings), filled by ``history["loss"].append(value)`` calls, where the dict is
        a name bound once, or ``self.<name>`` of the class of the method: (the values appended
        under those keys, and the items its list is written with), or None."""
        owner = node.value
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) \
                or not isinstance(owner, (cst.Name, cst.Attribute)):
            return None
        keys = _literal_keys(node.slice[0].slice.value, self.model)
        if not keys:
            return None
        items: list = []
        if isinstance(owner, cst.Name):
            bindings = self.model.resolve(owner)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
                return None
            written = bindings[0].value
            if isinstance(written, cst.Dict):  # `{"loss": [], "acc": []}`: the items it is written with
                for element in written.elements:
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                            and element.key.value[1:-1] in keys:
                        literal = _list_written(element.value)
                        if literal is None:
                            return None
                        items += [item.value for item in literal.elements if not isinstance(item, cst.StarredElement)]
            elif not (isinstance(written, cst.Call) and self.inference.qualname(written.func)
                      in ("collections.defaultdict", "builtins.dict")):
                return None

            def same(receiver) -> bool:
                return isinstance(receiver, cst.Name) and self.model.resolve(receiver) == bindings
        else:
            name = dotted(owner)
            cls = self._self_class(node_root(owner)) if name else None
            if cls is None:
                return None

            def same(receiver) -> bool:
                return isinstance(receiver, cst.Attribute) and dotted(receiver) == name \
                    and self._self_class(node_root(receiver)) is cls
        appended = []
        for call in self.analysis.nodes_of(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1 \
                    and not call.args[0].star and isinstance(func.value, cst.Subscript) \
                    and len(func.value.slice) == 1 and isinstance(func.value.slice[0].slice, cst.Index) \
                    and _literal_keys(func.value.slice[0].slice.value, self.model) & keys and same(func.value.value):
                appended.append(call.args[0])
        if not appended:
            return None
        shown = self.analysis.snippet(node)
        return items + [arg.value for arg in appended], (
            Step(appended[0], f"`{shown}` holds what is appended to it: `{{code}}`"),)

    def _copied_container(self, node: cst.Call, calls: int):
        """``list(x)``, ``tuple(x)``, ``sorted(x)`` of a tensor (its rows are tensors of its
        graph), of a dict's ``.values()`` (the entries the dict is written with or filled
        with), or of a list: (the items, the steps to them)."""
        if self.inference.qualname(node.func) not in _COPYING_BUILTINS or len(node.args) != 1 \
                or node.args[0].keyword is not None or node.args[0].star:
            return None
        inner = node.args[0].value
        parameters = self._parameters_of(inner)
        if parameters is not None:  # `list(model.parameters())`
            return [inner], (Step(node, "`{code}` holds the parameters"),)
        values = self.dict_values(inner)
        if values is not None:
            return values, (Step(inner, "`{code}` are the entries of the dict"),)
        if self.inference.tensor(inner) is not None:
            return [inner], (Step(node, "`{code}` holds the rows of the tensor"),)
        if isinstance(inner, (cst.Name, cst.Attribute, cst.List, cst.Tuple, cst.ListComp)):
            return self._container(inner, calls + 1)
        return None

    def dict_values(self, node: cst.BaseExpression) -> Optional[list]:
        """``d.values()`` of a dict written out (``{"pred": out, ..}``, reached as
        ``_dict_literals`` reaches it) or bound once to ``{}`` and filled only by ``d[k] = v``
        statements: the values it holds, or None."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "values" and not node.args):
            return None
        owner = node.func.value
        literals = self._dict_literals(owner)
        if literals:
            return [element.value for literal in literals for element in literal.elements
                    if isinstance(element, cst.DictElement)]
        stored = self._stored_values(owner)
        return [value for _subscript, value in stored] if stored else None

    def optimized_tensors(self, params: cst.BaseExpression) -> list[tuple[cst.BaseExpression, tuple[Step, ...]]]:
        """The tensors an optimizer built with ``params`` is given, each with the steps to it:
        the items of a list or tuple written out; the entries of a dict
        (`list(store.values())`, `store.values()`) written out or bound once to `{}` and filled
        by `store[k] = v`; where such an entry is a parameter of a function of this file that
        stores it (`def param(name, init): store[name] = init`), what each call of the function
        passes for it (a memoizing parameter store: every tensor stored is optimized)."""
        if isinstance(params, (cst.List, cst.Tuple)):
            return [(element.value, ()) for element in params.elements if not isinstance(element, cst.StarredElement)]
        inner = params
        if isinstance(params, cst.Call) and self.inference.qualname(params.func) in _COPYING_BUILTINS \
                and len(params.args) == 1 and params.args[0].keyword is None and not params.args[0].star:
            inner = params.args[0].value
        entries = self.dict_values(inner) if isinstance(inner, cst.Call) else None
        if not entries:
            return []
        found: list[tuple[cst.BaseExpression, tuple[Step, ...]]] = []
        for entry in entries:
            stored = Step(entry, f"`{{code}}` is stored in the dict whose entries `{self.analysis.snippet(params)}` "
                                 f"holds")
            bindings = self.model.resolve(entry) if isinstance(entry, cst.Name) else []
            binding = bindings[0] if len(bindings) == 1 else None
            function = binding.definition if binding is not None and binding.kind is BindingKind.PARAM else None
            if not isinstance(function, FunctionInfo) or binding.param_index < 0 or binding.path:
                found.append((entry, (stored,)))
                continue
            index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
            for call in self.call_sites(function) if index >= 0 else ():
                argument = _argument(call, binding.name, index)
                if argument is not None:
                    found.append((argument, (Step(argument, f"`{{code}}` is passed for `{binding.name}` of "
                                                            f"`{function.name}`"), stored)))
        return found

    def _returned_container(self, node: cst.Call, calls: int):
        """The list a function of this file returns (``results = []`` filled by appends and
        returned, or a list written out), when every ``return`` of it returns one: (its
        items, the steps to them)."""
        callee = self.value_of(node.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not isinstance(function, FunctionInfo) or function.model is not self.model or function.is_generator \
                or not isinstance(function.node, cst.FunctionDef) or not function.returns:
            return None
        items: list = []
        steps: tuple = ()
        for returned in function.returns:
            found = self._container(returned, calls + 1)
            if found is None:
                return None
            items.extend(found[0] if isinstance(found[0], list) else [found[0]])
            steps = steps or found[1]
        step = Step(node, f"`{{code}}` returns the list `{function.name}` fills")
        return items, (step,) + steps

    def _type_tested(self, node: cst.BaseExpression) -> bool:
        """``node`` is a name whose type its function tests before (``if isinstance(data,
        (list, tuple)): return torch.stack(data)``): which branch it takes is not known."""
        if not isinstance(node, cst.Name):
            return False
        bindings = set(map(id, self.model.resolve(node)))
        function = next((a for a in ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Module))), None)
        if function is None or not bindings:
            return False
        for call in self.analysis.nodes_of(cst.Call):
            if call.start >= node.start or call.start < function.start or call.end > function.end:
                continue
            if isinstance(call.func, cst.Name) and call.func.value == "isinstance" and call.args \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == node.value \
                    and bindings & set(map(id, self.model.resolve(call.args[0].value))):
                return True
        return False

    def _appended(self, node: cst.Attribute):
        """``self.body.log_probs``: a list attribute filled by ``.append(value)`` calls on the
        same expression in the methods of this class: (the values appended, as a list)."""
        name = dotted(node)
        root = name.split(".")[0]
        cls = self._self_class(node_root(node)) if root else None
        if cls is None:
            return None
        appended = []
        for call in self.analysis.nodes_of(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1 \
                    and dotted(func.value) == name:
                receiver_root = node_root(func.value)
                if self._self_class(receiver_root) is cls:
                    appended.append(call.args[0])
        if not appended:
            return None
        return [arg.value for arg in appended], (Step(appended[0], f"`{name}` holds what is appended to it: "
                                                                     f"`{{code}}`"),)

    def grad_off(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The ``no_grad`` block, decorator or ``torch.set_grad_enabled(False)`` statement
        under which ``node`` runs (in its own function), or None."""
        return self.inference.grad_disabled(node)

    def runs_without_grad(self, node: cst.CSTNode) -> bool:
        """``node`` runs with gradients off: under a ``no_grad`` region, or in a function
        that this file calls only from such regions (one level)."""
        if self.grad_off(node) is not None or self.inference.runs_without_grad(node):
            return True
        function = self._function_of(node)
        if function is None:
            return False
        calls = self.call_sites(function)
        return bool(calls) and all(self.grad_off(call) is not None for call in calls)

    def call_sites(self, function: FunctionInfo) -> list[cst.Call]:
        """The calls of ``function`` in this file: ``f(..)``, ``self.f(..)``, ``obj.f(..)`` on
        an instance of its class (``self.logger.log(..)``), ``Cls(..)`` for ``__init__``."""
        key = id(function)
        if key in self._call_sites:
            return self._call_sites[key]
        self._call_sites[key] = []  # while they are looked for
        if not self.inference.takes_call_arguments(function):
            return []
        calls = list(self.inference.calls_of(function))
        if isinstance(function.node, cst.Lambda):
            seen = {id(call) for call in calls}
            calls.extend(call for call in self._lambda_calls(function.node) if id(call) not in seen)
            self._call_sites[key] = calls
            return calls
        cls = function.cls
        if function.kind == "method" and cls is not None and function.model is self.model:
            seen = {id(call) for call in calls}
            for call in self.analysis.nodes_of(cst.Call):
                func = call.func
                if id(call) in seen:
                    continue
                if function.name == "__init__":
                    callee = self.inference.infer(func)
                    if callee is not None and callee.kind is Kind.CLASS and callee.cls is cls:
                        calls.append(call)
                elif function.name == "__call__":  # `obj(x)` of an instance
                    callee = self.value_of(func)
                    if callee is not None and callee.kind is Kind.INSTANCE \
                            and self._inherits(callee.cls, cls, function.name):
                        calls.append(call)
                elif isinstance(func, cst.Attribute) and func.attr.value == function.name:
                    receiver = self.value_of(func.value)
                    if receiver is not None and receiver.kind in (Kind.INSTANCE, Kind.MODULE) \
                            and self._inherits(receiver.cls, cls, function.name):
                        calls.append(call)
        self._call_sites[key] = calls
        return calls

    def _lambda_calls(self, lam: cst.Lambda) -> list[cst.Call]:
        """The calls of a lambda: of the name it is bound to (``f = lambda o: ..`` then
        ``f(out)``), or, handed to a function of this file, of the parameter that receives it
        (``fn(out)``) or of the attribute that parameter is kept in (``self._metric = metric``
        then ``self._metric(preds)`` in the methods of the class)."""
        parent = self.model.parent(lam)
        found: list[cst.Call] = []
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target.value
            for call in self.analysis.nodes_of(cst.Call):
                if isinstance(call.func, cst.Name) and call.func.value == name:
                    bindings = self.model.resolve(call.func)
                    if bindings and all(binding.value is lam for binding in bindings):
                        found.append(call)
            return found
        received = self._received(parent) if isinstance(parent, cst.Arg) else None
        if received is None:
            return found
        function, _name, reads = received
        for read in reads:
            up = self.model.parent(read)
            if isinstance(up, cst.Call) and up.func is read:
                found.append(up)
            elif isinstance(up, cst.Assign) and up.value is read and len(up.targets) == 1 and function.cls is not None \
                    and isinstance(up.targets[0].target, cst.Attribute) and function.self_name is not None \
                    and dotted(up.targets[0].target.value) == function.self_name:
                attribute = up.targets[0].target.attr.value
                for call in self.analysis.nodes_of(cst.Call):
                    func = call.func
                    if isinstance(func, cst.Attribute) and func.attr.value == attribute \
                            and isinstance(func.value, cst.Name) and self._inherits(self._self_class(func.value),
                                                                                    function.cls, attribute):
                        found.append(call)
        return found

    def _received(self, arg: cst.Arg):
        """The function of this file that ``arg`` is handed to by position, the parameter that
        receives it, and that parameter's reads (``inference.receiving_parameter``), also for
        ``super().__init__(.., arg)`` in a method of a class of this file (the base's method)."""
        found = self.inference.receiving_parameter(arg)
        call = self.model.parent(arg)
        if found is not None or not isinstance(call, cst.Call) or arg.keyword is not None or \
                any(a.star for a in call.args) or not isinstance(call.func, cst.Attribute):
            return found
        inner = call.func.value
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "super"
                and not inner.args):
            return None
        method = self._function_of(call)
        if method is None or method.cls is None or method.cls.model is not self.model:
            return None
        lineage, _whole = self.inference.file_lineage(method.cls, generations=7)
        base = next((cls.methods[call.func.attr.value] for cls in lineage[1:]
                     if call.func.attr.value in cls.methods), None)
        return self.inference.receiving_parameter(arg, base) if base is not None else None

    def _inherits(self, cls, owner: ClassInfo, method: str) -> bool:
        """An instance of ``cls`` runs ``owner``'s ``method``: ``cls`` is ``owner``, or a class of
        this file that extends it (through its bases, a few levels) without defining ``method``."""
        for _ in range(5):
            if cls is owner:
                return True
            if not isinstance(cls, ClassInfo) or cls.model is not self.model or method in cls.methods \
                    or len(cls.node.bases) != 1:
                return False
            base = self.inference.infer(cls.node.bases[0].value)
            cls = base.cls if base is not None and base.kind is Kind.CLASS else None
        return False

    def value_of(self, node: cst.BaseExpression, calls: int = 0) -> Optional[Value]:
        """What the inference knows of ``node``, or else of what it is given: a parameter
        annotated with a class of this file, or passed a known value by a call; an attribute
        ``self.<name>`` by the values assigned to it."""
        value = self.inference.infer(node)
        if value is not None or calls >= _MAX_CALLS:
            return value
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.path:
                return self.value_of(binding.value, calls)
            if binding.kind is not BindingKind.PARAM or not isinstance(binding.definition, FunctionInfo):
                return None
            if isinstance(binding.annotation, cst.Name):
                annotated = self.inference.infer(binding.annotation)
                if annotated is not None and annotated.kind is Kind.CLASS and isinstance(annotated.cls, ClassInfo):
                    return Value(Kind.INSTANCE, cls=annotated.cls)
            function = binding.definition
            index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
            for call in self.call_sites(function):
                argument = _argument(call, binding.name, index) if index >= 0 else None
                passed = self.value_of(argument, calls + 1) if argument is not None else None
                if passed is not None:
                    return passed
            return None
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            cls = self._self_class(node.value)
            if cls is not None:
                assignments = cls.assignments(node.attr.value)
                if len(assignments) == 1:
                    value = tuple_element(assignments[0].value, assignments[0].path)
                    return self.value_of(value, calls) if value is not None else None
        return None

    # --- the analysis ------------------------------------------------------------------

    def _requires(self, node: cst.BaseExpression, depth: int, calls: int) -> Optional[GradSource]:
        key = (id(node), calls, tuple(id(call) for _function, call in self._context))
        if key in self._memo:
            return self._memo[key]
        if depth > _MAX_DEPTH:
            return None
        self._memo[key] = None  # a cycle shows nothing
        found = self._requires_uncached(node, depth + 1, calls)
        self._memo[key] = found
        return found

    def _requires_uncached(self, node: cst.BaseExpression, depth: int, calls: int) -> Optional[GradSource]:
        if isinstance(node, cst.Name):
            return self._name(node, depth, calls)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, depth, calls)
        if isinstance(node, cst.Call):
            return self._call(node, depth, calls)
        if isinstance(node, cst.BinaryOperation):
            if not isinstance(node.operator, _ARITHMETIC) or self.grad_off(node) is not None:
                return None
            return self._requires(node.left, depth, calls) or self._requires(node.right, depth, calls)
        if isinstance(node, cst.UnaryOperation):
            if not isinstance(node.operator, (cst.Minus, cst.Plus)) or self.grad_off(node) is not None:
                return None
            return self._requires(node.expression, depth, calls)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, depth, calls)
        if isinstance(node, cst.IfExp):
            body = self._requires(node.body, depth, calls)
            return body if body is not None and self._requires(node.orelse, depth, calls) is not None else None
        if isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                if not isinstance(element, cst.StarredElement):
                    found = self._requires(element.value, depth, calls)
                    if found is not None:
                        return found
            return None
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self._requires(node.elt, depth, calls)
        return None

    def _name(self, node: cst.Name, depth: int, calls: int) -> Optional[GradSource]:
        bindings = self.model.resolve(node)
        if not bindings:
            return None
        flagged = self._flagged_before(node, bindings)
        if flagged is not None:
            return flagged
        known = self.inference.infer(node)
        if known is not None and known.kind in (Kind.OTHER, Kind.NDARRAY, Kind.NONE):
            return None  # `x.clone() if isinstance(x, torch.Tensor) else np.copy(x)`: not a tensor there
        found: Optional[GradSource] = None
        for binding in _after_loops(bindings, node):
            if binding.node is not None and self.inference.never_runs(binding.node):
                continue  # `if type(src) == Variable: x = src.data`, written for PyTorch 0.3
            here = self._binding(binding, depth, calls)
            if here is None:
                return None  # on one path it is not shown to require grad
            found = found or here
        return found

    def _flagged_before(self, node: cst.Name, bindings) -> Optional[GradSource]:
        """``t.requires_grad = True`` (or ``t.requires_grad_()`` as a statement) written after
        every binding of the name ``node`` reads and before the read, in its scope (not under
        an ``if``): from there on ``t`` is a leaf that requires grad."""
        flags = self._requires_grad_flags()
        name = node.value
        if name not in flags:
            return None
        last = max(binding.node.start for binding in bindings if binding.node is not None) \
            if all(binding.node is not None for binding in bindings) else None
        if last is None:
            return None
        for statement, target in flags[name]:
            if last < statement.start and statement.end <= node.start and \
                    self.model.resolve(target) == bindings and \
                    not any(isinstance(a, (cst.If, cst.IfExp)) and a.start > last
                            for a in ancestors(statement)):
                return GradSource(statement, f"`{self.analysis.snippet(statement)}`, which makes `{name}` require grad")
        return None

    def _requires_grad_flags(self) -> dict:
        """name -> [(statement, the name node)] of ``name.requires_grad = True`` and
        ``name.requires_grad_()`` statements of the file."""
        if self._flags is None:
            self._flags = {}
            if "requires_grad" in self.analysis.text:
                for statement in self.analysis.nodes_of(cst.SimpleStatementLine):
                    for small in statement.body:
                        switch = requires_grad_switch(small.value if isinstance(small, cst.Expr) else small)
                        if switch is not None and switch[1] and isinstance(switch[0], cst.Name):
                            self._flags.setdefault(switch[0].value, []).append((statement, switch[0]))
        return self._flags

    def _binding(self, binding, depth: int, calls: int) -> Optional[GradSource]:
        kind = binding.kind
        if kind is BindingKind.PARAM:
            return self._parameter(binding, depth, calls)
        if binding.value is None or kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN, BindingKind.FOR):
            return None
        value = binding.value
        if kind is BindingKind.FOR and binding.path == (1,) and self._parameters_of(value, "named_parameters"):
            found = self._parameters_of(value, "named_parameters")  # `for name, p in model.named_parameters():`
        elif kind is BindingKind.FOR or binding.iterates:
            found = self._iterated_item(value, binding.path, depth, calls)
        elif binding.path:
            found = self._unpacked(value, binding.path, depth, calls)
        else:
            found = self._requires(value, depth, calls)
        if found is None and kind is BindingKind.AUGASSIGN:
            prior = self.model.prior_binding(binding)
            found = self._binding(prior, depth, calls) if prior is not None else None
        if found is None:
            return None
        return found.then(Step(value, f"`{binding.name}` = `{{code}}`"))

    def _parameters_of(self, iterable: cst.BaseExpression, method: str = "parameters") -> Optional[GradSource]:
        """``model.parameters()`` (or ``named_parameters()``) of a module whose parameters the
        file does not freeze: each item is (holds) a parameter, which requires grad."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value == method:
            module = self.inference.infer(iterable.func.value)
            if module is not None and module.kind is Kind.MODULE and not self.freezes_parameters:
                return GradSource(iterable, f"a parameter of `{self.analysis.snippet(iterable.func.value)}`")
        return None

    def _iterated(self, iterable: cst.BaseExpression, depth: int, calls: int) -> Optional[GradSource]:
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value == "parameters":
            return self._parameters_of(iterable)
        found = self._requires(iterable, depth, calls)
        if found is None and isinstance(iterable, (cst.Name, cst.Attribute)):
            item = self.item_requiring_grad(iterable)  # `for p in self.preds:` of appended outputs
            found = item[1] if item is not None else None
        return found

    def _iterated_item(self, iterable: cst.BaseExpression, path, depth: int, calls: int) -> Optional[GradSource]:
        """The part ``path`` of an item of ``iterable`` (a loop's target): through ``enumerate``
        (item 0 is the count) and ``zip`` (item k is an item of the k-th iterable), down to the
        items of the iterable they wrap; else an item of the iterable itself."""
        while path and path[0] is not None and isinstance(iterable, cst.Call) \
                and isinstance(iterable.func, cst.Name) and not any(arg.star for arg in iterable.args):
            wrapper = self.inference.qualname(iterable.func)
            positional = [arg.value for arg in iterable.args if arg.keyword is None]
            if wrapper == "builtins.enumerate" and positional:
                if path[0] == 0:
                    return None  # `for i, x in enumerate(xs)`: the count
                iterable = positional[0]
            elif wrapper == "builtins.zip" and path[0] < len(positional):
                iterable = positional[path[0]]
            else:
                break
            path = path[1:]
        return self._iterated(iterable, depth, calls)

    def _unpacked(self, value: cst.BaseExpression, path, depth: int, calls: int) -> Optional[GradSource]:
        if None in path:
            return None
        if isinstance(value, (cst.Tuple, cst.List)) and path[0] < len(value.elements):
            element = value.elements[path[0]]
            if isinstance(element, cst.StarredElement):
                return None
            rest = path[1:]
            return self._unpacked(element.value, rest, depth, calls) if rest else \
                self._requires(element.value, depth, calls)
        if _indices_of(value) and path[0] == 1:
            return None  # `values, indices = h.max(1)`
        if isinstance(value, cst.Call):
            function = self._called_function(value)
            if function is not None:  # `scores, labels = trainer.evaluate()`: the item of what it returns
                flow = self if function.model is self.model else getattr(self.analysis.defining(function),
                                                                          "grad_flow", None)
                found = self._returns_require(value, function, flow, depth, calls, path) if flow else None
                if found is None:
                    return None
                step = Step(value, f"`{{code}}` returns what `{function.name}` returns")
                return found.then(step) if flow is self else \
                    GradSource(value, found.told_in(flow.analysis), (step,), located=True)
        return self._requires(value, depth, calls)

    def _called_function(self, node: cst.Call) -> Optional[FunctionInfo]:
        """The function of the project that the call ``node`` runs: a function or method (of a
        class that is no module) of this file or another, or the ``__call__`` of an object's class."""
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        imported = self.inference.project_function(func)
        if imported is not None:
            return imported if isinstance(imported.node, cst.FunctionDef) else None
        callee = self.value_of(func)
        if callee is None:
            return None
        if callee.kind is Kind.FUNCTION and isinstance(callee.function, FunctionInfo):
            return callee.function if isinstance(callee.function.node, cst.FunctionDef) else None
        if callee.kind is Kind.INSTANCE and isinstance(callee.cls, ClassInfo):
            method = self.inference.method_of(callee.cls, "__call__")
            return method if method is not None and isinstance(method.node, cst.FunctionDef) else None
        return None

    def _parameter(self, binding, depth: int, calls: int) -> Optional[GradSource]:
        """A parameter that a call of this file passes a tensor requiring grad, on that call."""
        function = binding.definition
        if calls >= _MAX_CALLS or not isinstance(function, FunctionInfo) or binding.param_index < 0 \
                or binding.path == (None,) or not isinstance(binding.node, cst.Param):
            return None
        index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
        if index < 0:
            return None
        hooked = self._hook_output(function, index)
        if hooked is not None:
            return hooked.then(Step(binding.node, f"`{binding.name}` is the output the forward hook receives"))
        for level in range(len(self._context) - 1, -1, -1):
            if self._context[level][0] == id(function.node):  # the result of this call is read: its argument
                call = self._context[level][1]
                argument = _argument(call, binding.name, index)
                if argument is None:
                    return None
                inner, self._context = self._context, self._context[:level]
                try:
                    found = self._requires(argument, depth, calls + 1)
                finally:
                    self._context = inner
                return found.then(Step(argument, f"the call passes `{{code}}` for the parameter "
                                                 f"`{binding.name}` of `{function.name}`")) if found else None
        for call in self.call_sites(function):
            if self.grad_off(call) is not None:
                continue
            argument = _argument(call, binding.name, index)
            if argument is None:
                continue
            found = self._requires(argument, depth, calls + 1)
            if found is not None:
                return found.then(Step(argument, f"a call of `{function.name}` passes `{{code}}` for its "
                                                 f"parameter `{binding.name}`"))
        for other, call in self.analysis.callers_elsewhere(function):  # `log_outputs(out)` in train.py
            flow = other.grad_flow
            argument = _argument(call, binding.name, index) if flow.grad_off(call) is None else None
            found = flow._requires(argument, 0, calls + 1) if argument is not None else None
            if found is not None:
                return GradSource(binding.node, f"{found.told_in(other)}, passed for `{binding.name}` by "
                                                f"`{other.snippet(call)}` ({other.location(call)})", located=True)
        return None

    def _attribute(self, node: cst.Attribute, depth: int, calls: int) -> Optional[GradSource]:
        attribute = node.attr.value
        if attribute in ("data", "grad"):
            return None
        if attribute in _SAME_GRAPH_ATTRIBUTES:
            return self._requires(node.value, depth, calls)
        if attribute in torch_api.MODEL_OUTPUT_FIELDS:  # `model(**inputs).last_hidden_state` (no tensor's)
            found = self._requires(node.value, depth, calls)
            if found is not None:
                return found
        owner = self.value_of(node.value)
        if owner is not None and owner.kind is Kind.MODULE:
            if not self.freezes_parameters and self._is_parameter(owner, attribute, node):
                return GradSource(node, f"a parameter of `{self.analysis.snippet(node.value)}`")
            return None
        if isinstance(node.value, cst.Name):
            cls = self._self_class(node.value)
            if cls is not None:
                values = [tuple_element(a.value, a.path) for a in cls.assignments(attribute)]
                if not values or None in values:
                    return None
                found = None
                for value in values:
                    here = self._requires(value, depth, calls)
                    if here is None:
                        return None
                    found = found or here.then(Step(value, f"`self.{attribute}` = `{{code}}`"))
                return found
        return None

    def _is_parameter(self, owner, attribute: str, node: cst.Attribute) -> bool:
        """``owner.<attribute>`` is a parameter: a torch layer's ``weight``/``bias`` (or a
        module of this file with ``nn.Parameter`` assigned to it)."""
        if owner.qualname:
            fact = torch_facts.fact(owner.qualname)
            return fact is not None and fact.parameters is True and attribute in ("weight", "bias")
        cls = owner.cls
        if isinstance(cls, ClassInfo):
            return any(a.value is not None and isinstance(a.value, cst.Call)
                       and (self.inference.qualname(a.value.func) or "").endswith("nn.Parameter")
                       and not _made_frozen(a.value) for a in cls.assignments(attribute))
        return False

    def _subscript(self, node: cst.Subscript, depth: int, calls: int) -> Optional[GradSource]:
        if _indices_of(node.value) and len(node.slice) == 1:
            index = node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value != "0":
                return None  # `h.max(1)[1]`
        entry = self._dict_entry(node, depth, calls) or self._stored_entry(node, depth, calls) \
            or self._keyword_entry(node, depth, calls)
        if entry is not None:
            return entry
        if isinstance(node.value, cst.Call) and self.inference.qualname(node.value.func) in _COPYING_BUILTINS:
            return self.container_requires_grad(node.value)  # `list(out)[0]`: a row of `out`
        value = self.inference.infer(node.value)
        if value is not None and value.kind in (Kind.DICT, Kind.OTHER, Kind.NDARRAY, Kind.NONE):
            return None
        return self._requires(node.value, depth, calls)

    def _dict_entry(self, node: cst.Subscript, depth: int, calls: int) -> Optional[GradSource]:
        """``states[key]`` of a dict written out (`self.states = {"pred": out, ..}`, read as
        `trainer.states[name]` too), where the key is a string or a loop over strings: the
        entry of one of those keys requires grad (the loop reaches it)."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        key = node.slice[0].slice.value
        keys = _literal_keys(key, self.model)
        literals = self._dict_literals(node.value)
        if not keys and _iterates_keys_of(key, node.value, self.model) and not _filtered(node, key):
            # `for key in d: d[key]`: the loop reads every entry the dict is written with
            keys = {element.key.value[1:-1] for literal in literals for element in literal.elements
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)}
        if not keys:
            return None
        for literal in literals:
            for element in literal.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                        and element.key.value[1:-1] in keys:
                    found = self._requires(element.value, depth, calls)
                    if found is not None:
                        return found.then(Step(element.value, f"the entry {element.key.value} is `{{code}}`"))
        return None

    def _keyword_entry(self, node: cst.Subscript, depth: int, calls: int) -> Optional[GradSource]:
        """``kwargs[key]`` of a function's ``**kwargs``: the keyword argument of that name its
        calls pass (``star_calls``), or, where ``key`` is the variable of a loop over
        ``kwargs`` that skips none of them (but those a test of the entry's torch type lets
        through), any keyword argument beyond its named parameters."""
        owner = node.value
        if not isinstance(owner, cst.Name) or len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        bindings = self.model.resolve(owner)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or bindings[0].path != (None,):
            return None
        function = bindings[0].definition
        if not isinstance(function, FunctionInfo) or bindings[0].node is not function.node.params.star_kwarg:
            return None
        key = node.slice[0].slice.value
        keys = _literal_keys(key, self.model)
        if not keys and not (_iterates_keys_of(key, owner, self.model) and self._every_tensor_entry(node, key)):
            return None
        named = {param.name.value for param in function.positional_params()} | {
            param.name.value for param in function.node.params.kwonly_params}
        for call, _receiver in self.star_calls(function):
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value in named or (keys and arg.keyword.value not in keys):
                    continue
                found = self._requires(arg.value, depth, calls + 1)
                if found is not None:
                    return found.then(Step(arg.value, f"a call of `{function.name}` passes `{{code}}` for "
                                                      f"`{arg.keyword.value}`, an entry of `{owner.value}`"))
        return None

    def _every_tensor_entry(self, node: cst.Subscript, key: cst.Name) -> bool:
        """``node`` (``kwargs[k]``) runs in the loop over ``k`` for every entry, or for every
        entry that is a torch object: the only ``if`` around it tests the entry's type
        against torch (``if type(kwargs[k]).__module__.startswith('torch'):``, ``isinstance(
        kwargs[k], torch.Tensor)``), and nothing skips or stops the loop."""
        entry = self.analysis.snippet(node)
        for ancestor in ancestors(node):
            if isinstance(ancestor, cst.For):
                return isinstance(ancestor.target, cst.Name) and ancestor.target.value == key.value and not any(
                    isinstance(inner, (cst.Continue, cst.Break)) for inner in iter_nodes(ancestor.body))
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                test = self.analysis.snippet(ancestor.test)
                if not (re.search(rf"\b(?:type|isinstance|is_tensor)\(\s*{re.escape(entry)}", test)
                        and re.search(r"\btorch\b|\bTensor\b", test) and not re.search(r"\bnot\b|!=", test)):
                    return False
            elif isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.While, cst.Try, cst.BooleanOperation)):
                return False
        return False

    def _stored_entry(self, node: cst.Subscript, depth: int, calls: int) -> Optional[GradSource]:
        """``d[key]`` of a dict bound once to `{}` and filled only by `d[k] = value` statements
        (in any function of the file: a forward hook's `activations[name] = output`), every
        value stored requiring grad: whichever key is read, its entry does."""
        stored = self._stored_values(node.value)
        if not stored:
            return None
        found = None
        for subscript, value in stored:
            here = self._requires(value, depth, calls)
            if here is None:
                return None
            found = found or here.then(Step(value, f"`{self.analysis.snippet(subscript)}` = `{{code}}`"))
        return found

    def _stored_values(self, node: cst.BaseExpression) -> list:
        """(subscript, value) of every ``d[k] = value`` filling the dict ``node`` names, when
        it is bound once to ``{}`` and filled only that way; else empty."""
        if not isinstance(node, cst.Name):
            return []
        bindings = self.model.resolve(node)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                or not isinstance(bindings[0].value, cst.Dict) or bindings[0].value.elements:
            return []
        name = node.value
        if re.search(rf"(?<![\w.]){re.escape(name)}\s*\.\s*(?:update|setdefault|__setitem__)\b", self.analysis.text):
            return []
        stored = []
        for assign in self.analysis.nodes_of(cst.Assign):
            for target in assign.targets:
                subscript = target.target
                if isinstance(subscript, cst.Subscript) and isinstance(subscript.value, cst.Name) \
                        and subscript.value.value == name and self.model.resolve(subscript.value) == bindings:
                    if len(assign.targets) != 1:
                        return []
                    stored.append((subscript, assign.value))
        return stored

    def _dict_literals(self, node: cst.BaseExpression, calls: int = 0) -> list:
        """The dicts written out that ``node`` may be: bound to a name, assigned to an
        attribute of an instance of this file's class, passed for a parameter (one level),
        returned by a function of this file or the `forward` of a module of it, called
        while gradients are on (`outputs = net(x)` of a `forward` that returns `{"logits": ..}`)."""
        values = []
        if isinstance(node, cst.Dict):  # written out in place (`render({"out": out})`)
            values = [node]
        elif isinstance(node, cst.Call) and calls < _DICT_HOPS and self.grad_off(node) is None:
            callee = self.value_of(node.func)
            function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
            if callee is not None and callee.kind is Kind.MODULE and isinstance(callee.cls, ClassInfo):
                function = self.inference.method_of(callee.cls, "forward")
            if isinstance(function, FunctionInfo) and function.model is self.model and not function.is_generator \
                    and isinstance(function.node, cst.FunctionDef) and function.returns \
                    and not any(self.inference.grad_disabled(returned) for returned in function.returns):
                for returned in function.returns:
                    values.extend(self._dict_literals(returned, calls + 1) if isinstance(returned, cst.Name)
                                  else [returned])
        elif isinstance(node, cst.Name):
            for binding in self.model.resolve(node):
                if binding.kind is BindingKind.ASSIGN and not binding.path:
                    values.extend(self._dict_literals(binding.value, calls) if isinstance(binding.value, cst.Call)
                                  else [binding.value])
                elif binding.kind is BindingKind.PARAM and isinstance(binding.definition, FunctionInfo) \
                        and calls < _DICT_HOPS and binding.param_index >= 0:
                    function = binding.definition
                    index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
                    for call in self.call_sites(function):
                        argument = _argument(call, binding.name, index) if index >= 0 else None
                        if argument is not None:
                            values.extend(self._dict_literals(argument, calls + 1))
        elif isinstance(node, cst.Attribute):
            owner = None
            if isinstance(node.value, cst.Name):
                owner = self._self_class(node.value)
            if owner is None:
                value = self.value_of(node.value)
                owner = value.cls if value is not None and value.kind is Kind.INSTANCE and \
                    isinstance(value.cls, ClassInfo) else None
            if owner is not None:
                values = [tuple_element(a.value, a.path) for a in owner.assignments(node.attr.value)]
        return [value for value in values if isinstance(value, cst.Dict) and value.elements]

    def _call(self, node: cst.Call, depth: int, calls: int) -> Optional[GradSource]:
        requires = keyword(node, "requires_grad")
        func = node.func
        if requires is not None:
            if isinstance(requires, cst.Name) and requires.value == "True":
                return GradSource(node, f"`{self.analysis.snippet(node)}`, made with requires_grad=True")
            return None
        if isinstance(func, cst.Attribute):
            receiver = self.inference.infer(func.value)
            if receiver is not None and receiver.kind is Kind.TENSOR:
                return self._method(node, func.attr.value, depth, calls)
            if receiver is None and torch_facts.method(func.attr.value) is not None \
                    and self.inference.qualname(func) is None:
                return self._method(node, func.attr.value, depth, calls)  # a tensor if it requires grad
        qualname = self.inference.qualname(func)
        if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):  # `p = nn.Parameter(torch.randn(3))`
            if _made_frozen(node) or self.freezes_parameters:
                return None
            return GradSource(node, f"`{self.analysis.snippet(node)}`, a parameter (it requires grad)")
        if qualname is not None and not qualname.startswith(("torch.", "numpy.", "builtins.")):
            imported = self.inference.project_function(func)  # a function of another module of the project
            if imported is not None:
                return self._imported_result(node, imported, calls)
        if qualname is not None:
            return self._function(node, qualname, depth, calls)
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.DISTRIBUTION_METHODS:
            found = self._distribution(node, func, depth, calls)
            if found is not None:
                return found  # else a method of that name of a class of this file (a flow's `log_prob`)
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            owner = self.value_of(func.value)  # `model.forward(x)` runs the module as `model(x)` does
            if owner is not None and owner.kind is Kind.MODULE:
                return self._module_call(node, owner, depth, calls)
        callee = self.value_of(func)
        if callee is None or callee.kind is Kind.EXTERNAL:
            loaded = self._loaded_model(func)  # `model = torch.load(path)` ... `model(x)`
            if loaded is not None and self.grad_off(node) is None and not self.freezes_parameters:
                return GradSource(node, f"the output of `{self.analysis.snippet(func)}`, a model loaded whole "
                                        f"with `{self.analysis.snippet(loaded.func)}` (its parameters require grad)")
        if callee is None:
            return None
        if callee.kind is Kind.MODULE:
            return self._module_call(node, callee, depth, calls)
        if callee.kind is Kind.FUNCTION and isinstance(callee.function, FunctionInfo):
            if callee.function.model is not self.model:  # `estimator.predict_proba(x)` of an imported class
                return self._imported_result(node, callee.function, calls)
            return self._function_result(node, callee.function, depth, calls)
        if callee.kind is Kind.INSTANCE and isinstance(callee.cls, ClassInfo):
            method = self.inference.method_of(callee.cls, "__call__")  # `scattering(y)` runs its `__call__`
            if method is not None:
                return self._function_result(node, method, depth, calls)
        return None

    def _method(self, node: cst.Call, method: str, depth: int, calls: int) -> Optional[GradSource]:
        receiver = node.func.value  # type: ignore[attr-defined]
        if method == "requires_grad_":
            flag = node.args[0].value if node.args else None
            if flag is None or (isinstance(flag, cst.Name) and flag.value == "True"):
                return GradSource(node, f"`{self.analysis.snippet(node)}`, which sets requires_grad")
            return None
        if method in CUT_METHODS or method in _NO_GRAD_METHODS or method.startswith("new_"):
            return None
        fact = torch_facts.method(method)
        if fact is not None and fact.returns in ("other", "none", "ndarray"):
            return None  # `h.size(0)`, `h.dim()`: not a tensor
        if self.grad_off(node) is not None and not _may_be_self(method):
            return None
        found = self._requires(receiver, depth, calls)
        if found is not None:
            return found
        for arg in node.args:
            if arg.keyword is None and not arg.star:
                found = self._requires(arg.value, depth, calls)
                if found is not None:
                    return found
        return None

    def _function(self, node: cst.Call, qualname: str, depth: int, calls: int) -> Optional[GradSource]:
        if qualname == "torch.autograd.grad":
            create = keyword(node, "create_graph")
            if create is None or not (isinstance(create, cst.Name) and create.value == "True") or not node.args:
                return None  # gradients made without a graph of their own
            return self._requires(node.args[0].value, depth, calls)
        if qualname == "builtins.sum" and node.args and node.args[0].keyword is None and not node.args[0].star \
                and isinstance(node.args[0].value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.List,
                                                    cst.Tuple, cst.ListComp)) and self.grad_off(node) is None:
            found = self.container_requires_grad(node.args[0].value)  # `sum(epoch_losses)` adds the tensors up
            return found.then(Step(node, "`{code}` adds up the tensors of the list")) if found is not None else None
        if not qualname.startswith("torch.") or qualname in torch_api.NEW_LEAF_FUNCTIONS \
                or qualname in _NO_GRAD_FUNCTIONS or torch_api.is_tensor_type(qualname):
            if qualname == "torch.autograd.Variable" and node.args:
                return self._requires(node.args[0].value, depth, calls)  # `Variable(t)` is `t`
            return None
        fact = torch_facts.fact(qualname)
        if fact is not None and (fact.factory or fact.differentiable is False or fact.returns in ("other", "none")):
            return None
        if self.grad_off(node) is not None:
            return None
        if fact is not None and fact.kind == "module_class":
            return None  # the construction of a layer
        for arg in node.args:
            if arg.star or (arg.keyword is not None and arg.keyword.value not in ("input", "other", "tensors")):
                continue
            found = self._requires(arg.value, depth, calls)
            if found is None and qualname in _JOINS and arg is node.args[0] and \
                    isinstance(arg.value, (cst.Name, cst.Attribute, cst.Call)):
                # `torch.cat(preds)` of appended outputs, `torch.cat(list(d.values()))`
                found = self.container_requires_grad(arg.value)
            if found is not None:
                return found
        return None

    def _distribution(self, node: cst.Call, func: cst.Attribute, depth: int, calls: int) -> Optional[GradSource]:
        """``dist.log_prob(a)`` of a ``torch.distributions`` object built from tensors that
        require grad (``Categorical(logits=self.actor(state))``): differentiable in them."""
        if not isinstance(func.value, cst.Name) or self.grad_off(node) is not None:
            return None
        bindings = self.model.resolve(func.value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                or not isinstance(bindings[0].value, cst.Call):
            return None
        built = bindings[0].value
        if not (self.inference.qualname(built.func) or "").startswith("torch.distributions."):
            return None
        for arg in built.args:
            if not arg.star:
                found = self._requires(arg.value, depth, calls)
                if found is not None:
                    return found.then(Step(built, f"`{func.value.value}` = `{{code}}`"))
        return None

    def _module_call(self, node: cst.Call, module, depth: int, calls: int) -> Optional[GradSource]:
        if self.grad_off(node) is not None:
            return None
        name = self.analysis.snippet(node.func)
        if module.qualname in torch_api.MODE_SHARING_WRAPPERS:  # `nn.DataParallel(model)` runs `model`
            wrapped = self._made_from(node.func, torch_api.MODE_SHARING_WRAPPERS)
            inner = self.value_of(wrapped.args[0].value) if wrapped is not None else None
            if inner is not None and inner.kind is Kind.MODULE:
                module = inner
        if self._has_parameters(module) and not self.freezes_parameters:
            return GradSource(node, f"the output of `{name}`")
        # A layer without parameters (or frozen ones): its output requires grad when an input does.
        for arg in node.args:
            if not arg.star:
                found = self._requires(arg.value, depth, calls)
                if found is not None:
                    return found
        return None

    def _made_from(self, node: cst.BaseExpression, qualnames) -> Optional[cst.Call]:
        """The call of one of ``qualnames`` (with a positional first argument) that ``node``
        is, through the one assignment of a name and the moves and mode switches that give
        the module back (``model = nn.DataParallel(net).to(device)``), or None."""
        for _ in range(4):
            while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in _SAME_MODULE_METHODS:
                node = node.func.value
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, (cst.Name, cst.Attribute)) and self.inference.qualname(func) in qualnames \
                        and node.args and node.args[0].keyword is None and not node.args[0].star:
                    return node
                return None
            if not isinstance(node, cst.Name):
                return None
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or bindings[0].value is None:
                return None
            node = bindings[0].value
        return None

    def _loaded_model(self, func: cst.BaseExpression) -> Optional[cst.Call]:
        """The ``torch.load(path)`` (or ``torch.jit.load``) call that the module ``func`` names
        was loaded whole by: called, what it gives back is a module, whose parameters require grad."""
        return self._made_from(func, _MODEL_LOADERS) if isinstance(func, cst.Name) else None

    def _has_parameters(self, module: Value) -> Optional[bool]:
        """Whether the module ``module`` has parameters: a torch layer's fact, the layers the
        `__init__` of a class of this file builds (a class of another file, whose layers are
        not read here, is not known to have any), a model (`model: nn.Module`, a stack of
        layers, a model zoo's model); None when not known."""
        qualname = module.qualname
        fact = torch_facts.fact(qualname) if qualname else None
        if isinstance(module.cls, ClassInfo):
            if module.cls.model is not self.model:
                return self._imported_has_parameters(module.cls)
            layers = self.analysis.autograd.parameter_layers(module.cls)
            return layers is None or layers > 0
        if qualname in ("torch.nn.Module", "torch.nn.Sequential") or torch_api.builds_model_with_parameters(qualname):
            return True
        return fact.parameters if fact is not None else None

    @staticmethod
    def _imported_has_parameters(cls: ClassInfo) -> bool:
        """A module class of another module of the project (``from net import Regressor``)
        whose ``__init__`` builds layers with parameters, as that module's own analysis reads
        it, in a module that turns no gradient off."""
        other = getattr(cls.model, "analysis", None)
        if other is None or other.grad_flow.freezes_parameters:
            return False
        layers = other.autograd.parameter_layers(cls)
        return layers is not None and layers > 0

    def _hook_output(self, function: FunctionInfo, param_index: int) -> Optional[GradSource]:
        """The parameter ``output`` (the third) of ``function`` registered as a forward hook
        (`layer.register_forward_hook(hook)`, or the hook a factory of this file returns) on a
        module with parameters (or a part of a model that has some), of a model called in
        this file only while gradients are on: the output of the hooked module requires grad."""
        if param_index != 2 or self.freezes_parameters:
            return None
        for register in self._forward_hooks().get(id(function), ()):
            hooked = register.func.value  # type: ignore[attr-defined]
            module = self.value_of(hooked)
            if module is None or module.kind is not Kind.MODULE:
                continue
            root = hooked
            while isinstance(root, (cst.Attribute, cst.Subscript)):  # `model.layer4`, `net[0]`
                root = root.value
            known = self._has_parameters(module)
            if known is None and root is not hooked:
                owner = self.value_of(root)
                known = owner is not None and owner.kind is Kind.MODULE and bool(self._has_parameters(owner))
            if not known or not isinstance(root, cst.Name):
                continue
            bindings = set(map(id, self.model.resolve(root)))
            runs = [call for call in self.analysis.nodes_of(cst.Call) if isinstance(call.func, cst.Name)
                    and call.func.value == root.value and bindings & set(map(id, self.model.resolve(call.func)))]
            if runs and not any(self.runs_without_grad(call) for call in runs):
                return GradSource(register, f"the output of `{self.analysis.snippet(hooked)}`, which the hook "
                                            f"receives")
        return None

    def _forward_hooks(self) -> dict[int, list[cst.Call]]:
        """The `register_forward_hook(..)` calls of this file, by the function each registers."""
        if self._hooks is None:
            self._hooks = {}
            for call in self.analysis.nodes_of(cst.Call):
                func = call.func
                if not (isinstance(func, cst.Attribute) and func.attr.value == "register_forward_hook"
                        and call.args and call.args[0].keyword is None and not call.args[0].star):
                    continue
                hook = self.value_of(call.args[0].value)
                if hook is not None and hook.kind is Kind.FUNCTION and isinstance(hook.function, FunctionInfo):
                    self._hooks.setdefault(id(hook.function), []).append(call)
        return self._hooks

    def _function_result(self, node: cst.Call, function: FunctionInfo, depth: int,
                         calls: int) -> Optional[GradSource]:
        """A call of this file's function: every value it returns requires grad."""
        if function.model is not self.model:
            return None
        found = self._returns_require(node, function, self, depth, calls)
        return found.then(Step(node, f"`{{code}}` returns what `{function.name}` returns")) if found else None

    def _imported_result(self, node: cst.Call, function: FunctionInfo, calls: int) -> Optional[GradSource]:
        """A call of a function of another module of the project (``from models import
        threshold``): every value it returns requires grad, as that module's analysis sees it
        (without this file's arguments)."""
        other = self.analysis.defining(function)
        if other is None:
            return None
        found = self._returns_require(node, function, other.grad_flow, 0, calls)
        return GradSource(node, found.told_in(other), (Step(node, f"`{{code}}` returns what `{function.name}` returns"),),
                          located=True) if found else None

    def _returns_require(self, node: cst.Call, function: FunctionInfo, flow: "GradFlow", depth: int,
                         calls: int, path: tuple = ()) -> Optional[GradSource]:
        """Where the gradient of every value ``function`` returns comes from, as ``flow`` (the
        analysis of the module that defines it) sees it; None unless each requires grad. With
        ``path``, of the item at that place of each (``return scores, labels`` for ``(1,)``)."""
        if not isinstance(function.node, cst.FunctionDef) or function.is_generator or not function.returns \
                or calls >= _MAX_CALLS or self.grad_off(node):
            return None
        if any(flow.inference.grad_disabled(returned) is not None for returned in function.returns):
            return None
        outer = flow._context
        if flow is self and not any(arg.star for arg in node.args):
            flow._context = outer + ((id(function.node), node),)  # its parameters hold what `node` passes
        try:
            found = None
            for returned in function.returns:
                here = flow._unpacked(returned, path, depth, calls + 1) if path else \
                    flow._requires(returned, depth, calls + 1)
                if here is None:
                    return None
                found = found or here
            return found
        finally:
            flow._context = outer

    # --- regions and facts of the file ---------------------------------------------------

    @property
    def freezes_parameters(self) -> bool:
        """The file turns gradients of parameters off somewhere (``requires_grad = False``,
        ``requires_grad_(False)``): which layers train is then not known from the text."""
        if self._freezes is None:
            self._freezes = _FREEZES.search(self.analysis.text) is not None
        return self._freezes

    def _function_of(self, node: cst.CSTNode) -> Optional[FunctionInfo]:
        for ancestor in ancestors(node):
            if isinstance(ancestor, cst.FunctionDef):
                return self.model.functions.get(id(ancestor))
        return None

    def _self_class(self, name: cst.Name) -> Optional[ClassInfo]:
        for binding in self.model.resolve(name):
            function = binding.scope.function
            if binding.kind is BindingKind.PARAM and function is not None and function.cls is not None \
                    and function.self_name == name.value and function.kind == "method":
                return function.cls
        return None


def node_root(node: cst.BaseExpression) -> cst.BaseExpression:
    """The name an attribute chain starts from (``self`` of ``self.body.log_probs``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


def _list_written(value: Optional[cst.BaseExpression]) -> Optional[cst.List]:
    """The list written out that ``value`` is, also repeated (``[None] * n``), or None."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        value = value.left if isinstance(value.left, cst.List) else value.right
    return value if isinstance(value, cst.List) else None


def _after_loops(bindings: list, use: cst.Name) -> list:
    """The bindings of ``bindings`` that may reach ``use``, less those made before a ``for``
    loop (not holding ``use``) whose body binds the name again on every pass before any
    ``break`` or ``continue``: after the loop, the name holds what its last pass bound
    (``u = ones(..)`` then ``for it in range(n): u = a / kv`` then ``np.log(u)``), the
    loop running at least once."""
    if len(bindings) < 2 or any(binding.node is None for binding in bindings):
        return bindings
    replaced = None
    for binding in bindings:
        loop = _every_pass_binds(binding.node)
        if loop is not None and loop.end <= use.start and (replaced is None or loop.start < replaced):
            replaced = loop.start
    if replaced is None:
        return bindings
    kept = [binding for binding in bindings if binding.node.start >= replaced]
    return kept or bindings


def _every_pass_binds(node: cst.CSTNode) -> Optional[cst.For]:
    """The ``for`` loop whose every pass runs ``node`` (a binding): it sits in the loop's
    body outside any branch, and no ``break``/``continue`` of the loop comes before it."""
    child = node
    for ancestor in ancestors(node):
        if isinstance(ancestor, cst.For):
            if child is not ancestor.body or (isinstance(ancestor.iter, (cst.List, cst.Tuple))
                                              and not ancestor.iter.elements):
                return None
            for inner in iter_nodes(ancestor.body):
                if isinstance(inner, (cst.Break, cst.Continue)) and inner.start < node.start \
                        and not any(isinstance(a, (cst.For, cst.While)) and a is not ancestor
                                    for a in _ancestors_up_to(inner, ancestor)):
                    return None
            return ancestor
        if isinstance(ancestor, (cst.If, cst.Else, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler,
                                 cst.ExceptStarHandler, cst.Match, cst.IfExp, cst.BooleanOperation, cst.Lambda,
                                 cst.FunctionDef, cst.ClassDef, cst.ListComp, cst.SetComp, cst.DictComp,
                                 cst.GeneratorExp, cst.Module)):
            return None
        child = ancestor
    return None


def _ancestors_up_to(node: cst.CSTNode, top: cst.CSTNode) -> list:
    found = []
    for ancestor in ancestors(node):
        if ancestor is top:
            break
        found.append(ancestor)
    return found


def _indices_of(value: cst.BaseExpression) -> bool:
    """``h.max(1)``, ``h.topk(k)``, ``torch.sort(h)``: a (values, indices) pair."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value in _WITH_INDICES and bool(value.args)


def _may_be_self(method: str) -> bool:
    """Under ``no_grad``, a method that may give its receiver itself (``.cpu()`` on a CPU
    tensor, ``.to(device)``) or a view keeps a parameter's ``requires_grad``."""
    return method in _MAYBE_SELF


_MAYBE_SELF = torch_facts.methods(aliasing={"maybe_self", "view", "maybe_view"})


def _literal_keys(key: cst.BaseExpression, model) -> set[str]:
    """The strings ``key`` is: a string, or a loop variable over a tuple or list of strings."""
    if isinstance(key, cst.SimpleString):
        return {key.value[1:-1]}
    if not isinstance(key, cst.Name):
        return set()
    bindings = model.resolve(key)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.FOR or bindings[0].path:
        return set()
    iterable = bindings[0].value
    if not isinstance(iterable, (cst.Tuple, cst.List)) or not all(
            isinstance(element.value, cst.SimpleString) for element in iterable.elements
            if not isinstance(element, cst.StarredElement)):
        return set()
    return {element.value.value[1:-1] for element in iterable.elements}


def _iterates_keys_of(key: cst.BaseExpression, container: cst.BaseExpression, model) -> bool:
    """``key`` is the variable of a loop over the keys of ``container`` itself (``for key in
    d:``, ``for key in d.keys():``), in a loop that does not skip some of them."""
    if not isinstance(key, cst.Name) or not isinstance(container, (cst.Name, cst.Attribute)):
        return False
    bindings = model.resolve(key)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.FOR or bindings[0].path:
        return False
    iterable = bindings[0].value
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value == "keys" and not iterable.args:
        iterable = iterable.func.value
    name = dotted(container)
    return name is not None and isinstance(iterable, (cst.Name, cst.Attribute)) and dotted(iterable) == name


def _filtered(node: cst.CSTNode, key: cst.Name) -> bool:
    """``node`` runs for some values of the loop variable ``key`` only: under an ``if`` (or
    after a ``continue``/``break``) of the loop over it."""
    for ancestor in ancestors(node):
        if isinstance(ancestor, cst.For):
            if isinstance(ancestor.target, cst.Name) and ancestor.target.value == key.value:
                return any(isinstance(inner, (cst.Continue, cst.Break)) for inner in iter_nodes(ancestor.body))
        elif isinstance(ancestor, (cst.If, cst.IfExp)):
            return True
        elif isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return True
    return True


def _made_frozen(parameter: cst.Call) -> bool:
    """``nn.Parameter(t, requires_grad=False)`` (or ``nn.Parameter(t, False)``)."""
    flag = keyword(parameter, "requires_grad")
    if flag is None and len(parameter.args) > 1 and parameter.args[1].keyword is None:
        flag = parameter.args[1].value
    return flag is not None and is_false(flag)


def _argument(call: cst.Call, name: str, index: int) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in positional[: index + 1]):
        return None
    return positional[index].value if index < len(positional) else None
