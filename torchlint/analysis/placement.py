"""Where knowable, the dtype and the device of a tensor: the placement analysis.

Two mistakes people make while writing training code, both a RuntimeError at the first batch:

    weight = torch.tensor(counts.sum() / counts)     # numpy division: float64
    criterion = nn.CrossEntropyLoss(weight=weight)   # "expected scalar type Float but found Double"

    class Decoder(nn.Module):
        def __init__(self):
            self.mask = torch.triu(torch.ones(9, 9))   # a plain attribute: not a buffer
    model = Decoder().to(device)                       # moves parameters and buffers only

The dtype side follows a value back through names, attributes of ``self`` and of instances
of this file's classes, returns of this file's functions, parameters (from their call sites,
one level), loops over literal sequences and numpy arithmetic, to the call that fixed its
dtype (``np.random.randn``: float64; ``torch.full((n,), 1)``: int64), and says so in
``Dtype.why``.  It answers only when every way the value can come gives the same dtype.

The device side knows which of this file's ``nn.Module`` classes are moved (``.to(device)``,
``.cuda()``; a class whose instance is a submodule of a moved one is moved with it) and finds,
in those classes, tensors that the move leaves behind: plain tensor attributes made while
the module is built, and tensors made in ``forward`` without ``device=`` that meet the
module's layers.

What a call gives (which numpy functions are float64, which layers hold float32 weights)
comes from the facts in ``torch_api``; this module knows only what flows where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import dotted, keyword
from torchlint.syntax.walk import ancestors, enclosing_code, in_branch, iter_nodes
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import Binding, BindingKind, ClassInfo, FunctionInfo
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

_MAX_DEPTH = 24
# A module class that moves itself (`self.to(device)` in `__init__`) or defines its own move.
_MOVES = re.compile(r"\.(?:to|cuda)\s*\(")
_MADE_ON_A_DEVICE = re.compile(r"\bdevice\s*=\s*(?!None\b)")  # `torch.arange(n, device="cuda")`
_FACTORY_CALL = re.compile(r"\b(?:zeros|ones|rand|randn|randint|arange|empty|full|eye|linspace|tensor|"
                           r"Tensor|FloatTensor|LongTensor|from_numpy|as_tensor)\s*\(")
_MOVES_ITSELF = re.compile(r"\.(?:to|cuda|_apply)\s*\(|def (?:to|cuda)\b")
# Module methods that return the module itself, where it is (`model = model.eval()`).
_PLACE_KEEPING_MODULE_METHODS = ("train", "eval", "float", "half", "double")
_ITERATING_BUILTINS = frozenset({"zip", "enumerate", "iter", "list", "tuple", "len", "sorted", "reversed", "map"})
_FLOATS = ("float16", "bfloat16", "float32", "float64")
# The numbers pandas reads from text: float64, or int64 for whole numbers; not float32.
READ_NUMBERS = "float64 or int64"
_INTEGERS = ("bool", "uint8", "int8", "int16", "int32", "int64")


@dataclass(frozen=True)
class Dtype:
    """What is known of a value's dtype: ``name`` (``float64``, ``int64``..., or
    ``READ_NUMBERS``), what holds it (``tensor``, ``array``, ``frame`` for a pandas DataFrame or
    Series, ``number`` for a Python int/float, ``none`` for None), the call that fixed it and why."""

    name: str
    holder: str
    origin: Optional[cst.CSTNode] = None
    why: str = ""
    # The dtype was chosen at ``origin`` (a `dtype=`, a conversion, a fill value), so a fix
    # belongs there; not for calls whose dtype is their nature (`torch.randint`: class ids).
    chosen: bool = False
    # Where the value leaves the file's data pipeline for a `DataLoader`'s batches: the item a
    # `Dataset` class's `__getitem__` returns (`default_collate` keeps its dtype), the one place
    # that gives every batch its dtype.
    entry: Optional[cst.CSTNode] = None

    @property
    def floating(self) -> bool:
        return self.name in _FLOATS

    @property
    def integer(self) -> bool:
        return self.name in _INTEGERS


_NONE = Dtype("none", "none")


@dataclass(frozen=True)
class DtypeMismatch:
    """``value`` (of dtype ``dtype``) reaches ``sink``, which needs ``needed``: ``what``
    says which argument of which operation (``the class weights of nn.CrossEntropyLoss``)."""

    value: cst.BaseExpression
    dtype: Dtype
    sink: cst.CSTNode
    what: str
    needed: str
    wanted: str = "float32"  # the dtype to convert it to
    # What to do, where converting the value is not the fix (then there is no edit).
    advice: str = ""


@dataclass(frozen=True)
class DeviceMismatch:
    """A tensor that moving the module leaves on the CPU: ``node`` (the assignment of a plain
    attribute, or the call that makes a tensor in ``forward`` without ``device=``), ``made``
    the call that makes it, ``moved`` the ``.to(..)``/``.cuda()`` that moves the module,
    ``used`` where the module computes with it; ``attribute`` is set for a plain attribute."""

    node: cst.CSTNode
    made: cst.CSTNode
    cls: Optional[ClassInfo]
    moved: cst.Call
    used: cst.CSTNode
    attribute: Optional[str] = None
    device_of: Optional[str] = None  # a parameter of the function whose `.device` fits, if any
    # "input": a CPU tensor given to a moved module (``node`` the argument); "weight": the CPU
    # class weights of a loss that meets a moved module's output; "target": a CPU target of
    # a loss given a moved module's output; "module": a module never moved (``node`` its
    # name, ``made`` its construction) given a tensor moved to a device; "met": a tensor made in
    # `forward` without `device=` meeting the module's input or a layer's output (``used``);
    # "tuple": a plain attribute holding a tuple of CPU tensors (an LSTM's `(h0, c0)`: no buffer);
    # "dict": a plain attribute holding a dict of CPU tensors (``node`` the read in `forward`).
    kind: str = ""
    why: str = ""  # how the tensor is known to be on the CPU
    device: Optional[cst.BaseExpression] = None  # the device the module is moved to
    # The move, shown with where it is, when another module of the project moves the module
    # (``moved`` is then a node of that module): "`Net().to(device)` (train.py:12)".
    moved_where: str = ""
    # "cache": a call of the module that ran `forward` (and filled the cache) before the move.
    ran: Optional[cst.Call] = None


class Placement:
    def __init__(self, analysis: "ModuleAnalysis"):
        self.analysis = analysis
        self.model = analysis.model
        self.inference = analysis.inference
        self._memo: dict[int, Optional[Dtype]] = {}
        self._active: set[int] = set()
        self._moved: Optional[dict[int, tuple[ClassInfo, cst.Call]]] = None
        self._imported_moves: Optional[list[tuple[ClassInfo, cst.Call]]] = None
        self._call_site_memo: dict[int, list[cst.Call]] = {}  # a function's call sites, asked per parameter
        self._calls: Optional[list[cst.Call]] = None
        self._default_float32: Optional[bool] = None
        self._mentions_autocast: Optional[bool] = None
        self._called: dict[int, Optional[ClassInfo]] = {}
        self._calls_by_class: Optional[dict[int, list[cst.Call]]] = None
        # Answers of `cpu_origin` and `device_move` per node: a value reached from many call
        # sites is followed once (an answer cut short by depth or a cycle is None: a miss, never a finding).
        self._answers: dict[tuple[str, int], object] = {}
        self._cut_short = False
        # `device_move` of a parameter: at every call site, or (asked where a tensor shown on the CPU
        # whatever the call meets it) at one call site that gives a tensor on a device.
        self._some_call_site = False

    # --- the dtype of an expression ---------------------------------------------------

    def dtype(self, node: cst.CSTNode, depth: int = 0) -> Optional[Dtype]:
        """The dtype ``node`` evaluates to, when every way it can come agrees."""
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if depth > _MAX_DEPTH or key in self._active:
            return None
        self._active.add(key)
        try:
            found = self._dtype(node, depth + 1)
        finally:
            self._active.discard(key)
        self._memo[key] = found
        return found

    def _dtype(self, node: cst.CSTNode, depth: int) -> Optional[Dtype]:
        if isinstance(node, cst.Integer):
            return Dtype("int64", "number", node, "a Python int")
        if isinstance(node, cst.Float):
            return Dtype("float64", "number", node, "a Python float")
        if isinstance(node, cst.UnaryOperation):
            return self.dtype(node.expression, depth)
        if isinstance(node, cst.Name):
            if node.value == "None":
                return _NONE
            return self._combine([self._binding(binding, depth) for binding in self.model.bound_when_run(node)])
        if isinstance(node, cst.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.Subscript):
            found = self.dtype(node.value, depth)
            if found is None:
                found = self._entry(node, (), depth)
                return found if found is not None and found.holder in ("array", "tensor") else None
            return found if found is not None and found.holder in ("array", "tensor", "frame") else None
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, depth) or self._promoted(node, depth)
        if isinstance(node, cst.IfExp):
            return self._combine([self.dtype(node.body, depth), self.dtype(node.orelse, depth)])
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and not isinstance(
                node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            # `torch.rand(n) < p`: a bool tensor (a comparison of a tensor, elementwise)
            sides = (node.left, node.comparisons[0].comparator)
            if any(self.inference.tensor(side) is not None for side in sides) and \
                    all(self.inference.tensor(side) is not None or isinstance(side, (cst.Integer, cst.Float))
                        for side in sides):
                return Dtype("bool", "tensor", node, f"`{_short(self.analysis, node)}` compares tensors: bool")
        return None

    @staticmethod
    def _combine(found: list[Optional[Dtype]]) -> Optional[Dtype]:
        """The one dtype all of ``found`` give (None values aside), or None."""
        known = [item for item in found if item is not _NONE]
        if not known or any(item is None for item in known):
            return _NONE if found and not known else None
        first = known[0]
        if all(item.name == first.name and item.holder == first.holder for item in known):
            return first
        return None

    def _binding(self, binding: Binding, depth: int, path: tuple = ()) -> Optional[Dtype]:
        """The dtype of the name ``binding`` binds (of its item at ``path``, for a tuple)."""
        if binding.kind is BindingKind.ASSIGN and binding.value is not None:
            if binding.iterates:
                return self._element(binding.value, binding.path + path, depth)
            return self._part(binding.value, binding.path + path, depth)
        if binding.kind is BindingKind.FOR and binding.value is not None:
            return self._element(binding.value, binding.path + path, depth)
        if binding.kind is BindingKind.PARAM:
            if path:
                passed = self._passed(binding)
                if passed is None or any(value is None for value in passed):
                    return None
                return self._combine([self._part(value, path, depth + 1) for value in passed])
            return self._parameter(binding, depth)
        return None

    def _part(self, value: cst.BaseExpression, path: tuple, depth: int) -> Optional[Dtype]:
        """The dtype of the item at ``path`` of ``value``: a tuple written out, a name bound to
        one, what a function of this file returns, `next(iter(loader))`."""
        if not path:
            return self.dtype(value, depth)
        if path[0] is None or depth > _MAX_DEPTH:
            return None
        if isinstance(value, (cst.Attribute, cst.Subscript)) or isinstance(value, cst.Call) and \
                isinstance(value.func, cst.Attribute) and value.func.attr.value in torch_api.DTYPE_METHODS:
            whole = self.dtype(value, depth + 1)
            if whole is not None and whole is not _NONE and whole.holder in ("tensor", "array"):
                return whole  # `gi, gj = gij.T`: unpacking a tensor gives its rows, of its dtype
        if isinstance(path[0], str) and isinstance(value, cst.Dict):  # `batch["image"]` of a dict item
            entries = [element for element in value.elements if isinstance(element, cst.DictElement)
                       and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == path[0]]
            if len(entries) != 1 or any(not isinstance(element, cst.DictElement) for element in value.elements):
                return None
            return self._part(entries[0].value, path[1:], depth + 1)
        if isinstance(value, (cst.Tuple, cst.List)) and isinstance(path[0], int):
            if path[0] >= len(value.elements) or isinstance(value.elements[path[0]], cst.StarredElement):
                return None
            return self._part(value.elements[path[0]].value, path[1:], depth + 1)
        if isinstance(value, cst.Name):
            bindings = self.model.bound_when_run(value)
            if not bindings:
                return None
            return self._combine([self._binding(binding, depth + 1, path) for binding in bindings])
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value == "next" and len(value.args) == 1 and \
                    self.inference.qualname(func) in (None, "builtins.next"):
                inner = value.args[0].value
                if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "iter" \
                        and len(inner.args) == 1:
                    return self._element(inner.args[0].value, path, depth + 1)
                return None
            if isinstance(func, cst.Name) and self.inference.qualname(func) is None:
                for binding in self.model.resolve(func):
                    function = binding.definition
                    if isinstance(function, FunctionInfo) and function.returns and not function.is_generator:
                        return self._combine([self._part(returned, path, depth + 1) for returned in function.returns])
            if isinstance(func, cst.Attribute) and self.inference.qualname(func) is None:
                method = self._file_function(func)  # `bx, by = data.sample(n)`: a method of this file
                if method is not None and method.returns and not method.is_generator:
                    return self._combine([self._part(returned, path, depth + 1) for returned in method.returns])
            if self.inference.qualname(func) in torch_api.NUMPY_DTYPE_KEEPING_SPLITS and len(path) == 1:
                arrays = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
                found = self._combine([self.dtype(array, depth + 1) for array in arrays]) if arrays else None
                # `xx, yy = np.meshgrid(ax, ax)`: arrays of their arguments' dtype
                return found if found is not None and found.holder == "array" else None
            if self.inference.qualname(func) in torch_api.ARRAY_SPLITTING_FUNCTIONS and \
                    not any(arg.star for arg in value.args):  # `X_train, X_test, y_train, y_test = split(X, y)`
                arrays = [arg.value for arg in value.args if arg.keyword is None]
                if isinstance(path[0], int) and path[0] // 2 < len(arrays):
                    found = self._part(arrays[path[0] // 2], path[1:], depth + 1)
                    return found if found is not None and found.holder == "array" else None
        return None

    def _element(self, iterable: cst.BaseExpression, path: tuple, depth: int) -> Optional[Dtype]:
        """The dtype of the elements of ``iterable`` at ``path`` (`for x, y in pairs`), where
        the iterable is a list comprehension or list literal of this file, a `DataLoader`
        (its dataset's items, batched), `enumerate`/`zip` of those, through names and
        parameters."""
        whole = self.dtype(iterable, depth + 1)
        if whole is not None and whole is not _NONE and whole.holder in ("array", "tensor"):
            return whole  # the rows of an array or a tensor, and their items, have its dtype
        for _ in range(4):
            if isinstance(iterable, cst.Name):
                bindings = self.model.resolve(iterable)
                if len(bindings) != 1:
                    return None
                binding = bindings[0]
                if binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.iterates:
                    returned = self._returned(binding.value, binding.path)
                    if returned is not None:  # `train_iter, test_iter = load_data(64)`
                        iterable = returned
                        continue
                    if not binding.path:
                        iterable = binding.value
                        continue
                if binding.kind is BindingKind.PARAM:
                    passed = self._passed(binding)
                    if passed is None or len(passed) != 1 or passed[0] is None:
                        return None
                    iterable = passed[0]
                    continue
                return None
            if isinstance(iterable, cst.Attribute):
                cls = self._class_of(iterable.value)
                assignments = cls.assignments(iterable.attr.value) if cls is not None else []
                if len(assignments) != 1 or assignments[0].value is None or assignments[0].path:
                    return None
                iterable = assignments[0].value
                continue
            break
        if isinstance(iterable, cst.Call):
            return self._produced(iterable, path, depth)
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp)):
            element = iterable.elt
        elif isinstance(iterable, cst.List) and len(iterable.elements) == 1:
            element = iterable.elements[0].value
        else:
            return None
        return self._part(element, path, depth + 1)

    def _returned(self, value: cst.BaseExpression, path: tuple) -> Optional[cst.BaseExpression]:
        """What a call of a function of this file (also a static method through its class)
        returns at ``path``, where it has one `return`: `return train, test` gives `train`
        at (0,)."""
        if not isinstance(value, cst.Call):
            return None
        callee = self.inference.infer(value.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not isinstance(function, FunctionInfo) or function.model is not self.model \
                or not isinstance(function.node, cst.FunctionDef) or function.is_generator \
                or len(function.returns) != 1:
            return None
        returned = function.returns[0]
        for index in path:
            if not isinstance(index, int) or not isinstance(returned, cst.Tuple) or index >= len(returned.elements) \
                    or any(isinstance(element, cst.StarredElement) for element in returned.elements):
                return None
            returned = returned.elements[index].value
        return returned

    def _produced(self, call: cst.Call, path: tuple, depth: int) -> Optional[Dtype]:
        """The dtype at ``path`` of what iterating ``call`` gives: the batches of a
        `DataLoader`, the pairs of `enumerate`, the tuples of `zip`."""
        func = call.func
        args = [arg for arg in call.args if arg.keyword is None]
        if any(arg.star for arg in call.args):
            return None
        if isinstance(func, cst.Name) and func.value in ("enumerate", "zip") and \
                self.inference.qualname(func) in (None, f"builtins.{func.value}"):
            if not path or not isinstance(path[0], int) or (func.value == "zip" and path[0] >= len(args)):
                return None
            if func.value == "enumerate":
                if len(args) != 1:
                    return None
                return Dtype("int64", "number", call, "a count") if path[0] == 0 and len(path) == 1 else \
                    self._element(args[0].value, path[1:], depth + 1) if path[0] == 1 else None
            return self._element(args[path[0]].value, path[1:], depth + 1)
        qualname = self.inference.qualname(func)
        if qualname == "builtins.range" and not path:
            return Dtype("int64", "number", call, "a Python int")
        if isinstance(func, cst.Attribute) and func.attr.value in ("items", "values") and not call.args:
            values = self._dict_values(func.value)  # `for part, x in splits.items()`
            if values is None or func.attr.value == "items" and (not path or path[0] != 1):
                return None
            rest = path[1:] if func.attr.value == "items" else path
            return self._combine([self._part(value, rest, depth + 1) for value in values])
        if qualname not in torch_api.DATA_LOADERS or keyword(call, "collate_fn") is not None:
            return None
        batch_size = keyword(call, "batch_size")
        if batch_size is not None and isinstance(batch_size, cst.Name) and batch_size.value == "None":
            return None
        dataset = keyword(call, "dataset") or (args[0].value if args else None)
        found = self._item(dataset, path, depth + 1) if dataset is not None else None
        return self._batched(found, call)

    def _item(self, dataset: cst.BaseExpression, path: tuple, depth: int) -> Optional[Dtype]:
        """The dtype at ``path`` of an item of ``dataset``: a row of a `TensorDataset`'s
        tensor, what a `Dataset` class of this file returns from `__getitem__`."""
        for _ in range(4):
            if not isinstance(dataset, cst.Name):
                break
            bindings = self.model.resolve(dataset)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].value is None \
                    or bindings[0].path or bindings[0].iterates:
                return None
            dataset = bindings[0].value
        if not isinstance(dataset, cst.Call) or any(arg.star for arg in dataset.args) or depth > _MAX_DEPTH:
            return None
        qualname = self.inference.qualname(dataset.func)
        args = [arg.value for arg in dataset.args if arg.keyword is None]
        if qualname in torch_api.TENSOR_DATASETS:
            if not path or not isinstance(path[0], int) or path[0] >= len(args):
                return None
            found = self.dtype(args[path[0]], depth)
            return found if found is not None and found.holder == "tensor" and len(path) == 1 else None
        if qualname in torch_api.DATASET_VIEWS:
            return self._item(args[0], path, depth + 1) if args else None
        if qualname is not None or not isinstance(dataset.func, cst.Name):
            return None
        cls = next((binding.definition for binding in self.model.resolve(dataset.func)
                    if isinstance(binding.definition, ClassInfo)), None)
        getitem = cls.methods.get("__getitem__") if cls is not None else None
        if getitem is None or not getitem.returns or getitem.is_generator:
            return None
        found = self._combine([self._part(returned, path, depth + 1) for returned in getitem.returns])
        if found is None or found is _NONE or len(getitem.returns) != 1:
            return found
        entry: Optional[cst.BaseExpression] = getitem.returns[0]
        for index in path:  # `return image, mask`: the item at ``path``; `return {"image": image}`
            if isinstance(index, str) and isinstance(entry, cst.Dict):
                entry = next((element.value for element in entry.elements if isinstance(element, cst.DictElement)
                              and isinstance(element.key, cst.SimpleString)
                              and element.key.evaluated_value == index), None)
                continue
            entry = entry.elements[index].value if isinstance(entry, cst.Tuple) and isinstance(index, int) and \
                index < len(entry.elements) and not isinstance(entry.elements[index], cst.StarredElement) else None
            if entry is None:
                break
        return replace(found, entry=entry) if entry is not None and found.entry is None else found

    def _batched(self, found: Optional[Dtype], loader: cst.Call) -> Optional[Dtype]:
        """What `default_collate` makes of items of dtype ``found``: a tensor of that dtype
        (Python floats: float64, ints: int64)."""
        if found is None or found is _NONE or found.holder not in ("tensor", "array", "number"):
            return None
        code = _short(self.analysis, loader)
        if found.holder == "tensor":
            return found
        if found.holder == "array":
            why = f"{found.why}; `{code}` stacks the arrays into a {found.name} tensor"
        else:
            why = f"{found.why or 'Python numbers'}; `{code}` collates Python {'floats' if found.floating else 'ints'} " \
                  f"into a {found.name} tensor"
        return replace(found, holder="tensor", why=why)

    # --- parameters: what the call sites pass -----------------------------------------

    def _passed(self, binding: Binding) -> Optional[list[Optional[cst.BaseExpression]]]:
        """What each call site of the function passes for the parameter ``binding`` (None
        where it passes nothing and the default is None), or None when unknown."""
        function = self._function_of(binding)
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return None
        params = function.positional_params()
        names = [param.name.value for param in params]
        if binding.name not in names and binding.name not in [p.name.value for p in function.node.params.kwonly_params]:
            return None
        offset = 1 if function.kind in ("method", "classmethod") else 0
        position = names.index(binding.name) - offset if binding.name in names else None
        default = next((param.default for param in (*params, *function.node.params.kwonly_params)
                        if param.name.value == binding.name), None)
        calls = self._call_sites(function)
        if not calls:
            return None
        passed: list[Optional[cst.BaseExpression]] = []
        for call in calls:
            if any(arg.star for arg in call.args):
                return None
            given = keyword(call, binding.name)
            if given is None and position is not None and position >= 0:
                positional = [arg for arg in call.args if arg.keyword is None]
                if position < len(positional):
                    given = positional[position].value
            if given is None:
                if default is None or not (isinstance(default, cst.Name) and default.value == "None"):
                    if default is None:
                        return None
                    passed.append(default)
                    continue
                passed.append(None)
            else:
                passed.append(given)
        return passed

    def _passed_somewhere(self, binding: Binding) -> list[cst.BaseExpression]:
        """What the call sites of the function that can be read pass for the parameter
        ``binding``, its own `self.forward(..)` calls included."""
        function = self._function_of(binding)
        if function is None or not isinstance(function.node, cst.FunctionDef) \
                or not isinstance(binding.node, cst.Param):
            return []
        calls = self._call_sites(function)
        if function.name == "forward":
            calls = [*calls, *(call for call in self.inference.calls_of(function) if call not in calls)]
        passed = (self.inference.passed_argument(call, function, binding.node) for call in calls)
        return [given for given in passed if given is not None]

    def _call_sites(self, function: FunctionInfo) -> list[cst.Call]:
        if id(function) not in self._call_site_memo:
            self._call_site_memo[id(function)] = self._find_call_sites(function)
        return self._call_site_memo[id(function)]

    def _find_call_sites(self, function: FunctionInfo) -> list[cst.Call]:
        if function.name == "forward" and function.cls is not None and self._is_module_class(function.cls):
            return list(self._module_calls().get(id(function.cls), ()))
        if function.name == "__call__" and function.cls is not None:  # `metric(preds, target)`
            return [call for call in self._all_calls() if self._instance_called(call) is function.cls]
        if function.name == "__init__" and function.cls is not None:
            # Only the class's own name is bound to its definition (`Net2 = Net` binds a value).
            return [call for call in self._all_calls()
                    if isinstance(call.func, cst.Name) and call.func.value == function.cls.name and any(
                        binding.definition is function.cls for binding in self.model.resolve(call.func))]
        return self.inference._call_sites(function)

    def _module_calls(self) -> dict[int, list[cst.Call]]:
        """The calls of each module class's instances (``_class_called``), in source order: one
        pass over the file's calls rather than one per class whose ``forward`` is asked about."""
        if self._calls_by_class is None:
            self._calls_by_class = {}
            for call in self._all_calls():
                called = self._class_called(call)
                if called is not None:
                    self._calls_by_class.setdefault(id(called), []).append(call)
        return self._calls_by_class

    def _instance_called(self, call: cst.Call) -> Optional[ClassInfo]:
        """The class of this file whose instance ``call`` calls, through its `__call__`."""
        func = call.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or self.inference.qualname(func) is not None:
            return None
        value = self.inference.infer(func)
        if value is not None and value.kind is Kind.INSTANCE and isinstance(value.cls, ClassInfo):
            return value.cls
        return None

    def _call_method(self, call: cst.Call) -> Optional[FunctionInfo]:
        """The `__call__` of the plain class of this file whose instance ``call`` calls
        (`self.tokenizer(texts)`): what the call gives is what it returns."""
        called = self._instance_called(call)
        method = called.methods.get("__call__") if called is not None and called.model is self.model else None
        return method if method is not None and method.kind == "method" else None

    def _class_called(self, call: cst.Call) -> Optional[ClassInfo]:
        """The module class of this file whose instance ``call`` calls (`model(x)`, `self.block(x)`)."""
        key = id(call)
        if key not in self._called:
            func = call.func
            found = None
            if isinstance(func, (cst.Name, cst.Attribute)) and self.inference.qualname(func) is None:
                value = self.inference.infer(func)
                if value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo):
                    found = value.cls
            self._called[key] = found
        return self._called[key]

    def _parameter(self, binding: Binding, depth: int) -> Optional[Dtype]:
        passed = self._passed(binding)
        if passed is None:
            return None
        return self._combine([_NONE if value is None else self.dtype(value, depth) for value in passed])

    # --- attributes -------------------------------------------------------------------

    def _attribute(self, node: cst.Attribute, depth: int) -> Optional[Dtype]:
        name = node.attr.value
        if name == "T" or name == "mT":
            found = self.dtype(node.value, depth)
            return found if found is not None and found.holder in ("array", "tensor") else None
        if name == "data":  # `x.data` of a tensor: its values, in its dtype (else an attribute named so)
            found = self.dtype(node.value, depth)
            if found is not None and found.holder == "tensor":
                return found
        if name in torch_api.FRAME_TO_ARRAY or name in torch_api.FRAME_INDEXERS:
            found = self.dtype(node.value, depth)
            if found is not None and found.holder == "frame":  # `df[cols].values`, `df.iloc`
                return replace(found, holder="array") if name == "values" else found
            if found is not None and found.holder == "array" and name == "values":
                return found
        qualname = self.inference.qualname(node)
        if qualname in torch_api.FLOAT_CONSTANTS:
            return Dtype("float64", "number", node, "a Python float")
        if qualname is not None:
            return None
        cls = self._class_of(node.value)
        if cls is None:
            if isinstance(node.value, cst.Name):  # `args.lr` of `class args: lr = 0.002`: the class's own number
                bindings = self.model.resolve(node.value)
                owner = bindings[0].definition if len(bindings) == 1 else None
                if isinstance(owner, ClassInfo) and owner.model is self.model and not owner.assignments(name):
                    return self._class_level(owner, name, depth)
            return None
        assignments = cls.assignments(name)
        if not assignments:
            return self._class_level(cls, name, depth)
        given = self._given_at_construction(node, cls, assignments)
        if given is not None:  # `AnnDataLike(np.log1p(x)).X`: what this instance was built with
            return self._combine([self.dtype(value, depth) for value in given])
        return self._combine([self._part(assignment.value, assignment.path, depth) if assignment.value is not None
                              and None not in assignment.path else None for assignment in assignments])

    def _given_at_construction(self, node: cst.Attribute, cls: ClassInfo,
                               assignments: list) -> Optional[list[cst.BaseExpression]]:
        """For ``obj.<name>`` where ``obj`` is built by constructions `Cls(..)` of this file's
        class that the analysis can list (through names, parameters and the return of a
        function) and `__init__` alone sets the attribute, to one of its parameters
        (`self.X = X`): what those constructions pass for it. An attribute is the value the
        instance was built with, whatever other instances hold; not where the file writes the
        attribute from outside the class."""
        if len(assignments) != 1 or assignments[0].path or not isinstance(assignments[0].value, cst.Name) or \
                assignments[0].function.name != "__init__":
            return None
        bindings = self.model.resolve(assignments[0].value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or \
                self._function_of(bindings[0]) is not assignments[0].function or \
                not isinstance(bindings[0].node, cst.Param):
            return None
        for assign in self.analysis.nodes_of(cst.Assign, cst.AugAssign):
            targets = [target.target for target in assign.targets] if isinstance(assign, cst.Assign) else \
                [assign.target]
            if any(isinstance(target, cst.Attribute) and target.attr.value == node.attr.value and
                   not (cls.node.start <= target.start and target.end <= cls.node.end) for target in targets):
                return None
        built = self._instance_constructions(node.value, cls, 0)
        if not built:
            return None
        given = [self.inference.passed_argument(call, assignments[0].function, bindings[0].node) for call in built]
        return None if any(value is None for value in given) else given  # type: ignore[return-value]

    def _instance_constructions(self, node: cst.BaseExpression, cls: ClassInfo,
                                depth: int) -> Optional[list[cst.Call]]:
        """The calls `Cls(..)` that built the instance ``node`` holds, when all can be listed."""
        if depth > 4:
            return None
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].path or bindings[0].iterates:
                return None
            if bindings[0].kind is BindingKind.PARAM:
                passed = self._passed(bindings[0])
                if not passed or any(value is None for value in passed):
                    return None
                found: list[cst.Call] = []
                for value in passed:
                    built = self._instance_constructions(value, cls, depth + 1)  # type: ignore[arg-type]
                    if built is None:
                        return None
                    found.extend(built)
                return found
            if bindings[0].kind is not BindingKind.ASSIGN or bindings[0].value is None:
                return None
            return self._instance_constructions(bindings[0].value, cls, depth + 1)
        if not isinstance(node, cst.Call) or any(arg.star for arg in node.args):
            return None
        if isinstance(node.func, cst.Name) and any(binding.definition is cls for binding in
                                                   self.model.resolve(node.func)):
            return [node]
        function = self._file_function(node.func) if self.inference.qualname(node.func) is None else None
        if function is None or function.kind != "function" or function.is_generator or len(function.returns) != 1:
            return None
        return self._instance_constructions(function.returns[0], cls, depth + 1)

    def _class_of(self, node: cst.BaseExpression, depth: int = 0) -> Optional[ClassInfo]:
        """The class of this file that ``node`` is an instance of: by inference, or for a
        parameter, by its annotation or what every call site passes."""
        value = self.inference.infer(node)
        if value is not None and value.kind in (Kind.INSTANCE, Kind.MODULE) and isinstance(value.cls, ClassInfo):
            return value.cls if value.cls.model is self.model else None
        if isinstance(node, cst.Call) and depth <= 2:  # `build_model(cfg)`: what the factory returns
            classes = self._returned_classes(node, depth)
            return classes[0] if len(classes) == 1 else None
        if not isinstance(node, cst.Name) or depth > 2:
            return None
        bindings = self.model.resolve(node)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and not bindings[0].path and \
                isinstance(bindings[0].value, cst.Call):  # `model = build_model(cfg)`
            return self._class_of(bindings[0].value, depth + 1)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        annotation = bindings[0].annotation
        if isinstance(annotation, cst.Annotation):
            annotation = annotation.annotation
        if isinstance(annotation, cst.Name):
            for binding in self.model.resolve(annotation):
                if isinstance(binding.definition, ClassInfo):
                    return binding.definition
        passed = self._passed(bindings[0])
        if not passed or any(value is None for value in passed):
            return None
        classes = {id(found): found for found in (self._class_of(value, depth + 1) for value in passed)}
        return next(iter(classes.values())) if len(classes) == 1 and None not in classes.values() else None

    def _factory_classes(self, node: cst.BaseExpression) -> list[ClassInfo]:
        """The classes a factory of the file may return, for ``node`` a call of it or a name
        bound once to one (`model = get_model(name)`, one class per branch)."""
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
                return []
            node = bindings[0].value
        return self._returned_classes(node) if isinstance(node, cst.Call) else []

    def _returned_classes(self, call: cst.Call, depth: int = 0) -> list[ClassInfo]:
        """The classes of this file whose instances a factory function of the file returns
        (`def build_model(cfg): return TinyGPT(cfg)`, one class per branch of a `get_model(name)`),
        when every return gives one; empty otherwise."""
        function = self._file_function(call.func) if isinstance(call.func, cst.Name) and depth <= 2 else None
        if function is None or not function.returns or function.is_generator:
            return []
        classes: dict[int, ClassInfo] = {}
        for returned in function.returns:
            cls = self._class_of(returned, depth + 1)
            if cls is None:
                return []
            classes[id(cls)] = cls
        return list(classes.values())

    def _class_level(self, cls: ClassInfo, name: str, depth: int) -> Optional[Dtype]:
        """``name = <number>`` in the class body."""
        scope = cls.scope
        bindings = scope.bindings.get(name, []) if scope is not None else []
        if len(bindings) != 1:
            return None
        found = self._binding(bindings[0], depth)
        return found if found is not None and found.holder == "number" else None

    # --- calls ------------------------------------------------------------------------

    def _call(self, node: cst.Call, depth: int) -> Optional[Dtype]:
        func = node.func
        qualname = self.inference.qualname(func)
        if qualname is not None:
            return self._external(qualname, node, depth)
        module = self._module_called(node, depth)
        if module is not None:
            return module
        if isinstance(func, cst.Attribute):
            own = self._file_function(func)  # `self.position_weight(x, ..)`: a method of this file
            if own is not None:
                return self._returns(own, depth)
            return self._method(func.attr.value, func.value, node, depth)
        if isinstance(func, cst.Name):
            for binding in self.model.resolve(func):
                if isinstance(binding.definition, FunctionInfo):
                    return self._returns(binding.definition, depth)
            called = self._instance_called(node)  # `transform(image)`: an instance's `__call__`
            method = called.methods.get("__call__") if called is not None and called.model is self.model else None
            if method is not None:
                return self._returns(method, depth)
        return None

    def _module_called(self, node: cst.Call, depth: int) -> Optional[Dtype]:
        """The output of a torch layer with float32 weights is float32, as the weights (the
        file converts no module: see ``dtype_mismatches``); a module of this file gives what
        its ``forward`` returns."""
        value = self.inference.infer(node.func)
        if value is None or value.kind is not Kind.MODULE:
            return None
        if value.qualname in torch_api.FLOAT32_WEIGHT_LAYERS and value.qualname not in torch_api.RECURRENT_LAYERS \
                and value.qualname != "torch.nn.MultiheadAttention":  # those give tuples (or a hidden state)
            return Dtype("float32", "tensor", node, f"`{_short(self.analysis, node)}` is the output of a float32 layer")
        if isinstance(value.cls, ClassInfo) and value.cls.model is self.model:
            forward = value.cls.methods.get("forward")
            return self._returns(forward, depth) if forward is not None else None
        return None

    def _returns(self, function: FunctionInfo, depth: int) -> Optional[Dtype]:
        returns = function.returns
        if not returns or function.is_generator:
            return None
        found = [self.dtype(value, depth) for value in returns]
        if len(returns) > 1 and len({item.name if item is not None else None for item in found}) > 1:
            # `if img.dtype == torch.uint8: return img.float().div(255)`: a return under a test
            # of a dtype shown to be another never runs
            found = [item for item, value in zip(found, returns) if not self._dtype_test_fails(value, depth)]
        return self._combine(found)

    def _dtype_test_fails(self, node: cst.CSTNode, depth: int) -> bool:
        """``node`` runs only where a test `x.dtype == torch.<dtype>` (or `!=`) holds that the
        dtype shown for ``x`` makes false."""
        child, current = node, node.parent
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.Module)):
            if isinstance(current, cst.If) and child is not current.test:
                test = current.test
                if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(
                        test.comparisons[0].operator, (cst.Equal, cst.NotEqual)) and \
                        isinstance(test.left, cst.Attribute) and test.left.attr.value == "dtype":
                    named = self._dtype_name(test.comparisons[0].comparator, False)
                    shown = self.dtype(test.left.value, depth + 1)
                    if named is not None and shown is not None and shown.holder == "tensor" and shown.name in (
                            *_FLOATS, *_INTEGERS):
                        equal = shown.name == named
                        holds = equal if isinstance(test.comparisons[0].operator, cst.Equal) else not equal
                        if holds is not (child is current.body):
                            return True
            child, current = current, current.parent
        return False

    def _explicit(self, node: cst.Call, numpy: bool) -> Optional[str]:
        """The dtype a `dtype=` argument names, if any is given and known."""
        given = keyword(node, "dtype")
        if given is None:
            return None
        return self._dtype_name(given, numpy) or self._python_type_dtype(given) or "unknown"

    def _python_type_dtype(self, node: cst.BaseExpression) -> Optional[str]:
        """The dtype torch makes of a Python number type given as a dtype (`dtype=float`:
        float64), where the name is the builtin."""
        if isinstance(node, cst.Name) and node.value in torch_api.PYTHON_TYPE_DTYPES and \
                self.inference.qualname(node) in (None, f"builtins.{node.value}"):
            return torch_api.PYTHON_TYPE_DTYPES[node.value]
        return None

    def numpy_dtype_argument(self, node: Optional[cst.CSTNode]) -> Optional[cst.BaseExpression]:
        """The dtype argument that chooses the dtype of the array ``node`` makes, when it names
        one: `x.astype(float)`, `np.array(y, dtype=np.int32)`."""
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "astype" and self.inference.qualname(func) is None:
            given = keyword(node, "dtype") or (node.args[0].value if node.args and node.args[0].keyword is None
                                               else None)
        elif (self.inference.qualname(func) or "").startswith("numpy."):
            given = keyword(node, "dtype")
        else:
            return None
        return given if given is not None and self._dtype_name(given, True) is not None else None

    def _dtype_name(self, node: cst.BaseExpression, numpy: bool) -> Optional[str]:
        if isinstance(node, cst.SimpleString):
            text = node.value.strip("\"'")
            return torch_api.NUMPY_DTYPES.get(text)
        if isinstance(node, cst.Name) and node.value in ("float", "int", "bool"):
            return torch_api.NUMPY_DTYPES.get(node.value) if numpy else None
        qualname = self.inference.qualname(node)
        if qualname is None:
            return None
        module, _, name = qualname.rpartition(".")
        if module == "torch":
            return torch_api.TORCH_DTYPES.get(name)
        if module == "numpy":
            return torch_api.NUMPY_DTYPES.get(name)
        return None

    def _external(self, qualname: str, node: cst.Call, depth: int) -> Optional[Dtype]:
        code = f"`{_short(self.analysis, node)}`"
        args = [arg for arg in node.args if arg.keyword is None]
        if qualname.startswith("numpy."):
            explicit = self._explicit(node, True)
            if explicit is not None:
                return Dtype(explicit, "array", node, f"{code} is {explicit}", True) if explicit != "unknown" else None
            if qualname in torch_api.NUMPY_FLOAT64_FUNCTIONS:
                if qualname in ("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.identity",
                                "numpy.linspace", "numpy.loadtxt", "numpy.genfromtxt") or qualname.startswith(
                                    "numpy.random."):
                    return Dtype("float64", "array", node, f"{code} returns float64 (numpy's default)")
                first = self.dtype(args[0].value, depth) if args else None
                if first is not None and first.holder in ("array", "number") and first.name in ("float64", "int64"):
                    return Dtype("float64", "array", node, f"{code} of a {first.name} array is float64")
                return None
            if qualname in torch_api.NUMPY_INT64_FUNCTIONS:
                return Dtype("int64", "array", node, f"{code} returns int64")
            if qualname in torch_api.NUMPY_FLOATING_FUNCTIONS and args:
                first = self.dtype(args[0].value, depth)
                if first is not None and first.holder == "array":
                    if first.integer:  # `np.log1p(counts / size_factors)`, `np.median(counts)`
                        return Dtype("float64", "array", node, f"{code} of an integer array is float64")
                    return _as(first, first.name, "array") if first.name != "float64" else first
                return None
            if qualname in torch_api.NUMPY_DTYPE_KEEPING_FUNCTIONS and args:
                listed = self._listed(args[0].value, node, depth)
                if listed is not None:
                    return listed if listed is not _NONE else None
                found = [self.dtype(arg.value, depth) for arg in args[:2]
                         if not isinstance(arg.value, (cst.Integer, cst.Float))] or [None]
                if qualname in ("numpy.where",):
                    found = [self.dtype(arg.value, depth) for arg in args[1:3]]
                arrays = [item for item in found if item is not None and item.holder == "array"]
                if arrays and len(arrays) == len(found):
                    if any(item.name == "float64" for item in arrays):
                        return next(item for item in arrays if item.name == "float64")
                    if all(item.name == arrays[0].name for item in arrays):
                        return arrays[0]
                return None
            return None
        if qualname in torch_api.PANDAS_TEXT_READERS and keyword(node, "dtype") is None and \
                keyword(node, "converters") is None:
            return Dtype(READ_NUMBERS, "frame", node, f"{code} reads numbers as float64 (int64 when whole): never "
                         f"float32")
        if qualname in torch_api.PANDAS_FRAMES and args and keyword(node, "dtype") is None:
            if isinstance(args[0].value, cst.Dict):  # `pd.DataFrame({"a": rng.integers(..), ..})`
                return self._frame_of_columns(node, args[0].value, depth)
            found = self.dtype(args[0].value, depth)  # `pd.DataFrame(np.random.rand(..))`
            return replace(found, holder="frame") if found is not None and found.holder == "array" else None
        if qualname in torch_api.ARRAY_FLOAT64_FUNCTIONS:  # `compute_class_weight(..)`
            return Dtype("float64", "array", node, f"{code} returns a float64 numpy array")
        if qualname in torch_api.INT_BUILTINS:
            return Dtype("int64", "number", node, "a Python int")
        if qualname in torch_api.FLOAT_BUILTINS:  # `math.cos(angle)`
            return Dtype("float64", "number", node, "a Python float")
        if not qualname.startswith("torch."):
            return None
        if qualname in torch_api.SAME_TENSOR_WRAPPERS and args:  # `Variable(x)` is `x`
            found = self.dtype(args[0].value, depth)
            return found if found is not None and found.holder == "tensor" else None
        if qualname in torch_api.TORCH_DTYPE_KEEPING_FUNCTIONS and args:
            found = self.dtype(args[0].value, depth)
            return found if found is not None and found.holder == "tensor" and found.floating else None
        name = qualname.rsplit(".", 1)[1]
        explicit = self._explicit(node, False)
        if explicit is not None:
            return Dtype(explicit, "tensor", node, f"{code} is {explicit}", True) if explicit != "unknown" else None
        if qualname in torch_api.TORCH_CONVERTERS and args:
            literal = _literal_numbers(args[0].value) if qualname != "torch.from_numpy" else None
            if literal is not None:  # `torch.tensor([1.0, 2.0])`: Python floats make the default dtype
                if literal == "float32" and not self._default_is_float32():
                    return None
                kind = "Python floats" if literal == "float32" else "Python ints"
                return Dtype(literal, "tensor", node, f"{code} of {kind} is {literal}", True)
            source = self.dtype(args[0].value, depth)
            if source is None and qualname != "torch.from_numpy":
                return self._tensor_listed(args[0].value, node, depth)
            if source is None:
                return None
            if source.holder == "array":
                if source.chosen and self.numpy_dtype_argument(source.origin) is not None:
                    # `torch.from_numpy(x.astype(float))`: the dtype was chosen where the array was
                    # made, and the conversion keeps it: that choice is the one to change
                    return replace(source, holder="tensor", why=f"{source.why}, and {code} keeps it")
                text = f"{code} keeps the dtype of the numpy array it is given, {source.name}"
                return Dtype(source.name, "tensor", node, text + (f" ({source.why})" if source.why else ""), True)
            if source.holder == "tensor" and qualname != "torch.from_numpy":
                return source
            return None
        if qualname.startswith("torch.") and qualname.count(".") == 1 and name in torch_api.LEGACY_TYPE_DTYPES:
            found = torch_api.LEGACY_TYPE_DTYPES[name]
            if found == "float32" and not self._default_is_float32():
                return None
            return Dtype(found, "tensor", node, f"{code} is {found}", True)
        if qualname in torch_api.TENSOR_JOINING_FUNCTIONS and args:
            joined = args[0].value
            if isinstance(joined, cst.Name):
                joined = self._sole_value(joined) or joined
            items = _items(joined)
            found = [self.dtype(item, depth) for item in items or ()]
            if not found or any(item is None or item.holder != "tensor" for item in found):
                return None
            if len({item.name for item in found}) == 1:
                return found[0]  # `torch.stack([series[i:i + w] for i in ..])`: the dtype of its tensors
            floats = [item for item in found if item.name == "float64"]
            if floats and all(item.floating or item.integer for item in found):
                return floats[0]  # float64 wins in the promotion
            return None
        if qualname in torch_api.TORCH_INT64_FACTORIES:
            return Dtype("int64", "tensor", node, f"{code} is int64")
        if qualname in torch_api.TORCH_FLOAT_FACTORIES:
            return Dtype("float32", "tensor", node, f"{code} is float32 (the default dtype)") \
                if self._default_is_float32() else None
        positions = torch_api.TORCH_VALUE_TYPED_FACTORIES.get(qualname)
        if positions is not None:
            values = [args[index].value for index in positions if index < len(args)]
            if not values:
                return None
            found = [self.dtype(value, depth) for value in values]
            if all(item is not None and item.holder == "number" and item.name == "int64" for item in found):
                fill = " fill value" if qualname == "torch.full" else ""
                named = [value for value in values if not isinstance(value, cst.Integer)]
                where = f" (`{_short(self.analysis, named[0])}`, an int)" if named else ""
                return Dtype("int64", "tensor", node, f"{code} takes the dtype of its{fill} Python int{where}: int64",
                             True)
            return None
        return None

    def _listed(self, value: cst.BaseExpression, call: cst.Call, depth: int, nested: bool = False) -> Optional[Dtype]:
        """The dtype of the array numpy makes from ``value`` when it is a list (a literal, a
        comprehension, a name bound once to one): the arrays it holds keep their dtype,
        Python floats make float64 and ints int64.  ``_NONE`` for a list whose items do not
        show one dtype; None when ``value`` is not a list."""
        if isinstance(value, cst.Name):
            value = self._sole_value(value) or value
        items = _items(value)
        if items is None:
            return None
        found = [self._listed(item, call, depth + 1, True) if isinstance(item, (cst.List, cst.Tuple, cst.ListComp))
                 else self.dtype(item, depth + 1) for item in items]
        if any(item is None or item is _NONE or item.holder not in ("array", "number") for item in found):
            return _NONE
        if all(item.holder == "array" for item in found) and len({item.name for item in found}) == 1:
            return found[0]
        if all(item.holder == "array" and (item.floating or item.integer) for item in found) and \
                any(item.name == "float64" for item in found):
            return next(item for item in found if item.name == "float64")  # joined arrays promote: float64 wins
        if all(item.holder == "number" for item in found):
            name = "float64" if any(item.name == "float64" for item in found) else "int64"
            if nested:  # `[[517.7, 0, 320], [0, 0, 1]]`: the rows are Python numbers too, one array in all
                return Dtype(name, "number", call, "")
            kind = "floats" if name == "float64" else "ints"
            return Dtype(name, "array", call, f"`{_short(self.analysis, call)}` of Python {kind} is {name}")
        return _NONE

    def _flat_items(self, value: cst.BaseExpression, depth: int) -> Optional[list[Dtype]]:
        """The dtypes of the items of a list or tuple written out, nested lists flattened; None
        when one is not shown."""
        if not isinstance(value, (cst.List, cst.Tuple)) or depth > _MAX_DEPTH:
            return None
        found: list[Dtype] = []
        for item in _items(value) or ():
            if isinstance(item, (cst.List, cst.Tuple)):
                inner = self._flat_items(item, depth + 1)
                if not inner:
                    return None
                found.extend(inner)
                continue
            shown = self.dtype(item, depth + 1)
            if shown is None or shown is _NONE or shown.holder not in ("array", "number", "tensor") or \
                    shown.holder != "number" and not (shown.floating or shown.integer):
                return None
            found.append(shown)
        return found

    def _tensor_listed(self, value: cst.BaseExpression, call: cst.Call, depth: int) -> Optional[Dtype]:
        """The dtype `torch.tensor` infers from a list or tuple written out (nested) whose
        items are all shown: torch promotes the items' dtypes, a Python float counting as the
        default dtype and a Python int as int64, a numpy scalar or array as its own dtype
        (`torch.tensor([c2, c1])` of numpy float64 values: float64)."""
        found = self._flat_items(value, depth)
        if not found:
            return None
        code = f"`{_short(self.analysis, call)}`"
        arrays = [item for item in found if item.holder == "array"]
        if any(item.holder == "tensor" for item in found):
            return None
        if not arrays:  # Python numbers (`math.cos(angle)`): the default dtype, or int64 for ints alone
            if any(item.name == "float64" for item in found):
                return Dtype("float32", "tensor", call, f"{code} of Python floats is float32", True) \
                    if self._default_is_float32() else None
            return Dtype("int64", "tensor", call, f"{code} of Python ints is int64", True)
        wide = next((item for item in arrays if item.name == "float64"), None)
        if wide is not None:
            return Dtype("float64", "tensor", call, f"{code} of numpy float64 values is float64 ({wide.why})", True)
        if all(item.holder == "array" and item.name == arrays[0].name for item in found):
            first = arrays[0]
            return Dtype(first.name, "tensor", call, f"{code} of numpy {first.name} values is {first.name}"
                         f" ({first.why})", True)
        return None

    def _method(self, method: str, receiver: cst.BaseExpression, node: cst.Call, depth: int) -> Optional[Dtype]:
        code = f"`{_short(self.analysis, node)}`"
        if method in torch_api.DTYPE_METHODS and not node.args:
            source = self.dtype(receiver, depth)
            holder = source.holder if source is not None and source.holder in ("tensor", "array") else None
            if holder is None:
                value = self.inference.tensor(receiver)
                holder = "tensor" if value is not None else None
            if holder != "tensor":
                return None
            name = torch_api.DTYPE_METHODS[method]
            return Dtype(name, "tensor", node, f"{code} is {name}", True)  # the conversion chooses it
        if method == "astype" and node.args:
            found = self._dtype_name(node.args[0].value, True)
            return Dtype(found, "array", node, f"{code} is {found}", True) if found else None
        if method in ("to", "type"):
            given = keyword(node, "dtype") or (node.args[0].value if node.args and node.args[0].keyword is None
                                               else None)
            if given is None:
                return None
            found = self._dtype_name(given, False) or (self._python_type_dtype(given) if method == "to" else None)
            if found is None and method == "type":
                qualname = self.inference.qualname(given) or ""
                found = torch_api.LEGACY_TYPE_DTYPES.get(qualname.rsplit(".", 1)[-1]) if qualname.startswith(
                    "torch.") else None
            if found is not None:
                return Dtype(found, "tensor", node, f"{code} is {found}", found in _FLOATS)
            if method == "to" and keyword(node, "dtype") is None and self._is_device(given):
                return self.dtype(receiver, depth)
            return None
        generated = self._generated(method, receiver, node)
        if generated is not None:
            return generated
        source = self.dtype(receiver, depth)
        if source is not None and source.holder == "frame":
            if method in torch_api.FRAME_KEEPING_METHODS:
                return source
            if method == "to_numpy" and not node.args and keyword(node, "dtype") is None:
                return replace(source, holder="array")
            return None
        if source is None or source.holder not in ("tensor", "array"):
            return None
        fact = torch_facts.method(method)
        if source.holder == "tensor" and fact is not None and fact.aliasing == "self" and method.endswith("_"):
            return source  # `torch.DoubleTensor(n, d).normal_(0, 1)`: an in-place method returns the tensor itself
        if source.holder == "tensor" and method in torch_api.TENSOR_DTYPE_KEEPING_METHODS:
            if source.integer and source.name != "int64" and method in torch_api.INT64_SUMS:
                # `(probs > 0.5).sum(0)`: counts of a bool (or int32) tensor are int64
                return Dtype("int64", "tensor", node, f"{code} counts a {source.name} tensor: int64")
            return source
        if source.holder == "array":
            if method in torch_api.ARRAY_DTYPE_KEEPING_METHODS:
                return source
            if method in torch_api.ARRAY_FLOATING_METHODS and source.name in ("float64", "int64", "int32"):
                return Dtype("float64", "array", node, f"{code} is float64") if source.integer else source
            if method == "numpy":
                return None
        if source.holder == "tensor" and method == "numpy":
            return replace(source, holder="array")
        return None

    def _entry(self, node: cst.Subscript, path: tuple, depth: int) -> Optional[Dtype]:
        """The dtype of an entry of a dict (`X["train"]` of `X = {part: .. for part, x in ..}`) or
        of an item of a tuple (`data["train"][0]` of a function's `return X, y`), at ``path``."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or depth > _MAX_DEPTH:
            return None
        index = node.slice[0].slice.value
        values = self._dict_values(node.value)
        if values:
            return self._combine([self._part(value, path, depth + 1) for value in values])
        if isinstance(index, cst.Integer):
            inner = (int(index.value), *path)
            if isinstance(node.value, cst.Subscript):
                return self._entry(node.value, inner, depth + 1)
            return self._part(node.value, inner, depth + 1)
        if isinstance(index, cst.SimpleString) and isinstance(index.evaluated_value, str) and \
                isinstance(node.value, cst.Name):
            # `batch["image"]`: the entry of a dict batch, what the dataset's item holds under that key
            found = self._part(node.value, (index.evaluated_value, *path), depth + 1)
            return found if found is not None and found.holder in ("tensor", "array") else None
        return None

    def _dict_values(self, node: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
        """The value expressions of the dict ``node`` is: a dict comprehension or a dict literal
        written out, or a name bound to one where it is read."""
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path or \
                    bindings[0].value is None:
                return None
            node = bindings[0].value
        if isinstance(node, cst.DictComp):
            return [node.value]
        if isinstance(node, cst.Dict) and node.elements and all(isinstance(element, cst.DictElement)
                                                                 for element in node.elements):
            return [element.value for element in node.elements]  # type: ignore[union-attr]
        return None

    def _generated(self, method: str, receiver: cst.BaseExpression, node: cst.Call) -> Optional[Dtype]:
        """What a method of a numpy random generator returns (`rng.normal(size=(n, d))`: float64),
        for ``receiver`` a name bound once to `np.random.default_rng(..)` (or a `RandomState`)."""
        if method not in torch_api.NUMPY_GENERATOR_FLOAT64_METHODS and \
                method not in torch_api.NUMPY_GENERATOR_INT64_METHODS or keyword(node, "dtype") is not None:
            return None
        if not self._numpy_generator(receiver):
            return None
        name = "float64" if method in torch_api.NUMPY_GENERATOR_FLOAT64_METHODS else "int64"
        return Dtype(name, "array", node, f"`{_short(self.analysis, node)}` returns {name} (numpy's random generator)")

    def _numpy_generator(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` is a numpy random generator: `np.random.default_rng(..)`, a name bound once to
        one, a parameter every call site gives one."""
        if isinstance(node, cst.Call):
            return self.inference.qualname(node.func) in torch_api.NUMPY_GENERATORS
        if not isinstance(node, cst.Name) or depth > 3:
            return False
        bindings = self.model.resolve(node)
        if len(bindings) != 1:
            return False
        if bindings[0].kind is BindingKind.PARAM:
            passed = self._passed(bindings[0])
            return bool(passed) and all(value is not None and self._numpy_generator(value, depth + 1)
                                        for value in passed)
        values = self._assigned(node)
        return len(values) == 1 and self._numpy_generator(values[0], depth + 1)

    def _is_device(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(node, cst.SimpleString):
            return node.value.strip("\"'").split(":")[0] in ("cpu", "cuda", "meta", "mps", "xpu")
        if isinstance(node, cst.Attribute) and node.attr.value == "device":
            return True
        if isinstance(node, cst.Call):  # `torch.device("cuda")`
            return self.inference.qualname(node.func) == "torch.device"
        if isinstance(node, cst.Name):
            if node.value in ("device", "dev") or node.value.endswith("_device"):
                return True
            values = self._assigned(node) if depth < 2 else ()  # `CUDA = torch.device("cuda:0")`
            return bool(values) and all(self._is_device(value, depth + 1) for value in values)
        return False

    def _frame_of_columns(self, call: cst.Call, columns: cst.Dict, depth: int) -> Optional[Dtype]:
        """A DataFrame built from a dict of columns: each column keeps its array's dtype, so its
        values (any selection of columns) are int64 or float64 when every column is, also those
        the file adds later (`df["y"] = ..`): never float32."""
        values: list[cst.BaseExpression] = []
        for element in columns.elements:
            if not isinstance(element, cst.DictElement):
                return None
            values.append(element.value)
        base = self._combine_columns([self.dtype(value, depth) for value in values], call)
        if base is None:
            return None
        added: list[cst.BaseExpression] = []
        parent = self.model.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target.value
            for assign in self.analysis.nodes_of(cst.Assign):
                for target in assign.targets:
                    if isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name) and \
                            target.target.value.value == name:
                        added.append(assign.value)
        if not added:
            return base
        # The added columns are computed from the frame's own columns: read those as the dict makes
        # them while the answer is worked out, then forget what was found on the way.
        known = set(self._memo)
        self._memo[id(call)] = base
        found = [base, *(self.dtype(value, depth) for value in added)]
        for key in set(self._memo) - known:
            del self._memo[key]
        return self._combine_columns(found, call)

    def _combine_columns(self, found: list[Optional[Dtype]], call: cst.Call) -> Optional[Dtype]:
        if not found or any(item is None or item.holder not in ("array", "frame") or
                            item.name not in ("int64", "float64", READ_NUMBERS) for item in found):
            return None
        if all(item.name == found[0].name for item in found):
            return replace(found[0], holder="frame")  # type: ignore[union-attr]
        return Dtype(READ_NUMBERS, "frame", call, f"`{_short(self.analysis, call)}` holds int64 and float64 columns: "
                     f"its values are float64 (int64 for whole-number columns), never float32")

    def _binary(self, node: cst.BinaryOperation, depth: int) -> Optional[Dtype]:
        if isinstance(node.operator, cst.MatrixMultiply):  # operands of one dtype (else it raises): that one
            left, right = self.dtype(node.left, depth), self.dtype(node.right, depth)
            same = left is not None and right is not None and left.holder == right.holder == "tensor" and \
                left.name == right.name
            return left if same else None
        left, right = self.dtype(node.left, depth), self.dtype(node.right, depth)
        if left is None or right is None or _NONE in (left, right):
            return None
        divides = isinstance(node.operator, cst.Divide)
        holders = {left.holder, right.holder}
        if holders == {"number"}:
            name = "float64" if divides or "float64" in (left.name, right.name) else "int64"
            return Dtype(name, "number", node, "")
        if holders == {"array", "number"}:
            array, number = (left, right) if left.holder == "array" else (right, left)
            if array.floating:
                return array  # a Python number does not widen a float32 array (`img.astype(np.float32) / 255.`)
        if holders <= {"array", "number"}:
            # numpy: float64 wins, and true division of integers is float64.
            if "float64" in (left.name, right.name):
                floats = [item for item in (left, right) if item.name == "float64"]
                origin = next((item for item in floats if item.holder == "array"), None)  # where it comes from
                if origin is not None:
                    return Dtype("float64", "array", origin.origin, origin.why)
                array = left if left.holder == "array" else right  # `img / 255.0`
                return Dtype("float64", "array", node, f"`{_short(self.analysis, node)}` computes a {array.name} "
                             f"array with a Python float: float64")
            if divides and left.integer and right.integer:
                return Dtype("float64", "array", node,
                             f"`{_short(self.analysis, node)}` divides integers with numpy's true division: float64")
            if left.name == right.name or "number" in holders:
                array = left if left.holder == "array" else right
                return array if array.integer else None
            floating, integer = (left, right) if left.floating else (right, left)
            promoted = torch_api.NUMPY_FLOAT_INT_PROMOTION.get((floating.name, integer.name))
            if holders == {"array"} and promoted is not None and promoted != floating.name:
                return Dtype(promoted, "array", node, f"`{_short(self.analysis, node)}` computes a {floating.name} "
                             f"array with an {integer.name} one: numpy promotes to {promoted}")
            return None
        if "frame" in holders and holders <= {"frame", "array", "number"} and \
                all(item.name in ("int64", "float64", READ_NUMBERS) for item in (left, right)):
            # pandas arithmetic of int64 and float64 columns (and numbers): int64 or float64 again
            frame = left if left.holder == "frame" else right
            return frame if left.name == right.name or frame.name == READ_NUMBERS else \
                Dtype(READ_NUMBERS, "frame", node, f"`{_short(self.analysis, node)}` computes int64 and float64 "
                      f"columns: float64 or int64, never float32")
        if holders <= {"tensor", "number"}:
            tensor = left if left.holder == "tensor" else right
            other = right if tensor is left else left
            if other.holder == "number":
                if tensor.floating:
                    return tensor
                if divides or other.name == "float64":
                    return None  # the default float dtype
                return tensor
            if left.name == right.name and not divides:
                return left
            if {left.name, right.name} <= {"float32", *_INTEGERS} and "float32" in (left.name, right.name):
                return left if left.name == "float32" else right
            if "float64" in (left.name, right.name) and (left.floating or left.integer) and (
                    right.floating or right.integer):
                return left if left.name == "float64" else right
        return None

    def _promoted(self, node: cst.BinaryOperation, depth: int) -> Optional[Dtype]:
        """Arithmetic of a float64 tensor with dimensions and another tensor whose dtype is not
        shown (a layer's output, a parameter): float64, as type promotion gives whatever real
        dtype the other has (`torch.from_numpy(w).unsqueeze(2) * x`)."""
        if not isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            return None
        for side, other in ((node.left, node.right), (node.right, node.left)):
            found = self.dtype(side, depth)
            if found is not None and found.holder == "tensor" and found.name == "float64" and \
                    self.dtype(other, depth) is None and self.inference.tensor(other) is not None and \
                    self._dims_evident(side):
                return found
        return None

    def _dims_evident(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` is shown to be a tensor or array of at least one dimension (so its dtype wins
        over a 0-dim operand's): `.unsqueeze(..)`, `.view(..)`, a conversion of an array made
        with a shape (`np.zeros((b, n))`, `np.random.randn(n, d)`), a slice of one."""
        if depth > 6:
            return False
        if isinstance(node, cst.Name):
            return self._every_value(node, lambda value: self._dims_evident(value, depth + 1))
        if isinstance(node, cst.Subscript):
            return any(isinstance(element.slice, cst.Slice) for element in node.slice) and \
                self._dims_evident(node.value, depth + 1)
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and self.inference.qualname(func) is None:
            if func.attr.value in ("unsqueeze", "flatten", "view", "reshape", "expand", "repeat", "unfold") \
                    and positional:
                return True
            if func.attr.value in torch_api.DTYPE_METHODS or func.attr.value in (
                    "clone", "detach", "contiguous", "cpu", "astype", "copy"):
                return self._dims_evident(func.value, depth + 1)
            return False
        qualname = self.inference.qualname(func) or ""
        if qualname in torch_api.TORCH_CONVERTERS and positional:
            return self._dims_evident(positional[0], depth + 1)
        if qualname.startswith("numpy.") and positional:
            last = qualname.rsplit(".", 1)[1]  # (`_last` shortens torch names only: `numpy.zeros` stayed whole)
            if last in ("zeros", "ones", "empty", "full"):
                return not isinstance(positional[0], (cst.Tuple, cst.List)) or bool(positional[0].elements)
            if qualname.startswith("numpy.random.") and last in ("randn", "rand"):
                return True
        return False

    def _default_is_float32(self) -> bool:
        if self._default_float32 is None:
            # A call of a setter spells its name in the file (`set_default_dtype`, or the import
            # that renames it): without the word, no call of the file is asked what it is.
            self._default_float32 = "set_default" not in self.analysis.text or not any(
                (self.inference.qualname(call.func) or "") in torch_api.DEFAULT_DTYPE_SETTERS
                for call in self._all_calls())
        return self._default_float32

    def _all_calls(self) -> list[cst.Call]:
        if self._calls is None:
            self._calls = self.analysis.nodes_of(cst.Call)
        return self._calls

    # --- the dtype mistakes ------------------------------------------------------------

    def dtype_mismatches(self) -> list[DtypeMismatch]:
        """Values of a dtype an operation does not take, where the analysis shows the dtype:
        float64 or integer tensors into float32 layers, float64 class weights of a loss,
        integer targets of the binary cross entropies, mixed dtypes in a matrix product."""
        found: list[DtypeMismatch] = []
        if not self._default_is_float32():
            return found
        if self._converts_modules():
            # Layers then hold another dtype: only the calls of a module shown converted are judged.
            for call in self._all_calls():
                mismatch = self._converted_mismatch(call)
                if mismatch is not None:
                    found.append(mismatch)
            return found
        for call in self._all_calls():
            mismatch = self._call_mismatch(call)
            if mismatch is not None:
                found.append(mismatch)
        for assign in self.analysis.nodes_of(cst.Assign):  # `out[mask] = torch.from_numpy(rows)`
            mismatch = self._index_put(assign)
            if mismatch is not None:
                found.append(mismatch)
        for operation in self.analysis.nodes_of(cst.BinaryOperation):  # `scores @ values`
            if isinstance(operation.operator, cst.MatrixMultiply) and not self._under_autocast(operation):
                mismatch = self._product(operation, operation.left, operation.right, "@")
                if mismatch is not None:
                    found.append(mismatch)
        found.extend(self._chained_index_layers())
        if "state_dict" in self.analysis.text:
            found.extend(self._state_entry_updates())
        found.extend(self._inplace_into_integers())
        return found

    def _chained_index_layers(self) -> list[DtypeMismatch]:
        """An `nn.Sequential` that gives a layer taking integer indices (`nn.Embedding`) the
        output of the layer before it, a layer with floating weights (`nn.Linear`, another
        `nn.Embedding`): a Sequential passes each layer's output to the next, and that output is
        floating ("Expected tensor for argument #1 'indices' to have one of the following scalar
        types: Long, Int"). Only a Sequential the file calls (one it iterates is a list of layers)."""
        found: list[DtypeMismatch] = []
        for call in self._all_calls():
            if self.inference.qualname(call.func) != "torch.nn.Sequential" or \
                    any(arg.star or arg.keyword is not None for arg in call.args):
                continue
            run = self._sequential_called(call)
            if run is None:
                continue
            layers = [arg.value for arg in call.args]
            for before, layer in zip(layers, layers[1:]):
                if not (isinstance(before, cst.Call) and isinstance(layer, cst.Call)):
                    continue
                taking, giving = self.inference.qualname(layer.func), self.inference.qualname(before.func)
                if taking not in torch_api.INDEX_INPUTS or giving in torch_api.RECURRENT_LAYERS or \
                        giving not in torch_api.FLOAT32_WEIGHT_LAYERS and giving not in torch_api.INDEX_INPUTS or \
                        keyword(before, "dtype") is not None:
                    continue
                line = self.analysis.line_index.position(before.start)[0]
                why = f"`{self.analysis.snippet(call)}` gives `{_last(taking)}` the floating output of " \
                      f"`{_last(giving)}` (line {line})"
                found.append(DtypeMismatch(call, Dtype("float32", "tensor", before, why), run,
                                           f"the indices of `{_last(taking)}` (line "
                                           f"{self.analysis.line_index.position(layer.start)[0]}) when it runs",
                                           "an integer dtype (int64)",
                                           wanted="int64", advice="give each layer that takes indices its own "
                                           "integer input (an `nn.ModuleList`, called one by one)"))
                break
        return found

    def _sequential_called(self, construction: cst.Call) -> Optional[cst.Call]:
        """The first call of the `nn.Sequential` built by ``construction`` (bound to a name or
        `self.<attr>`), where it is never iterated nor indexed."""
        parent = self.model.parent(construction)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return None
        target = parent.targets[0].target
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        name = target.value if isinstance(target, cst.Name) else target.attr.value
        uses = [node for node in self.analysis.nodes_of(cst.Name, cst.Attribute)
                if node is not target and (node.value == name if isinstance(node, cst.Name) and
                                           isinstance(target, cst.Name) else isinstance(node, cst.Attribute)
                                           and isinstance(target, cst.Attribute) and node.attr.value == name)]
        called: Optional[cst.Call] = None
        for use in uses:
            holder = self.model.parent(use)
            if isinstance(holder, cst.Call) and holder.func is use:
                called = called or holder
            elif not isinstance(holder, cst.Call) or isinstance(holder.func, cst.Name) and \
                    holder.func.value in _ITERATING_BUILTINS:
                return None  # indexed, iterated, given away: perhaps not run as a chain
        return called

    def _inplace_into_integers(self) -> list[DtypeMismatch]:
        """In-place arithmetic on a tensor shown to be of an integer dtype with a floating operand
        (`gj.clamp_(0, gain[3] - 1)` of a float32 `gain`, `idx += 0.5`, `counts.mul_(scale)`) or a
        true division (`x /= 2`, `x.div_(n)`): the result promotes to a floating dtype and cannot be
        written back ("result type Float can't be cast to the desired output type Long")."""
        found: list[DtypeMismatch] = []
        sites: list[tuple[cst.CSTNode, cst.BaseExpression, list[cst.BaseExpression], str, bool]] = []
        for call in self._all_calls():
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in torch_api.INPLACE_PROMOTING_METHODS \
                    or self.inference.qualname(func) is not None or any(arg.star for arg in call.args):
                continue
            if keyword(call, "rounding_mode") is not None or keyword(call, "out") is not None:
                continue
            operands = [arg.value for arg in call.args
                        if arg.keyword is None or arg.keyword.value in torch_api.INPLACE_OPERAND_KEYWORDS]
            sites.append((call, func.value, operands, f"`{func.attr.value}`",
                          func.attr.value in torch_api.INPLACE_DIVIDING_METHODS))
        operators = {cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=", cst.DivideAssign: "/="}
        for augmented in self.analysis.nodes_of(cst.AugAssign):
            symbol = operators.get(type(augmented.operator))
            if symbol is not None and isinstance(augmented.target, (cst.Name, cst.Attribute, cst.Subscript)):
                sites.append((augmented, augmented.target, [augmented.value], f"`{symbol}`", symbol == "/="))
        for site, receiver, operands, operation, divides in sites:
            if not operands:
                continue
            into = self.dtype(receiver)
            if into is None or into is _NONE or into.holder != "tensor" or not into.integer or into.name == "bool":
                continue
            # An integer divided in place by an integer is TL220's (integer-true-division): the
            # division itself is the mistake there, not an operand's dtype.
            operand = next((value for value in operands if self._floating(value)), None)
            if operand is None:
                continue
            shown = self.dtype(operand)
            if shown is None or shown is _NONE or not shown.floating:
                why = f"`{_short(self.analysis, operand)}` computes with a floating value: floating"
                shown = Dtype("floating", "tensor" if self.inference.tensor(operand) is not None else "number",
                              operand, why)
            method = next(name for name, made in torch_api.DTYPE_METHODS.items() if made == into.name) \
                if into.name in torch_api.DTYPE_METHODS.values() else None
            convert = f"convert `{_short(self.analysis, operand)}` to {into.name} (`.{method}()`) or " if method and \
                not divides else ""
            found.append(DtypeMismatch(
                operand, shown, site,
                f"the in-place {operation} into `{_short(self.analysis, receiver)}`, {into.name} ({into.why})",
                f"results of its own dtype ({into.name}: an in-place operation does not change the tensor's dtype)",
                wanted=into.name, advice=f"{convert}compute it out of place (`x = x {'/' if divides else '+'} v` makes a "
                                         f"new tensor of the promoted dtype)"))
        return found

    def _floating(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` is shown to be floating, its width aside: a floating dtype shown, a true
        division (of numbers, arrays or tensors: floating whatever the operands), arithmetic with
        a floating operand (type promotion keeps the floating kind)."""
        if depth > 8:
            return False
        shown = self.dtype(node)
        if shown is not None and shown is not _NONE and shown.holder in ("number", "tensor", "array"):
            return shown.floating
        if isinstance(node, cst.Name):
            return self._every_value(node, lambda value: self._floating(value, depth + 1))
        if isinstance(node, cst.UnaryOperation):
            return self._floating(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Divide):
                return True
            if isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Power)):
                return self._floating(node.left, depth + 1) or self._floating(node.right, depth + 1)
        return False

    def _state_entry_updates(self) -> list[DtypeMismatch]:
        """In-place float arithmetic (`v.mul_(decay)`) on every entry of a module's
        `state_dict()` (`for v in model.state_dict().values()`, also through `zip`, `list(..)`
        and names or attributes bound to them) where the module holds a layer with an int64
        buffer (BatchNorm's `num_batches_tracked`): at that entry the float result cannot be
        written into the int64 tensor. Not where the loop tests anything (`if v.dtype ..`)."""
        found: list[DtypeMismatch] = []
        for call in self._all_calls():
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in torch_api.INPLACE_ARITHMETIC_METHODS \
                    or not isinstance(func.value, cst.Name) or self.inference.qualname(func) is not None:
                continue
            operands = [arg.value for arg in call.args
                        if not arg.star and (arg.keyword is None or arg.keyword.value == "other")]
            shown = [self.dtype(operand) for operand in operands]
            floating = next((item for item in shown if item is not None and item is not _NONE and item.floating
                             and item.holder in ("number", "tensor")), None)
            if floating is None:  # `acc[name] * (eta / n)`: arithmetic with a true division is floating
                operand = next((value for value in operands if self._floating(value)), None)
                if operand is None:
                    continue
                floating = Dtype("floating", "tensor", operand, f"`{_short(self.analysis, operand)}` (floating: it "
                                 f"computes with a floating value)")
            bindings = self.model.resolve(func.value)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.FOR or bindings[0].value is None:
                continue
            loop = call.parent
            while loop is not None and not (isinstance(loop, cst.For) and loop.iter is bindings[0].value):
                loop = loop.parent
            if loop is None or any(isinstance(node, cst.Try) or isinstance(node, (cst.If, cst.IfExp)) and
                                   self._may_skip_entry(node.test, loop, func.value.value)
                                   for node in iter_nodes(loop.body)):
                continue
            module = self._state_of(bindings[0].value, bindings[0].path)
            layer = self._int64_buffer_layer(module) if module is not None else None
            if layer is None:
                continue
            entries = f"`{_short(self.analysis, module)}.state_dict()`"
            why = f"at one entry: {entries} holds the int64 `num_batches_tracked` buffer of " \
                  f"`{_short(self.analysis, layer)}`"
            found.append(DtypeMismatch(
                func.value, Dtype("int64", "tensor", layer, why), call,
                f"the in-place `{func.attr.value}` of {floating.why or 'a float'} (`{_short(self.analysis, call)}`)",
                "results of its own dtype (\"result type Float can't be cast to the desired output type Long\")",
                advice=f"update only the floating entries (`if {func.value.value}.is_floating_point():`)"))
        return found

    @staticmethod
    def _may_skip_entry(test: cst.BaseExpression, loop: cst.For, entry: str) -> bool:
        """A test in a loop over `state_dict()` entries that may single out the int64 entry: one
        that reads the entry (`v.is_floating_point()`, `v.dtype`), or its key otherwise than by
        comparing it with a string that names another entry (`name == "decoder.weight"` cannot
        skip `bn.num_batches_tracked`)."""
        names = [node.value for node in iter_nodes(loop.target) if isinstance(node, cst.Name)]
        for node in iter_nodes(test):
            if not isinstance(node, cst.Name) or node.value not in names:
                continue
            if node.value == entry:
                return True
            parent = node.parent
            if not (isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1 and isinstance(
                    parent.comparisons[0].operator, (cst.Equal, cst.NotEqual)) and all(
                    isinstance(side, cst.SimpleString) and "num_batches_tracked" not in side.value
                    for side in (parent.left, parent.comparisons[0].comparator) if side is not node)):
                return True
        return False

    def _state_of(self, iterable: cst.BaseExpression, path: tuple, depth: int = 0) -> Optional[cst.BaseExpression]:
        """The module whose `state_dict()` entries iterating ``iterable`` gives at ``path``
        (`model.state_dict().values()`, `.items()` at 1, `zip` of such, `list(..)` of one,
        a name or an attribute bound once to one)."""
        if depth > 6:
            return None
        if isinstance(iterable, cst.Name):
            value = self._sole_value(iterable)
            return self._state_of(value, path, depth + 1) if value is not None else None
        if isinstance(iterable, cst.Attribute):
            cls = self._class_of(iterable.value)
            assignments = cls.assignments(iterable.attr.value) if cls is not None else []
            if len(assignments) != 1 or assignments[0].value is None or assignments[0].path:
                return None
            return self._state_of(assignments[0].value, path, depth + 1)
        if not isinstance(iterable, cst.Call) or any(arg.star or arg.keyword is not None for arg in iterable.args):
            return None
        func = iterable.func
        args = [arg.value for arg in iterable.args]
        if isinstance(func, cst.Name) and self.inference.qualname(func) in ("builtins.list", "builtins.tuple") \
                and len(args) == 1:
            return self._state_of(args[0], path, depth + 1)
        if isinstance(func, cst.Name) and self.inference.qualname(func) == "builtins.zip":
            if not path or path[0] is None or path[0] >= len(args):
                return None
            return self._state_of(args[path[0]], path[1:], depth + 1)
        if isinstance(func, cst.Attribute) and func.attr.value in ("values", "items") and not args and \
                isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Attribute) and \
                func.value.func.attr.value == "state_dict" and not func.value.args:
            if path != ((1,) if func.attr.value == "items" else ()):
                return None
            return func.value.func.value
        return None

    def _int64_buffer_layer(self, module: cst.BaseExpression) -> Optional[cst.Call]:
        """A layer with an int64 buffer (a BatchNorm tracking its statistics) that ``module``,
        an instance of a module class of this file, builds (also in its submodule classes)."""
        cls = self._class_of(module)
        if cls is None or not self._is_module_class(cls):
            return None
        seen: set[int] = set()
        pending = [cls]
        while pending:
            current = pending.pop()
            if id(current) in seen or len(seen) > 8:
                continue
            seen.add(id(current))
            for method in current.methods.values():
                for call in self._calls_in(method.node):
                    qualname = self.inference.qualname(call.func)
                    if qualname in torch_api.INT64_BUFFER_LAYERS and self._tracks_statistics(call, qualname):
                        return call
            pending.extend(self._submodule_classes(current))
        return None

    @staticmethod
    def _tracks_statistics(call: cst.Call, qualname: str) -> bool:
        """The BatchNorm ``call`` builds keeps `track_running_stats` on: not given, or `True`."""
        name, position, _ = torch_api.TRAIN_MODE_LAYERS[qualname]
        given = keyword(call, name)
        positional = [arg.value for arg in call.args if arg.keyword is None]
        if given is None and position is not None and position < len(positional):
            given = positional[position]
        return given is None or isinstance(given, cst.Name) and given.value == "True"

    def _index_put(self, assign: cst.Assign) -> Optional[DtypeMismatch]:
        """``x[index] = value`` with a tensor index (a mask, indices, a list): torch copies
        ``value`` without converting it ("Index put requires the source and destination dtypes
        match"), so a ``value`` with dimensions shown to be of another dtype than ``x`` raises
        (a 0-dim one is a fill value, and a plain index or slice converts)."""
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Subscript):
            return None
        target = assign.targets[0].target
        if not any(self._advanced_index(element.slice) for element in target.slice):
            return None
        into = self.dtype(target.value)
        if into is None or into.holder != "tensor" or into.name not in torch_api.DTYPE_METHODS.values() or \
                not (into.floating or into.integer):
            return None
        given = self.dtype(assign.value)
        if given is None or given.holder != "tensor" or given.name == into.name or \
                not (given.floating or given.integer) or not self._dims_evident(assign.value):
            return None
        return DtypeMismatch(assign.value, given, target,
                             f"an indexed assignment into `{_short(self.analysis, target.value)}` ({into.name}, "
                             f"{into.why})", f"{into.name} (an index put does not convert)", wanted=into.name)

    def _advanced_index(self, index: cst.BaseSlice) -> bool:
        """An index that makes `x[index] = v` an index put: a tensor (a mask, indices) or a list."""
        if not isinstance(index, cst.Index):
            return False
        value = index.value
        if isinstance(value, cst.List):
            return True
        found = self.dtype(value)
        return found is not None and found.holder == "tensor" and (found.integer or found.name == "bool")

    def _converts_modules(self) -> bool:
        """Some module of the file is made float64 (`model.double()`): its layers then take float64."""
        for call in self._all_calls():
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("double", "to", "type", "half"):
                continue
            if func.attr.value in ("to", "type") and not any(
                    self._dtype_name(arg.value, False) not in (None, "float32") for arg in call.args):
                continue
            value = self.inference.infer(func.value)
            if value is not None and value.kind is Kind.MODULE:
                return True
        return False

    def _call_mismatch(self, call: cst.Call) -> Optional[DtypeMismatch]:
        if not call.args:
            return None  # every place judged below is an argument (`x.size()` is asked nothing)
        qualname = self.inference.qualname(call.func)
        module = None
        if qualname is None:
            value = self.inference.infer(call.func)
            if value is not None and value.kind is Kind.MODULE and value.qualname:
                module = value.qualname
            elif value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo) \
                    and isinstance(call.func, (cst.Name, cst.Attribute, cst.Call)):
                module = self._first_layer(call.func)  # a model of this file: the layer its input meets first
        if any(arg.star == "*" for arg in call.args):
            return None
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        # a loss built with class weights, or a functional loss given them
        position = torch_api.WEIGHT_MATCHING_LOSSES.get(qualname or "")
        if position is not None:
            weight = keyword(call, "weight") or (positional[position] if position < len(positional) else None)
            found = self.dtype(weight) if weight is not None else None
            if found is not None and found.holder == "tensor" and found.name == "float64":
                return DtypeMismatch(weight, found, call, f"the class weights of `{_last(qualname)}`", "float32")
        # a loss module or function whose target must be floating
        target = torch_api.FLOAT_TARGET_LOSSES.get(module or qualname or "")
        if target is not None:
            index, float64_raises = target
            given = (keyword(call, "target") if qualname else None) or (
                positional[index] if index < len(positional) else None)
            found = self.dtype(given) if given is not None else None
            if found is not None and found.holder == "tensor" and (
                    found.integer or (float64_raises and found.name == "float64")):
                return DtypeMismatch(given, found, call, f"the target of `{_last(module or qualname)}`",
                                     "a floating dtype (float32, as its input)")
        # class indices made floating for a loss that takes them as integers (`y.float()`)
        position = torch_api.INDEX_TARGET_LOSSES.get(module or qualname or "")
        if position is not None:
            given = (keyword(call, "target") if qualname else None) or (
                positional[position] if position < len(positional) else None)
            if self._floated_indices(given) or given is not None and self._floated_labels(given):
                found = self.dtype(given)
                if found is not None and found.holder == "tensor" and found.floating:
                    return DtypeMismatch(given, found, call,
                                         f"the class-index target of `{_last(module or qualname)}`",
                                         "an integer dtype (int64)", wanted="int64")
            found = self.dtype(given) if given is not None else None
            if found is not None and found.holder == "tensor" and found.floating and \
                    (module or qualname) in torch_api.INDEX_ONLY_TARGET_LOSSES:  # no probabilities: indices only
                return DtypeMismatch(given, found, call, f"the class-index target of `{_last(module or qualname)}`",
                                     "an integer dtype (int64)", wanted="int64")
            if found is not None and found.holder == "tensor" and found.integer and \
                    found.name not in torch_api.CLASS_INDEX_DTYPES:  # `y.int()`: int32 class indices
                return DtypeMismatch(given, found, call, f"the class-index target of `{_last(module or qualname)}`",
                                     "int64 (or uint8) class indices", wanted="int64")
        # indices given as floats (`nn.Embedding`, `F.one_hot`)
        index = torch_api.INDEX_INPUTS.get(module or qualname or "")
        if index is not None and index < len(positional):
            found = self.dtype(positional[index])
            if found is not None and found.holder == "tensor" and found.floating:
                return DtypeMismatch(positional[index], found, call, f"the indices of `{_last(module or qualname)}`",
                                     "an integer dtype (int64)", wanted="int64")
        # the index tensor of `scatter_`/`gather`/`index_select`
        index = torch_api.INDEX_ARGUMENT_FUNCTIONS.get(qualname or "")
        if index is None and qualname is None and isinstance(call.func, cst.Attribute) and \
                call.func.attr.value in torch_api.INDEX_ARGUMENT_METHODS and \
                self.inference.tensor(call.func.value) is not None:
            index = torch_api.INDEX_ARGUMENT_METHODS[call.func.attr.value]
        given = (keyword(call, "index") or (positional[index] if index < len(positional) else None)) \
            if index is not None else None
        if given is not None:
            found = self.dtype(given)
            if found is not None and found.holder == "tensor" and found.floating:
                name = qualname or call.func.attr.value  # type: ignore[attr-defined]
                return DtypeMismatch(given, found, call, f"the index of `{_last(name)}`", "an integer dtype (int64)",
                                     wanted="int64")
        if self._under_autocast(call):
            return None  # autocast casts the floating inputs of layers and products to its dtype
        if module is not None and self._built_with_dtype(call.func):
            return None  # `nn.LayerNorm(d, dtype=torch.float16)`: its weights have that dtype
        # the initial hidden state of a recurrent layer
        if module in torch_api.RECURRENT_LAYERS and len(positional) >= 2:
            states = positional[1]
            for state in (_items(states) or []) if isinstance(states, cst.Tuple) else [states]:
                found = self.dtype(state)
                if found is not None and found.holder == "tensor" and found.name != "float32" and \
                        (found.floating or found.integer):
                    return DtypeMismatch(state, found, call,
                                         f"the initial hidden state of `{_last(module)}` (float32 weights)", "float32")
        # a float32 layer, or an `nn.Sequential` that starts with one
        if module == "torch.nn.Sequential" and positional:
            module = self._first_layer(call.func)
        if module in torch_api.FLOAT32_WEIGHT_LAYERS and positional:
            found = self.dtype(positional[0])
            if found is not None and found.holder == "tensor" and found.name != "float32" and (
                    found.integer or found.floating or found.name == READ_NUMBERS):
                return DtypeMismatch(positional[0], found, call, f"the input of `{_last(module)}` (float32 weights)",
                                     "float32")
        model = self._model_class_called(call) if module is None and positional else None
        if model is not None:
            # The input goes through the model's `forward` (arithmetic with its float32 parameters keeps
            # float64: it promotes; `torch.cat`, views, submodules of the file) to a layer with weights.
            found = self.dtype(positional[0])
            if found is not None and found.holder == "tensor" and (found.name == "float64" or found.integer):
                owner = self._owner_of(model)
                reached = owner._reached_layer(model, found.name == "float64") if owner is not None else None
                if reached is not None:
                    layer, where = reached
                    line = f"line {self.analysis.line_index.position(where.start)[0]}" if owner is self else \
                        owner.analysis.location(where)
                    return DtypeMismatch(positional[0], found, call,
                                         f"the input of `{model.name}`, which its `forward` gives to `{_last(layer)}` "
                                         f"(float32 weights, {line})", "float32")
        if module is None and model is None and qualname is None:
            mismatch = self._argument_to_layer(call)
            if mismatch is not None:
                return mismatch
        operands = self._product_operands(call, qualname, positional)
        if operands is not None:
            return self._products(call, operands, qualname or call.func.attr.value)  # type: ignore[attr-defined]
        if qualname in torch_api.FUNCTIONAL_WEIGHTED and len(positional) >= 2:
            return self._product(call, positional[0], positional[1], qualname)
        return None

    def _product_operands(self, call: cst.Call, qualname: Optional[str],
                          positional: list[cst.BaseExpression]) -> Optional[list[cst.BaseExpression]]:
        """The operands of a product that does not promote (`torch.mm(a, b)`, `torch.einsum(eq,
        a, b)`, `torch.addmm(c, a, b)`, `a.bmm(b)`), which must share one dtype."""
        if qualname in torch_api.SAME_DTYPE_OPERANDS:
            positions = torch_api.SAME_DTYPE_OPERANDS[qualname]
            if positions is None:
                return positional[1:] if len(positional) >= 3 else None
            return [positional[index] for index in positions] if len(positional) > max(positions) else None
        func = call.func
        if qualname is None and isinstance(func, cst.Attribute) and \
                func.attr.value in torch_api.SAME_DTYPE_PRODUCT_METHODS and len(positional) == 1:
            return [func.value, positional[0]]
        return None

    def _products(self, call: cst.Call, operands: list[cst.BaseExpression], name: str) -> Optional[DtypeMismatch]:
        """A float32 operand and one shown to be of another dtype, in a product that takes one dtype."""
        found = [(operand, self.dtype(operand)) for operand in operands]
        known = [(operand, dtype) for operand, dtype in found if dtype is not None and dtype.holder == "tensor"]
        if not any(dtype.name == "float32" for _, dtype in known):
            return None
        odd = next(((operand, dtype) for operand, dtype in known if dtype.name != "float32" and
                    (dtype.floating or dtype.integer)), None)
        if odd is None:
            return None
        return DtypeMismatch(odd[0], odd[1], call, f"an operand of `{_last(name)}` (another is float32)", "float32")

    def _converted_mismatch(self, call: cst.Call) -> Optional[DtypeMismatch]:
        """``model(x)`` where ``model`` is bound once to a module converted as it is built
        (``nn.Sequential(..).double()``, ``Net().half()``) or converted by a statement of its
        own before the call (``model.double()``), its input meeting a layer with weights as it
        is, and ``x`` a tensor shown to be of another floating dtype."""
        if not isinstance(call.func, cst.Name) or not call.args or call.args[0].keyword or call.args[0].star:
            return None
        converted = self._module_conversion(call.func, call)
        if converted is None:
            return None
        dtype, conversion, construction = converted
        module = call.func
        layer = self._first_layer(construction)
        fact = torch_facts.fact(layer) if layer is not None else None
        if fact is None or not fact.parameters:
            return None
        given = call.args[0].value
        found = self.dtype(given)
        if found is None or found.holder != "tensor" or not found.floating or found.name == dtype:
            return None
        line = self.analysis.line_index.position(conversion.start)[0]
        how = self.analysis.snippet(conversion.func.attr) + "(" + ("..)" if conversion.args else ")")  # type: ignore
        return DtypeMismatch(given, found, call, f"the input of `{module.value}`, whose weights `.{how}` made "
                             f"{dtype} (line {line})", dtype, wanted=dtype)

    def _module_conversion(self, module: cst.Name, use: cst.CSTNode) -> Optional[tuple[str, cst.Call, cst.Call]]:
        """(dtype, the conversion, the module's construction) for a name bound once, to a
        construction of a module converted on the spot or by an unconditional statement
        ``module.double()`` in the same code before ``use``, and converted nowhere else."""
        bindings = self.model.resolve(module)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                or not isinstance(bindings[0].value, cst.Call):
            return None
        binding, value = bindings[0], bindings[0].value
        conversions = [value] if self._conversion_dtype(value) is not None else []
        construction = value.func.value if conversions else value  # type: ignore[attr-defined]
        for call in self._all_calls():
            func = call.func
            if call is value or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                     and func.value.value == module.value):
                continue
            if self.model.resolve(func.value) != [binding]:
                continue
            if self._conversion_dtype(call) is None:
                continue
            statement = call.parent
            if not (isinstance(statement, cst.Expr) and _block_of(statement) is _block_of(binding.node)) \
                    or call.start > use.start:
                return None  # converted on some path only, or after the use
            conversions.append(call)
        if len(conversions) != 1 or not isinstance(construction, cst.Call):
            return None
        value_of = self.inference.infer(construction)
        if value_of is None or value_of.kind is not Kind.MODULE:
            return None
        return self._conversion_dtype(conversions[0]), conversions[0], construction  # type: ignore[return-value]

    def _conversion_dtype(self, call: cst.Call) -> Optional[str]:
        """The floating dtype ``X.double()``, ``X.half()``, ``X.to(torch.float64)`` converts to."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        if func.attr.value in ("double", "half", "bfloat16") and not call.args:
            return torch_api.DTYPE_METHODS[func.attr.value]
        if func.attr.value == "to" and len(call.args) == 1:
            name = self._dtype_name(call.args[0].value, False)
            return name if name in ("float64", "float16", "bfloat16") else None
        return None

    def _floated_indices(self, node: Optional[cst.BaseExpression]) -> bool:
        """``y.float()`` (``.double()``, ``.to(torch.float32)``) of a tensor shown to be of an
        integer dtype: class indices, kept in their shape, made floating."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("float", "double", "half", "to", "type")):
            return False
        if node.func.attr.value in ("to", "type") and not any(
                (self._dtype_name(arg.value, False) or "").startswith("float") for arg in node.args):
            return False
        source = self.dtype(node.func.value)
        return source is not None and source.holder == "tensor" and source.integer

    def _floated_labels(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` makes one-dimensional integer data floating on its way into a tensor: class
        labels (`np.random.randint(0, k, n)`, a list of ints) given to
        `torch.Tensor(..)`/`torch.FloatTensor(..)`, to `torch.tensor(.., dtype=torch.float32)`, or
        made floating by `.astype(np.float32)`/`.float()` before `torch.from_numpy`. One
        dimension: a floating target in the input's shape would be class probabilities."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.Name):
            return self._every_value(node, lambda value: self._floated_labels(value, depth + 1))
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        qualname = self.inference.qualname(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("float", "double", "half") and not node.args or method == "astype" and len(positional) == 1 \
                    and (self._dtype_name(positional[0], True) or "").startswith("float"):
                return self._integer_labels(func.value, depth + 1)
            if method in ("cpu", "contiguous", "clone", "detach") or method == "to" and all(
                    self._is_device(arg.value) for arg in node.args):
                return self._floated_labels(func.value, depth + 1)
            return False
        if not positional:
            return False
        if qualname in ("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor"):
            return self._integer_labels(positional[0], depth + 1)
        if qualname in ("torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray"):
            wanted = keyword(node, "dtype")
            numpy = qualname.startswith("numpy.")
            if wanted is not None and (self._dtype_name(wanted, numpy) or "").startswith("float"):
                return self._integer_labels(positional[0], depth + 1)
            return self._floated_labels(positional[0], depth + 1)
        if qualname == "torch.from_numpy":
            return self._floated_labels(positional[0], depth + 1)
        return False

    def _every_value(self, name: cst.Name, holds) -> bool:
        """Every value assigned to ``name`` where it is read is one that ``holds``."""
        values = self._assigned(name)
        return bool(values) and len(values) == len(self.model.resolve(name)) and all(holds(value) for value in values)

    def _integer_labels(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` holds one dimension of integers: a list of int literals, the integers
        `np.random.randint(low, high, n)` or `torch.randint(low, high, (n,))` draw, or a name
        bound to one."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.Name):
            return self._every_value(node, lambda value: self._integer_labels(value, depth + 1))
        if isinstance(node, cst.List):
            return bool(node.elements) and all(isinstance(element, cst.Element) and isinstance(
                element.value, cst.Integer) for element in node.elements)
        found = self.dtype(node)
        if found is None or not found.integer or found.holder not in ("array", "tensor"):
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and self.inference.qualname(node.func) is None and node.func.attr.value in ("cpu", "numpy", "copy"):
            return self._integer_labels(node.func.value, depth + 1)
        qualname = self.inference.qualname(node.func) if isinstance(node, cst.Call) else None
        if qualname == "torch.randint":  # `torch.randint(0, k, (n,))`
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            size = keyword(node, "size") or (positional[-1] if positional else None)
            return isinstance(size, cst.Tuple) and len(size.elements) == 1
        if qualname == "numpy.random.randint":  # `np.random.randint(0, k, n)`
            size = keyword(node, "size") or (node.args[2].value if len(node.args) > 2 and not node.args[2].keyword
                                             else None)
            return isinstance(size, cst.Integer) or isinstance(size, cst.Tuple) and len(size.elements) == 1
        return False

    def _first_layer(self, module: cst.BaseExpression, depth: int = 0) -> Optional[str]:
        """The torch layer that first computes with the input of the `nn.Sequential`
        ``module`` (a name or `self.<attr>` bound to its construction in this file), past
        layers without parameters (activations, dropout, flatten: they keep a float dtype)."""
        constructions: list[Optional[cst.BaseExpression]] = []
        if isinstance(module, cst.Call):
            constructions = [module]
        elif isinstance(module, cst.Name):
            constructions = [binding.value if binding.kind is BindingKind.ASSIGN and not binding.path else None
                             for binding in self.model.resolve(module)]
        elif isinstance(module, cst.Attribute):
            cls = self._class_of(module.value)
            constructions = [assignment.value if not assignment.path else None
                             for assignment in (cls.assignments(module.attr.value) if cls is not None else [])]
        if len(constructions) != 1 or not isinstance(constructions[0], cst.Call) or depth > 4:
            return None
        construction = constructions[0]
        qualname = self.inference.qualname(construction.func)
        builder = self._file_function(construction.func) if qualname is None else None
        if builder is not None and builder.returns and not builder.is_generator and builder.kind == "function":
            # `self.encoder = build_mlp(sizes)`: the layer of what the builder returns
            found = {self._first_layer(value, depth + 1) for value in builder.returns}
            return found.pop() if len(found) == 1 else None
        if qualname == "torch.nn.Sequential" and len(construction.args) == 1 and construction.args[0].star == "*" \
                and isinstance(construction.args[0].value, cst.Name):
            first = self._first_listed(construction.args[0].value)  # `nn.Sequential(*layers)`
            if first is None:
                return None
            found_layer = self._first_layer(first, depth + 1)
            fact = torch_facts.fact(found_layer) if found_layer is not None else None
            return found_layer if fact is not None and fact.kind == "module_class" and fact.parameters else None
        if qualname is None:  # a module class of this file: the layer its `forward` first gives its input
            cls = next((binding.definition for binding in self.model.resolve(construction.func)
                        if isinstance(binding.definition, ClassInfo)), None) \
                if isinstance(construction.func, cst.Name) else None
            forward = cls.methods.get("forward") if cls is not None and self._is_module_class(cls) else None
            return self._input_layer(forward, depth + 1) if forward is not None else None
        if qualname != "torch.nn.Sequential":
            built = self.inference.infer(construction)
            cls = built.cls if built is not None and built.kind is Kind.MODULE else None
            owner = self._owner_of(cls) if isinstance(cls, ClassInfo) and cls.model is not self.model else None
            if owner is not None:  # `Net(..)` of `from models import Net`: what its module says of its `forward`
                forward = cls.methods.get("forward") if owner._is_module_class(cls) else None
                return owner._input_layer(forward, depth + 1) if forward is not None else None
            return qualname
        for arg in construction.args:
            if arg.star or arg.keyword is not None:
                return None
            layer = arg.value if not isinstance(arg.value, cst.Call) else arg.value
            found = self._first_layer(layer, depth + 1)
            if found is None:
                return None
            fact = torch_facts.fact(found)
            if fact is not None and fact.kind == "module_class" and fact.parameters is False:
                continue
            return found
        return None

    def _built_with_dtype(self, module: cst.BaseExpression) -> bool:
        """The layer ``module`` names (a name or `self.<attr>` bound to its construction) is built
        with a `dtype=` other than float32, or with `**kwargs` that may hold one."""
        constructions: list[Optional[cst.BaseExpression]] = []
        if isinstance(module, cst.Name):
            constructions = [binding.value for binding in self.model.resolve(module)
                             if binding.kind is BindingKind.ASSIGN and not binding.path]
        elif isinstance(module, cst.Attribute):
            cls = self._class_of(module.value)
            constructions = [item.value for item in (cls.assignments(module.attr.value) if cls is not None else [])
                             if not item.path]
        for construction in constructions:
            if isinstance(construction, cst.Call) and isinstance(construction.func, cst.Attribute) and \
                    construction.func.attr.value in ("to",):
                construction = construction.func.value  # `nn.Linear(..).to(device)`
            if not isinstance(construction, cst.Call):
                continue
            given = keyword(construction, "dtype")
            if any(arg.star == "**" for arg in construction.args) or \
                    given is not None and self._dtype_name(given, False) != "float32":
                return True
        return False

    def _under_autocast(self, node: cst.CSTNode) -> bool:
        """``node`` runs in a `with torch.autocast(..)` block (or a function decorated with one),
        or the file enters autocast somewhere and ``node`` is in a `forward` (it may run under it)."""
        if self._mentions_autocast is None:
            self._mentions_autocast = "autocast" in self.analysis.text
        if not self._mentions_autocast:
            return False
        for ancestor in ancestors(node):
            if isinstance(ancestor, cst.With) and any(
                    "autocast" in self.analysis.text[item.item.start:item.item.end] for item in ancestor.items):
                return True
            if isinstance(ancestor, cst.FunctionDef) and (ancestor.name.value == "forward" or any(
                    "autocast" in self.analysis.text[decorator.start:decorator.end]
                    for decorator in ancestor.decorators)):
                return True
        return False

    def _model_class_called(self, call: cst.Call) -> Optional[ClassInfo]:
        """The module class of this file ``call`` runs the `forward` of: `model(x)`, `self.forward(x)`."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            cls = self._class_of(func.value)
        else:
            value = self.inference.infer(func) if isinstance(func, (cst.Name, cst.Attribute, cst.Call)) else None
            cls = value.cls if value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo) \
                else None
        owner = self._owner_of(cls) if cls is not None else None
        return cls if owner is not None and owner._is_module_class(cls) and "forward" in cls.methods else None

    def _argument_to_layer(self, call: cst.Call) -> Optional[DtypeMismatch]:
        """A float64 (or integer) tensor given to a function or method of this file that carries
        that parameter to a layer with float32 weights: judged at each call site, so that one
        call giving float64 is found where the others give float32 (a helper used for training
        with `torch.Tensor(x)` and for embedding with `torch.tensor(x)`). Not where the argument
        carries a parameter of the calling function: its own call sites are judged instead."""
        if any(arg.star for arg in call.args):
            return None
        callee = self._file_function(call.func)
        if callee is None or callee.name in ("forward", "__init__") or callee.is_generator:
            return None
        code = enclosing_code(call)
        caller = self.model.functions.get(id(code)) if isinstance(code, cst.FunctionDef) else None
        for arg in call.args:
            found = self.dtype(arg.value)
            if found is None or found.holder != "tensor" or not (found.name == "float64" or found.integer):
                continue
            if caller is not None and self._reads_parameter(arg.value, caller, found, 0):
                continue
            param = self._receiving_param(call, callee, arg)
            reached = self._parameter_reaches_layer(callee, param, found.name == "float64") if param else None
            if reached is not None:
                layer, where = reached
                line = self.analysis.line_index.position(where.start)[0]
                return DtypeMismatch(arg.value, found, call, f"the argument `{param}` of `{callee.name}`, which it "
                                     f"gives to `{_last(layer)}` (float32 weights, line {line})", "float32")
        return None

    def _reads_parameter(self, node: cst.BaseExpression, caller: FunctionInfo, found: Dtype, depth: int) -> bool:
        """``node`` is a parameter of ``caller``, or a value made from one that keeps its
        dtype ``found`` (indexing, `.to(device)` and other methods of it)."""
        if depth > 8:
            return False
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            return bool(bindings) and all(
                binding.kind is BindingKind.PARAM and self._function_of(binding) is caller
                or binding.kind is BindingKind.ASSIGN and not binding.path and binding.value is not None
                and self._reads_parameter(binding.value, caller, found, depth + 1) for binding in bindings)
        if isinstance(node, cst.Subscript):
            return self._reads_parameter(node.value, caller, found, depth + 1)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            inner = self.dtype(node.func.value)
            return inner is not None and inner.name == found.name and \
                self._reads_parameter(node.func.value, caller, found, depth + 1)
        return False

    def _owner_of(self, cls: ClassInfo) -> Optional["Placement"]:
        """The placement analysis of the module that defines ``cls``: this one, or that of
        another module of the project the class is imported from (``from models import Net``)."""
        if cls.model is self.model:
            return self
        other = self.analysis.defining(cls)
        if other is None:
            return None
        cls.model.materialize_methods(cls)  # (a module another file imports: its bodies are built on demand)
        return other.placement

    def _reached_layer(self, cls: ClassInfo, promotes: bool, depth: int = 0) -> Optional[tuple[str, cst.CSTNode]]:
        """(the torch layer with float32 weights, the call) that the input of ``cls``'s `forward`
        reaches first, carried by what keeps its dtype: names, indexing, views and other methods
        that keep the dtype, torch functions of it, `torch.cat` with it, layers without weights,
        submodules of the file whose `forward` returns it so; with ``promotes`` (a float64
        input), also arithmetic with other tensors (float64 wins). A product with a float32
        parameter of the module (`torch.matmul(x, self.weight)`) counts as a layer."""
        forward = cls.methods.get("forward")
        params = forward.positional_params() if forward is not None else []
        if forward is None or len(params) < 2:
            return None
        return self._parameter_reaches_layer(forward, params[1].name.value, promotes, depth)

    def _parameter_reaches_layer(self, function: FunctionInfo, name: str, promotes: bool,
                                 depth: int = 0) -> Optional[tuple[str, cst.CSTNode]]:
        """(the torch layer with float32 weights, the call) that the parameter ``name`` of
        ``function`` (a `forward`, another method or a function of this file) reaches first on
        every path through it, carried as `_reached_layer` says; also through the calls of the
        file's functions and methods it is given to (`self.encode(x)`, `helper(x)`)."""
        if depth > 3 or not isinstance(function.node, cst.FunctionDef):
            return None
        key = ("reached", id(function), name, promotes)
        if key in self._answers:
            return self._answers[key]  # type: ignore[return-value]
        self._answers[key] = None
        carried = lambda node: self._carries(node, function, name, promotes, 0)  # noqa: E731
        found = None
        for call in sorted(self._calls_in(function.node), key=lambda call: call.end):
            if in_branch(call, function.node):
                continue
            hit = self._layer_taking(call, function, carried, promotes, depth)
            if hit is not None:
                found = (hit, call)
                break
        if found is None:
            for operation in self.analysis.nodes_of(cst.BinaryOperation):
                if isinstance(operation.operator, cst.MatrixMultiply) and \
                        function.node.start <= operation.start and operation.end <= function.node.end and \
                        not in_branch(operation, function.node) and \
                        (carried(operation.left) and self._float32_parameter(operation.right, function) or
                         carried(operation.right) and self._float32_parameter(operation.left, function)):
                    found = ("torch.matmul", operation)
                    break
        self._answers[key] = found
        return found

    def _callee_reaches_layer(self, call: cst.Call, carried, promotes: bool,
                              depth: int) -> Optional[tuple[str, cst.CSTNode]]:
        """The layer a function or method of this file (not a module's `forward`: `_reached_layer`
        judges those) that ``call`` runs gives one of the arguments ``carried`` says are carried."""
        if any(arg.star for arg in call.args) or self.inference.qualname(call.func) is not None:
            return None
        callee = self._file_function(call.func)
        if callee is None or callee.name in ("forward", "__init__") or callee.is_generator:
            return None
        for arg in call.args:
            if not carried(arg.value):
                continue
            param = self._receiving_param(call, callee, arg)
            reached = self._parameter_reaches_layer(callee, param, promotes, depth + 1) if param else None
            if reached is not None:
                return reached
        return None

    @staticmethod
    def _receiving_param(call: cst.Call, callee: FunctionInfo, arg: cst.Arg) -> Optional[str]:
        """The name of the parameter of ``callee`` that ``arg`` of ``call`` binds."""
        if arg.keyword is not None:
            return arg.keyword.value
        params = callee.positional_params()
        index = [item for item in call.args if item.keyword is None].index(arg) + \
            (1 if callee.kind in ("method", "classmethod") else 0)
        return params[index].name.value if index < len(params) else None

    def _layer_taking(self, call: cst.Call, method: FunctionInfo, carried, promotes: bool,
                      depth: int) -> Optional[str]:
        """The torch layer with float32 weights ``call`` runs on a carried value, if it does."""
        func = call.func
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if not positional:
            return None
        qualname = self.inference.qualname(func)
        if qualname in torch_api.SAME_DTYPE_PRODUCTS or qualname == "torch.nn.functional.linear":
            others = positional[:2]
            if len(others) == 2 and any(carried(value) and self._float32_parameter(other, method)
                                        for value, other in (others, others[::-1])):
                return qualname
            return None
        reached = self._callee_reaches_layer(call, carried, promotes, depth)
        if reached is not None:  # `self.forwardAE(x1, x2)`, `encode(model, x)`: a function of the file
            return reached[0]
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == method.self_name) or not carried(positional[0]):
            return None
        layer = self._first_layer(func)
        if layer in torch_api.FLOAT32_WEIGHT_LAYERS:
            return None if self._built_with_dtype(func) else layer
        sub = self._class_of(func)
        if sub is not None and sub is not method.cls and self._is_module_class(sub):
            reached = self._reached_layer(sub, promotes, depth + 1)
            return reached[0] if reached is not None else None
        return None

    def _float32_parameter(self, node: cst.BaseExpression, method: FunctionInfo) -> bool:
        """``node`` is ``self.<name>``, a float32 tensor of the module (an `nn.Parameter` of one)."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == method.self_name):
            return False
        found = self.dtype(node)
        return found is not None and found.holder == "tensor" and found.name == "float32"

    def _carries(self, node: cst.BaseExpression, method: FunctionInfo, name: str, promotes: bool,
                 depth: int) -> bool:
        """``node`` holds the parameter ``name`` of ``method`` or a value computed from it that
        keeps its dtype (see `_reached_layer`)."""
        if depth > 10:
            return False
        again = lambda inner: self._carries(inner, method, name, promotes, depth + 1)  # noqa: E731
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            return bool(bindings) and all(
                binding.kind is BindingKind.PARAM and binding.name == name and self._function_of(binding) is method
                or binding.kind is BindingKind.ASSIGN and not binding.path and binding.value is not None
                and not binding.iterates and again(binding.value) for binding in bindings)
        if isinstance(node, cst.Subscript):
            return again(node.value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return again(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (
                cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)):
            if promotes:
                return again(node.left) or again(node.right)
            return again(node.left) and isinstance(node.right, cst.Integer) and \
                not isinstance(node.operator, cst.Divide) or again(node.right) and isinstance(node.left, cst.Integer) \
                and not isinstance(node.operator, cst.Divide)
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if keyword(node, "dtype") is not None or any(arg.star for arg in node.args):
            return False
        qualname = self.inference.qualname(func)
        if qualname in ("torch.cat", "torch.stack", "torch.concat") and positional:
            items = _items(positional[0])
            if not items:
                return False
            return any(again(item) for item in items) if promotes else all(again(item) for item in items)
        if qualname is not None:
            return qualname in torch_api.TORCH_DTYPE_KEEPING_FUNCTIONS and bool(positional) and again(positional[0])
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.TENSOR_DTYPE_KEEPING_METHODS and \
                func.attr.value not in ("max", "min", "sum"):
            return again(func.value)
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and len(positional) == 1 and \
                len(node.args) == 1 and self._is_device(positional[0]):
            return again(func.value)  # `x.to(device)` moves it and keeps its dtype
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.value.value == method.self_name and positional and again(positional[0]):
            layer = self._first_layer(func)
            fact = torch_facts.fact(layer) if layer is not None else None
            if fact is not None and fact.kind == "module_class" and fact.parameters is False and \
                    layer not in torch_api.INDEX_INPUTS:
                return True  # an activation, dropout, flatten: keeps the dtype
            sub = self._class_of(func)
            if sub is not None and sub is not method.cls and self._is_module_class(sub) and depth < 6:
                return self._returns_carried(sub, promotes)
        return False

    def _returns_carried(self, cls: ClassInfo, promotes: bool) -> bool:
        """Every return of ``cls``'s `forward` carries its input (see `_carries`)."""
        forward = cls.methods.get("forward")
        params = forward.positional_params() if forward is not None else []
        if forward is None or len(params) < 2 or not forward.returns:
            return False
        key = ("returns", id(cls), promotes)
        if key not in self._answers:
            self._answers[key] = False
            self._answers[key] = all(self._carries(value, forward, params[1].name.value, promotes, 4)
                                     for value in forward.returns)
        return bool(self._answers[key])

    def _first_listed(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The first item of the list ``name`` reads, built in its function from an empty list
        (or a literal) by `append`, `extend` and `+=` of literal lists: the first written, when
        no branch holds it (`layers += [nn.Linear(a, b), nn.ReLU()]` in a loop)."""
        reached = self.model.resolve(name)
        if not reached:
            return None
        scope = reached[0].scope
        bindings = scope.bindings.get(name.value, []) if scope is not None else []
        starts = [binding for binding in bindings if binding.kind is BindingKind.ASSIGN]
        if len(starts) != 1 or starts[0].path or not isinstance(starts[0].value, cst.List) or any(
                binding.kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) for binding in bindings):
            return None
        start = starts[0]
        items = [element.value for element in start.value.elements if not isinstance(element, cst.StarredElement)]
        if len(items) != len(start.value.elements):
            return None
        if items:
            return items[0]
        written: list[cst.BaseExpression] = []
        for binding in bindings:
            if binding.kind is BindingKind.AUGASSIGN:
                if not isinstance(binding.value, cst.List):
                    return None
                written.extend(element.value for element in binding.value.elements[:1])
        for call in self._all_calls():
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == name.value and start in scope.bindings.get(name.value, [])
                    and scope.node.start <= call.start and call.end <= scope.node.end and call.args):
                continue
            if func.attr.value == "append":
                written.append(call.args[0].value)
            elif func.attr.value == "extend":
                if not isinstance(call.args[0].value, cst.List) or not call.args[0].value.elements:
                    return None
                written.append(call.args[0].value.elements[0].value)
        if not written:
            return None
        first = min(written, key=lambda node: node.start)
        return None if in_branch(first, scope.node) else first

    def _input_layer(self, forward: FunctionInfo, depth: int) -> Optional[str]:
        """The torch layer with weights that the input of ``forward`` (a module class's) reaches
        as it is: the first of the layers (`self.<attr>`) called with the unconverted parameter
        that has weights, past layers without (they keep its dtype) and layers the analysis
        cannot name (they get the parameter, not a converted copy: the next layer does too)."""
        params = forward.positional_params()
        if len(params) < 2:
            return None
        self_name, input_name = params[0].name.value, params[1].name.value
        calls = [call for call in self._calls_in(forward.node)
                 if call.args and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name)
                 and call.args[0].value.value == input_name and isinstance(call.func, cst.Attribute)
                 and isinstance(call.func.value, cst.Name) and call.func.value.value == self_name
                 and not in_branch(call, forward.node) and self._is_parameter(call.args[0].value)]
        for call in sorted(calls, key=lambda call: call.end):  # the innermost of `self.b(self.a(x))` runs first
            found = self._first_layer(call.func, depth)
            if found is None:
                continue
            fact = torch_facts.fact(found)
            if fact is not None and fact.kind == "module_class" and fact.parameters is False:
                continue
            return found
        return None

    def _is_parameter(self, name: cst.Name) -> bool:
        """``name`` reads the function's parameter, never rebound before it."""
        bindings = self.model.resolve(name)
        return bool(bindings) and all(binding.kind is BindingKind.PARAM for binding in bindings)

    def _product(self, call, left, right, qualname) -> Optional[DtypeMismatch]:
        first, second = self.dtype(left), self.dtype(right)
        if first is None or second is None or first.holder != "tensor" or second.holder != "tensor":
            return None
        if first.name == second.name:
            return None
        odd, odd_node, other = (first, left, second) if first.name != "float32" else (second, right, first)
        if other.name != "float32":
            return None
        return DtypeMismatch(odd_node, odd, call, f"an operand of `{_last(qualname)}` (the other is float32)",
                             "float32")

    # --- devices -------------------------------------------------------------------------

    def moved_classes(self) -> dict[int, tuple[ClassInfo, cst.Call]]:
        """This file's module classes whose instances are moved to a device that may not be
        the CPU (``.to(device)``, ``.cuda()``), directly or as a submodule of a moved module:
        ``id(ClassInfo)`` -> (the class, the move)."""
        if self._moved is not None:
            return self._moved
        moved: dict[int, tuple[ClassInfo, cst.Call]] = {}
        for call in self._all_calls():
            func = call.func
            if not self._moves_to_a_device(call):
                continue
            cls = self._class_of(func.value)
            for made in [cls] if cls is not None else self._factory_classes(func.value):
                if self._is_module_class(made):
                    moved.setdefault(id(made), (made, call))
            for held in self._contained_classes(func.value):
                moved.setdefault(id(held), (held, call))
        pending = list(moved.values())
        while pending:
            cls, call = pending.pop()
            for sub in self._submodule_classes(cls):
                if id(sub) not in moved:
                    moved[id(sub)] = (sub, call)
                    pending.append((sub, call))
        self._moved = moved
        return moved

    def _moves_to_a_device(self, call: cst.Call) -> bool:
        """``call`` is ``x.to(device)`` or ``x.cuda()``, to a device that may not be the CPU."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "cuda") \
                or self.inference.never_runs(call):
            return False
        if func.attr.value == "to":
            target = keyword(call, "device") or (call.args[0].value if call.args and call.args[0].keyword is None
                                                 else None)
            if target is None or self._is_cpu(target) or self._dtype_name(target, False) is not None:
                return False
        return True

    def imported_moves(self) -> list[tuple[ClassInfo, cst.Call]]:
        """The module classes of other modules of the project whose instances this file moves
        to a device (``Net(..).to(device)`` after ``from models import Net``): (class, move)."""
        if self._imported_moves is None:
            self._imported_moves = []
            for call in self._all_calls():
                if self._moves_to_a_device(call):
                    value = self.inference.infer(call.func.value)  # type: ignore[attr-defined]
                    cls = value.cls if value is not None and value.kind is Kind.MODULE else None
                    if isinstance(cls, ClassInfo) and cls.model is not self.model:
                        self._imported_moves.append((cls, call))
        return self._imported_moves

    def _moved_elsewhere(self) -> list[tuple[ClassInfo, cst.Call, str]]:
        """The module classes of this file that another module of the project moves to a
        device (``model = Net().to(device)`` in train.py, after ``from models import Net``),
        and the classes they build: (the class, the move, where the move is)."""
        project, path = self.inference.project, self.analysis.file_path
        if project is None or path is None:
            return []
        moved_there: dict[str, tuple] = {}  # class name -> (the move, the module it is in)
        for other_path in project.importing_scripts(path, _MOVES, consumer=path):
            other = project.analysis(other_path, consumer=path)
            for moved, move in (other.placement.imported_moves() if other is not None else ()):
                if getattr(moved.model.analysis, "file_path", None) == path:
                    moved_there.setdefault(moved.name, (move, other))
        if not moved_there:
            return []
        local = self.moved_classes()
        found: dict[int, tuple[ClassInfo, cst.Call, str, str]] = {}
        for cls in self.model.classes.values():
            if cls.name not in moved_there or id(cls) in local or cls.model is not self.model or \
                    any(name in cls.methods for name in ("to", "cuda", "_apply")) or \
                    not self._is_module_class(cls) or not self._leaves_tensors(cls):
                continue
            move, other = moved_there[cls.name]
            found[id(cls)] = (cls, move, other.location(move), other.snippet(move))
        pending = list(found.values())
        while pending:  # what a class moved elsewhere builds is moved with it
            cls, move, where, text = pending.pop()
            for sub in self._submodule_classes(cls):
                if id(sub) not in local and id(sub) not in found:
                    found[id(sub)] = (sub, move, where, text)
                    pending.append(found[id(sub)])
        return [(cls, move, f"`{text}` ({where})") for cls, move, where, text in found.values()]

    def _leaves_tensors(self, cls: ClassInfo) -> bool:
        """``cls`` (or a class it builds) makes a tensor without ``device=`` in its code: moving
        it elsewhere may leave one behind."""
        return bool(_FACTORY_CALL.search(self.analysis.text[cls.node.start:cls.node.end])) or any(
            _FACTORY_CALL.search(self.analysis.text[sub.node.start:sub.node.end])
            for sub in self._submodule_classes(cls))

    def _contained_classes(self, node: cst.BaseExpression, depth: int = 0) -> list[ClassInfo]:
        """This file's module classes built as layers of the torch container ``node`` is
        (``nn.Sequential(Normalize(..), net)``, or a name bound to one): moving the
        container moves them."""
        if depth > 3:
            return []
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or bindings[0].value is None:
                return []
            return self._contained_classes(bindings[0].value, depth + 1)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in ("to", "cuda"):
            return self._contained_classes(node.func.value, depth + 1)  # `net = nn.Sequential(..).to(device)`
        if not isinstance(node, cst.Call) or self.inference.qualname(node.func) not in torch_api.TRAIN_MODE_CONTAINERS:
            return []
        found = []
        for arg in node.args:
            if arg.keyword is not None or arg.star:
                continue
            layer = arg.value
            cls = self._class_of(layer) if isinstance(layer, cst.Call) else None
            if cls is not None and self._is_module_class(cls):
                found.append(cls)
            elif isinstance(layer, cst.Call):
                found.extend(self._contained_classes(layer, depth + 1))
        return found

    def _is_module_class(self, cls: ClassInfo) -> bool:
        base = self.inference.torch_base(cls)
        return base is not None and torch_api.is_module_class(base)

    def _holds_tensors(self, cls: ClassInfo, depth: int = 0) -> bool:
        """Moving an instance of the module class ``cls`` moves something: it (or a class it
        builds) makes a torch layer with parameters, a `Parameter`, or registers a buffer.
        True when its base is not `nn.Module` itself (what the base holds is not seen)."""
        if self.inference.torch_base(cls) != "torch.nn.Module" or depth > 3 or \
                re.search(r"register_buffer|register_parameter|Parameter\(", self.analysis.text[cls.node.start:cls.node.end]):
            return True
        for method in cls.methods.values():
            for call in self._calls_in(method.node):
                qualname = self.inference.qualname(call.func)
                if qualname is not None and (torch_api.normalize(qualname) in torch_api.PARAMETER_MODULES or
                                             qualname in ("torch.nn.Sequential", "torch.nn.ModuleList",
                                                          "torch.nn.ModuleDict")):
                    return True
        return any(self._holds_tensors(sub, depth + 1) for sub in self._submodule_classes(cls))

    def _is_cpu(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(node, cst.SimpleString):
            return node.value.strip("\"'") == "cpu"
        if isinstance(node, cst.Call) and self.inference.qualname(node.func) == "torch.device" and node.args:
            return self._is_cpu(node.args[0].value, depth + 1)
        if isinstance(node, cst.Name) and depth < 4:
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:  # what every call site passes
                return self._at_every_call_site(bindings[0], lambda value: self._is_cpu(value, depth + 1) or None) \
                    is not None
            return bool(bindings) and all(binding.kind is BindingKind.ASSIGN and binding.value is not None
                                          and not binding.path and self._is_cpu(binding.value, depth + 1)
                                          for binding in bindings)
        return False

    def _submodule_classes(self, cls: ClassInfo) -> list[ClassInfo]:
        found = self._handed_submodule_classes(cls)
        for method in cls.methods.values():
            scope = method.scope
            if scope is None:
                continue
            for call in self._calls_in(method.node):
                if isinstance(call.func, cst.Name):
                    for binding in self.model.resolve(call.func):
                        sub = binding.definition
                        if isinstance(sub, ClassInfo) and sub is not cls and self._is_module_class(sub):
                            found.append(sub)
        return found

    def _from_parameter(self, value: cst.BaseExpression, method: FunctionInfo) -> bool:
        """``value`` is a parameter of ``method`` (not `self`), indexed or sliced at most
        (`bounds`, `bounds[0:1, :]`): the tensor a call site hands to the constructor."""
        while isinstance(value, cst.Subscript):
            value = value.value
        if not isinstance(value, cst.Name) or value.value == method.self_name:
            return False
        return any(binding.kind is BindingKind.PARAM for binding in self.model.resolve(value))

    def _handed_submodule_classes(self, cls: ClassInfo) -> list[ClassInfo]:
        """Module classes of the file whose instances the call sites of ``cls`` hand to its
        constructor, which keeps them as they are in an attribute (`self.transform = transform`):
        registered submodules, which moving an instance of ``cls`` moves."""
        init = cls.methods.get("__init__")
        if init is None or init.self_name is None:
            return []
        found = []
        for statement in self._assignments_in(init):
            target = statement.targets[0].target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and
                    target.value.value == init.self_name and isinstance(statement.value, cst.Name)):
                continue
            bindings = self.model.resolve(statement.value)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
                continue
            for value in self._passed(bindings[0]) or ():
                if isinstance(value, cst.Name):
                    value = self._sole_value(value)
                handed = self._class_of(value) if isinstance(value, cst.Call) else None
                if handed is not None and handed is not cls and self._is_module_class(handed):
                    found.append(handed)
        return found

    def _calls_in(self, node: cst.CSTNode) -> list[cst.Call]:
        return [call for call in self._all_calls() if node.start <= call.start and call.end <= node.end]

    def device_mismatches(self) -> list[DeviceMismatch]:
        found: list[DeviceMismatch] = []
        for cls, move, where in self._moved_elsewhere():
            found.extend(replace(mismatch, moved_where=where)
                         for mismatch in (*self._left_attributes(cls, move), *self._made_in_forward(cls, move)))
        if not _MOVES.search(self.analysis.text) and not _MADE_ON_A_DEVICE.search(self.analysis.text):
            return found  # nothing is moved or made on a device here: only what another module moves
        for cls, move in self.moved_classes().values():
            if any(name in cls.methods for name in ("to", "cuda", "_apply")):
                continue
            found.extend(self._left_attributes(cls, move))
            found.extend(self._made_in_forward(cls, move))
            found.extend(self._stale_caches(cls, move))
        found.extend(self._built_after_own_move())
        found.extend(self._held_in_plain_containers())
        made_in_modules = {id(mismatch.made) for mismatch in found}
        # A tensor made in `forward` and also given to a loss as a CPU target is reported once,
        # where it is made (`targets = torch.arange(n)` in a contrastive model's `forward`).
        found.extend(mismatch for mismatch in self._unmoved_inputs() if id(mismatch.made) not in made_in_modules)
        for mixed in self._mixed_operands():  # unless a finding above already names the tensor there
            if not any(other.used is mixed.used or other.made is mixed.made or
                       mixed.node.start <= other.node.start < mixed.node.end for other in found):
                found.append(mixed)
        found.sort(key=lambda mismatch: mismatch.node.start)
        return found

    # --- what stays on the CPU while the module goes ------------------------------------

    def cpu_origin(self, node: cst.BaseExpression, depth: int = 0) -> Optional[tuple[cst.CSTNode, str]]:
        """(the node that shows ``node`` is a tensor on the CPU, how), when every way it can
        come shows it: a factory or conversion without `device=`, `.cpu()`, a batch of a
        `DataLoader`, and what keeps the device of those (methods, arithmetic among them)."""
        return self._answer("cpu", self._cpu_origin, node, depth)  # type: ignore[return-value]

    def dropped_moves(self) -> list[cst.Call]:
        """``x.to(device)`` / ``x.cuda()`` written as a statement of its own, on a value the
        inference shows is a tensor: the moved copy is dropped and ``x`` stays where it was."""
        if not _MOVES.search(self.analysis.text):
            return []
        return [call for call in self._all_calls()
                if _dropped_move_of(call) is not None and isinstance(call.func.value, (cst.Name, cst.Attribute))
                and self._is_move(call) and self._names_device(call)
                and (self.inference.tensor(call.func.value) is not None  # type: ignore[attr-defined]
                     or self.cpu_origin(call.func.value) is not None)]  # `X = batch["X"]` of a loader

    def _names_device(self, move: cst.Call) -> bool:
        """The move says a device (`.cuda()`, `.to(x.device)`, `.to("cuda")`, `.to(device)`),
        not something that may be a dtype (`.to(orig_dtype)`)."""
        target = self._move_target(move)
        if target is None:
            return True
        if isinstance(target, cst.Call):
            return self.inference.qualname(target.func) == "torch.device"
        return self._is_device(target)

    def dropped_move(self, name: cst.Name) -> Optional[cst.Call]:
        """``x.to(device)`` (or ``x.cuda()``) as a statement of its own between the binding of the
        tensor ``name`` and this read of it: the moved copy it returns is dropped."""
        for read in self.model.reads_since_binding(name):
            call = read.parent.parent if isinstance(read.parent, cst.Attribute) else None
            if isinstance(call, cst.Call) and _dropped_move_of(call) is read:
                return call
        return None

    def _answer(self, question: str, compute, node: cst.BaseExpression, depth: int):
        """``compute(node, depth)``, remembered unless the depth limit cut it short (the same
        node reached by a shorter way may have an answer)."""
        key = (question, id(node))
        if key in self._answers:
            return self._answers[key]
        if depth > _MAX_DEPTH:
            self._cut_short = True
            return None
        outer, self._cut_short = self._cut_short, False
        self._answers[key] = None  # while it is being computed: a cycle back to it finds nothing
        answer = compute(node, depth)
        if self._cut_short:
            del self._answers[key]
        else:
            self._answers[key] = answer
        self._cut_short = self._cut_short or outer
        return answer

    def _cpu_origin(self, node: cst.BaseExpression, depth: int = 0) -> Optional[tuple[cst.CSTNode, str]]:
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            found = [self._cpu_binding(binding, depth + 1) for binding in bindings]
            return found[0] if found and all(item is not None for item in found) else None
        if isinstance(node, cst.Call):
            func = node.func
            qualname = self._called_qualname(func)
            legacy = qualname is not None and torch_api.is_cpu_tensor_type(qualname)
            if qualname in torch_api.TORCH_SIZED_FACTORIES or qualname in torch_api.TORCH_CONVERTERS or legacy:
                # `torch.zeros(1, *size)`: sizes; `**kwargs` may hold a `device=`
                if keyword(node, "device") is not None or any(arg.star == "**" for arg in node.args) or \
                        (qualname not in torch_api.TORCH_SIZED_FACTORIES and any(arg.star for arg in node.args)):
                    return None
                if (qualname in torch_api.TORCH_CONVERTERS or legacy) and qualname != "torch.from_numpy" and \
                        node.args:
                    source = self.dtype(node.args[0].value)
                    if source is None or source.holder not in ("array", "number"):
                        if not self._python_data(node.args[0].value, 0):  # its own depth: the data, not the path here
                            return None  # `torch.tensor(t)` of a tensor: wherever `t` is
                return node, f"`{_short(self.analysis, node)}` makes it on the CPU (no `device=`)"
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            if qualname in torch_api.SAME_TENSOR_WRAPPERS and positional:
                return self.cpu_origin(positional[0], depth + 1)  # `Variable(x)` is `x`
            if qualname is not None and positional and keyword(node, "device") is None and \
                    (self._computes_from_first(qualname) or qualname in torch_api.SEQUENCE_PADDING_FUNCTIONS):
                return self.cpu_origin(positional[0], depth + 1)  # `F.one_hot(labels, n)`
            transform = self._tensor_making_transform(node)
            if transform is not None:
                return node, f"`{_short(self.analysis, transform)}` makes a tensor on the CPU"
            if isinstance(func, cst.Attribute) and qualname is None:
                method = func.attr.value
                if method == "cpu" and not node.args:
                    return node, f"`{_short(self.analysis, node)}` is on the CPU"
                if method in ("to", "cuda", "type", "type_as", "pin_memory") or method.startswith("new_"):
                    if method == "to" and node.args and self._dtype_name(node.args[0].value, False) is not None \
                            and len(node.args) == 1:
                        return self.cpu_origin(func.value, depth + 1)
                    return None
                if method in torch_api.TENSOR_DTYPE_KEEPING_METHODS or method in torch_api.DTYPE_METHODS or \
                        self._keeps_device_of(method):
                    return self.cpu_origin(func.value, depth + 1)
            function = self._file_function(func) or self._forward_of(func) or self._call_method(node) \
                if qualname is None else None
            if function is not None and function.returns and not function.is_generator:
                found = [self.cpu_origin(returned, depth + 1) for returned in function.returns]
                if all(item is not None for item in found):
                    origin, why = found[0]
                    return origin, f"{why}; `{_short(self.analysis, node)}` returns it"
            return None
        if isinstance(node, cst.Subscript):
            return self.cpu_origin(node.value, depth + 1)
        if isinstance(node, cst.Attribute) and self.inference.qualname(node) is None:
            return self._cpu_attribute(node, depth)
        if isinstance(node, cst.Tuple) and node.elements:
            found = [self.cpu_origin(element.value, depth + 1) if not isinstance(element, cst.StarredElement) else None
                     for element in node.elements]
            return found[0] if all(item is not None for item in found) else None
        if isinstance(node, (cst.List, cst.ListComp)):  # `torch.stack([torch.randn(..) for _ in ..])`
            items = _items(node)
            found = [self.cpu_origin(item, depth + 1) for item in items or ()]
            return found[0] if found and all(item is not None for item in found) else None
        if isinstance(node, cst.Dict) and node.elements and all(isinstance(element, cst.DictElement)
                                                                for element in node.elements):
            # `{"input_ids": ids, "attention_mask": mask}` a tokenizer returns: an entry is where all are
            found = [self.cpu_origin(element.value, depth + 1) for element in node.elements]
            return found[0] if all(item is not None for item in found) else None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and \
                isinstance(node.comparisons[0].comparator, (cst.Integer, cst.Float)):
            return self.cpu_origin(node.left, depth + 1)  # `mask == 0`
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.cpu_origin(node.expression, depth + 1)  # `-alpha`, `~mask`
        if isinstance(node, cst.BinaryOperation):
            left, right = self.cpu_origin(node.left, depth + 1), self.cpu_origin(node.right, depth + 1)
            if left is not None and (right is not None or self._python_number(node.right)):
                return left
            if right is not None and self._python_number(node.left):
                return right
        return None

    def _called_qualname(self, func: cst.BaseExpression) -> Optional[str]:
        """The torch function a call runs: its name, or for a parameter holding a function
        (`window_fn=torch.hann_window`), the one its default and every call site give."""
        qualname = self.inference.qualname(func)
        if qualname is not None or not isinstance(func, cst.Name):
            return qualname
        bindings = self.model.resolve(func)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        passed = self._passed(bindings[0])
        names = {self.inference.qualname(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
                 for value in passed or ()}
        return names.pop() if len(names) == 1 and None not in names else None

    def _python_number(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` is a Python number (`0.5`, `sigma` given `10.0` at every call site, or
        annotated `float`, arithmetic of those, a name every binding of which gives one):
        with a tensor, the result stays where the tensor is."""
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self._python_number(node.expression)  # `-1 * alpha`
        if isinstance(node, cst.BinaryOperation) and depth < 4:  # `(high - low)` of two Python numbers
            return self._python_number(node.left, depth + 1) and self._python_number(node.right, depth + 1)
        if isinstance(node, cst.Call):  # `len(x)`, `float(s)`, `sum(weights)` of a list, `math.sqrt(d)`
            name = self._builtin(node.func)
            if name in ("len", "float", "int", "round", "abs"):
                return True
            if name in ("sum", "max", "min") and len(node.args) == 1:
                return self._python_data(node.args[0].value, 0)
            return (self.inference.qualname(node.func) or "").startswith("math.")
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if bindings and all(self._number_binding(binding, depth) for binding in bindings):
                return True  # `high: float` then `high += 0.001`
        found = self.dtype(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        return found is not None and found.holder == "number"

    def _number_binding(self, binding: Binding, depth: int) -> bool:
        """``binding`` gives a Python number: a parameter annotated `float`/`int`, or an
        assignment (also augmented) of a Python number."""
        if binding.kind is BindingKind.PARAM:
            annotation = binding.annotation
            if isinstance(annotation, cst.Annotation):
                annotation = annotation.annotation
            return isinstance(annotation, cst.Name) and annotation.value in ("float", "int")
        return binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) and not binding.path and \
            not binding.iterates and binding.value is not None and depth < 4 and \
            self._python_number(binding.value, depth + 1)

    def _python_data(self, node: cst.BaseExpression, depth: int) -> bool:
        """``node`` is a list, tuple or comprehension written in the code, or a name bound only
        to those, or a parameter every call site gives one (`torch.tensor(anchors)`)."""
        if isinstance(node, (cst.List, cst.Tuple, cst.ListComp)):
            return True
        if isinstance(node, cst.Call) and self._builtin(node.func) in ("list", "tuple") and len(node.args) == 1:
            return self._python_iterable(node.args[0].value, 0)  # `list(itertools.product(range(n), range(n)))`
        if isinstance(node, cst.Call) and depth <= 4 and self.inference.qualname(node.func) is None:
            function = self._file_function(node.func)  # `torch.tensor(tokenize(text))`: what it returns
            return function is not None and bool(function.returns) and not function.is_generator and \
                all(self._python_data(returned, depth + 1) for returned in function.returns)
        if isinstance(node, cst.Attribute) and depth <= 4:  # `self.weights`, set once in `__init__`
            cls = self._class_of(node.value)
            init = cls.methods.get("__init__") if cls is not None else None
            assignments = cls.assignments(node.attr.value) if cls is not None else []
            return init is not None and len(assignments) == 1 and assignments[0].function is init \
                and assignments[0].value is not None and not assignments[0].path \
                and self._python_data(assignments[0].value, depth + 1)
        if not isinstance(node, cst.Name) or depth > 4:
            return False
        bindings = self.model.resolve(node)
        if not bindings:
            return False
        for binding in bindings:  # `if alpha is None: alpha = [1.0] * n` after a parameter given lists
            if binding.kind is BindingKind.PARAM:
                if self._at_every_call_site(binding, lambda value: self._python_data(value, depth + 1) or None) \
                        is None:
                    return False
            elif binding.kind is not BindingKind.ASSIGN or binding.path or binding.value is None or \
                    not (isinstance(binding.value, (cst.List, cst.Tuple, cst.ListComp)) or
                         isinstance(binding.value, cst.BinaryOperation) and _items(binding.value) is not None):
                return False
        return True

    def _builtin(self, func: cst.BaseExpression) -> Optional[str]:
        """The name of the Python builtin ``func`` is (`range`, `list`), unless the file rebinds it."""
        return func.value if isinstance(func, cst.Name) and not self.model.resolve(func) else None

    def _python_iterable(self, node: cst.BaseExpression, depth: int) -> bool:
        """``node`` iterates over Python data: `range(..)`, and `zip`/`enumerate`/`itertools` of those."""
        if depth > 4 or not isinstance(node, cst.Call):
            return isinstance(node, (cst.List, cst.Tuple, cst.ListComp))
        name = self._builtin(node.func)
        if name == "range":
            return True
        qualname = self.inference.qualname(node.func) or ""
        if name in ("zip", "enumerate", "sorted", "reversed") or qualname.startswith("itertools."):
            return bool(node.args) and all(arg.keyword is not None or
                                           not arg.star and self._python_iterable(arg.value, depth + 1)
                                           for arg in node.args)
        return False

    def _tensor_making_transform(self, call: cst.Call) -> Optional[cst.CSTNode]:
        """The torchvision transform that ``call`` applies when it turns an image into a CPU
        tensor: `to_tensor(img)`, `T.ToTensor()(img)`, or `transform(img)` with `transform`
        bound once to a `Compose` holding `ToTensor` and nothing that names a device."""
        qualname = self.inference.qualname(call.func)
        if qualname in torch_api.TENSOR_MAKING_TRANSFORM_FUNCTIONS:
            return call
        made = self._sole_value(call.func) if isinstance(call.func, cst.Name) else call.func
        if not isinstance(made, cst.Call):
            return None
        made_by = self.inference.qualname(made.func)
        if made_by in torch_api.TENSOR_MAKING_TRANSFORMS:
            return made
        if made_by not in torch_api.TRANSFORM_COMPOSITIONS or not made.args or \
                not isinstance(made.args[0].value, (cst.List, cst.Tuple)):
            return None
        steps = [element.value for element in made.args[0].value.elements]
        if re.search(r"\.to\(|cuda|device", self.analysis.text[made.start:made.end]) or not any(
                isinstance(step, cst.Call) and self.inference.qualname(step.func) in torch_api.TENSOR_MAKING_TRANSFORMS
                for step in steps):
            return None
        return made

    def _cpu_attribute(self, node: cst.Attribute, depth: int) -> Optional[tuple[cst.CSTNode, str]]:
        """`self.alpha` of a class of this file (a module, or a plain class such as a metric),
        assigned once, in the `__init__` of the class or of a base class of the file, a tensor
        on the CPU, and not a buffer (moving a module leaves a plain attribute where it is;
        nothing moves the attribute of a plain class)."""
        cls = self._class_of(node.value)
        name = node.attr.value
        lineage = self._lineage(cls) if cls is not None else []
        if not lineage or any(method in owner.methods for owner in lineage for method in ("to", "cuda", "_apply")):
            return None
        holders = [(owner, owner.assignments(name)) for owner in lineage]
        holders = [(owner, assignments) for owner, assignments in holders if assignments]
        if len(holders) != 1:
            return None
        owner, assignments = holders[0]
        init = owner.methods.get("__init__")
        source = "".join(self.analysis.text[item.node.start:item.node.end] for item in lineage)
        if f'"{name}"' in source or f"'{name}'" in source or "setattr" in source:
            return None
        values = self._attribute_values(assignments, name)
        if len(assignments) == 1 and (init is None or assignments[0].function is not init):
            return None  # made once, outside `__init__`: it may be made after its first use
        if not values:
            return None
        found_all = [self.cpu_origin(value, depth + 1) for value in values]
        if any(item is None for item in found_all):
            return None
        found = found_all[-1]  # a reset (`self.losses = torch.tensor([])` in `reset()`) is where it is made last
        if not self._is_module_class(cls):
            return found[0], f"{found[1]}; `self.{name}` is a plain attribute of `{cls.name}`, which nothing moves"
        return found[0], f"{found[1]}; `self.{name}` is a plain attribute of `{owner.name}`, not a buffer"

    def _attribute_values(self, assignments: list, name: str) -> Optional[list[cst.BaseExpression]]:
        """The values ``self.<name>`` is made from: every assignment but those computing it from
        itself without a move (`self.losses = torch.cat([self.losses, loss])`, which stays where it
        was or fails there); None when one unpacks, moves, or none makes it afresh."""
        values = []
        for assignment in assignments:
            value = assignment.value
            if value is None or assignment.path:
                return None
            self_name = assignment.function.self_name
            if any(isinstance(node, cst.Attribute) and node.attr.value == name and isinstance(node.value, cst.Name)
                   and node.value.value == self_name for node in iter_nodes(value)):
                if any(isinstance(call, cst.Call) and (self._is_move(call) or keyword(call, "device") is not None)
                       for call in iter_nodes(value)):
                    return None
                continue
            values.append(value)
        return values or None

    def _lineage(self, cls: ClassInfo) -> list[ClassInfo]:
        """``cls`` and its base classes defined in this file, nearest first."""
        return self.inference.file_lineage(cls, generations=4)[0]

    def _cpu_binding(self, binding: Binding, depth: int) -> Optional[tuple[cst.CSTNode, str]]:
        if binding.kind is BindingKind.PARAM:  # `accuracy(out, labels)`: what every call site gives
            return self._at_every_call_site(binding, lambda value: self.cpu_origin(value, depth + 1))
        if binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.iterates:
            value: Optional[cst.BaseExpression] = binding.value
            if binding.path and isinstance(value, cst.Name):  # `inputs, targets = batch` in a loop over a loader
                unpacked = self.model.resolve(value)
                if len(unpacked) == 1 and unpacked[0].kind is BindingKind.FOR and unpacked[0].value is not None:
                    loader = self._loader(unpacked[0].value, unpacked[0].path + binding.path)
                    if loader is not None:
                        return loader, f"`{_short(self.analysis, loader)}` yields batches on the CPU"
                return None
            for index in binding.path:  # `xb, yb = xb, yb.to(device)`
                if index is None or not isinstance(value, cst.Tuple) or index >= len(value.elements) or \
                        isinstance(value.elements[index], cst.StarredElement):
                    return None
                value = value.elements[index].value
            return self.cpu_origin(value, depth) if value is not None else None
        if binding.kind in (BindingKind.ASSIGN, BindingKind.FOR) and binding.value is not None and \
                (binding.kind is BindingKind.FOR or binding.iterates):
            loader = self._loader(binding.value, binding.path)
            if loader is not None:
                return loader, f"`{_short(self.analysis, loader)}` yields batches on the CPU"
            return self._cpu_element(binding.value, binding.path, depth + 1)
        return None

    def _cpu_element(self, iterable: cst.BaseExpression, path: tuple, depth: int) -> Optional[tuple[cst.CSTNode, str]]:
        """The CPU origin of the items at ``path`` of a list written out or built by a
        comprehension in this file (`batches = [(torch.randn(..), ..) for _ in ..]`), when
        every item shows it."""
        if isinstance(iterable, cst.Name):
            bindings = self.model.resolve(iterable)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and depth < _MAX_DEPTH:
                return self._at_every_call_site(  # `evaluate(model, batches)`
                    bindings[0], lambda value: self._cpu_element(value, path, depth + 1))
            values = self._assigned(iterable)
            if len(values) != 1:
                return None
            iterable = values[0]
        items = _items(iterable)
        if items is None:
            return None
        found = []
        for item in items:
            for index in path:
                if index is None or not isinstance(item, cst.Tuple) or index >= len(item.elements) or \
                        isinstance(item.elements[index], cst.StarredElement):
                    return None
                item = item.elements[index].value
            found.append(self.cpu_origin(item, depth + 1))
        return found[0] if found and all(origin is not None for origin in found) else None

    def _loader(self, iterable: cst.BaseExpression, path: tuple, depth: int = 0) -> Optional[cst.Call]:
        """The `DataLoader` whose batch (part) a loop target at ``path`` over ``iterable`` is,
        when its dataset's items are not on a device (`TensorDataset` of CPU tensors, a
        `Dataset` class whose `__getitem__` moves nothing)."""
        if isinstance(iterable, cst.Attribute) and depth < 2:  # `self.loader = loader` in `__init__`
            cls = self._class_of(iterable.value)
            assignments = cls.assignments(iterable.attr.value) if cls is not None else []
            if len(assignments) != 1 or assignments[0].path or assignments[0].value is None:
                return None
            return self._loader(assignments[0].value, path, depth + 1)
        if isinstance(iterable, cst.Name):
            bindings = self.model.resolve(iterable)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and depth < 2:  # `train(model, loader)`
                passed = self._passed(bindings[0])
                found = [self._loader(value, path, depth + 1) if value is not None else None for value in passed or ()]
                return found[0] if found and all(item is not None for item in found) else None
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or bindings[0].iterates or bindings[0].value is None:
                return None
            iterable = bindings[0].value
        if not isinstance(iterable, cst.Call):
            return None
        if isinstance(iterable.func, cst.Name) and iterable.func.value == "enumerate" and len(iterable.args) == 1:
            return self._loader(iterable.args[0].value, path[1:], depth) if path and path[0] == 1 else None
        if self.inference.qualname(iterable.func) not in torch_api.DATA_LOADERS or \
                not self._default_collate(keyword(iterable, "collate_fn")):
            return None
        args = [arg.value for arg in iterable.args if arg.keyword is None]
        dataset = keyword(iterable, "dataset") or (args[0] if args else None)
        return iterable if dataset is not None and self._cpu_dataset(dataset, path, depth) else None

    def _cpu_dataset(self, dataset: cst.BaseExpression, path: tuple, depth: int) -> bool:
        """The items of ``dataset`` (at ``path``) are not on a device: a `TensorDataset` of CPU
        tensors, a `Dataset` class of the file whose `__getitem__` moves nothing; through names,
        and a parameter every call site gives one (`train(model, train_dataset)`)."""
        for _ in range(3):
            if not isinstance(dataset, cst.Name):
                break
            bindings = self.model.resolve(dataset)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and depth < 2:
                passed = self._passed(bindings[0])
                return bool(passed) and all(value is not None and self._cpu_dataset(value, path, depth + 1)
                                            for value in passed)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
                return False
            dataset = bindings[0].value
        if not isinstance(dataset, cst.Call):
            return False
        qualname = self.inference.qualname(dataset.func)
        function = self._file_function(dataset.func) if qualname is None else None
        if function is not None and len(function.returns) == 1 and not function.is_generator and \
                isinstance(function.returns[0], cst.Call):  # `DataLoader(make_dataset(n))`
            dataset = function.returns[0]
            qualname = self.inference.qualname(dataset.func)
        if qualname in torch_api.TENSOR_DATASETS:
            tensors = [arg.value for arg in dataset.args if arg.keyword is None and not arg.star]
            if not path or path[0] is None or path[0] >= len(tensors) or len(tensors) != len(dataset.args):
                return False
            return self.cpu_origin(tensors[path[0]]) is not None
        if qualname is not None or not isinstance(dataset.func, cst.Name):
            return False
        cls = next((binding.definition for binding in self.model.resolve(dataset.func)
                    if isinstance(binding.definition, ClassInfo)), None)
        if cls is None or "__getitem__" not in cls.methods:
            return False
        text = self.analysis.text[cls.node.start:cls.node.end]
        return not any(word in text for word in (".to(", ".cuda(", "device"))

    def _default_collate(self, collate: Optional[cst.BaseExpression]) -> bool:
        """``collate_fn=`` leaves a `DataLoader` its default collation (stacking the dataset's
        tensors where they are): not given, `None`, or a parameter no call site gives (default None)."""
        if collate is None or isinstance(collate, cst.Name) and collate.value == "None":
            return True
        if not isinstance(collate, cst.Name):
            return False
        bindings = self.model.resolve(collate)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return False
        passed = self._passed(bindings[0])
        return bool(passed) and all(value is None for value in passed)

    def _move_of(self, module: cst.BaseExpression, use: cst.CSTNode, depth: int = 0) -> Optional[cst.Call]:
        """The `.to(device)`/`.cuda()` (not to the CPU) that moves the module ``module`` names
        before ``use``, on every binding of the name that reaches ``use``: in the assignment
        that binds it (`model = Net().to(device)`, `model = nn.DataParallel(net).cuda()`), a
        statement `model.to(device)` of that binding earlier, a data-parallel wrapper of a moved
        module, a factory of the file returning one; for a parameter, what every call site passes."""
        if isinstance(module, cst.Attribute):
            return self._attribute_move(module, use)
        if not isinstance(module, cst.Name) or depth > 6:  # `main` -> `train(net, ..)` -> `validate(net, ..)`
            return None
        bindings = self.model.resolve(module)
        if not bindings:
            return None
        if len(bindings) > 1:  # `model = Net()` then `if use_cuda: model = model.to(device)`
            move = self._rebinding_move(module, bindings, use)
            if move is not None:
                return move
        if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
            binding = bindings[0]
            function = self._function_of(binding)
            if function is None or function.name == "forward":
                return None
            passed = self._passed(binding)
            if not passed or any(value is None for value in passed):
                return None
            moves = [self._value_move(value, call, depth + 1) for value, call in zip(passed, self._call_sites(function))]
            return moves[0] if moves and all(move is not None for move in moves) else None
        moves = [self._binding_move(module, binding, use, depth) for binding in bindings]
        return moves[0] if all(move is not None for move in moves) else None

    def _binding_move(self, module: cst.Name, binding: Binding, use: cst.CSTNode, depth: int) -> Optional[cst.Call]:
        """The move of the module bound by ``binding`` (an assignment of ``module``) before ``use``."""
        if binding.kind is not BindingKind.ASSIGN or binding.path or binding.iterates or binding.value is None:
            return None
        value = binding.value
        if not (isinstance(value, cst.Name) and value.value == module.value):
            move = self._value_move(value, binding.node, depth + 1)
            if move is not None:
                return move
        for call in self._all_calls():  # `model.cuda()` as a statement after the binding (in place)
            if call.start >= use.start or call.start <= binding.node.start or not self._is_move(call):
                continue
            target = call.func.value  # type: ignore[attr-defined]
            if isinstance(target, cst.Name) and target.value == module.value and \
                    binding in self.model.resolve(target):
                return call
        return None

    def _value_move(self, value: cst.BaseExpression, use: cst.CSTNode, depth: int) -> Optional[cst.Call]:
        """The move that puts the module ``value`` evaluates to on a device (see ``_move_of``)."""
        if depth > 7:
            return None
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            if self._is_move(value):
                return value
            if value.func.attr.value not in _PLACE_KEEPING_MODULE_METHODS:
                break
            value = value.func.value
        if isinstance(value, (cst.Name, cst.Attribute)):
            return self._move_of(value, use, depth + 1)
        if not isinstance(value, cst.Call):
            return None
        if self.inference.qualname(value.func) in torch_api.MODE_SHARING_WRAPPERS and value.args and \
                value.args[0].keyword is None and not value.args[0].star:  # `nn.DataParallel(model)`
            return self._value_move(value.args[0].value, use, depth + 1)
        function = self._file_function(value.func)
        if function is not None and function.returns and not function.is_generator:  # `model = build(device)`
            moves = [self._value_move(returned, returned, depth + 1) for returned in function.returns]
            if all(move is not None for move in moves):
                return moves[0]
        return None

    def _attribute_move(self, module: cst.Attribute, use: cst.CSTNode) -> Optional[cst.Call]:
        """The move of the module ``self.<name>`` when the object moves it as it is built:
        every assignment of the attribute in ``__init__`` or a method ``__init__`` calls,
        each moved there (``self.net = Net().to(device)``, ``self.model = model`` of a model
        every construction passes moved) or followed by ``self.<name>.to(device)``, used in
        another method; nothing in the class moves it back to the CPU."""
        receiver = module.value
        function = next((self.model.functions.get(id(node)) for node in ancestors(use)
                         if isinstance(node, cst.FunctionDef)), None)
        if not isinstance(receiver, cst.Name):
            return None
        if function is not None and function.cls is not None and function.self_name == receiver.value:
            cls = function.cls
        else:  # `learn.body` of `learn = Learner(body, device)`, whose `__init__` moves it
            cls = self._class_of(receiver)
            if cls is None or self._is_module_class(cls):
                return None
        name = module.attr.value
        init = cls.methods.get("__init__")
        assignments = cls.assignments(name)
        if init is None or not assignments:
            return None
        setup = [init] + [cls.methods[call.func.attr.value] for call in iter_nodes(init.node.body)
                          if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                          and dotted(call.func.value) == init.self_name and call.func.attr.value in cls.methods]
        if function in setup or re.search(rf"\.{re.escape(name)}\s*\.\s*cpu\s*\(", self.analysis.text[
                cls.node.start:cls.node.end]):
            return None
        statements = [(method, call) for method in setup for call in iter_nodes(method.node.body)
                      if isinstance(call, cst.Call) and self._is_move(call)
                      and dotted(call.func.value) == f"{method.self_name}.{name}"]  # type: ignore[attr-defined]
        found = None
        for assignment in assignments:
            if assignment.function not in setup or assignment.value is None or assignment.path:
                return None
            move = self._value_move(assignment.value, assignment.value, 0)
            if move is None:  # `self.G = Generator(..)` then `self.G.to(self.device)`
                move = next((call for method, call in statements if method is not assignment.function
                             or call.start > assignment.node.start), None)
            if move is None:
                return None
            found = found or move
        return found

    def _rebinding_move(self, module: cst.Name, bindings: list[Binding], use: cst.CSTNode) -> Optional[cst.Call]:
        """The move among several bindings of a module's name, when each is either the one
        construction or a move of the name itself (`model = model.to(device)`), made before
        ``use``: the module is moved on the path that takes it."""
        moves = [binding for binding in bindings if binding.kind is BindingKind.ASSIGN and not binding.path
                 and isinstance(binding.value, cst.Call) and self._is_move(binding.value)
                 and isinstance(binding.value.func.value, cst.Name)
                 and binding.value.func.value.value == module.value]
        others = [binding for binding in bindings if binding not in moves]
        if not moves or len(others) != 1 or others[0].kind is not BindingKind.ASSIGN or others[0].path or \
                not isinstance(others[0].value, cst.Call) or any(move.node.start > use.start for move in moves):
            return None
        return moves[0].value

    def _is_move(self, call: cst.Call) -> bool:
        """``_moves_to_a_device``, and not ``.to(loss.dtype)`` (a conversion, written as an attribute)."""
        if not self._moves_to_a_device(call):
            return False
        if call.func.attr.value == "cuda":  # type: ignore[attr-defined]
            return True
        target = keyword(call, "device") or (call.args[0].value if call.args and call.args[0].keyword is None
                                             else None)
        return not (isinstance(target, cst.Attribute) and target.attr.value == "dtype")

    @staticmethod
    def _move_target(move: cst.Call) -> Optional[cst.BaseExpression]:
        if move.func.attr.value == "cuda":  # type: ignore[attr-defined]
            return None
        return keyword(move, "device") or (move.args[0].value if move.args else None)

    def _holds_tuple(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """``node`` may be a tuple (of tensors): `(h0, c0)`, a name bound to one, a function's return."""
        if isinstance(node, cst.Tuple):
            return True
        if depth > 4:
            return False
        if isinstance(node, cst.Name):
            return any(binding.value is not None and not binding.path and self._holds_tuple(binding.value, depth + 1)
                       for binding in self.model.resolve(node))
        if isinstance(node, cst.Call):
            function = self._file_function(node.func)
            return function is not None and any(self._holds_tuple(value, depth + 1) for value in function.returns)
        return False

    def _file_function(self, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The function or method of this file ``func`` calls (`make_hidden`, `model.init_hidden`)."""
        if isinstance(func, cst.Name):
            return next((binding.definition for binding in self.model.resolve(func)
                         if isinstance(binding.definition, FunctionInfo)), None)
        if isinstance(func, cst.Attribute):
            cls = self._class_of(func.value)  # the method may be inherited from a base class of the file
            method = next((owner.methods[func.attr.value] for owner in self._lineage(cls)
                           if func.attr.value in owner.methods), None) if cls is not None else None
            return method if method is not None and method.kind == "method" else None
        return None

    def _is_module(self, func: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(func, cst.Name) and depth < 2:
            bindings = self.model.resolve(func)
            function = self._function_of(bindings[0]) if len(bindings) == 1 else None
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and \
                    (function is None or function.self_name != func.value):  # `self` is its class's
                passed = self._passed(bindings[0])
                return bool(passed) and all(value is not None and self._is_module(value, depth + 1)
                                            for value in passed)
        value = self.inference.infer(func)
        if value is None or value.kind is not Kind.MODULE:
            return False
        if isinstance(value.cls, ClassInfo):
            return self._is_module_class(value.cls)
        return value.qualname is not None and (value.qualname in torch_api.FLOAT32_WEIGHT_LAYERS or
                                               self._has_weights(value.qualname) or
                                               value.qualname == "torch.nn.Sequential")

    def _unmoved_inputs(self) -> list[DeviceMismatch]:
        """Tensors shown on the CPU given to a module moved to a device before the call, and
        CPU class weights of a loss given the output of such a module."""
        found: list[DeviceMismatch] = []
        for call in self._all_calls():
            func = _called_module(call.func)
            if not (isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) \
                    or any(arg.star == "*" for arg in call.args):
                continue
            positions = None
            if not self._is_module(func):  # `rnn.predict(x)`: a method that runs the module on `x`
                if any(arg.star for arg in call.args):
                    continue
                func, positions = self._method_running_module(call.func)
            if func is not None:
                move = self._move_of(func, call)
                if move is None:
                    continue
                value = self.inference.infer(func)
                cls = value.cls if value is not None and isinstance(value.cls, ClassInfo) else None
                for index, arg in enumerate(call.args):
                    if positions is not None:
                        if index not in positions or arg.keyword is not None:
                            continue
                        index = positions[index]
                    elif arg.keyword is not None or arg.star:
                        # `model(x, mask=m)`, `model(**batch)`: the parameter of `forward` it fills
                        index = self._forward_position(cls, arg)
                        if index is None:
                            continue
                    origin = self.cpu_origin(arg.value)
                    if origin is not None:
                        if cls is not None and index >= 0 and not self._input_computed_with(cls, index):
                            continue  # only its size is read, or torch wants it on the CPU (`lengths`)
                        found.append(DeviceMismatch(arg.value, origin[0], cls, move, call, kind="input",
                                                    why=origin[1],
                                                    device=self._visible_at(self._move_target(move), move, arg.value),
                                                    attribute="**" if arg.star == "**" else
                                                    "()" if self._holds_tuple(arg.value) else None))
                        break
        found.extend(self._unmoved_weights())
        found.extend(self._unmoved_targets())
        found.extend(self._unmoved_modules())
        return found

    def _forward_position(self, cls: Optional[ClassInfo], arg: cst.Arg) -> Optional[int]:
        """The position among the inputs of ``cls.forward`` of the parameter a keyword argument
        fills; -1 for `**mapping` (it may fill any), and for any argument of a module whose
        `forward` cannot be read; None for a keyword `forward` does not take by name."""
        if arg.star == "**" or cls is None or cls.methods.get("forward") is None:
            return -1
        params = [param.name.value for param in cls.methods["forward"].positional_params()][1:]
        return params.index(arg.keyword.value) if arg.keyword is not None and arg.keyword.value in params else None

    def _method_running_module(self, func: cst.BaseExpression
                               ) -> tuple[Optional[cst.BaseExpression], Optional[dict[int, int]]]:
        """For ``model.predict`` (a method of a module class of the file, not ``forward``): the
        module ``model`` and, for each of the method's parameters that it gives as it is to
        ``self(..)`` or ``self.forward(..)``, the position it takes there."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or \
                func.attr.value in ("forward", "__call__") or not self._is_module(func.value):
            return None, None
        method = self._file_function(func)
        if method is None or method.cls is None or method.self_name is None:
            return None, None
        params = [param.name.value for param in method.positional_params()][1:]
        positions: dict[int, int] = {}
        for call in self._calls_in(method.node):
            callee = call.func
            if not (isinstance(callee, cst.Name) and callee.value == method.self_name or
                    isinstance(callee, cst.Attribute) and callee.attr.value == "forward" and
                    isinstance(callee.value, cst.Name) and callee.value.value == method.self_name) or \
                    any(arg.star for arg in call.args):
                continue
            for position, arg in enumerate(call.args):
                if arg.keyword is None and isinstance(arg.value, cst.Name) and arg.value.value in params and \
                        all(binding.kind is BindingKind.PARAM for binding in self.model.resolve(arg.value)):
                    positions.setdefault(params.index(arg.value.value), position)
        return (func.value, positions) if positions else (None, None)

    def _unmoved_modules(self) -> list[DeviceMismatch]:
        """A module built here and never moved, given a tensor moved to a device (not the
        CPU) just before: `x = x.to(device)` then `model(x)` with `model = Net()` alone."""
        found: list[DeviceMismatch] = []
        for call in self._all_calls():
            func = call.func
            if not isinstance(func, cst.Name) or any(arg.star for arg in call.args) or not self._is_module(func):
                continue
            construction = self._never_moved(func)
            if construction is None:
                continue
            for arg in call.args:
                move = self._moved_input(arg.value) or self.device_move(arg.value) if arg.keyword is None else None
                if move is not None:
                    value = self.inference.infer(func)
                    cls = value.cls if value is not None and isinstance(value.cls, ClassInfo) else None
                    if cls is not None and not self._holds_tensors(cls):
                        break  # nothing of it to move (a loss computed from its inputs)
                    direct = self._construction(func) is construction  # (not through `.eval()` or a builder)
                    found.append(DeviceMismatch(func, construction, cls, move, call, kind="module",
                                                device=self._visible_at(self._move_target(move), move, construction)
                                                if direct else None))
                    break
        return found

    def _never_moved(self, module: cst.Name) -> Optional[cst.Call]:
        """The construction of the module ``module`` names, when nothing in the file can
        move it: one binding, a construction of a torch layer or of a class of the file
        (that moves nothing itself) without `device=`, and the name never moved, applied,
        wrapped or handed to any call; no default device is set."""
        names: list[str] = []  # `model = net.eval()`: a move of `net` moves `model`
        construction = self._module_construction(module, names=names)
        if construction is None or keyword(construction, "device") is not None or \
                any(arg.star for arg in construction.args):
            return None
        value = self.inference.infer(construction.func)
        qualname = self.inference.qualname(construction.func)
        if value is not None and isinstance(value.cls, ClassInfo):
            if value.cls.model is not self.model or _MOVES_ITSELF.search(self.analysis.text, value.cls.node.start,
                                                                          value.cls.node.end):
                return None
        elif qualname is None or not torch_api.is_module_class(torch_api.normalize(qualname)):
            return None
        for held in {module.value, *names}:
            name = re.escape(held)
            if re.search(rf"\b{name}\s*\.\s*(?:to|cuda|apply|_apply|to_empty)\s*\(|[(,=]\s*{name}\s*[,)]"
                         rf"|set_default_device|device_map|\bprepare\s*\(", self.analysis.text):
                return None
        return construction

    def _module_construction(self, module: cst.BaseExpression, depth: int = 0,
                             names: Optional[list[str]] = None) -> Optional[cst.Call]:
        """The construction of the module ``module`` names, through what keeps a module where
        it is: `model = model.eval()` (`train`, `float`, ..: the module itself), and a function of
        the file that builds it and moves nothing (`model = build_net(n)` returning
        `nn.Sequential(..)`)."""
        if depth > 4:
            return None
        value: Optional[cst.BaseExpression] = module
        if isinstance(module, cst.Name):
            if names is not None:
                names.append(module.value)
            value = self._construction(module)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in _PLACE_KEEPING_MODULE_METHODS and not value.args:
            return self._module_construction(value.func.value, depth + 1, names) \
                if isinstance(value.func.value, cst.Name) else None
        if not isinstance(value, cst.Call):
            return None
        function = self._file_function(value.func) if self.inference.qualname(value.func) is None else None
        if function is None or function.cls is not None:
            return value
        if function.is_generator or not function.returns or \
                _MOVES_ITSELF.search(self.analysis.text, function.node.start, function.node.end):
            return None
        built = [returned if isinstance(returned, cst.Call) else
                 self._module_construction(returned, depth + 1, names) if isinstance(returned, cst.Name) else None
                 for returned in function.returns]
        return built[0] if built[0] is not None and all(item is not None for item in built) else None

    def device_visible_at(self, device: cst.BaseExpression, used: cst.CSTNode, there: cst.CSTNode) -> bool:
        """The device expression read at ``used`` means the same at ``there`` (to write it there)."""
        return self._visible_at(device, used, there) is not None

    def _visible_at(self, device: Optional[cst.BaseExpression], used: cst.CSTNode,
                    there: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """``device`` (a name read at ``used``) when it means the same where ``there`` runs:
        bound before it, at module level or in the same function; else None."""
        if not isinstance(device, cst.Name):
            return None
        bindings = self.model.resolve(device)
        same_code = enclosing_code(used) is enclosing_code(there)
        if bindings and all(binding.node.end <= there.start and (same_code or binding.scope is self.model.module_scope)
                            for binding in bindings):
            return device
        return None

    def _moved_input(self, node: cst.BaseExpression, depth: int = 0) -> Optional[cst.Call]:
        """The move that puts ``node`` on a device that may not be the CPU: `x.to(device)`,
        `x.cuda()`, or a name bound once to one."""
        if isinstance(node, cst.Call) and self._is_move(node):
            return node
        if isinstance(node, cst.Name) and depth < 3:
            value = self._sole_value(node)
            return self._moved_input(value, depth + 1) if value is not None else None
        return None

    def _assigned(self, name: cst.Name) -> tuple[cst.BaseExpression, ...]:
        """The values of every binding of ``name`` when each is a plain assignment, else ()."""
        return self.model.assigned_values(name) or ()

    def _at_every_call_site(self, binding: Binding, answer):
        """``answer`` of what each call site passes for the parameter ``binding``: the first,
        when every call site passes a value and every answer is found; else None."""
        passed = self._passed(binding)
        if not passed or any(value is None for value in passed):
            return None
        found = [answer(value) for value in passed]
        return found[0] if all(item is not None for item in found) else None

    def _sole_value(self, name: cst.Name) -> Optional[cst.BaseExpression]:
        """The value of the one plain assignment (`name = value`) that binds this read of
        ``name``, or None."""
        values = self.model.assigned_values(name)
        return values[0] if values is not None and len(values) == 1 else None

    def _unmoved_targets(self) -> list[DeviceMismatch]:
        """A loss of torch given the output of a moved module and a target shown on the CPU
        (with dimensions: a 0-dim CPU tensor mixes with any device)."""
        found: list[DeviceMismatch] = []
        for call in self._all_calls():
            func = call.func
            qualname = self.inference.qualname(func)
            if qualname is None and isinstance(func, (cst.Name, cst.Attribute)):  # `criterion`, `self.loss_fct`
                value = self.inference.infer(func)
                if value is None or value.kind is not Kind.MODULE or not value.qualname or \
                        not torch_api.is_loss_module_class(value.qualname) or self._move_of(func, call) is not None:
                    continue
            elif qualname is None or not qualname.startswith("torch.nn.functional.") or \
                    qualname.rsplit(".", 1)[1] not in torch_api.LOSS_FUNCTIONS:
                continue
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            target = keyword(call, "target") or (positional[1] if len(positional) > 1 else None)
            if target is None or not positional or any(arg.star for arg in call.args):
                continue
            origin = self.cpu_origin(target)
            if origin is None or self._scalar_origin(origin[0]):
                continue
            output = self._moved_output(positional[0])
            move = output[0] if output is not None else self.device_move(positional[0])
            if move is None:
                continue
            found.append(DeviceMismatch(target, origin[0], None, move, call, kind="target", why=origin[1],
                                        device=self._visible_at(self._move_target(move), move, target)))
        return found

    # --- a tensor on a device meeting one on the CPU ------------------------------------

    def device_move(self, node: cst.BaseExpression, depth: int = 0) -> Optional[cst.Call]:
        """The `.to(device)`/`.cuda()` (not to the CPU) that puts ``node`` on a device, when
        every way it can come shows it: a tensor moved there, the output of a module moved
        there before the call, and what tensor methods, torch functions, arithmetic and
        indexing compute from one of those."""
        return self._answer("device-some" if self._some_call_site else "device", self._device_move, node,
                            depth)  # type: ignore[return-value]

    def device_move_at_a_call(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """``device_move``, with a parameter on a device when one call site gives it a tensor there
        (`self.combine(attention_mask, mask)` in a `forward` given batches moved to the device):
        asked of the other side of a meeting whose CPU side is on the CPU at every call."""
        outer, self._some_call_site = self._some_call_site, True
        try:
            return self.device_move(node)
        finally:
            self._some_call_site = outer

    def _device_move(self, node: cst.BaseExpression, depth: int = 0) -> Optional[cst.Call]:
        if isinstance(node, cst.Call):
            func = node.func
            if self._is_move(node):
                target = self._move_target(node)
                if isinstance(target, cst.Name):  # `device = labels.device` then `.to(device)`
                    value = self._sole_value(target)
                    target = value if isinstance(value, cst.Attribute) and value.attr.value == "device" else target
                if isinstance(target, cst.Attribute) and target.attr.value == "device":
                    holder = self.inference.infer(target.value)
                    if holder is None or holder.kind not in (Kind.MODULE, Kind.INSTANCE):
                        return self.device_move(target.value, depth + 1)  # `.to(logits.device)`: wherever that is
                return node  # `.to(device)`, `.to(model.device)` of a model that keeps the device it is put on
            if (isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) \
                    and self._is_module(func):
                move = self._move_of(func, node)  # `model(x)`, `self.model(x)` of a model moved there
                if move is None:  # its output is where its input is (or the call raises)
                    move = self._input_move(func, node, depth)
                if move is not None or isinstance(func, cst.Name):
                    return move
            if isinstance(func, (cst.Name, cst.Attribute)):  # `self.loss_fn(out, y)`: where its input is
                loss_move = self._loss_input_move(func, node, depth)
                if loss_move is not None:
                    return loss_move
            layer = self._own_layer(func)
            if layer is not None:  # `self.fc(x)` in a module moved to a device
                moved = self.moved_classes().get(id(layer))
                return moved[1] if moved is not None else None
            forward = self._forward_of(func)
            if forward is None and self.inference.qualname(func) is None:
                forward = self._file_function(func)  # `make_batch()`: where what it returns is
                if forward is not None and forward.is_generator:
                    forward = None
            if forward is not None:  # a module of this file: where what its `forward` returns is
                moves = [self.device_move(returned, depth + 1) for returned in forward.returns]
                return moves[0] if moves and all(move is not None for move in moves) else None
            qualname = self.inference.qualname(func)
            made_on = keyword(node, "device")
            if made_on is not None and (qualname in torch_api.TORCH_SIZED_FACTORIES or
                                        qualname in torch_api.TORCH_CONVERTERS):  # `torch.randn(.., device=device)`
                if isinstance(made_on, cst.Attribute) and made_on.attr.value == "device":
                    return self.device_move(made_on.value, depth + 1)
                return node if not self._is_cpu(made_on) and self._dtype_name(made_on, False) is None else None
            if qualname is not None:
                positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
                if positional and (self._computes_from_first(qualname) or qualname in torch_api.SAME_TENSOR_WRAPPERS
                                   or qualname in torch_api.SEQUENCE_PADDING_FUNCTIONS):
                    return self.device_move(positional[0], depth + 1)
                return None
            if isinstance(func, cst.Attribute) and (self._keeps_device_of(func.attr.value) or
                                                    self._converts_dtype_only(node)):
                return self.device_move(func.value, depth + 1)
            return None
        if isinstance(node, cst.Subscript):
            return self.device_move(node.value, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            return self.device_move(node.left, depth + 1) or self.device_move(node.right, depth + 1)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and \
                not isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
            # `scores > threshold`, `pred == y`: a mask on the device of a tensor operand
            return self.device_move(node.left, depth + 1) or \
                self.device_move(node.comparisons[0].comparator, depth + 1)
        if isinstance(node, cst.UnaryOperation):
            return self.device_move(node.expression, depth + 1)
        if isinstance(node, cst.Attribute) and node.attr.value in torch_api.LAYER_PARAMETERS \
                and isinstance(node.value, (cst.Name, cst.Attribute)):
            layer = self.inference.infer(node.value)  # `model.weight` of a layer moved there
            if layer is not None and layer.kind is Kind.MODULE and layer.qualname is not None \
                    and self._has_weights(layer.qualname):
                return self._move_of(node.value, node)
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:  # what every call site gives
                if self._some_call_site:
                    return next((move for value in self._passed_somewhere(bindings[0])
                                 for move in [self.device_move(value, depth + 1)] if move is not None), None)
                return self._at_every_call_site(bindings[0], lambda value: self.device_move(value, depth + 1))
            values = self._assigned(node) or tuple(  # `_, predicted = torch.max(outputs, 1)`
                binding.value for binding in bindings if binding.kind is BindingKind.ASSIGN and binding.path
                and not binding.iterates and self._splits(binding.value)) or tuple(
                value for value in (_unpacked(binding) for binding in bindings) if value is not None)
            moves = [self.device_move(value, depth + 1) for value in values] if len(values) == len(bindings) else []
            if not values and bindings:  # `for batch in batches`, `x, mask = batch`: where every item is
                moves = [self._held_move(binding, depth) for binding in bindings]
            return moves[0] if moves and all(move is not None for move in moves) else None
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements and \
                not any(isinstance(element, cst.StarredElement) for element in node.elements):
            moves = [self.device_move(element.value, depth + 1) for element in node.elements]
            return moves[0] if all(move is not None for move in moves) else None  # every tensor it holds
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):  # `[t.to(device) for t in batch]`
            return self.device_move(node.elt, depth + 1)
        return None

    def _input_move(self, module: cst.BaseExpression, call: cst.Call, depth: int) -> Optional[cst.Call]:
        """The move that puts the first input of the module call ``call`` on a device: a layer
        with weights, or a module class of the file whose ``forward`` computes with that input,
        gives its output there (`self(x.to(self.device))`)."""
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if not positional:
            return None
        value = self.inference.infer(module)
        if value is None or value.kind is not Kind.MODULE:
            return None
        if isinstance(value.cls, ClassInfo):
            if value.cls.model is not self.model or not self._input_computed_with(value.cls, 0) or \
                    not self._returns_computed(value.cls):
                return None
        elif value.qualname is None or not self._has_weights(value.qualname):
            return None
        return self.device_move(positional[0], depth + 1)

    def _returns_computed(self, cls: ClassInfo) -> bool:
        """Every value the ``forward`` of ``cls`` returns is computed (a call, arithmetic,
        indexing), not a constant or an attribute read as it is."""
        forward = cls.methods.get("forward")
        return forward is not None and bool(forward.returns) and all(
            isinstance(returned, (cst.Call, cst.BinaryOperation, cst.Subscript, cst.Name)) for returned in forward.returns)

    def _held_move(self, binding: Binding, depth: int) -> Optional[cst.Call]:
        """The device of what a loop target or an unpacked name gets, when every tensor of the
        sequence it comes from is shown there (a list of batches built by moving each tensor)."""
        value = binding.value
        if value is None or binding.kind not in (BindingKind.ASSIGN, BindingKind.FOR):
            return None
        if binding.kind is BindingKind.FOR or binding.iterates:
            if isinstance(value, cst.Name):
                values = self._assigned(value)
                moves = [self._items_move(item, depth + 1) for item in values or ()]
                if not values:
                    return self._rows_move(value, depth)
                return moves[0] if moves and all(move is not None for move in moves) else None
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):  # `for row in mask[1:]`
                return self._rows_move(value, depth)
            return self._items_move(value, depth + 1)
        return self.device_move(value, depth + 1) if binding.path and isinstance(value, (cst.Name, cst.Call)) else None

    def _rows_move(self, iterable: cst.BaseExpression, depth: int) -> Optional[cst.Call]:
        """The device of the rows a loop takes from a tensor: ``for row in mask`` over a parameter
        every call site gives a tensor on the device (not a module: its layers are no tensors)."""
        value = self.inference.infer(iterable)
        if value is not None and value.kind is not Kind.TENSOR:
            return None
        return self.device_move(iterable, depth + 1)

    def _converts_dtype_only(self, call: cst.Call) -> bool:
        """``call`` is ``x.to(dtype)`` or ``x.type(dtype)`` with a torch dtype alone
        (`torch.float32`, `y.dtype`): a conversion that keeps the tensor's device."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("to", "type") or len(call.args) != 1:
            return False
        arg = call.args[0]
        if arg.star or (arg.keyword is not None and arg.keyword.value != "dtype"):
            return False
        target = arg.value
        return self._dtype_name(target, False) is not None or \
            isinstance(target, cst.Attribute) and target.attr.value == "dtype"

    def _items_move(self, iterable: cst.BaseExpression, depth: int) -> Optional[cst.Call]:
        """The device of every item of a list written out or built by a comprehension."""
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp, cst.List, cst.Tuple)):
            return self.device_move(iterable, depth + 1)
        return None

    def _loss_input_move(self, func: cst.BaseExpression, call: cst.Call, depth: int) -> Optional[cst.Call]:
        """A loss module of torch (`nn.CrossEntropyLoss(reduction="none")`, held wherever) computes
        its result on the device of the input it is given: the move that puts that input there."""
        value = self.inference.infer(func)
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if value is None or value.kind is not Kind.MODULE or value.qualname is None or not positional or \
                not torch_api.is_loss_module_class(value.qualname):
            return None
        return self.device_move(positional[0], depth + 1)

    def _forward_of(self, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The ``forward`` of the module class of this file whose instance ``func`` is."""
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        cls = self._class_called_by(func)
        forward = cls.methods.get("forward") if cls is not None else None
        return forward if forward is not None and forward.kind == "method" else None

    def _class_called_by(self, func: cst.BaseExpression) -> Optional[ClassInfo]:
        value = self.inference.infer(func)
        if value is not None and value.kind is Kind.MODULE and isinstance(value.cls, ClassInfo) and \
                value.cls.model is self.model:
            return value.cls
        return None

    def _own_layer(self, func: cst.BaseExpression) -> Optional[ClassInfo]:
        """The module class whose method calls ``func``, one of its layers with weights
        (`self.fc`), or None."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        function = self.model.functions.get(id(enclosing_code(func)))
        if function is None or function.cls is None or func.value.value != function.self_name:
            return None
        layer = self.inference.infer(func)
        if layer is None or layer.kind is not Kind.MODULE or layer.qualname is None or \
                not self._has_weights(layer.qualname):
            return None
        return function.cls

    @staticmethod
    def _keeps_device_of(method: str) -> bool:
        """A tensor method whose result is a tensor on the device of the tensor it is called on."""
        fact = torch_facts.method(method)
        return fact is not None and fact.returns in ("tensor", "tuple", "depends") and \
            method not in torch_api.DEVICE_CHANGING_METHODS

    @staticmethod
    def _computes_from_first(qualname: str) -> bool:
        """A torch function whose result is computed from its first (tensor) argument, on its
        device: `torch.argmax(out, 1)`, `F.one_hot(y, n)`, `F.softmax(logits, 1)`."""
        fact = torch_facts.fact(qualname)
        return fact is not None and fact.kind == "function" and fact.returns in ("tensor", "tuple", "depends") \
            and not fact.factory and qualname not in torch_api.TORCH_CONVERTERS \
            and qualname not in torch_api.TORCH_SIZED_FACTORIES and qualname not in torch_api.LIKE_FACTORIES

    def _mixed_operands(self) -> list[DeviceMismatch]:
        """Arithmetic, a comparison or an arithmetic method that meets a tensor shown on a
        device (moved there, or the output of a module moved there) with one shown on the CPU
        with dimensions (a 0-dim CPU tensor mixes with tensors on any device)."""
        found: list[DeviceMismatch] = []
        reported: set[int] = set()  # a CPU tensor is reported where it first meets the device
        for meeting, operands in sorted(self._meetings(), key=lambda item: item[0].start):
            for index, cpu_side in enumerate(operands):
                origin = self.cpu_origin(cpu_side)
                if origin is None or id(origin[0]) in reported or self._scalar_origin(origin[0]) or \
                        not self._keeps_dimensions(cpu_side):
                    continue
                move = next((move for other in operands[:index] + operands[index + 1:]
                             for move in [self.device_move_at_a_call(other)] if move is not None), None)
                if move is None:
                    continue
                reported.add(id(origin[0]))
                made = origin[0]
                function = self.model.functions.get(id(enclosing_code(made)))
                found.append(DeviceMismatch(cpu_side, made, None, move, meeting, kind="operand", why=origin[1],
                                            device=self._visible_at(self._move_target(move), move, cpu_side),
                                            device_of=self._tensor_parameter(made, function)
                                            if isinstance(made, cst.Call) and function is not None else None))
        return found

    def _meetings(self) -> list[tuple[cst.CSTNode, list[cst.BaseExpression]]]:
        """Each place tensors must be on one device to be computed together, with them:
        arithmetic and comparisons, arithmetic and comparison methods, torch's arithmetic
        functions, `torch.cat`/`torch.stack` of a list written out."""
        found: list[tuple[cst.CSTNode, list[cst.BaseExpression]]] = []
        for operation in self.analysis.nodes_of(cst.BinaryOperation):
            if isinstance(operation.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply)):
                found.append((operation, [operation.left, operation.right]))
        for comparison in self.analysis.nodes_of(cst.Comparison):
            if len(comparison.comparisons) == 1 and isinstance(comparison.comparisons[0].operator, (
                    cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                    cst.GreaterThanEqual)):
                found.append((comparison, [comparison.left, comparison.comparisons[0].comparator]))
        for call in self._all_calls():
            func = call.func
            if any(arg.star for arg in call.args):
                continue
            positional = [arg.value for arg in call.args if arg.keyword is None]
            qualname = self.inference.qualname(func)
            if qualname is None and isinstance(func, cst.Attribute) and positional and \
                    func.attr.value in torch_api.SAME_DEVICE_METHODS:
                found.append((call, [func.value, *positional]))
            elif qualname is not None and qualname.startswith("torch.") and len(positional) >= 2 and \
                    qualname.rsplit(".", 1)[1] in torch_api.ARITHMETIC_FUNCTION_NAMES:
                found.append((call, positional))
            elif qualname in torch_api.TENSOR_JOINING_FUNCTIONS and positional and \
                    isinstance(positional[0], (cst.List, cst.Tuple)) and len(positional[0].elements) >= 2 and \
                    not any(isinstance(element, cst.StarredElement) for element in positional[0].elements):
                found.append((call, [element.value for element in positional[0].elements]))  # `torch.cat([a, b])`
        return found

    def _keeps_dimensions(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """Nothing on the way from ``node`` to where it is made may leave a 0-dim tensor: no
        indexing, no reduction without `dim`."""
        if depth > 12:  # through a helper's return and the names it binds on the way
            return False
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
                return self._at_every_call_site(
                    bindings[0], lambda value: self._keeps_dimensions(value, depth + 1) or None) is not None
            values = self._assigned(node)
            if not values:  # a loop over batches: what `cpu_origin` showed
                return bool(bindings)
            return all(self._keeps_dimensions(value, depth + 1) for value in values)
        if isinstance(node, cst.Comparison):
            return self._keeps_dimensions(node.left, depth + 1)
        if isinstance(node, cst.UnaryOperation):
            return self._keeps_dimensions(node.expression, depth + 1)
        if isinstance(node, cst.Call) and self.inference.qualname(node.func) is None:
            function = self._file_function(node.func) or self._forward_of(node.func)
            if function is not None:  # what it returns
                return bool(function.returns) and all(self._keeps_dimensions(returned, depth + 1)
                                                       for returned in function.returns)
            fact = torch_facts.method(node.func.attr.value) if isinstance(node.func, cst.Attribute) else None
            if fact is None or (fact.zero_dim in ("no_dim", "always", "unknown") and not node.args):
                return False
            return self._keeps_dimensions(node.func.value, depth + 1)
        if isinstance(node, cst.Call):
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            qualname = self.inference.qualname(node.func)
            if qualname is not None and self._computes_from_first(qualname) and positional:
                fact = torch_facts.fact(qualname)
                if fact is None or fact.zero_dim in ("no_dim", "always", "unknown") and len(positional) == 1:
                    return False
                return self._keeps_dimensions(positional[0], depth + 1)
            return True
        if isinstance(node, cst.BinaryOperation):
            return self._keeps_dimensions(node.left, depth + 1) or self._keeps_dimensions(node.right, depth + 1)
        if isinstance(node, cst.Subscript):  # `emb[None, :, :n]` keeps its dimensions; `w[0]` may not
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and \
                    isinstance(node.slice[0].slice.value, cst.Name) and node.slice[0].slice.value.value != "None" \
                    and self.inference.tensor(node.slice[0].slice.value) is not None:
                # `alpha[target]`: indexed by a tensor, it has the index's dimensions
                return self._keeps_dimensions(node.slice[0].slice.value, depth + 1)
            return all(isinstance(element.slice, cst.Slice) or isinstance(element.slice, cst.Index) and
                       isinstance(element.slice.value, (cst.Ellipsis, cst.Name)) and
                       (not isinstance(element.slice.value, cst.Name) or element.slice.value.value == "None")
                       for element in node.slice) and self._keeps_dimensions(node.value, depth + 1)
        if isinstance(node, cst.Attribute):
            cls = self._class_of(node.value)
            values = self._attribute_values(cls.assignments(node.attr.value), node.attr.value) \
                if cls is not None else None
            return bool(values) and all(self._keeps_dimensions(value, depth + 1) for value in values)
        return False

    def _scalar_origin(self, origin: cst.CSTNode) -> bool:
        """``origin`` may make a 0-dim tensor: `torch.tensor(1)`, a factory without sizes."""
        if not isinstance(origin, cst.Call):
            return False
        qualname = self.inference.qualname(origin.func)
        if qualname in torch_api.TORCH_CONVERTERS:
            if origin.args and self._python_data(origin.args[0].value, 0):
                return False  # a list or tuple: at least one dimension, also through parameters
            source = self.dtype(origin.args[0].value) if origin.args else None
            return source is None or source.holder == "number"
        if qualname in torch_api.TORCH_SIZED_FACTORIES:
            return not self._has_dimensions(origin, qualname)
        return False

    def _input_computed_with(self, cls: ClassInfo, index: int, depth: int = 0) -> bool:
        """The input at ``index`` of the ``forward`` of the file's module class ``cls`` may
        meet the module's tensors: some use of it is not placement-neutral (its `.size()`,
        `.shape`, `.to(..)`, the `lengths` of `pack_padded_sequence`), following it into the
        submodules of the file it is handed to.  True when that cannot be seen."""
        forward = cls.methods.get("forward")
        if forward is None or cls.model is not self.model or depth > 3:
            return True
        params = [param.name.value for param in forward.positional_params()][1:]
        if index >= len(params):
            return True  # given to `*args`
        name = params[index]
        for node in self.analysis.nodes_of(cst.Name):
            if node.value != name or not (forward.node.body.start <= node.start and node.end <= forward.node.end):
                continue
            parent = node.parent
            if isinstance(parent, cst.Attribute) and parent.value is node and \
                    parent.attr.value in torch_api.PLACEMENT_NEUTRAL_USES:
                continue
            if not (isinstance(parent, cst.Arg) and isinstance(parent.parent, cst.Call)):
                return True
            call = parent.parent
            position = [arg for arg in call.args if arg.keyword is None].index(parent) \
                if parent.keyword is None and not parent.star else None
            cpu = torch_api.CPU_ARGUMENTS.get(self.inference.qualname(call.func) or "")
            if cpu is not None and (position == cpu[0] or (parent.keyword is not None
                                                           and parent.keyword.value == cpu[1])):
                continue
            callee = self.inference.infer(call.func)
            if callee is not None and callee.kind is Kind.MODULE and isinstance(callee.cls, ClassInfo) \
                    and position is not None and not self._input_computed_with(callee.cls, position, depth + 1):
                continue
            return True
        return False

    def _unmoved_weights(self) -> list[DeviceMismatch]:
        found: list[DeviceMismatch] = []
        for call in self._all_calls():
            func = call.func
            qualname = self.inference.qualname(func)
            weight = None
            if qualname is None and isinstance(func, cst.Name):
                construction = self._loss_construction(func)  # also through a `train(.., loss_fn)` parameter
                loss = self.inference.qualname(construction.func) if construction is not None else None
                if loss in torch_api.WEIGHT_MATCHING_LOSSES:
                    if self._move_of(func, call) is not None:
                        continue
                    position = torch_api.WEIGHT_MATCHING_LOSSES[loss]
                    positional = [arg.value for arg in construction.args if arg.keyword is None]
                    weight = keyword(construction, "weight") or (
                        positional[position] if position < len(positional) else None)
            elif qualname in torch_api.WEIGHT_MATCHING_LOSSES and qualname.startswith("torch.nn.functional."):
                position = torch_api.WEIGHT_MATCHING_LOSSES[qualname]
                positional = [arg.value for arg in call.args if arg.keyword is None]
                weight = keyword(call, "weight") or (positional[position] if position < len(positional) else None)
            elif qualname is None and isinstance(func, cst.Attribute):
                weight = self._held_loss_weight(func)  # `self.nll_loss(log_p, y)` of a loss class never moved
            if weight is None or not call.args or call.args[0].keyword is not None:
                continue
            origin = self.cpu_origin(weight)
            if origin is None:
                continue
            if isinstance(weight, cst.Name) and self._is_parameter(weight):
                given = self._passed(self.model.resolve(weight)[0])
                weight = given[0] if given and given[0] is not None else weight  # where the caller makes it
            output = self._moved_output(call.args[0].value)
            move = output[0] if output is not None else self.device_move(call.args[0].value)
            if move is None:
                continue
            found.append(DeviceMismatch(weight, origin[0], None, move, call, kind="weight", why=origin[1],
                                        device=self._visible_at(self._move_target(move), move, weight)))
        return found

    def _loss_construction(self, name: cst.Name, depth: int = 0) -> Optional[cst.Call]:
        """The construction of the module ``name`` holds: its one assignment, or for a parameter
        of a function of the file, the one construction every call site passes."""
        bindings = self.model.resolve(name)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and depth < 3:
            passed = self._passed(bindings[0])
            if not passed or any(not isinstance(value, (cst.Name, cst.Call)) for value in passed):
                return None
            found = [value if isinstance(value, cst.Call) else self._loss_construction(value, depth + 1)
                     for value in passed]  # type: ignore[arg-type]
            return found[0] if found[0] is not None and all(item is found[0] for item in found) else None
        return self._construction(name)

    def _construction(self, name: cst.Name) -> Optional[cst.Call]:
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
            return None
        value = bindings[0].value
        return value if isinstance(value, cst.Call) else None

    def _moved_output(self, node: cst.BaseExpression, depth: int = 0) -> Optional[tuple[cst.Call, cst.Call]]:
        """(the move, the call) when ``node`` is the output of a module moved to a device
        (`model(x)`, through names and shape methods)."""
        if depth > 6:
            return None
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:  # `logits` of a loss's forward
                return self._at_every_call_site(bindings[0], lambda value: self._moved_output(value, depth + 1))
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or bindings[0].value is None or bindings[0].iterates:
                return None
            return self._moved_output(bindings[0].value, depth + 1)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value in torch_api.TENSOR_DTYPE_KEEPING_METHODS and \
                node.func.attr.value not in ("cpu", "cuda") and self.inference.qualname(node.func) is None:
            return self._moved_output(node.func.value, depth + 1)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and self._is_module(node.func):
            move = self._move_of(node.func, node)
            return (move, node) if move is not None else None
        if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None and not node.args[0].star:
            qualname = self.inference.qualname(node.func)  # `F.log_softmax(logits, -1)`: where its input is
            if qualname is not None and self._computes_from_first(qualname) and not torch_api.is_module_class(qualname):
                return self._moved_output(node.args[0].value, depth + 1)
        return None

    def _held_loss_weight(self, func: cst.Attribute) -> Optional[cst.BaseExpression]:
        """The class weights of the torch loss ``self.<name>`` that a module class of this file
        builds in its `__init__` (`self.nll_loss = nn.NLLLoss(weight=alpha)`), when nothing moves
        instances of the class (a loss module people build and never move)."""
        value = self.inference.infer(func)
        if value is None or value.kind is not Kind.MODULE or value.qualname not in torch_api.WEIGHT_MATCHING_LOSSES \
                or not isinstance(func.value, cst.Name):
            return None
        method = next((self.model.functions.get(id(node)) for node in ancestors(func)
                       if isinstance(node, cst.FunctionDef)), None)
        cls = method.cls if method is not None else None
        if cls is None or method.self_name != func.value.value or id(cls) in self.moved_classes() or \
                not self._is_module_class(cls) or any(name in cls.methods for name in ("to", "cuda", "_apply")):
            return None
        assignments = cls.assignments(func.attr.value)
        construction = assignments[0].value if len(assignments) == 1 and not assignments[0].path else None
        if not isinstance(construction, cst.Call) or assignments[0].function is not cls.methods.get("__init__"):
            return None
        position = torch_api.WEIGHT_MATCHING_LOSSES[value.qualname]
        positional = [arg.value for arg in construction.args if arg.keyword is None]
        return keyword(construction, "weight") or (positional[position] if position < len(positional) else None)

    def _function_of(self, binding: Binding) -> Optional[FunctionInfo]:
        scope = binding.scope
        return scope.function if scope is not None else None

    def _init_methods(self, cls: ClassInfo) -> list[FunctionInfo]:
        """``__init__`` and the methods it calls through ``self`` (one level)."""
        init = cls.methods.get("__init__")
        return [init, *self._self_callees(init)] if init is not None else []

    def _forward_methods(self, cls: ClassInfo, lineage: Optional[list[ClassInfo]] = None) -> list[FunctionInfo]:
        """``forward`` of ``cls`` and the methods it calls through `self`, looked up in the
        ``lineage`` of the instance when given (a base class's `forward` calling `self.transform`
        runs the subclass's `transform`)."""
        forward = cls.methods.get("forward")
        return [forward, *self._self_callees(forward, lineage)] if forward is not None else []

    def _self_callees(self, function: FunctionInfo, lineage: Optional[list[ClassInfo]] = None) -> list[FunctionInfo]:
        """The methods ``function`` calls through ``self``, looked up in ``lineage`` (the class
        of the instance and its bases of the file, nearest first) when given."""
        owners = lineage or [function.cls]
        found = []
        for call in self._calls_in(function.node):
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.value.value == function.self_name:
                method = next((owner.methods[func.attr.value] for owner in owners
                               if func.attr.value in owner.methods), None)
                if method is not None and method is not function and method not in found:
                    found.append(method)
        return found

    def _left_attributes(self, cls: ClassInfo, move: cst.Call) -> list[DeviceMismatch]:
        """Plain tensor attributes made while the module is built, read in ``forward``."""
        found = []
        lineage = self._built_by(cls)
        source = "".join(self.analysis.text[owner.node.start:owner.node.end] for owner in lineage)
        init_methods = [method for owner in lineage for method in self._init_methods(owner)]
        forward_methods = next((self._forward_methods(owner, lineage) for owner in lineage
                                if "forward" in owner.methods), [])
        if not init_methods or not forward_methods or any(
                method in owner.methods for owner in lineage[1:] for method in ("to", "cuda", "_apply")):
            return found
        for method in init_methods:
            for statement in self._assignments_in(method):
                target = statement.targets[0].target
                if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == method.self_name):
                    continue
                name = target.attr.value
                if f'"{name}"' in source or f"'{name}'" in source:
                    continue  # register_buffer("name", ..), setattr(self, "name", ..)
                made = self._fresh_cpu_tensor(statement.value, method)
                helper = self._file_function(statement.value.func) if made is None and \
                    isinstance(statement.value, cst.Call) and isinstance(statement.value.func, cst.Name) else None
                if made is None and not isinstance(statement.value, cst.Call) or helper is not None or (
                        isinstance(statement.value, cst.Call) and isinstance(statement.value.func, cst.Attribute)) \
                        or made is None and self.inference.qualname(statement.value.func) in \
                        torch_api.SAME_TENSOR_WRAPPERS:
                    # `pe = torch.zeros(..); ..; self.pe = pe.unsqueeze(0)`; `self.bias = get_alibi(heads, n)`
                    # of a helper of the file that makes the tensor it returns; `Variable(torch.zeros(1))`.
                    origin = self.cpu_origin(statement.value)
                    within = [method.node] + ([helper.node] if helper is not None else [])
                    made_by = self.inference.qualname(origin[0].func) or "" \
                        if origin is not None and isinstance(origin[0], cst.Call) else ""
                    # (a dict of constants, `self.data = {"a": torch.Tensor([1]), ..}`: each entry stays
                    # where it was made, whatever registers the same tensors as buffers)
                    if (made_by in torch_api.TORCH_SIZED_FACTORIES or made_by in torch_api.TORCH_CONVERTERS or
                            isinstance(statement.value, cst.Dict) and torch_api.is_cpu_tensor_type(made_by)) and \
                            (any(body.start <= origin[0].start and origin[0].end <= body.end for body in within) or
                             self._from_parameter(statement.value, method)):
                        # (or handed to the constructor: `self.mins = bounds[0:1]` of a CPU `bounds`)
                        made = made or origin[0]
                if made is None:
                    continue
                used = self._first_use(cls, name, forward_methods)
                if used is None:
                    continue
                if isinstance(statement.value, cst.Dict):  # reported where `forward` reads an entry
                    found.append(DeviceMismatch(used, made, cls, move, used, attribute=name, kind="dict"))
                    continue
                holds_several = self._holds_tuple(statement.value) or isinstance(statement.value, cst.Call) and \
                    torch_api.is_distribution_class(self.inference.qualname(statement.value.func) or "")
                found.append(DeviceMismatch(statement, made, cls, move, used, attribute=name,
                                            kind="tuple" if holds_several else ""))
        return found

    def _stale_caches(self, cls: ClassInfo, move: cst.Call) -> list[DeviceMismatch]:
        """Plain attributes that ``forward`` (or a method it calls) fills with a tensor made on
        the device of that call, under an ``if`` on the module's own state (`if self.idx is None`,
        `if batch_size != self.batch_size_last`): a cache, kept across calls. The module is
        called before it is moved (`model(x)` for a sanity check or training on the CPU, then
        `model.to(device)`) and after: the move leaves the cache where the first call made it,
        and ``forward`` computes with it there. Reported where ``__init__`` sets it (to None),
        else where ``forward`` fills it."""
        found: list[DeviceMismatch] = []
        lineage = self._built_by(cls)
        forward_methods = next((self._forward_methods(owner) for owner in lineage if "forward" in owner.methods), [])
        if not forward_methods or any(method in owner.methods for owner in lineage
                                      for method in ("to", "cuda", "_apply")):
            return found
        ran = self._called_before(move)
        if ran is None:
            return found
        source = "".join(self.analysis.text[owner.node.start:owner.node.end] for owner in lineage)
        init_methods = [method for owner in lineage for method in self._init_methods(owner)]
        seen: set[str] = set()
        for method in forward_methods:
            for statement in self._assignments_in(method):
                target = statement.targets[0].target
                if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                        and target.value.value == method.self_name) or target.attr.value in seen:
                    continue
                name = target.attr.value
                if f'"{name}"' in source or f"'{name}'" in source or not self._cache_guard(statement, method):
                    continue  # registered by name, or remade at every call
                value = self.inference.tensor(statement.value)
                if value is None or value.scalar:
                    continue  # a 0-dim tensor mixes with tensors on any device
                used = self._cache_use(name, forward_methods)
                if used is None:
                    continue
                seen.add(name)
                initial = next((assignment for init in init_methods for assignment in self._assignments_in(init)
                                if isinstance(assignment.targets[0].target, cst.Attribute)
                                and dotted(assignment.targets[0].target) == f"{init.self_name}.{name}"
                                and isinstance(assignment.value, cst.Name) and assignment.value.value == "None"),
                               None)
                found.append(DeviceMismatch(initial or statement, statement, cls, move, used, attribute=name,
                                            kind="cache", ran=ran))
        return found

    def _built_after_own_move(self) -> list[DeviceMismatch]:
        """A module class whose ``__init__`` moves the module (`self.to(device)`, `self.cuda()`,
        to a device that may not be the CPU) before it builds its layers: the move takes what
        is registered then (nothing), and the layers built after it stay on the CPU. Only when
        nothing else in the file moves its instances (or a module holding one), and a method
        computes with one of those layers."""
        found: list[DeviceMismatch] = []
        for cls in self.model.classes.values():
            if cls.model is not self.model or not self._is_module_class(cls) or \
                    any(name in cls.methods for name in ("to", "cuda", "_apply")):
                continue
            init = cls.methods.get("__init__")
            if init is None:
                continue
            own = [call for call in self._calls_in(init.node) if self._is_move(call)
                   and isinstance(call.func.value, cst.Name)  # type: ignore[attr-defined]
                   and call.func.value.value == init.self_name]  # type: ignore[attr-defined]
            if len(own) != 1 or not isinstance(own[0].parent, cst.Expr):
                continue
            move = own[0]
            layers = [statement for statement in self._assignments_in(init) if statement.start > move.end
                      and isinstance(statement.targets[0].target, cst.Attribute)
                      and dotted(statement.targets[0].target.value) == init.self_name
                      and isinstance(statement.value, cst.Call) and self._holds_weights(statement.value)]
            if not layers or self._moved_otherwise(cls, move):
                continue
            for layer in layers:
                name = layer.targets[0].target.attr.value  # type: ignore[attr-defined]
                used = next((call for method in cls.methods.values() if method is not init
                             for call in self._calls_in(method.node) if isinstance(call.func, cst.Attribute)
                             and call.func.attr.value == name and dotted(call.func.value) == method.self_name), None)
                if used is not None:
                    found.append(DeviceMismatch(move, layer, cls, move, used, attribute=name, kind="early"))
                    break
        return found

    def _moved_otherwise(self, cls: ClassInfo, own: cst.Call) -> bool:
        """Something in the file but ``own`` (the class's move of itself) may move instances of
        ``cls``: a move of a module whose class is not known, is ``cls``, or builds it."""
        for call in self._all_calls():
            if call is own or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in ("to", "cuda") \
                    or not self._moves_to_a_device(call):
                continue
            receiver = call.func.value
            value = self.inference.infer(receiver)
            if value is not None and value.kind is Kind.TENSOR:
                continue
            holder = self._class_of(receiver)
            if holder is None and value is not None and value.kind is Kind.MODULE and value.qualname is not None \
                    and not self._contained_classes(receiver):
                continue  # a torch layer of its own
            if holder is None:
                return True
            pending, seen = [holder], set()
            while pending:
                current = pending.pop()
                if current is cls:
                    return True
                if id(current) not in seen:
                    seen.add(id(current))
                    pending.extend(self._submodule_classes(current))
        return False

    def _held_in_plain_containers(self) -> list[DeviceMismatch]:
        """Modules given to a moved module's constructor and kept in a plain list or tuple
        attribute (`self.metrics = [*metrics, self.criterion]`): `.to(device)` does not reach
        them, so a module built on the CPU (never moved, holding parameters or buffers) stays
        there, and a method of the moved module calls it with the module's own output
        (`metric(self(x), ..)`). Layers built in the class itself are TL418's."""
        found: list[DeviceMismatch] = []
        if not _MOVES.search(self.analysis.text):
            return found
        for cls, move in self.moved_classes().values():
            if any(name in cls.methods for name in ("to", "cuda", "_apply")):
                continue
            for init in self._init_methods(cls):
                for statement in self._assignments_in(init):
                    target = statement.targets[0].target
                    if not (isinstance(target, cst.Attribute) and dotted(target.value) == init.self_name
                            and isinstance(statement.value, (cst.List, cst.Tuple))):
                        continue
                    made = self._unmoved_given_module(statement.value)
                    used = self._held_module_call(cls, target.attr.value) if made is not None else None
                    if used is not None:
                        found.append(DeviceMismatch(statement, made, cls, move, used, attribute=target.attr.value,
                                                    kind="held"))
        return found

    def _unmoved_given_module(self, container: cst.BaseExpression) -> Optional[cst.Call]:
        """A module the list or tuple written out ``container`` holds that a caller builds and
        never moves: through a parameter (`*metrics`, `metric`) every call site gives a list of
        constructions (or one), of a class of the file or of torch, holding tensors, without
        `device=`."""
        for element in container.elements:  # type: ignore[attr-defined]
            value = element.value
            if not isinstance(value, cst.Name):
                continue
            bindings = self.model.resolve(value)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
                continue
            passed = self._passed(bindings[0])
            if not passed or any(given is None for given in passed):
                continue
            for given in passed:
                items = _items(given) if isinstance(element, cst.StarredElement) else [given]
                for item in items or ():
                    if isinstance(item, cst.Call) and keyword(item, "device") is None and \
                            not any(arg.star == "**" for arg in item.args) and self._module_with_tensors(item):
                        return item
        return None

    def _module_with_tensors(self, call: cst.Call) -> bool:
        """``call`` builds a module that holds parameters or buffers: a torch layer with weights,
        or a module class of the file that (or a base class of the file) registers some."""
        qualname = self.inference.qualname(call.func)
        if qualname is not None:
            return self._has_weights(qualname)
        cls = self._class_of(call)
        return cls is not None and self._is_module_class(cls) and self._computes_with_own_tensors(cls)

    def _computes_with_own_tensors(self, cls: ClassInfo) -> bool:
        """The ``forward`` of the module class ``cls`` (or of a base class of the file) computes
        with a tensor the module registers (`register_buffer("w", ..)`, an `nn.Parameter`)
        where it is, not moved first (`self.w.to(preds.device)`), or calls a layer with weights."""
        lineage = self._lineage(cls)
        forward_methods = next((self._forward_methods(owner) for owner in lineage if "forward" in owner.methods), [])
        source = "".join(self.analysis.text[owner.node.start:owner.node.end] for owner in lineage)
        names = set(re.findall(r"register_(?:buffer|parameter)\(\s*[\"'](\w+)[\"']", source)) | \
            set(re.findall(r"\bself\.(\w+)\s*=\s*(?:torch\.)?(?:nn\.)?Parameter\(", source))
        if any(self._cache_use(name, forward_methods) is not None for name in names):
            return True
        return any(self._direct_layer_call(call, method) for method in forward_methods
                   for call in self._calls_in(method.node))

    def _direct_layer_call(self, call: cst.Call, method: FunctionInfo) -> bool:
        """``call`` runs a torch layer with weights held by the module (`self.fc(x)`)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and dotted(func.value) == method.self_name):
            return False
        layer = self.inference.infer(func)
        return layer is not None and layer.kind is Kind.MODULE and layer.qualname is not None and \
            self._has_weights(layer.qualname)

    def _held_module_call(self, cls: ClassInfo, name: str) -> Optional[cst.Call]:
        """A call, in a method of ``cls``, of a module taken from ``self.<name>`` (a loop over it,
        or an index) given a tensor on the module's device (its own output `self(x)`, a layer's)."""
        for method in cls.methods.values():
            if method.name == "__init__":
                continue
            for call in self._calls_in(method.node):
                func = call.func
                source = func.value if isinstance(func, cst.Subscript) else None
                if isinstance(func, cst.Name):
                    bindings = self.model.resolve(func)
                    if len(bindings) == 1 and bindings[0].kind is BindingKind.FOR and not bindings[0].path:
                        source = bindings[0].value
                while isinstance(source, cst.Subscript):  # `self.metrics[:-1]`
                    source = source.value
                if not (isinstance(source, cst.Attribute) and source.attr.value == name
                        and dotted(source.value) == method.self_name):
                    continue
                if any(arg.keyword is None and not arg.star and self._own_output(arg.value, method)
                       for arg in call.args):
                    return call
        return None

    def _own_output(self, node: cst.BaseExpression, method: FunctionInfo, depth: int = 0) -> bool:
        """``node`` is the output of the module ``method`` belongs to (`self(x)`, `self.forward(x)`),
        of one of its layers (``_on_device``), or what keeps the device of those."""
        if depth > 4:
            return False
        if isinstance(node, cst.Name):
            values = self._assigned(node)
            return bool(values) and all(self._own_output(value, method, depth + 1) for value in values)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value == method.self_name or \
                    isinstance(func, cst.Attribute) and func.attr.value == "forward" and \
                    dotted(func.value) == method.self_name:
                forward = method.cls.methods.get("forward") if method.cls is not None else None
                return forward is not None and bool(forward.returns) and \
                    all(self._on_device(returned, forward) for returned in forward.returns)
            if isinstance(func, cst.Attribute) and self._keeps_device_of(func.attr.value):
                return self._own_output(func.value, method, depth + 1)
        return self._on_device(node, method)

    def _cache_guard(self, statement: cst.Assign, method: FunctionInfo) -> bool:
        """``statement`` runs under an ``if`` of ``method`` whose test reads the module's own
        state (`self.<attr>`) and not a device (`x.device != self.mask.device` remakes it)."""
        for node in ancestors(statement):
            if node is method.node:
                return False
            if isinstance(node, cst.If):
                test = self.analysis.text[node.test.start:node.test.end]
                return "device" not in test and any(
                    isinstance(read, cst.Attribute) and isinstance(read.value, cst.Name)
                    and read.value.value == method.self_name for read in iter_nodes(node.test))
        return False

    def _cache_use(self, name: str, methods: list[FunctionInfo]) -> Optional[cst.CSTNode]:
        """The first read of ``self.<name>`` in ``methods`` that computes with the tensor: not
        an assignment, a test (`is None`), a move or a metadata read (`.to(x.device)`, `.shape`);
        None when one read moves it."""
        for method in methods:
            for node in self.analysis.nodes_of(cst.Attribute):
                if not (method.node.start <= node.start and node.end <= method.node.end) or \
                        node.attr.value != name or not isinstance(node.value, cst.Name) or \
                        node.value.value != method.self_name:
                    continue
                if isinstance(node.parent, (cst.AssignTarget, cst.Comparison)) or any(
                        isinstance(up, cst.If) and up.test.start <= node.start and node.end <= up.test.end
                        for up in ancestors(node)):
                    continue  # set, or tested (`self.mask is None`)
                return None if self._neutral_read(node) else node
        return None

    @staticmethod
    def _neutral_read(node: cst.Attribute) -> bool:
        """The read ``node`` (`self.mask`, also indexed) moves the tensor or reads its metadata
        (`self.mask.to(x.device)`, `.shape`): where it is does not matter there."""
        outer = node.parent
        while isinstance(outer, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice)):
            outer = outer.parent
        return isinstance(outer, cst.Attribute) and outer.attr.value in torch_api.PLACEMENT_NEUTRAL_USES

    def _called_before(self, move: cst.Call) -> Optional[cst.Call]:
        """A call of the module that ``move`` (`model.to(device)`) moves, made before the move in
        the same code while the module was still where it was built (the CPU: built without
        `device=`, not moved before), when the code calls it again after the move."""
        module = move.func.value  # type: ignore[attr-defined]
        if not isinstance(module, cst.Name) or self.inference.never_runs(move):
            return None
        construction = self._construction(module)
        if construction is None or keyword(construction, "device") is not None or \
                re.search(r"set_default_device", self.analysis.text):
            return None
        code = enclosing_code(move)
        calls = [call for call in self._all_calls() if isinstance(call.func, cst.Name)
                 and call.func.value == module.value and enclosing_code(call) is code]
        before = [call for call in calls if call.end <= move.start]
        if not before or not any(call.start > move.end for call in calls):
            return None
        if any(other is not move and self._is_move(other) and other.end <= move.start
               and dotted(other.func.value) == module.value for other in self._all_calls()):  # type: ignore
            return None  # moved before it ran
        first = before[0]
        return first if self.model.resolve(first.func) == self.model.resolve(module) else None

    def _built_by(self, cls: ClassInfo) -> list[ClassInfo]:
        """``cls`` and the base classes of this file whose ``__init__`` builds its instances
        too: through `super().__init__(..)`, or inherited when ``cls`` defines none."""
        found = [cls]
        for owner in self._lineage(cls)[1:]:
            init = found[-1].methods.get("__init__")
            if init is not None and not re.search(r"\bsuper\s*\(|\b" + re.escape(owner.name) + r"\.__init__\b",
                                                  self.analysis.text[init.node.start:init.node.end]):
                break
            found.append(owner)
        return found

    def _assignments_in(self, method: FunctionInfo) -> list[cst.Assign]:
        return [node for node in self.analysis.nodes_of(cst.Assign)
                if method.node.start <= node.start and node.end <= method.node.end and len(node.targets) == 1]

    def _fresh_cpu_tensor(self, value: cst.BaseExpression, method: FunctionInfo,
                          depth: int = 0) -> Optional[cst.Call]:
        """The call that makes ``value`` a new tensor of at least one dimension on the CPU
        (or on the device of a tensor passed to the constructor), if it is one; for a tuple of
        such tensors (an LSTM's `(h0, c0)`), the first's."""
        if isinstance(value, cst.Tuple) and value.elements and depth <= 3:
            made = [self._fresh_cpu_tensor(element.value, method, depth + 1)
                    if not isinstance(element, cst.StarredElement) else None for element in value.elements]
            return made[0] if all(item is not None for item in made) else None
        if depth > 3 or not isinstance(value, cst.Call):
            return None
        func = value.func
        qualname = self._called_qualname(func)
        if qualname in torch_api.TORCH_SIZED_FACTORIES or qualname == "torch.from_numpy":
            device = keyword(value, "device")
            if device is None or self._device_of_parameter(device, method):
                return value
            return None
        if qualname in ("torch.tril", "torch.triu") and value.args:
            return self._fresh_cpu_tensor(value.args[0].value, method, depth + 1)
        if qualname is not None and torch_api.is_distribution_class(qualname) and value.args \
                and not any(arg.star for arg in value.args):
            # `Normal(torch.zeros(d), torch.ones(d))`, `Normal(0.0, 1.0)`: it samples on the CPU.
            made = [None if _is_number(arg.value) else self._fresh_cpu_tensor(arg.value, method, depth + 1)
                    for arg in value.args]
            if any(item is None and not _is_number(arg.value) for item, arg in zip(made, value.args)):
                return None
            return next((item for item in made if item is not None), value)
        if qualname is None and isinstance(func, cst.Attribute) and self._keeps_device(func.attr.value):
            return self._fresh_cpu_tensor(func.value, method, depth + 1)  # `torch.from_numpy(pe).float()`
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.value.value == method.self_name and method.cls is not None:
            callee = method.cls.methods.get(func.attr.value)
            if callee is not None and len(callee.returns) == 1:
                inner: Optional[cst.BaseExpression] = callee.returns[0]
                if isinstance(inner, cst.Name):
                    bindings = self.model.resolve(inner)
                    inner = bindings[0].value if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN \
                        and not bindings[0].path else None
                return self._fresh_cpu_tensor(inner, callee, depth + 1) if inner is not None else None
        return None

    def _device_of_parameter(self, device: cst.BaseExpression, method: FunctionInfo) -> bool:
        """``device=x.device`` for a parameter ``x`` of the method building the module: the
        device of an example input at construction, which the move does not follow."""
        if not (isinstance(device, cst.Attribute) and device.attr.value == "device"
                and isinstance(device.value, cst.Name)):
            return False
        bindings = self.model.resolve(device.value)
        return len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and \
            bindings[0].name != method.self_name and method.name == "__init__" or (
                len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM and method.name != "forward")

    def _first_use(self, cls: ClassInfo, name: str, methods: list[FunctionInfo]) -> Optional[cst.CSTNode]:
        """The first read of ``self.<name>`` in ``methods`` that computes with the tensor
        (not ``.to(..)``, ``.device``...), before ``forward`` assigns it; None when it is
        moved or replaced first."""
        for method in methods:
            first_assignment = None
            for node in self.analysis.nodes_of(cst.Attribute):
                if not (method.node.start <= node.start and node.end <= method.node.end):
                    continue
                if node.attr.value != name or not isinstance(node.value, cst.Name) or \
                        node.value.value != method.self_name:
                    continue
                parent = node.parent
                target = parent
                while isinstance(target, (cst.Element, cst.Tuple, cst.List)):  # `out, self.hidden = ..`
                    target = target.parent
                if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Assign) and node is not
                                                            parent.value) or (
                        target is not parent and isinstance(target, cst.AssignTarget)):
                    first_assignment = first_assignment or node
                    continue
                if first_assignment is not None and first_assignment.start < node.start:
                    break
                if self._neutral_read(node):
                    return None
                outer = parent
                while isinstance(outer, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Slice)):
                    outer = outer.parent
                if isinstance(outer, cst.Arg) and isinstance(outer.parent, cst.Call) and \
                        isinstance(outer.parent.func, cst.Name) and outer.parent.func.value in _ITERATING_BUILTINS or \
                        isinstance(outer, (cst.CompFor, cst.For)) and outer.iter is node:
                    return None  # iterated: what is done with each element (`.item()`?) is not followed
                return node
        return None

    def _made_in_forward(self, cls: ClassInfo, move: cst.Call) -> list[DeviceMismatch]:
        """Tensors made in ``forward`` (or a method it calls) without ``device=`` and given to
        one of the module's layers."""
        found: list[DeviceMismatch] = []
        lineage = self._lineage(cls)  # `forward` and what it calls may be inherited from a base of the file
        forward = next((owner.methods["forward"] for owner in lineage if "forward" in owner.methods), None)
        entries = ([forward] if forward is not None else []) + [
            method for method in self._run_after_move(cls, move, lineage) if method is not forward]
        # (method, the entry that runs it): `forward`, run by a call of the module, or a method
        # the file calls on the moved instance, and the methods each calls through `self`
        methods: list[tuple[FunctionInfo, FunctionInfo]] = []
        for entry in entries:
            for method in [entry, *self._self_callees(entry, lineage)]:
                if all(method is not seen for seen, _ in methods):
                    methods.append((method, entry))
        init = [method for owner in lineage for method in self._init_methods(owner)]
        for method, entry in methods:
            if method in init:
                continue  # run while the module is built, before the move
            for call in self._calls_in(method.node):
                qualname = self.inference.qualname(call.func)
                sized = qualname in torch_api.TORCH_SIZED_FACTORIES
                if not sized and qualname not in torch_api.TORCH_CONVERTERS or keyword(call, "device") is not None:
                    continue
                if any(arg.star for arg in call.args):
                    continue
                if not sized and (self.cpu_origin(call) is None or self._scalar_origin(call)):
                    continue  # `torch.tensor(t)` of a tensor is where `t` is; of a number, 0-dim
                holder = call.parent
                if isinstance(holder, cst.Attribute) and holder.attr.value in torch_api.PLACEMENT_NEUTRAL_USES:
                    continue
                name = self._bound_name(call)
                used = self._layer_use(name, method, entry) if name is not None else None
                if used is None and method is not entry and _returned(call):
                    used = self._result_use(method, entry)  # `return torch.zeros(1, n, self.hidden)`
                kind = ""
                if used is None and (not sized or self._has_dimensions(call, qualname)):
                    top = self._carrier(call, (cls, entry))
                    name = self._bound_name(top)
                    used = self._direct_layer_use(top, method)
                    if used is None:
                        used = self._met(top, method) if name is None else self._met_read(name, top, method, 0)
                        kind = "met"
                if used is None:
                    continue
                device_of = self._tensor_parameter(call, method)
                if device_of is None and entry is not forward:  # a method run on the module, not given an input
                    device_of = self._registered_name(method)
                found.append(DeviceMismatch(call, call, cls, move, used, device_of=device_of, kind=kind))
        return found

    def _registered_name(self, method: FunctionInfo) -> Optional[str]:
        """`self.<name>` of a tensor the module registers (a parameter or buffer, which the
        move takes along), whose `.device` a tensor made in ``method`` can take."""
        if method.cls is None:
            return None
        for owner in self._lineage(method.cls):
            for name in list(owner.attributes):
                if self._registered_attribute(method, name):
                    return f"{method.self_name}.{name}"
        return None

    def _run_after_move(self, cls: ClassInfo, move: cst.Call, lineage: list[ClassInfo]) -> list[FunctionInfo]:
        """The methods of ``cls`` (or a base class of the file) that the file calls on an
        instance after the move (`lu.inverse(z)`, `model.render_labels()`): they run with the
        module's parameters where the move put them."""
        found: list[FunctionInfo] = []
        for call in self._all_calls():
            func = call.func
            if call.start <= move.end or not isinstance(func, cst.Attribute) or \
                    func.attr.value.startswith("__") or func.attr.value == "forward":
                continue
            value = self.inference.infer(func.value)
            if value is None or value.kind is not Kind.MODULE or value.cls is not cls:
                continue
            method = next((owner.methods[func.attr.value] for owner in lineage if func.attr.value in owner.methods),
                          None)
            if method is not None and method.kind == "method" and method not in found:
                found.append(method)
        return found

    @staticmethod
    def _has_dimensions(call: cst.Call, qualname: Optional[str]) -> bool:
        """The factory makes a tensor of at least one dimension (a 0-dim CPU tensor mixes
        with tensors on any device)."""
        args = [arg.value for arg in call.args if arg.keyword is None]
        if qualname in ("torch.arange", "torch.randperm", "torch.linspace", "torch.eye"):
            return bool(args)
        size = keyword(call, "size")
        first = size if size is not None else (args[1] if qualname in ("torch.full", "torch.randint") and
                                               len(args) > 1 and qualname == "torch.full" else None)
        if qualname == "torch.full":
            first = size if size is not None else (args[0] if args else None)
        elif qualname == "torch.randint":
            first = size if size is not None else (args[-1] if args else None)
        elif first is None:
            first = args[0] if args else None
        if first is None:
            return False
        return not (isinstance(first, (cst.Tuple, cst.List)) and not first.elements)

    def _carrier(self, call: cst.Call, runs: Optional[tuple[ClassInfo, FunctionInfo]] = None) -> cst.BaseExpression:
        """The expression that carries the tensor ``call`` makes on, with its device:
        `torch.tril(torch.ones(t, t))`, `.float()`, `== 0` around it. ``runs``: the module class
        whose instances run the method ``call`` is in, and the ``forward`` they run."""
        current: cst.BaseExpression = call
        for _ in range(6):
            parent = current.parent
            if isinstance(parent, cst.Attribute) and parent.value is current and isinstance(parent.parent, cst.Call) \
                    and parent.parent.func is parent and self._keeps_device(parent.attr.value):
                current = parent.parent
                continue
            if isinstance(parent, cst.Arg) and isinstance(parent.parent, cst.Call) and \
                    parent.parent.args and parent.parent.args[0] is parent and (
                        self.inference.qualname(parent.parent.func) in ("torch.tril", "torch.triu") or
                        self.inference.qualname(parent.parent.func) in torch_api.TORCH_DTYPE_KEEPING_FUNCTIONS):
                current = parent.parent  # `nn.Parameter(torch.randn(n))` in `forward`: not registered, on the CPU
                continue
            if isinstance(parent, cst.Comparison) and parent.left is current:
                current = parent
                continue
            if self._default_of(current, parent, runs):
                current = parent  # `torch.ones(n) if mask is None else mask`: the default is on the CPU
                continue
            break
        return current

    def _default_of(self, made: cst.BaseExpression, parent: Optional[cst.CSTNode],
                    runs: Optional[tuple[ClassInfo, FunctionInfo]] = None) -> bool:
        """``parent`` is `made if <name> is None else <name>` (or the reverse): the value the
        parameter ``name`` gets when the caller gives none, and a call gives none (also a call
        of the module, ``runs``, whose ``forward`` passes its ``*args``/``**kwargs`` on)."""
        if not isinstance(parent, cst.IfExp) or made is parent.test:
            return False
        test, other = parent.test, parent.orelse if parent.body is made else parent.body
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(other, cst.Name)
                and isinstance(test.left, cst.Name) and test.left.value == other.value):
            return False
        operator, comparator = test.comparisons[0].operator, test.comparisons[0].comparator
        wanted = cst.Is if parent.body is made else cst.IsNot
        if not (isinstance(operator, wanted) and isinstance(comparator, cst.Name) and comparator.value == "None"):
            return False
        bindings = self.model.resolve(other)
        passed = self._passed(bindings[0]) if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM else None
        if passed is None and runs is not None and len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
            return self._left_out_by_module_call(bindings[0], *runs)
        return passed is not None and any(value is None for value in passed)

    def _left_out_by_module_call(self, binding: Binding, cls: ClassInfo, forward: FunctionInfo) -> bool:
        """A call of an instance of the module class ``cls`` runs the method of the parameter
        ``binding`` without it: the method is ``forward``, or ``forward`` calls it passing on
        its own ``*args``/``**kwargs`` (`self.update(*args, **kwargs)`, also when only a
        subclass defines ``update``), and the module call gives nothing in that place."""
        function = self._function_of(binding)
        if function is None or not isinstance(binding.node, cst.Param) or not isinstance(function.node, cst.FunctionDef) \
                or binding.node.default is None or dotted(binding.node.default) != "None":
            return False
        params = [param.name.value for param in function.positional_params()[1:]]
        index = params.index(binding.name) if binding.name in params else -1
        if function is forward:
            inner: list[tuple[int, Optional[FunctionInfo], Optional[FunctionInfo]]] = [(0, forward, forward)]
        else:
            inner = []
            for call in self._calls_in(forward.node):
                func = call.func
                if isinstance(func, cst.Attribute) and dotted(func.value) == forward.self_name and \
                        func.attr.value == function.name:
                    explicit, args_of, kwargs_of = self.inference.passed_on(call)
                    if keyword(call, binding.name) is None and any(arg.star for arg in call.args) and \
                            (args_of is forward or kwargs_of is forward) and not (0 <= index < explicit):
                        inner.append((explicit, args_of, kwargs_of))
        own = len(forward.positional_params()) - 1  # what `forward` takes before its `*args`
        for explicit, args_of, kwargs_of in inner:
            for call in self._module_calls().get(id(cls), ()):
                if any(arg.star for arg in call.args):
                    continue
                given = kwargs_of is forward and keyword(call, binding.name) is not None
                positional = [arg for arg in call.args if arg.keyword is None]
                if args_of is forward and index >= explicit:
                    given = given or index - explicit + (own if function is not forward else 0) < len(positional)
                if not given:
                    return True
        return False

    @staticmethod
    def _keeps_device(method: str) -> bool:
        return (method in torch_api.TENSOR_DTYPE_KEEPING_METHODS or method in torch_api.DTYPE_METHODS) and \
            method not in ("cpu", "cuda")

    def _direct_layer_use(self, node: cst.BaseExpression, method: FunctionInfo) -> Optional[cst.Call]:
        """``node`` is given as it is to one of the module's layers with weights
        (`self.pos(torch.arange(t))`)."""
        parent = node.parent
        if not isinstance(parent, cst.Arg) or not isinstance(parent.parent, cst.Call):
            return None
        call = parent.parent
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == method.self_name:
            layer = self.inference.infer(func)
            if layer is not None and layer.kind is Kind.MODULE and self._layer_holds_weights(layer, func, method):
                return call
        return None

    def _layer_holds_weights(self, layer, func: cst.Attribute, method: FunctionInfo) -> bool:
        """The module's layer ``func`` (inferred as ``layer``) holds parameters, which the move
        takes along: a layer with weights, an `nn.Sequential` holding one
        (`self.encoder = nn.Sequential(nn.Linear(..), ..)`)."""
        if layer.qualname is not None and self._has_weights(layer.qualname):
            return True
        return layer.qualname == "torch.nn.Sequential" and self._sequential_with_weights(func, method)

    def _met(self, node: cst.CSTNode, method: FunctionInfo, depth: int = 0) -> Optional[cst.CSTNode]:
        """Where ``node`` (a tensor made on the CPU) meets, by arithmetic or `torch.cat`, a
        tensor on the module's device: the output of one of its layers, or an input of
        `forward` that a layer is given; also through a name it is bound to, whose reads
        carry it (`values = torch.cat([torch.zeros(n), ..])` then `values * self.scale`)."""
        current = node
        for _ in range(8):
            parent = current.parent
            if isinstance(parent, cst.Attribute) and parent.value is current and isinstance(parent.parent, cst.Call) \
                    and parent.parent.func is parent and (self._keeps_device(parent.attr.value) or
                                                         self._keeps_device_of(parent.attr.value)):
                current = parent.parent  # `.float()`, `.repeat_interleave(n)`: on the same device
                continue
            if isinstance(parent, cst.Comparison) and parent.left is current or \
                    isinstance(parent, cst.Subscript) and parent.value is current:  # `mask[:, None] == 0`
                current = parent
                continue
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (
                    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply)):
                other = parent.right if parent.left is current else parent.left
                if self._on_device(other, method):
                    return parent
                current = parent  # `sigma * torch.randn(..)`: still on the CPU (or raising there)
                continue
            if isinstance(parent, cst.Arg) and isinstance(parent.parent, cst.Call) and parent.keyword is None:
                call = parent.parent
                func = call.func
                others = [arg.value for arg in call.args if arg is not parent and not arg.star]
                qualname = self.inference.qualname(func)
                if qualname is None and isinstance(func, cst.Attribute) and \
                        torch_facts.method(func.attr.value) is not None:
                    others.append(func.value)  # `scores.masked_fill(mask, ..)`
                elif qualname is None or not qualname.startswith("torch.") or \
                        torch_api.is_module_class(qualname) or qualname in ("torch.cat", "torch.stack"):
                    return None
                return call if any(self._on_device(other, method) for other in others) else None
            if isinstance(parent, cst.Element) and isinstance(parent.parent, (cst.List, cst.Tuple)):
                holder = parent.parent
                call = holder.parent.parent if isinstance(holder.parent, cst.Arg) else None
                if isinstance(call, cst.Call) and self.inference.qualname(call.func) in ("torch.cat", "torch.stack") \
                        and call.args[0].value is holder:
                    others = [element.value for element in holder.elements if element is not parent
                              and not isinstance(element, cst.StarredElement)]
                    if any(self._on_device(other, method) for other in others):
                        return call
                    current = call  # joined with other tensors on the CPU: on the CPU
                    continue
            if isinstance(parent, cst.Assign) and parent.value is current and depth < 3 and \
                    len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
                return self._met_read(parent.targets[0].target.value, current, method, depth + 1)
            return None
        return None

    def _met_read(self, name: str, value: cst.BaseExpression, method: FunctionInfo,
                  depth: int) -> Optional[cst.CSTNode]:
        """Where a read of ``name`` in ``method``, bound only to ``value`` there, meets a tensor
        on the module's device."""
        for node in self.analysis.nodes_of(cst.Name):
            if node.value != name or not (value.end <= node.start and node.end <= method.node.end):
                continue
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and bindings[0].value is value:
                met = self._met(node, method, depth)
                if met is not None:
                    return met
        return None

    def _on_device(self, node: cst.BaseExpression, method: FunctionInfo, depth: int = 0) -> bool:
        """``node`` is on the module's device: the output of one of its layers with weights
        (`self.fc(h)`), an input of `forward` given to one of them, or computed from those."""
        if depth > 8:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                    func.value.value == method.self_name:
                layer = self.inference.infer(func)
                if layer is not None and layer.kind is Kind.MODULE and (
                        (layer.qualname is not None and self._has_weights(layer.qualname)) or
                        isinstance(layer.cls, ClassInfo) or
                        layer.qualname == "torch.nn.Sequential" and self._sequential_with_weights(func, method)):
                    return True
                own = self._own_method(func, method)  # `self.get_opacities()`: where what it returns is
                return own is not None and bool(own.returns) and not own.is_generator and \
                    all(self._on_device(returned, own, depth + 1) for returned in own.returns)
            qualname = self.inference.qualname(func)
            if qualname is not None:  # `torch.relu(self.fc(x))`: where its tensors are
                return qualname.startswith("torch.") and qualname not in torch_api.TORCH_SIZED_FACTORIES and \
                    qualname not in torch_api.TORCH_CONVERTERS and not torch_api.is_module_class(qualname) and \
                    any(self._on_device(arg.value, method, depth + 1) for arg in node.args
                        if arg.keyword is None and not arg.star)
            if isinstance(func, cst.Attribute) and (func.attr.value in torch_api.TENSOR_DTYPE_KEEPING_METHODS or
                                                    func.attr.value in torch_api.DTYPE_METHODS or
                                                    self._keeps_device_of(func.attr.value)) \
                    and func.attr.value not in ("cpu",):
                return self._on_device(func.value, method, depth + 1)
            return False
        if isinstance(node, cst.Subscript):
            return self._on_device(node.value, method, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            return self._on_device(node.left, method, depth + 1) or self._on_device(node.right, method, depth + 1)
        if isinstance(node, (cst.List, cst.Tuple)):  # `torch.cat([ground, self.alpha.repeat(n)])`: with one there
            return any(self._on_device(element.value, method, depth + 1) for element in node.elements
                       if not isinstance(element, cst.StarredElement))
        if isinstance(node, cst.Attribute):
            return self._registered_tensor(node, method)
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if not bindings:
                return False
            for binding in bindings:
                if binding.kind is BindingKind.PARAM:
                    if binding.name == method.self_name or not (self._given_to_layer(binding, method) or
                                                                self._given_on_device(binding, method, depth) or
                                                                self._given_moved(binding, method)):
                        return False
                elif binding.kind is BindingKind.ASSIGN and binding.value is not None and not binding.iterates:
                    if binding.path and not self._splits(binding.value):
                        item = self._own_returned_item(binding, method)  # `lower, upper = self._lower_upper()`
                        if item is None or not self._on_device(item[0], item[1], depth + 1):
                            return False
                        continue
                    if not self._on_device(binding.value, method, depth + 1):
                        return False
                else:
                    return False
            return True
        return False

    def _own_method(self, func: cst.Attribute, method: FunctionInfo) -> Optional[FunctionInfo]:
        """The method of the module's class (or a base class of the file) that ``func``,
        `self.<name>` in ``method``, calls."""
        if method.cls is None or not (isinstance(func.value, cst.Name) and func.value.value == method.self_name):
            return None
        own = next((owner.methods[func.attr.value] for owner in self._lineage(method.cls)
                    if func.attr.value in owner.methods), None)
        return own if own is not None and own.kind == "method" and own is not method else None

    def _own_returned_item(self, binding: Binding, method: FunctionInfo) -> Optional[tuple[cst.BaseExpression,
                                                                                            FunctionInfo]]:
        """(the value, the method it is in) a name unpacked from a call of one of the module's
        own methods gets, when every `return` of that method gives a tuple written out."""
        value = binding.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)) or len(binding.path) != 1 or \
                binding.path[0] is None:
            return None
        own = self._own_method(value.func, method)
        if own is None or len(own.returns) != 1 or not isinstance(own.returns[0], cst.Tuple):
            return None
        elements = own.returns[0].elements
        index = binding.path[0]
        if index >= len(elements) or any(isinstance(element, cst.StarredElement) for element in elements):
            return None
        return elements[index].value, own

    def _registered_tensor(self, node: cst.Attribute, method: FunctionInfo) -> bool:
        """``node`` is ``self.<name>``, a tensor the module registers (`register_buffer("<name>",
        t)`, `self.<name> = nn.Parameter(..)`, in its class or a base class of the file) and never
        rebinds otherwise: the move of the module takes it along."""
        if not (isinstance(node.value, cst.Name) and node.value.value == method.self_name) or method.cls is None:
            return False
        return self._registered_attribute(method, node.attr.value)

    def _registered_attribute(self, method: FunctionInfo, name: str) -> bool:
        """`self.<name>` in ``method`` is a tensor the module registers (see ``_registered_tensor``)."""
        lineage = self._lineage(method.cls)
        assignments = [assignment for owner in lineage for assignment in owner.assignments(name)]
        named = re.compile(rf"""setattr\(\s*{re.escape(method.self_name)}\s*,\s*["']{re.escape(name)}["']""")
        if not assignments or any(named.search(self.analysis.text, owner.node.start, owner.node.end)
                                  for owner in lineage):
            return False
        for assignment in assignments:
            made = assignment.node
            registers = isinstance(made, cst.Call) and isinstance(made.func, cst.Attribute) and \
                made.func.attr.value in ("register_buffer", "register_parameter")
            wrapped = isinstance(assignment.value, cst.Call) and \
                self.inference.qualname(assignment.value.func) == "torch.nn.Parameter"
            if assignment.path or not (registers or wrapped) or \
                    isinstance(assignment.value, cst.Name) and assignment.value.value == "None":
                return False
        return True

    def _splits(self, value: cst.BaseExpression) -> bool:
        """``value`` is a tuple of tensors all on the device of what it is computed from
        (`q, k, v = self.qkv(x).chunk(3, -1)`, `values, indices = scores.topk(k)`)."""
        if not isinstance(value, cst.Call):
            return False
        qualname = self.inference.qualname(value.func)
        if qualname is not None:  # `torch.max(outputs, 1)`, `torch.chunk(x, 2)`
            fact = torch_facts.fact(qualname)
            return fact is not None and fact.kind == "function" and fact.returns in ("tuple", "depends") and \
                self._computes_from_first(qualname)
        if not isinstance(value.func, cst.Attribute):
            return False
        fact = torch_facts.method(value.func.attr.value)
        return fact is not None and fact.returns in ("tuple", "depends") and fact.tensor_only

    def _given_on_device(self, binding: Binding, method: FunctionInfo, depth: int) -> bool:
        """``method`` is the ``forward`` of a module class that the forwards of this file call
        as a submodule (`self.pos(self.embed(tokens))`), and every such call gives the
        parameter ``binding`` a tensor on the device (so it is there for the code to run)."""
        cls = method.cls
        index = _forward_argument_index(binding, method)
        if cls is None or index is None or depth > 4:
            return False
        given = []
        for call in self._call_sites(method):  # the calls of its instances
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
                continue
            caller = self.model.functions.get(id(enclosing_code(call)))
            args = [arg for arg in call.args if arg.keyword is None]
            if caller is None or caller.name != "forward" or func.value.value != caller.self_name or \
                    any(arg.star for arg in call.args) or index >= len(args):
                return False
            given.append(self._on_device(args[index].value, caller, depth + 1))
        return bool(given) and all(given)

    def _given_moved(self, binding: Binding, method: FunctionInfo) -> bool:
        """``method`` is the ``forward`` of a module class, and every call of its instances
        outside a ``forward`` (`net(x.to(device))` in the training code) gives the parameter
        ``binding`` a tensor moved to a device."""
        cls = method.cls
        index = _forward_argument_index(binding, method)
        if cls is None or index is None:
            return False
        given = []
        for call in self._call_sites(method):  # the calls of its instances
            caller = self.model.functions.get(id(enclosing_code(call)))
            args = [arg for arg in call.args if arg.keyword is None]
            if caller is not None and caller.name == "forward" or any(arg.star for arg in call.args) \
                    or index >= len(args):
                return False
            given.append(self.device_move(args[index].value) is not None)
        return bool(given) and all(given)

    def _given_to_layer(self, binding: Binding, method: FunctionInfo) -> bool:
        """The parameter ``binding`` of ``method`` is given as it is to a layer of the module
        with weights (so it is on the module's device for the code to run)."""
        for call in self._calls_in(method.node):
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == method.self_name):
                continue
            layer = self.inference.infer(func)
            if layer is None or layer.kind is not Kind.MODULE or layer.qualname is None or \
                    not self._has_weights(layer.qualname):
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value == binding.name and \
                        self.model.resolve(arg.value) == [binding]:
                    return True
        return False

    def _bound_name(self, call: cst.Call) -> Optional[str]:
        statement = call.parent
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0].target, cst.Name):
            return statement.targets[0].target.value
        return None

    def _layer_use(self, name: str, method: FunctionInfo, forward: FunctionInfo) -> Optional[cst.CSTNode]:
        """A call of one of the module's layers (`self.<layer>(.., name, ..)`) given the tensor
        bound to ``name`` in ``method`` (in ``forward``, through the helper's return)."""
        if method is not forward:
            if not any(isinstance(value, cst.Name) and value.value == name for value in method.returns):
                return None
            return self._result_use(method, forward)
        for call in self._calls_in(method.node):
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                    and func.value.value == method.self_name):
                continue
            layer = self.inference.infer(func)
            if layer is None or layer.kind is not Kind.MODULE:
                continue
            if layer.qualname is not None and not self._layer_holds_weights(layer, func, method):
                continue
            for arg in call.args:
                values = [element.value for element in arg.value.elements] if isinstance(arg.value, cst.Tuple) \
                    else [arg.value]
                if isinstance(arg.value, cst.Name):  # `states = (h, c)` then `self.lstm(x, states)`
                    values += [element.value for binding in self.model.resolve(arg.value)
                               if binding.kind is BindingKind.ASSIGN and not binding.path
                               and isinstance(binding.value, cst.Tuple) for element in binding.value.elements
                               if not isinstance(element, cst.StarredElement)]
                for value in values:
                    for operand in self._operands(value):
                        if isinstance(operand, cst.Name) and operand.value == name and self._made_here(operand, name) \
                                and (operand is value or self._with_dimensions(operand)):
                            return call  # `self.fc(x + noise)`: the sum is on the CPU, or raises first
        return None

    def _with_dimensions(self, name: cst.Name) -> bool:
        """Every binding of ``name`` makes a tensor of at least one dimension (a 0-dim CPU
        tensor mixes with tensors on any device in arithmetic)."""
        bindings = self.model.resolve(name)
        return bool(bindings) and all(
            isinstance(binding.value, cst.Call) and (qualname := self.inference.qualname(binding.value.func))
            in torch_api.TORCH_SIZED_FACTORIES and self._has_dimensions(binding.value, qualname)
            for binding in bindings)

    def _operands(self, value: cst.BaseExpression, depth: int = 0) -> list[cst.BaseExpression]:
        """``value`` and the tensors elementwise arithmetic (and methods keeping the device)
        compute it from: what must all be on one device for it to be computed."""
        found = [value]
        if depth > 6:
            return found
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (
                cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            found += self._operands(value.left, depth + 1) + self._operands(value.right, depth + 1)
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                self._keeps_device(value.func.attr.value):
            found += self._operands(value.func.value, depth + 1)
        return found

    def _result_use(self, method: FunctionInfo, forward: FunctionInfo) -> Optional[cst.CSTNode]:
        """A call of one of the module's layers given, in ``forward``, what the helper
        ``method`` returns (`h = self.init_hidden(n)` then `self.rnn(x, h)`)."""
        names = set()
        for call in self._calls_in(forward.node):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == method.name):
                continue
            if isinstance(call.parent, cst.Assign) and isinstance(call.parent.targets[0].target, cst.Name):
                names.add(call.parent.targets[0].target.value)
            elif (used := self._direct_layer_use(call, forward)) is not None:
                return used  # `self.rnn(x, self.init_hidden(n))`
        return next((use for bound in names for use in [self._layer_use(bound, forward, forward)] if use), None)

    def _made_here(self, use: cst.Name, name: str) -> bool:
        """Some binding of ``use`` is a call that makes a tensor (not a parameter or a move)."""
        return any(binding.kind is BindingKind.ASSIGN and isinstance(binding.value, cst.Call)
                   for binding in self.model.resolve(use))

    def _sequential_with_weights(self, layer: cst.Attribute, method: FunctionInfo) -> bool:
        """``self.<layer>`` is assigned once, an `nn.Sequential` holding a layer with weights
        (`nn.Sequential(nn.Linear(..), nn.ReLU())`) or a module class of this file: its output
        is on the module's device."""
        cls = method.cls
        assignments = cls.assignments(layer.attr.value) if cls is not None else []
        if len(assignments) != 1 or not isinstance(assignments[0].value, cst.Call) or assignments[0].path:
            return False
        return self._holds_weights(assignments[0].value)

    def _holds_weights(self, call: cst.Call, depth: int = 0) -> bool:
        if depth > 3:
            return False
        qualname = self.inference.qualname(call.func)
        if qualname is not None and self._has_weights(qualname):
            return True
        if qualname == "torch.nn.Sequential":
            return any(isinstance(arg.value, cst.Call) and self._holds_weights(arg.value, depth + 1)
                       for arg in call.args if arg.keyword is None and not arg.star)
        cls = self._class_of(call) if qualname is None else None
        return cls is not None and self._is_module_class(cls) and self._holds_tensors(cls)

    @staticmethod
    def _has_weights(qualname: str) -> bool:
        return qualname in torch_api.FLOAT32_WEIGHT_LAYERS or qualname.rsplit(".", 1)[-1].endswith(
            ("Norm1d", "Norm2d", "Norm3d", "LayerNorm", "Embedding"))

    def _tensor_parameter(self, call: cst.Call, method: FunctionInfo) -> Optional[str]:
        """A parameter of ``method`` whose shape the call reads (`torch.zeros(x.shape[0], ..)`,
        `x.size(0)`): a tensor whose `.device` the new one can take."""
        params = {param.name.value for param in method.positional_params()} - {method.self_name}
        for node in self.analysis.nodes_of(cst.Attribute):
            if call.start <= node.start and node.end <= call.end and node.attr.value in ("shape", "size") and \
                    isinstance(node.value, cst.Name) and node.value.value in params:
                return node.value.value
        return None


def _unpacked(binding: Binding) -> Optional[cst.BaseExpression]:
    """The item a name unpacked from a tuple written out gets (`x, y = x.cuda(), y.cuda()`)."""
    value = binding.value
    if binding.kind is not BindingKind.ASSIGN or binding.iterates or not binding.path or value is None:
        return None
    for index in binding.path:
        if index is None or not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) or \
                isinstance(value.elements[index], cst.StarredElement):
            return None
        value = value.elements[index].value
    return value


def _called_module(func: cst.BaseExpression) -> cst.BaseExpression:
    """What a call runs, past the mode switches that return the module itself: `m.eval()(x)`
    runs `m`."""
    while isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute) and \
            func.func.attr.value in ("eval", "train") and not any(arg.keyword is None for arg in func.args[1:]):
        func = func.func.value
    return func


def _items(value: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
    """The items of a list or tuple written out (without `*`), or the one item expression of
    a comprehension, also repeated (`[0.5] * n`); None for anything else."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        value = value.left if isinstance(value.left, (cst.List, cst.Tuple)) else value.right
        if not isinstance(value, (cst.List, cst.Tuple)):
            return None
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, (cst.List, cst.Tuple)) and value.elements and \
            not any(isinstance(element, cst.StarredElement) for element in value.elements):
        return [element.value for element in value.elements]
    return None


def _as(found: Dtype, name: str, holder: str) -> Dtype:
    return replace(found, name=name, holder=holder)


def _last(qualname: str) -> str:
    return qualname.replace("torch.nn.functional.", "F.").replace("torch.nn.", "nn.")


def _dropped_move_of(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The receiver of ``call`` when it is ``x.to(..)``/``x.cuda()`` written as a statement
    of its own (the copy it returns goes nowhere)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in torch_api.TENSOR_MOVING_COPIES and \
            isinstance(call.parent, cst.Expr):
        return func.value
    return None


def _literal_numbers(node: cst.BaseExpression) -> Optional[str]:
    """The dtype torch gives a list or tuple written out of numbers (nested): int64 when all
    are ints, float32 (the default dtype) when one is a float; None for anything else."""
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    found: set[str] = set()
    for element in node.elements:
        value = element.value if not isinstance(element, cst.StarredElement) else None
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if isinstance(value, cst.Integer):
            found.add("int64")
        elif isinstance(value, cst.Float):
            found.add("float32")
        elif isinstance(value, (cst.List, cst.Tuple)) and (inner := _literal_numbers(value)) is not None:
            found.add(inner)
        else:
            return None
    return "float32" if "float32" in found else "int64"


def _short(analysis: "ModuleAnalysis", node: cst.CSTNode) -> str:
    return analysis.snippet(node, 50)


def _returned(node: cst.BaseExpression) -> bool:
    """``node`` is what a ``return`` gives, or an element of the tuple it gives
    (`return (torch.zeros(..), torch.zeros(..))`)."""
    parent = node.parent
    if isinstance(parent, cst.Element) and isinstance(parent.parent, cst.Tuple):
        parent = parent.parent.parent
    return isinstance(parent, cst.Return)


def _is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _block_of(node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The body (a module's, an indented block) whose statement ``node`` is part of."""
    current = node.parent
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = current.parent
    return current.parent if current is not None else None


def _forward_argument_index(binding: Binding, method: FunctionInfo) -> Optional[int]:
    """The position among a module call's arguments of the parameter ``binding`` of the
    ``forward`` ``method`` (past ``self``); None for another method or parameter."""
    if method.name != "forward":
        return None
    params = [param.name.value for param in method.positional_params()]
    return params.index(binding.name) - 1 if binding.name in params else None
