"""Tensor-ness inference: what does an expression evaluate to, and how do we know?

Rules ask ``Inference.tensor(expr)`` and get either ``None`` (no evidence: stay quiet)
or a ``Value`` whose ``why`` chain says where the evidence comes from:

- torch calls (``torch.randn``, ``F.relu``, ``Variable(..)``, ``nn.Parameter(..)``),
- torch.nn modules and their outputs, loss criteria and their (0-dim) results,
- ``model.parameters()`` loops and optimizer ``param_groups``,
- annotations (``x: torch.Tensor``), ``requires_grad=True``,
- how a name is used (``loss.backward()``, ``m.parameters()``) when torch is imported,
- flow through assignments, tuple unpacking, loops, comprehensions, function returns
  and the attributes a class assigns to ``self``,
- what the calls in the same file pass for a parameter, when every call passes the same
  kind of value (what a function returns never rests on this: see ``standalone``).

Answers are computed on demand and memoised per node; cycles and very deep
expressions give up (``None``) rather than recurse without bound, and what was computed
from a cycle's stand-in is recomputed once the cycle is answered (``recursion.Answers``).
"""

from __future__ import annotations

import builtins
import os
import re
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import (
    called_name, integer_index, is_true, keyword, looks_like_size, positional_args, tuple_element,
)
from torchlint.syntax.walk import ancestors, iter_nodes, settle_upward
from torchlint.analysis import docstrings, torch_api, torch_facts
from torchlint.analysis.module_names import NOT_PROJECT_ROOTS
from torchlint.analysis.recursion import Answers
from torchlint.analysis.semantic import (
    MODULE_USE_ATTRIBUTES, TENSOR_USE_ATTRIBUTES, AttributeAssignment, Binding, BindingKind, ClassInfo, FunctionInfo,
    Scope, SemanticModel, instance_attribute_assignments,
)
from torchlint.analysis.values import NDARRAY, NONE, OTHER, Kind, Step, Value, sequence_of, tensor

if TYPE_CHECKING:
    from pathlib import Path

    from torchlint.analysis.project import Project

_MAX_DEPTH = 120
_NO_GRAD = frozenset({
    "torch.no_grad", "torch.autograd.no_grad", "torch.inference_mode",
    "torch.autograd.inference_mode", "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
})
_ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
_SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                               "torch.autograd.grad_mode.set_grad_enabled"})
# Code that may turn gradients off: what it computes may be out of the graph whatever it is given.
_RE_GRAD_OFF = re.compile(r"no_grad|inference_mode|set_grad_enabled|detach|requires_grad")
# Methods that return the same kind of object: `x.cuda()` is a tensor when `x` is.
_ARGUMENT_PRESERVING = frozenset({"cuda", "cpu", "to", "float", "double", "half", "contiguous", "detach",
                                  "clone", "type_as", "requires_grad_"})
# Conversions that keep the shape: `x.long()` has as many dimensions as `x`.
_DIMS_KEEPING_CONVERSIONS = frozenset({"cuda", "cpu", "float", "double", "half", "long", "int", "short", "byte",
                                       "bool", "contiguous", "detach", "clone", "abs", "exp", "log", "round",
                                       "floor", "ceil", "sqrt"})
# What moves a part of a `DataLoader`'s batch: a tensor, since collated (`x.cuda()`, `x.to(device)`).
_BATCH_MOVES = frozenset({"cuda", "to"})
_PARAMETER_CONTAINERS = frozenset({"torch.nn.ParameterList", "torch.nn.ParameterDict"})
_BUILTINS = frozenset(dir(builtins))
# `isinstance(x, <one of these>)` proves `x` is not a tensor (containers may hold tensors).
_TENSOR_KIND = frozenset({Kind.TENSOR})
_NOT_TENSOR_KINDS = frozenset({Kind.OTHER, Kind.NDARRAY, Kind.SEQUENCE, Kind.TUPLE, Kind.DICT})
_NOT_TENSOR_TYPES = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.complex", "builtins.str", "builtins.bytes",
    "numbers.Number", "numbers.Complex", "numbers.Real", "numbers.Rational", "numbers.Integral",
    "numpy.ndarray", "numpy.generic", "numpy.number", "numpy.integer", "numpy.floating", "numpy.bool_",
    "decimal.Decimal", "fractions.Fraction",
})

# The evidence a gradient-less `backward()` gives: one element, which a loss has as a 0-dim tensor.
_BACKWARD_WITHOUT_GRADIENT = ("`{code}` without a gradient argument needs a one-element tensor: a loss, 0-dim "
                              "since PyTorch 0.4")
# Calls of a callable with one of these names give a loss value (design: `loss = criterion(..)`).
_LOSS_CALLABLE_NAMES = frozenset({"criterion", "loss_fn", "loss_func", "loss_function", "lossfn"})

_MODULE_SELF_METHODS = frozenset({
    "cuda", "cpu", "to", "train", "eval", "float", "double", "half", "bfloat16", "type",
    "requires_grad_", "share_memory", "to_empty",
})


def combine(values: Iterable[Optional[Value]]) -> Optional[Value]:
    """Several possible values of one expression: agree on a kind, or know nothing.

    Unknown values are ignored and ``None`` constants are neutral (``h = None`` then
    ``h = torch.zeros(..)`` is a tensor), but two different known kinds cancel out, and
    ``None`` with an unknown value is unknown.
    """
    known: list[Value] = []
    saw_none = saw_unknown = False
    for value in values:
        if value is None:
            saw_unknown = True
            continue
        if value.kind is Kind.NONE:
            saw_none = True
            continue
        known.append(value)
    if not known:
        return NONE if saw_none and not saw_unknown else None  # `self._cache = None` and a value not known
    first = known[0]
    tuples = [value for value in known if value.kind is Kind.TUPLE]
    if tuples and all(value.kind is Kind.TUPLE or value.kind is Kind.SEQUENCE and value.element is not None and
                      all(item is not None and item.kind is value.element.kind for item in tuples[0].items)
                      for value in known):
        return tuples[0]  # `return x.max(-1)` or `return torch.topk(x, k)`: a pair of tensors either way
    if any(value.kind is not first.kind for value in known[1:]):
        return None
    if first.kind is Kind.EXTERNAL and any(value.qualname != first.qualname for value in known[1:]):
        # `torch.FloatTensor` or `torch.cuda.FloatTensor`: an imported object, but which one
        # is not known (and stays unknown when combined with either); which ones it may be is.
        names = [value.alternatives if not value.qualname else (value.qualname,) for value in known]
        if all(names) and not saw_unknown:
            return Value(Kind.EXTERNAL, alternatives=tuple(sorted({name for group in names for name in group})))
        return Value(Kind.EXTERNAL)
    if first.kind is Kind.TENSOR and first.scalar and not all(value.scalar for value in known):
        return first.without_scalar()
    if first.kind is Kind.TENSOR and first.dims_at_most is not None and not first.scalar:
        bounds = [(0 if value.scalar else value.dims_at_most, value) for value in known]
        if any(bound is None for bound, _ in bounds):
            return replace(first, dims_at_most=None, dims_why=None)
        widest = max(bounds, key=lambda pair: pair[0])[1]
        return replace(first, dims_at_most=widest.dims_at_most, dims_why=widest.dims_why)
    return first


class Inference:
    def __init__(self, model: SemanticModel, project: Optional["Project"] = None,
                 roots: tuple = (), call_sites: bool = True):
        self.model = model
        # Whether a parameter may take its value from the calls in this file (see
        # _passed_value); off in ``standalone``, which says what a function returns.
        self.call_sites = call_sites
        self._attribute_index: dict[str, list] = {}
        self._attributes_by_scope: dict[int, dict[str, list[tuple[cst.Name, cst.Attribute]]]] = {}
        self._sites: dict[int, list[cst.Call]] = {}
        self._standalone: Optional[Inference] = None
        # The user's other modules, for names imported from them (see project.py).
        self.project = project
        self.roots = roots
        self._uses_torch: Optional[bool] = None
        self._memo: dict[int, Optional[Value]] = {}
        self._binding_memo: dict[int, Optional[Value]] = {}
        self._torch_base_memo: dict[int, Optional[str]] = {}
        self._exported_memo: dict[str, str] = {}
        self._return_memo: dict[int, Optional[Value]] = {}
        self._contextual: set[int] = set()  # helpers whose returns are being read at their one call
        self._sources_memo: dict[int, frozenset[int]] = {}  # see _returned_sources
        self._self_call_memo: dict[tuple[int, str], list[tuple[cst.Call, Scope]]] = {}
        self._guard_memo: dict[int, Optional[tuple[cst.BaseExpression, cst.CSTNode]]] = {}
        self._tested_memo: dict[tuple[int, str], Optional[Kind]] = {}  # see _tested_kind
        self._grad_disabled_memo: dict[int, Optional[cst.CSTNode]] = {}
        self._inference_mode_memo: dict[int, Optional[cst.CSTNode]] = {}
        self._mode_statements: dict[int, dict[int, Optional[cst.Call]]] = {}
        self._function_memo: dict[int, Optional[cst.FunctionDef]] = {}
        self._same_call_memo: dict[tuple, Optional[tuple[cst.Call, Step, Step]]] = {}  # _backpropagated_same_call
        self._backward_in_text: Optional[bool] = None
        self._usage_in_progress: set[int] = set()  # _own_usage: parameters passed on to each other
        self._keyed: Optional[dict[str, list[cst.Assign]]] = None  # keyed_item: stores by constant key
        self._depth = 0
        self._answers = Answers()  # the cycles among _memo, _binding_memo and _return_memo
        self._dispatch = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Subscript: self._subscript,
            cst.BinaryOperation: self._binary,
            cst.UnaryOperation: self._unary,
            cst.Comparison: self._comparison,
            cst.BooleanOperation: lambda n: combine((self.infer(n.left), self.infer(n.right))),
            cst.IfExp: lambda n: combine((self.infer(n.body), self.infer(n.orelse))),
            cst.NamedExpr: lambda n: self.infer(n.value),
            cst.Lambda: self._lambda,
            cst.Tuple: self._sequence_literal,
            cst.List: self._sequence_literal,
            cst.ListComp: lambda n: sequence_of(self.infer(n.elt)),
            cst.GeneratorExp: lambda n: sequence_of(self.infer(n.elt)),
            cst.SetComp: lambda n: sequence_of(self.infer(n.elt)),
            cst.DictComp: lambda n: Value(Kind.DICT, element=self.infer(n.value)),
            cst.Dict: self._dict_literal,
            cst.Integer: lambda n: OTHER,
            cst.Float: lambda n: OTHER,
            cst.Imaginary: lambda n: OTHER,
            cst.SimpleString: lambda n: OTHER,
            cst.ConcatenatedString: lambda n: OTHER,
            cst.FormattedString: lambda n: OTHER,
            cst.Set: lambda n: OTHER,
        }

    @property
    def standalone(self) -> "Inference":
        """This module's inference without values from call sites: what a function returns
        to a call must not rest on what the other calls pass (``def nll(p, t): return
        ((p - t) ** 2).sum()`` returns a tensor only to callers that pass tensors)."""
        if not self.call_sites:
            return self
        if self._standalone is None:
            self._standalone = Inference(self.model, self.project, self.roots, call_sites=False)
            self._standalone._uses_torch = self._uses_torch
        return self._standalone

    # --- entry points --------------------------------------------------------------

    def infer(self, node: cst.CSTNode) -> Optional[Value]:
        key = id(node)
        memo = self._memo
        if key in memo:
            value = memo[key]
            if value is None:
                self._answers.met(memo, key)
            return value
        if self._depth > _MAX_DEPTH:
            return None
        handler = self._dispatch.get(type(node))
        if handler is None:
            memo[key] = None
            return None
        answers = self._answers
        begun = answers.begin(memo, key)
        self._depth += 1
        try:
            value = handler(node)
        except BaseException:
            answers.abandon(memo, key)
            raise
        finally:
            self._depth -= 1
        answers.end(memo, key, value, begun)
        return value

    def tensor(self, node: cst.CSTNode) -> Optional[Value]:
        """The evidence that ``node`` is a tensor, or None."""
        value = self.infer(node)
        return value if value is not None and value.kind is Kind.TENSOR else None

    def data_loaders(self, iterable: cst.BaseExpression, depth: int = 0,
                     enumerated: bool = True) -> Optional[tuple[cst.Call, ...]]:
        """The `DataLoader` constructions ``iterable`` evaluates to (or `enumerate` of one, when
        ``enumerated``) on every way it can come, or None when one way is not known to be a
        loader. Followed through names, the parameter every call of the function passes one
        for (`train(model, loader)`), and `self.<attr>` every assignment of the class sets to
        one (an `__init__` parameter then, as every construction of the class passes it)."""
        if depth > 4:
            return None
        if isinstance(iterable, cst.Call):
            func = iterable.func
            if isinstance(func, cst.Name) and func.value == "enumerate" and len(iterable.args) >= 1 \
                    and iterable.args[0].keyword is None and not iterable.args[0].star \
                    and self.qualname(func) in (None, "builtins.enumerate"):
                return self.data_loaders(iterable.args[0].value, depth + 1) if enumerated else None
            return (iterable,) if self.qualname(func) in torch_api.DATA_LOADERS else None
        values: list[Optional[cst.BaseExpression]]
        if isinstance(iterable, cst.Attribute):
            assignments = instance_attribute_assignments(self.model, iterable)
            values = [assignment.value for assignment in assignments or ()]
        elif isinstance(iterable, cst.Name):
            bindings = self.model.resolve(iterable)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
                function = bindings[0].scope.function if bindings[0].scope is not None else None
                if function is None or not isinstance(function.node, cst.FunctionDef):
                    return None
                param = next((p for p in function.positional_params() if p.name.value == bindings[0].name), None)
                calls = self.calls_of(function)
                if param is None or not calls or any(arg.star for call in calls for arg in call.args):
                    return None
                values = [self.passed_argument(call, function, param) for call in calls]
            elif all(binding.kind is BindingKind.ASSIGN and not binding.path and not binding.iterates
                     for binding in bindings):
                values = [binding.value for binding in bindings]
            else:
                return None
        else:
            return None
        found: list[cst.Call] = []
        for value in values:
            loaders = self.data_loaders(value, depth + 1, enumerated) if value is not None else None
            if loaders is None:
                return None
            found.extend(loaders)
        return tuple(found) or None

    def loader_batch(self, node: cst.BaseExpression) -> Optional[tuple[cst.Call, ...]]:
        """The `DataLoader`s (collating as torch does: no `collate_fn`) of whose batches
        ``node`` is a part: a name bound only by loops over them (`for x, y in loader`, the
        item `enumerate` pairs with its counter), or an item or attribute of one
        (`batch["image"]`, `batch[0]`). What torch's collation makes of a dataset's items is a
        tensor, or a tuple, list or dict of them (numbers and arrays become tensors too)."""
        while isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        bindings = self.model.resolve(node)
        if not bindings:
            return None
        found: list[cst.Call] = []
        for binding in bindings:
            value = binding.value
            if not (binding.kind is BindingKind.FOR or binding.iterates) or value is None \
                    or any(index is None for index in binding.path):
                return None
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "enumerate":
                if not binding.path or binding.path[0] != 1:
                    return None  # the counter, or the pair itself
                loaders = self.data_loaders(value)
            else:
                loaders = self.data_loaders(value, enumerated=False)
            if loaders is None or not all(self._collates_by_default(loader) for loader in loaders):
                return None
            found.extend(loaders)
        return tuple(found)

    def _collates_by_default(self, loader: cst.Call) -> bool:
        """The `DataLoader` is given no `collate_fn`: not by keyword, nor in the `**kwargs`
        dict it is given (``kwargs = {'num_workers': 1, 'pin_memory': True}``)."""
        if keyword(loader, "collate_fn") is not None:
            return False
        for arg in loader.args:
            if arg.star == "*":
                return False
            if arg.star == "**":
                bindings = self.model.resolve(arg.value) if isinstance(arg.value, cst.Name) else []
                if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path:
                    return False
                value = bindings[0].value
                dicts = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
                for each in dicts:
                    if not isinstance(each, cst.Dict) or not all(
                            isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                            and "collate_fn" not in element.key.value for element in each.elements):
                        return False
        return True

    def qualname(self, node: cst.CSTNode) -> Optional[str]:
        """The imported name ``node`` refers to (``torch.autograd.Variable``), if any,
        through the user's own modules: ``util.Tensor`` is ``torch.FloatTensor`` when
        ``pyprob/util.py`` says ``Tensor = torch.FloatTensor``."""
        value = self.infer(node)
        if value is None or value.kind is not Kind.EXTERNAL or not value.qualname:
            return None
        return self.exported(value.qualname)

    def alternatives(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The imported objects ``node`` may name, when it is one of several known ones
        (``Tensor`` after ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``)."""
        value = self.infer(node)
        if value is None or value.kind is not Kind.EXTERNAL or value.qualname:
            return ()
        return tuple(self.exported(name) for name in value.alternatives)

    def exported(self, qualname: str) -> str:
        """What the project's module behind ``qualname`` makes of that name, when it is
        another imported name (a re-export or an alias); else ``qualname`` itself."""
        if self.project is None or not self.roots or qualname.split(".", 1)[0] in NOT_PROJECT_ROOTS:
            return qualname
        memo = self._exported_memo
        if qualname not in memo:
            memo[qualname] = qualname
            other = self.project.other_name(qualname, self.roots, self._consumer)
            if other:
                memo[qualname] = torch_api.normalize(other)
        return memo[qualname]

    # --- names and bindings --------------------------------------------------------

    def _name(self, node: cst.Name) -> Optional[Value]:
        narrowed = self._narrowed(node)
        if narrowed is not None:
            return narrowed
        bindings = self.model.resolve(node)
        if bindings:
            value = combine(self.binding_value(b) for b in bindings)
            if value is not None and value.kind is Kind.TENSOR and value.attached is not True:
                switched = self._grad_switched_on(node, bindings)
                if switched is not None:
                    step = Step(switched, f"`{{code}}` makes `{node.value}` require grad")
                    value = value.because(step).in_graph(True, True)
            return value
        if id(node) not in self.model.references:
            return None
        name = node.value
        if name == "None":
            return NONE
        if name in ("True", "False"):
            return OTHER
        source = self.model.star_import_source(name)
        if source is not None:
            return Value(Kind.EXTERNAL, qualname=torch_api.normalize(f"{source}.{name}"))
        for module, _seq, _node in reversed(self.model.star_imports):
            found = self._project_name(f"{module}.{name}", node)
            if found is not None:
                return found
        if name in _BUILTINS:
            return Value(Kind.EXTERNAL, qualname=f"builtins.{name}")
        return None

    def _lambda(self, node: cst.Lambda) -> Optional[Value]:
        """A lambda is a function of the file: what a call of it returns is its body's value
        (``q_maker=lambda: QNet(4)``, then ``self.q = q_maker()`` is a ``QNet``)."""
        function = self.model.functions.get(id(node))
        return Value(Kind.FUNCTION, function=function) if function is not None else None

    def _grad_switched_on(self, node: cst.Name, bindings: list[Binding]) -> Optional[cst.CSTNode]:
        """``t.requires_grad = True`` (or ``t.requires_grad_()``) after every binding that
        reaches ``node`` and before it, in a block that ``node`` is in: ``node`` is that
        tensor, now a leaf that requires grad (``t = (img - mean) / std``, then the switch,
        then ``return t``)."""
        ref = self.model.references.get(id(node))
        if ref is None:
            return None
        scope, seq = ref
        uses = scope.attribute_uses.get(node.value)
        if not uses or any(binding.scope is not scope for binding in bindings):
            return None
        start = max(binding.seq for binding in bindings)
        for use_seq, attribute, used in uses:
            if not start < use_seq < seq or attribute not in ("requires_grad", "requires_grad_"):
                continue
            parent = used.parent
            if attribute == "requires_grad":
                statement = parent.parent if isinstance(parent, cst.AssignTarget) else None
                if not isinstance(statement, cst.Assign) or not is_true(statement.value):
                    continue
            else:
                statement = parent if isinstance(parent, cst.Call) and parent.func is used else None
                if statement is None or any(arg.keyword is not None and arg.keyword.value != "requires_grad"
                                            for arg in statement.args) \
                        or (statement.args and not is_true(statement.args[0].value)):
                    continue
            line = statement.parent
            if isinstance(line, cst.Expr):
                line = line.parent
            block = line.parent if isinstance(line, cst.SimpleStatementLine) else None
            if block is not None and any(ancestor is block for ancestor in ancestors(node)):
                return statement
        return None

    def _narrowed(self, node: cst.Name) -> Optional[Value]:
        """Inside ``if isinstance(x, torch.Tensor):`` (or ``Variable``, ``torch.is_tensor(x)``,
        the right side of ``isinstance(x, Tensor) and ...``), ``x`` is a tensor."""
        guard = _nearest(self._guard_memo, node, _guard)
        while guard is not None:
            test, guarded = guard
            in_else = negated = isinstance(test, _Negated)
            if negated:
                test = test.test
            else:
                refuted = self._refuted_tensor(test, node)
                if refuted is not None:
                    return Value(Kind.OTHER, (refuted,))
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negated = test.expression, not negated
            kind = self._tested_kind(test, node.value)
            if negated or in_else:
                # Only "not a tensor" is taken from a failed test: `x if not isinstance(x, int)
                # else ...` says nothing certain of what `x` is in a list of tensors and ints.
                if negated and kind is Kind.TENSOR:  # `if not torch.is_tensor(x): torch.tensor(x)`
                    return Value(Kind.OTHER, (Step(test, f"`{{code}}` is false here: `{node.value}` is not a tensor"),))
                guard = _nearest(self._guard_memo, guarded, _guard)
                continue
            if kind is Kind.TENSOR:
                return tensor(Step(test, f"`{{code}}` checks that `{node.value}` is a tensor"))
            if kind is Kind.MODULE:
                return Value(Kind.MODULE, (Step(test, f"`{{code}}` checks that `{node.value}` is a torch.nn module"),))
            if kind is Kind.NDARRAY:
                return NDARRAY
            if kind is Kind.OTHER:
                return OTHER
            guard = _nearest(self._guard_memo, guarded, _guard)
        return None

    def checked_types(self, kinds: cst.BaseExpression) -> list[str]:
        """The qualified names of the types ``isinstance(x, kinds)`` checks ("" for one unknown)."""
        if isinstance(kinds, cst.Tuple):
            return [self.qualname(element.value) or "" for element in kinds.elements]
        return [self.qualname(kinds) or ""]

    def _refuted_tensor(self, test: cst.BaseExpression, node: cst.Name) -> Optional[Step]:
        """A conjunct ``not isinstance(x, torch.Tensor)`` of a test that held, for ``x``
        or, when ``x`` iterates over ``xs``, for ``xs[0]``: the evidence that ``x`` is not
        a tensor."""
        conjuncts = [test]
        while conjuncts and isinstance(conjuncts[-1], cst.BooleanOperation) \
                and isinstance(conjuncts[-1].operator, cst.And):
            last = conjuncts.pop()
            conjuncts += [last.left, last.right]
        iterated = self._iterated_name(node)
        for conjunct in conjuncts:
            if not (isinstance(conjunct, cst.UnaryOperation) and isinstance(conjunct.operator, cst.Not)):
                continue
            if self._tested_kind(conjunct.expression, node.value) is Kind.TENSOR:
                return Step(conjunct, f"`{{code}}` holds here: `{node.value}` is not a tensor")
            if iterated is not None and self._tested_kind(conjunct.expression, iterated, element=True) is Kind.TENSOR:
                return Step(conjunct, f"`{{code}}` holds here: the elements of `{iterated}` are not tensors")
        return None

    def _iterated_name(self, node: cst.Name) -> Optional[str]:
        """``xs`` when every binding of ``node`` is a loop over the name ``xs``."""
        bindings = self.model.resolve(node)
        names = {b.value.value if b.kind is BindingKind.FOR and b.iterates and not b.path
                 and isinstance(b.value, cst.Name) else None for b in bindings}
        return names.pop() if len(names) == 1 and None not in names else None

    def _tested_kind(self, test: cst.BaseExpression, name: str, element: bool = False) -> Optional[Kind]:
        """TENSOR or MODULE when ``test`` (an isinstance check, possibly inside an ``and``)
        establishes that ``name`` is one; NDARRAY or OTHER when it establishes a numpy
        array, a number or a string."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            # Remembered: each operand of `a and b and c ...` is guarded by all those before it.
            key = (id(test), name, element)
            if key not in self._tested_memo:
                self._tested_memo[key] = (self._tested_kind(test.left, name, element)
                                          or self._tested_kind(test.right, name, element))
            return self._tested_memo[key]
        if not isinstance(test, cst.Call) or not test.args:
            return None
        subject = test.args[0].value
        if element:  # `isinstance(xs[0], ..)` tests the elements of `xs`
            if not isinstance(subject, cst.Subscript) or integer_index(subject) != 0:
                return None
            subject = subject.value
        if not (isinstance(subject, cst.Name) and subject.value == name):
            return None
        function = self.qualname(test.func)
        if function == "torch.is_tensor":
            return Kind.TENSOR
        if function != "builtins.isinstance" or len(test.args) != 2:
            return None
        options = self.checked_types(test.args[1].value)
        if options and all(torch_api.is_tensor_type(o) for o in options):
            return Kind.TENSOR
        if options and all(torch_api.is_module_class(o) for o in options):
            return Kind.MODULE
        if options and all(o == "numpy.ndarray" for o in options):
            return Kind.NDARRAY
        if options and all(o in _NOT_TENSOR_TYPES for o in options):
            return Kind.OTHER
        return None

    @property
    def uses_torch(self) -> bool:
        """Whether torch is in reach of this file: imported, brought in by a star import
        of one of the project's modules (``from .imports import *``), or the file imports
        a module of its own project that imports torch (``import pyro`` in pyro's own
        ``infer/svi.py``: the names it uses come from a torch library)."""
        if self._uses_torch is None:
            self._uses_torch = self.model.imports_torch or any(
                (found := self._project_name(f"{module}.torch", self.model.module)) is not None
                and found.kind is Kind.EXTERNAL and found.qualname == "torch"
                for module, _seq, _node in self.model.star_imports
            ) or self._imports_torch_project_module()
        return self._uses_torch

    def _imports_torch_project_module(self) -> bool:
        if self.project is None or not self.roots:
            return False
        for bindings in self.model.module_scope.bindings.values():
            for binding in bindings:
                if binding.kind is not BindingKind.IMPORT or not binding.qualname:
                    continue
                consumer = self._consumer
                found = self.project.split(binding.qualname + ".*", self.roots, consumer)
                analysis = self.project.analysis(found[0], consumer) if found is not None else None
                if analysis is not None and analysis.model.imports_torch:
                    return True
                # `from allennlp.data.fields import ListField`: the package re-exports the
                # class from the module that imports torch.
                resolved = self.project.resolve(binding.qualname, self.roots, consumer=consumer)
                if resolved is not None and resolved[0].model.imports_torch:
                    return True
        return False

    def never_runs(self, node: cst.CSTNode) -> bool:
        """``node`` is in the arm of an ``if`` (or ``elif``) whose test is ``type(x) ==
        Variable`` (or ``is``): since PyTorch 0.4 a tensor's type is never ``Variable``, so code
        written for 0.3 (``if type(src) == Variable: x = src.data``) never takes that arm; or
        whose test is a name the module binds once, to ``False`` (``use_gpu = False``, then
        ``if use_gpu: model.cuda()``)."""
        analysis = self.model.analysis
        if analysis is None:
            return False
        variable = "Variable" in analysis.text
        for ancestor in ancestors(node):
            parent = ancestor.parent
            if isinstance(parent, cst.If) and ancestor is parent.body and (
                    variable and self._variable_type_test(parent.test) or self._false_flag(parent.test)):
                return True
        return False

    def _false_flag(self, test: cst.BaseExpression) -> bool:
        if not isinstance(test, cst.Name):
            return False
        bindings = self.model.resolve(test)
        if len(bindings) != 1 or bindings[0].scope is not self.model.module_scope:
            return False
        every = self.model.module_scope.bindings.get(test.value, [])  # (a `global` rebinding is one too)
        return len(every) == 1 and every[0].kind is BindingKind.ASSIGN and not every[0].path \
            and isinstance(every[0].value, cst.Name) and every[0].value.value == "False"

    def _variable_type_test(self, test: cst.BaseExpression) -> bool:
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or \
                not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
            return False
        sides = (test.left, test.comparisons[0].comparator)
        return any(isinstance(side, cst.Call) and isinstance(side.func, cst.Name) and side.func.value == "type"
                   and self.qualname(side.func) in (None, "builtins.type") for side in sides) and \
            any(isinstance(side, (cst.Name, cst.Attribute)) and self.qualname(side) == "torch.autograd.Variable"
                for side in sides)

    def grad_disabled(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The ``with torch.no_grad():`` block, ``@torch.no_grad()`` decorator or
        ``torch.set_grad_enabled(False)`` statement (earlier in a block ``node`` is in, not
        turned back on in between) that ``node`` runs under, if any (only within the
        innermost function). A nearer ``torch.enable_grad()`` (``set_grad_enabled(True)``,
        ``inference_mode(False)``) turns recording back on, except under
        ``inference_mode()``, which it cannot leave."""
        return _nearest(self._grad_disabled_memo, node, self._disabling)

    def _disabling(self, ancestor: cst.CSTNode, child: cst.CSTNode):
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            statement = self.mode_statement_before(ancestor, child)
            if statement is not None:
                if self.grad_mode(statement) is False:
                    return statement
                return _nearest(self._inference_mode_memo, ancestor, self._in_inference_mode)
        elif isinstance(ancestor, cst.With):
            # Items take effect in order: the last one that changes grad mode decides.
            for item in reversed(ancestor.items):
                mode = self.grad_mode(item.item)
                if mode is False:
                    return ancestor
                if mode is True:
                    return _nearest(self._inference_mode_memo, ancestor, self._in_inference_mode)
        elif isinstance(ancestor, cst.FunctionDef):
            for decorator in reversed(ancestor.decorators):  # the one nearest the function sets the mode last
                mode = self.grad_mode(decorator.decorator)
                if mode is False:
                    return decorator
                if mode is True:
                    return None
            return None
        elif isinstance(ancestor, (cst.Lambda, cst.ClassDef)):
            return None
        return _UP

    def mode_statement_before(self, block, child: cst.CSTNode) -> Optional[cst.Call]:
        """The last ``torch.set_grad_enabled(flag)`` written as a statement of its own (with a
        literal flag) in ``block`` before its statement ``child``."""
        known = self._mode_statements.get(id(block))
        if known is None:
            known = self._mode_statements[id(block)] = {}
            last = None
            for statement in block.body:
                known[id(statement)] = last
                if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                        and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.Call):
                    call = statement.body[0].value
                    # Only a call spelled `set_grad_enabled` is resolved: inferring any other
                    # statement here could re-enter an inference in progress.
                    if called_name(call.func) == "set_grad_enabled" and self._mode_qualname(call) in _SET_GRAD_ENABLED \
                            and self.grad_mode(call) is not None:
                        last = call
        return known.get(id(child))

    def _in_inference_mode(self, ancestor: cst.CSTNode, child: cst.CSTNode):
        """Past a grad-enabling block: only an enclosing ``inference_mode()`` still disables."""
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                if self.grad_mode(item.item) is False and "inference_mode" in (self._mode_qualname(item.item) or ""):
                    return ancestor
        elif isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        return _UP

    def _mode_qualname(self, expression: cst.BaseExpression) -> Optional[str]:
        return self.qualname(expression.func if isinstance(expression, cst.Call) else expression)

    def grad_mode(self, expression: cst.BaseExpression, strict: bool = False) -> Optional[bool]:
        """False for a context manager or decorator that disables gradient recording
        (``no_grad()``, ``inference_mode()``, ``set_grad_enabled(False)``), True for one that
        enables it (``enable_grad()``, ``set_grad_enabled(True)``, ``inference_mode(False)``),
        None for anything else.  A mode given by an expression (``set_grad_enabled(training)``)
        is no change, or for ``inference_mode(flag)`` disabling: rules stay quiet under a
        disabled mode.  ``strict`` (a rule whose finding needs the mode off on every path)
        reads such a mode as one that may enable."""
        call = expression if isinstance(expression, cst.Call) else None
        qualname = self._mode_qualname(expression)
        if qualname in _ENABLE_GRAD:
            return True
        flag = None  # the literal mode passed, "?" for an expression
        if call is not None and call.args and (call.args[0].keyword is None or call.args[0].keyword.value == "mode"):
            first = call.args[0].value
            flag = first.value if isinstance(first, cst.Name) and first.value in ("True", "False") else "?"
            if flag == "?" and not strict and isinstance(first, cst.Name):
                flag = self._unpassed_default(first) or "?"
        if qualname in _NO_GRAD:
            return "inference_mode" in qualname and (flag == "False" or strict and flag == "?")
        if qualname in _SET_GRAD_ENABLED:
            return {"True": True, "False": False}.get(flag, True if strict else None)
        return None

    def _unpassed_default(self, name: cst.Name) -> Optional[str]:
        """``"True"``/``"False"`` when ``name`` is a parameter of a module-level function of
        this file whose default is that literal and that no call of the function in this
        file passes (``def get_activations(video, grad_enabled=False)`` called as
        ``get_activations(video)``): there it always holds its default. The function must be
        referred to only by such calls."""
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        param = bindings[0].node
        if not isinstance(param, cst.Param):
            param = param.parent if param is not None else None
        function = param.parent
        while function is not None and not isinstance(function, (cst.FunctionDef, cst.Lambda)):
            function = function.parent
        if not isinstance(param, cst.Param) or not isinstance(param.default, cst.Name) or \
                param.default.value not in ("True", "False") or not isinstance(function, cst.FunctionDef) or \
                function.parent is not self.model.module:
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        index = positional.index(param) if param in positional else None
        references = [load for scope in self.model.scopes_mentioning(function.name.value)
                      for _seq, load in scope.loads.get(function.name.value, ())]
        if not references:
            return None
        for load in references:
            call = load.parent
            if not isinstance(call, cst.Call) or call.func is not load or any(arg.star for arg in call.args):
                return None
            if any(arg.keyword is not None and arg.keyword.value == name.value for arg in call.args):
                return None
            if index is not None and sum(arg.keyword is None for arg in call.args) > index:
                return None
        return param.default.value

    def runs_without_grad(self, node: cst.CSTNode, _seen: frozenset[int] = frozenset()) -> bool:
        """``node`` runs under a grad-disabling block or decorator, or in a module-level
        function that this file only refers to from such code (timm's ``sgdw()`` helpers,
        called from the ``@torch.no_grad()`` ``step()``). Callers in other files are not
        known, so this is a reason to stay quiet, never evidence for a finding."""
        if self.grad_disabled(node) is not None:
            return True
        function = _nearest(self._function_memo, node, _function)
        if function is None or id(function) in _seen or function.parent is not self.model.module:
            return False
        binding = next((b for b in self.model.module_scope.bindings.get(function.name.value, ())
                        if b.kind is BindingKind.FUNCTION and b.node is function), None)
        name = function.name.value
        references = [
            load for scope in self.model.scopes_mentioning(name) for load_seq, load in scope.loads.get(name, ())
            if binding in self.model.resolve(load)
        ]
        seen = _seen | {id(function)}
        return bool(references) and all(self.runs_without_grad(load, seen) for load in references)

    def combine_bindings(self, bindings) -> Optional[Value]:
        return combine(self.binding_value(b) for b in bindings)

    # --- other files of the project -----------------------------------------------

    def _owner(self, info) -> "Inference":
        """The inference of the module a class or function is defined in."""
        if info.model is self.model or info.model.analysis is None:
            return self
        return info.model.analysis.inference

    def _localize(self, value: Optional[Value], node: cst.CSTNode, summary: str,
                  owner: "Inference") -> Optional[Value]:
        """A value inferred in another file, with its evidence turned into one sentence on
        ``node`` of this file that names where it comes from."""
        if value is None or owner is self:
            return value
        detail = owner.model.analysis.render(value.why[0]) if value.why else ""
        step = Step(node, f"{summary}: {detail}" if detail else summary)
        localized = _rewrite_why(value, (step,))
        if value.scalar and value.scalar_why is not None \
                and not (value.why and value.scalar_why is value.why[0]):
            # Say why it is 0-dim too, not only why it is a tensor.
            reason = owner.model.analysis.render(value.scalar_why)
            localized = replace(localized, scalar_why=Step(node, f"`{{code}}` is 0-dimensional: {reason}"))
        return localized

    def _project_name(self, qualname: str, node: cst.CSTNode) -> Optional[Value]:
        """What an imported name of the user's project is, from the file that defines it."""
        if self.project is None or not self.roots:
            return None
        found = self.project.resolve(qualname, self.roots, consumer=self._consumer)
        if found is None:
            return None
        analysis, value = found
        if value.kind in (Kind.FUNCTION, Kind.CLASS, Kind.EXTERNAL):
            return value  # tied to its own file, or a plain name; calling it is handled below
        return self._localize(value, node, f"`{{code}}` is defined in `{qualname.rsplit('.', 1)[0]}`",
                              analysis.inference)

    def project_function(self, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The function of another module of the project that ``func`` names (``threshold``
        of ``from models import threshold``)."""
        value = self._project_object(func)
        return value.function if value is not None and value.kind is Kind.FUNCTION and \
            isinstance(value.function, FunctionInfo) else None

    def project_callee(self, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The function of another module of the project that a call of ``func`` runs: the
        function it names (``train_step`` of ``from utils import train_step``), the
        ``__init__`` of the class it names (``Trainer(..)``), or the method of an instance of
        a class of another module (``meter.update``, found where the class inherits it)."""
        value = self._project_object(func)
        if value is not None and value.kind is Kind.FUNCTION and isinstance(value.function, FunctionInfo):
            return value.function
        cls, name = (value.cls, "__init__") if value is not None and value.kind is Kind.CLASS else (None, "")
        if cls is None and isinstance(func, cst.Attribute):
            receiver = self.infer(func.value)
            if receiver is not None and receiver.kind in (Kind.INSTANCE, Kind.MODULE):
                cls, name = receiver.cls, func.attr.value
        if not isinstance(cls, ClassInfo) or cls.model is self.model:
            return None
        method = self.method_of(cls, name)
        return method if method is not None and method.model is not self.model else None

    def project_class(self, func: cst.BaseExpression) -> Optional[ClassInfo]:
        """The class of another module of the project that ``func`` names (``Block`` of ``from
        .blocks import Block``)."""
        value = self._project_object(func)
        return value.cls if value is not None and value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo) \
            else None

    def _project_object(self, func: cst.BaseExpression) -> Optional[Value]:
        qualname = self.qualname(func)
        if qualname is None or self.project is None or not self.roots or \
                qualname.split(".", 1)[0] in NOT_PROJECT_ROOTS:
            return None
        found = self.project.resolve(qualname, self.roots, consumer=self._consumer)
        return found[1] if found is not None else None

    @property
    def _consumer(self) -> Optional[Path]:
        """This file, as the project records what it looked at on its behalf."""
        analysis = self.model.analysis
        return analysis.file_path if analysis is not None else None

    def binding_value(self, binding: Binding) -> Optional[Value]:
        return self._answers.ask(self._binding_memo, id(binding), self._binding_value_used, binding)

    def _binding_value_used(self, binding: Binding) -> Optional[Value]:
        """What the binding holds, with a 0-dim reading from how the name is used."""
        value = self._binding_value(binding)
        if value is not None and value.kind is Kind.TENSOR and not value.scalar:
            scalar_step = self._scalar_use(binding)
            if scalar_step is not None:
                value = value.with_scalar(scalar_step)
        return value

    def _binding_value(self, binding: Binding) -> Optional[Value]:
        kind = binding.kind
        name = binding.name
        if kind is BindingKind.IMPORT:
            return Value(Kind.EXTERNAL, qualname=torch_api.normalize(binding.qualname or ""))
        if kind is BindingKind.FUNCTION:
            return Value(Kind.FUNCTION, function=binding.definition)
        if kind is BindingKind.CLASS:
            return Value(Kind.CLASS, cls=binding.definition)
        if kind is BindingKind.EXCEPT:
            return OTHER
        if kind is BindingKind.OTHER:
            return None
        value: Optional[Value] = None
        if kind is BindingKind.PARAM:
            value = self._parameter_value(binding)
        elif kind is BindingKind.AUGASSIGN:
            value = self._augmented_value(binding)
        else:
            if binding.annotation is not None:
                value = self.annotation_value(binding.annotation)
                if value is not None:
                    value = value.because(Step(binding.annotation, f"`{name}` is annotated `{{code}}`"))
            if value is None and binding.value is not None and kind is not BindingKind.WITH:
                value = self._grown_list(binding) or self.infer(binding.value)
                if binding.iterates:
                    value = element_of(value)
                value = unpack(value, binding.path)
                if value is not None and (value.kind is not Kind.EXTERNAL or value.alternatives) and (
                    value.why or value.alternatives or value.kind in (Kind.TUPLE, Kind.SEQUENCE, Kind.DICT)
                ):
                    text = f"`{name}` iterates over `{{code}}`" if binding.iterates else f"`{name}` = `{{code}}`"
                    value = value.because(Step(binding.value, text))
        if value is None:
            value = self._usage_value(binding)
            if value is not None and value.kind is Kind.TENSOR and self._library_instance(binding):
                value = None  # `accelerator.backward(loss)` does not make `accelerator` a tensor
        if value is not None and value.kind is Kind.TENSOR and value.attached \
                and kind is not BindingKind.PARAM and self.grad_disabled(binding.node) is not None \
                and not self._written_in_place(binding):
            value = value.in_graph(False, True)
        return value

    def _written_in_place(self, binding: Binding) -> bool:
        """``w -= lr * w.grad`` under ``no_grad``: an augmented assignment to a tensor writes
        the same tensor in place, which keeps requiring grad (a leaf stays a leaf)."""
        if binding.kind is not BindingKind.AUGASSIGN:
            return False
        prior = self.model.prior_binding(binding)
        before = self.binding_value(prior) if prior is not None else None
        return before is not None and before.kind is Kind.TENSOR

    def _grown_list(self, binding: Binding) -> Optional[Value]:
        """A list written out (`res = []`) that ``.append(..)`` calls fill: a sequence of
        what it holds and what is appended, when that is one kind of value."""
        analysis = getattr(self.model, "analysis", None)
        if not isinstance(binding.value, cst.List) or binding.path or binding.iterates or analysis is None:
            return None
        appended = analysis.appended_to(binding)
        if not appended or any(isinstance(element, cst.StarredElement) for element in binding.value.elements):
            return None
        items = [self.infer(element.value) for element in binding.value.elements] + \
            [self.infer(arg.value) for arg in appended]
        if any(item is None for item in items):
            return None
        element = combine(items)
        if element is None:
            return None
        return sequence_of(element.because(Step(appended[0], f"`{binding.name}` holds what is appended to it: "
                                                              f"`{{code}}`")))

    def _augmented_value(self, binding: Binding) -> Optional[Value]:
        prior = self.model.prior_binding(binding)
        before = self.binding_value(prior) if prior is not None else None
        if before is not None and before.kind is Kind.TENSOR:
            return before
        added = self.infer(binding.value) if binding.value is not None else None
        if added is None or added.kind is not Kind.TENSOR:
            return None
        if added.scalar and _starts_from_number(before) and _elementwise(self.model.parent(binding.node)):
            # `total = 0` then `total += loss`: a number combined with 0-dim tensors stays 0-dim.
            return added.because(Step(binding.value, f"`{binding.name}` starts from a number and "
                                                     f"accumulates `{{code}}`"))
        return added.without_scalar().because(Step(binding.value, f"`{binding.name}` accumulates `{{code}}`"))

    def _parameter_value(self, binding: Binding) -> Optional[Value]:
        function: FunctionInfo = binding.definition  # type: ignore[assignment]
        if binding.path == (None,):
            return None  # *args / **kwargs
        if binding.annotation is not None:
            value = self.annotation_value(binding.annotation)
            if value is not None and value.kind is Kind.TENSOR and self._passes(binding, function, _NOT_TENSOR_KINDS):
                return None  # the annotation is loose: a caller in this file passes an int, a list...
            if value is not None:
                return value.because(Step(binding.annotation, f"`{binding.name}` is annotated `{{code}}`"))
        if binding.param_index == 0 and function.cls is not None:
            if function.kind in ("method", "property"):
                return self.instance_of(function.cls)
            if function.kind == "classmethod":
                return Value(Kind.CLASS, cls=function.cls)
        if binding.param_index == 0 and self.model.is_applied_function(function):
            return Value(Kind.MODULE, (Step(binding.node, f"`{binding.name}` receives modules: `{function.name}` is passed to `.apply()`"),))
        role = self._role_value(binding, function)
        if role is not None:
            return role
        passed = self._passed_value(binding, function)
        if passed is not None and passed.kind is Kind.TENSOR and passed.dims_at_most is None:
            documented = self._documented_value(binding, function)  # "a 2D Tensor of shape (B, 2)"
            if documented is not None and documented.dims_at_most is not None:
                return passed.with_dims_at_most(documented.dims_at_most, documented.dims_why)
        if passed is not None:
            return passed
        return self._documented_value(binding, function)

    def _documented_value(self, binding: Binding, function: FunctionInfo) -> Optional[Value]:
        """What the function's docstring says the parameter is (``- l: a 2D Tensor of shape
        (B, 2)``), unless a call in this file passes something else."""
        if not self.uses_torch or not isinstance(binding.node, cst.Param):
            return None
        found, step = self._declared(binding, function)
        if found is None or not found.is_tensor:
            return None  # numbers: see `_documented_number`
        if self._passes(binding, function, _NOT_TENSOR_KINDS):
            return None
        value = tensor(step)
        if found.dims is not None:
            value = value.with_dims_at_most(found.dims, step)
        return value

    def _role_value(self, binding: Binding, function: FunctionInfo) -> Optional[Value]:
        """What torch passes a parameter by the function's role: the gradients a
        ``backward`` of an autograd Function receives, and what a hook receives."""
        index = binding.param_index
        if function.name == "backward" and function.cls is not None and index >= 1 \
                and self.torch_base(function.cls) in torch_api.AUTOGRAD_FUNCTION_CLASSES:
            return tensor(Step(binding.node, f"`{binding.name}` is a gradient: torch passes tensors to the "
                                             f"`backward` of an autograd Function (`{function.cls.name}`)"))
        for kind, call in self.model.hooks_of(function):
            receiver = self.infer(call.func.value) if isinstance(call.func, cst.Attribute) else None
            registers = f"`{{code}}` registers `{function.name}`"
            # Only a tensor that requires grad takes a hook; a module known by its class (not
            # only by having `register_forward_hook`, as another library's object may).
            if kind == "tensor" and index == 0 and receiver is not None and receiver.kind is Kind.TENSOR \
                    and receiver.attached:
                return tensor(Step(call, f"{registers} as a tensor hook: `{binding.name}` is the gradient"))
            if kind in ("backward", "forward") and receiver is not None and receiver.kind is Kind.MODULE \
                    and (receiver.qualname or receiver.cls is not None):
                if index == 0:
                    return Value(Kind.MODULE, (Step(call, f"{registers} as a module hook: `{binding.name}` is "
                                                          f"the module"),))
                if kind == "backward" and index in (1, 2):
                    step = Step(call, f"{registers} as a backward hook: `{binding.name}` holds gradients")
                    return sequence_of(tensor(step), (step,))
        return None

    def _passed_value(self, binding: Binding, function: FunctionInfo) -> Optional[Value]:
        """What the calls of ``function`` in this file pass for the parameter ``binding``,
        when there are calls and every one passes a known value of the same kind
        (``train(model, loader)`` after ``model = Net()``)."""
        if not self.call_sites or binding.param_index < 0 or not isinstance(binding.node, cst.Param):
            return None
        calls = self._call_sites(function)
        if not calls:
            return self._passed_elsewhere(binding, function)
        index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
        values = []
        for call in calls:
            argument = _argument(call, binding.name, index)
            passed = [(argument, call)]
            if argument is None and any(arg.star for arg in call.args):
                passed = self._forwarded(call, binding.name, index)
                if passed is None:
                    return None
            for argument, site in passed:
                if argument is None:
                    argument = binding.node.default
                value = self.infer(argument) if argument is not None else None
                if value is None or value.kind is Kind.NONE:
                    return None
                values.append((value, argument, site))
        value = combine(value for value, _, _ in values)
        if value is None:
            return None
        _, argument, site = values[0]
        more = len(values) - 1
        others = f", and so {'does' if more == 1 else 'do'} {more} more" if more else ""
        if site in calls:
            return value.because(Step(argument, f"a call of `{function.name}` passes `{{code}}` for its "
                                                f"parameter `{binding.name}`{others}"))
        return value.because(Step(argument, f"`{{code}}` reaches the parameter `{binding.name}` of "
                                            f"`{function.name}` through `*args`/`**kwargs` passed on{others}"))

    def _passed_elsewhere(self, binding: Binding, function: FunctionInfo) -> Optional[Value]:
        """What the scripts that import ``function`` from this module pass for the parameter
        ``binding`` where they call it (``Estimator(model, loss_fn)`` in train.py), when
        there are such calls and each passes a known value of one kind."""
        analysis = self.model.analysis
        sites = analysis.callers_elsewhere(function) if analysis is not None else ()
        index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
        values = []
        for other, call in sites:
            argument = _argument(call, binding.name, index)
            if argument is None and any(arg.star for arg in call.args):
                return None
            if argument is None:
                value = self.infer(binding.node.default) if binding.node.default is not None else None
            else:
                summary = f"`{binding.name}` is what `{other.snippet(call)}` ({other.location(call)}) passes"
                value = self._localize(other.inference.infer(argument), binding.node, summary, other.inference)
            if value is None or value.kind is Kind.NONE:
                return None
            values.append(value)
        return combine(values) if values else None

    def _forwarded(self, call: cst.Call, name: str, index: int, depth: int = 0
                   ) -> Optional[list[tuple[Optional[cst.BaseExpression], cst.Call]]]:
        """What reaches the parameter ``name`` (position ``index``) of the function ``call``
        runs, where ``call`` passes on the ``*args``/``**kwargs`` of the function it is written
        in (``self.update(*args, **kwargs)``): what each call of that function passes there
        (None where a call passes it unseen). An argument of None: not passed, the default."""
        explicit, forwarded_args, forwarded_kwargs = self.passed_on(call)
        caller = forwarded_args or forwarded_kwargs
        starred = sum(1 for arg in call.args if arg.star)
        if caller is None or depth > 3 or (forwarded_args and forwarded_kwargs or caller) is not caller or \
                starred != (forwarded_args is not None) + (forwarded_kwargs is not None):
            return None  # (something else starred: what reaches the parameter is not seen)
        params = caller.positional_params()
        if caller.kind in ("method", "classmethod"):
            params = params[1:]
        if any(param.name.value == name for param in params):
            return None  # a keyword of that name binds the caller's own parameter
        outer_index = index - explicit + len(params) if forwarded_args is not None and index >= explicit else -1
        outer_name = name if forwarded_kwargs is not None else ""
        calls = self._call_sites(caller)
        if not calls:
            return None
        found: list[tuple[Optional[cst.BaseExpression], cst.Call]] = []
        for outer in calls:
            argument = _argument(outer, outer_name, outer_index)
            if argument is None and any(arg.star for arg in outer.args):
                deeper = self._forwarded(outer, outer_name, outer_index, depth + 1)
                if deeper is None:
                    return None
                found.extend(deeper)
            else:
                found.append((argument, outer))
        return found

    def passed_on(self, call: cst.Call) -> tuple[int, Optional[FunctionInfo], Optional[FunctionInfo]]:
        """How ``call`` passes on the ``*args``/``**kwargs`` of the function it is written in
        (``evaluate(x, *args, **kwargs)``): the positional arguments written before its first
        ``*`` argument, the function whose own ``*args`` that argument is (None: something
        else), and the function whose own ``**kwargs`` a ``**`` argument is."""
        explicit = 0
        args_of = kwargs_of = None
        seen_star = False
        for arg in call.args:
            if arg.star == "*" and not seen_star:
                seen_star = True
                args_of = self._star_parameter_of(arg)
            elif arg.star == "**" and kwargs_of is None:
                kwargs_of = self._star_parameter_of(arg)
            elif not arg.star and arg.keyword is None and not seen_star:
                explicit += 1
        return explicit, args_of, kwargs_of

    def _star_parameter_of(self, arg: cst.Arg) -> Optional[FunctionInfo]:
        """The function whose own ``*args`` (``**kwargs``) ``arg`` passes on, never rebound."""
        if not isinstance(arg.value, cst.Name):
            return None
        bindings = self.model.resolve(arg.value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM:
            return None
        function = bindings[0].definition
        if not isinstance(function, FunctionInfo) or not isinstance(function.node, cst.FunctionDef):
            return None
        params = function.node.params
        star = params.star_kwarg if arg.star == "**" else params.star_arg
        return function if isinstance(star, cst.Param) and star is bindings[0].node else None

    def _passes(self, binding: Binding, function: FunctionInfo, kinds: frozenset[Kind]) -> bool:
        """A call of ``function`` in this file passes a value of one of ``kinds`` for the
        parameter ``binding`` (``_NOT_TENSOR_KINDS``: a number, a sequence, an array)."""
        index = binding.param_index - (1 if function.kind in ("method", "classmethod") else 0)
        for call in self._call_sites(function):
            argument = _argument(call, binding.name, index)
            passed = self.infer(argument) if argument is not None else None
            if passed is not None and passed.kind in kinds:
                return True
        return False

    def _documented_number(self, node: cst.BaseExpression) -> Optional[Step]:
        """A parameter the docstring calls a number (``- size: a scalar``), never rebound,
        or arithmetic of such a parameter and integers; the step that says so.  Only for
        broadcasting: docstrings call 0-dim tensors "float" too, so this never makes a
        value a number."""
        if isinstance(node, cst.BinaryOperation):
            sides = [None if _is_integer(side) else self._documented_number(side) for side in (node.left, node.right)]
            if any(step is None and not _is_integer(side) for step, side in zip(sides, (node.left, node.right))):
                return None
            return next((step for step in sides if step is not None), None)
        if not isinstance(node, cst.Name) or not self.uses_torch:
            return None
        bindings = self.model.resolve(node)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM \
                or not isinstance(bindings[0].node, cst.Param):
            return None
        binding = bindings[0]
        function: FunctionInfo = binding.definition  # type: ignore[assignment]
        found, step = self._declared(binding, function)
        if found is None or found.is_tensor or self._passes(binding, function, _TENSOR_KIND):
            return None
        return step

    @staticmethod
    def _declared(binding: Binding, function: FunctionInfo) -> tuple[Optional[docstrings.Declared], Optional[Step]]:
        """What the function's docstring declares the parameter to be, and the step that quotes it."""
        text = docstrings.function_docstring(function.node)
        found = docstrings.declared(text, binding.name) if text else None
        if found is None:
            return None, None
        return found, Step(binding.node, f"the docstring of `{function.name}` says `{binding.name}` is "
                                         f"\"{found.phrase}\"")

    def calls_of(self, function: FunctionInfo) -> list[cst.Call]:
        """Calls of ``function`` in this file (``f(..)``, ``self.f(..)`` for a method)."""
        return self._call_sites(function)

    @staticmethod
    def passed_argument(call: cst.Call, function: FunctionInfo, param: cst.Param) -> Optional[cst.BaseExpression]:
        """What ``call`` (a call of ``function``) passes for its parameter ``param``, if known."""
        params = function.positional_params()
        index = params.index(param) if param in params else -1
        if index >= 0 and function.kind in ("method", "classmethod"):
            index -= 1
        return _argument(call, param.name.value, index)

    def receiving_parameter(self, arg: cst.Arg, function: Optional[FunctionInfo] = None, modules: bool = False
                            ) -> Optional[tuple[FunctionInfo, str, list[cst.Name]]]:
        """The function of this file a call gives ``arg`` to by position (no ``*`` in the call),
        the name of the parameter that receives it, and the reads of that parameter in the
        function before it is bound again: the other way round from ``passed_argument``.
        ``function``: the method the call runs, where the caller knows it (``super().m(..)``).
        ``modules``: a call of a module of a class of this file (``self.block(x)``) runs that
        class's ``forward`` (``nn.Module.__call__`` hands its arguments on as they are), and
        ``x`` is received by ``forward``'s parameter after ``self``."""
        call = self.model.parent(arg)
        if not isinstance(call, cst.Call) or arg.keyword is not None or any(a.star for a in call.args):
            return None
        if function is None:
            value = self.infer(call.func)
            function = value.function if value is not None and value.kind is Kind.FUNCTION else None
            if function is None and modules and value is not None and value.kind is Kind.MODULE \
                    and isinstance(value.cls, ClassInfo) and self.method_of(value.cls, "__call__") is None:
                function = self.method_of(value.cls, "forward")
        if function is None or function.model is not self.model or not isinstance(function.node, cst.FunctionDef) \
                or function.scope is None:
            return None
        params = function.positional_params()
        index = positional_args(call).index(arg) + (1 if function.kind in ("method", "classmethod") else 0)
        if index >= len(params):
            return None
        name = params[index].name.value
        reads = [load for _seq, load in function.scope.loads.get(name, ())
                 if all(binding.kind is BindingKind.PARAM for binding in self.model.resolve(load))]
        return function, name, reads

    def _call_sites(self, function: FunctionInfo) -> list[cst.Call]:
        """Calls of ``function`` in this file: ``f(..)`` for a function, ``self.f(..)`` for a method."""
        key = id(function.node)
        if key not in self._sites:
            self._sites[key] = self._find_call_sites(function)
        return self._sites[key]

    def _find_call_sites(self, function: FunctionInfo) -> list[cst.Call]:
        if function.model is not self.model or not isinstance(function.node, cst.FunctionDef) or \
                not self.takes_call_arguments(function):
            return []
        callees: list[cst.CSTNode] = []
        if function.kind == "function":
            callees = [load for scope in self.model.scopes_mentioning(function.name)
                       for _seq, load in scope.loads.get(function.name, ())
                       if any(b.definition is function for b in self.model.resolve(load))]
            callees += [alias for load in callees for alias in self._alias_loads(load)]
            calls = [call for load in callees for call in self._handed_calls(load)]
            if calls:
                direct = (self.model.parent(callee) for callee in callees)
                return [call for call, callee in zip(direct, callees) if isinstance(call, cst.Call)
                        and call.func is callee] + calls
        elif function.kind in ("method", "classmethod") and function.cls is not None:
            for scope, load, attribute in self._attribute_loads(function.name):
                caller = scope.function
                if caller is not None and caller.cls is not None and load.value == caller.self_name:
                    if self._class_runs(caller.cls, function):
                        callees.append(attribute)  # `self.fit(..)`, also in a class that inherits `fit`
                elif load.value != "self" and function.kind == "method" and (
                        self._instance_of(load, function.cls) or self._runs_method(load, function)):
                    callees.append(attribute)  # `trainer.fit(..)` on `trainer = Trainer(..)`
            if function.kind == "method":
                # `self.trainer.fit(..)`, `Solver().train(..)`, `models[i].fit(..)`
                callees += [call.func for scope in self.model.scopes_mentioning(function.name)
                            for call in scope.chained_calls.get(function.name, ())
                            if self._runs_method(call.func.value, function)]
        elif function.kind == "staticmethod" and function.cls is not None:
            # `d2l.train_ch3(net, ..)` through its class, `self.split(x)` in a method of the class.
            for scope, load, attribute in self._attribute_loads(function.name):
                caller = scope.function
                if caller is not None and caller.cls is not None and load.value == caller.self_name:
                    if self._class_runs(caller.cls, function):
                        callees.append(attribute)
                elif any(binding.definition is function.cls for binding in self.model.resolve(load)):
                    callees.append(attribute)
        if function.kind == "method" and function.name == "__init__" and function.cls is not None:
            # `Trainer(model, optimizer)` passes `model` and `optimizer` to `__init__`.
            name = function.cls.name
            callees += [load for scope in self.model.scopes_mentioning(name)
                        for _seq, load in scope.loads.get(name, ())
                        if any(b.definition is function.cls for b in self.model.resolve(load))]
        if function.kind == "method" and function.name == "forward" and function.cls is not None:
            callees += self._instance_calls(function.cls)  # `m(x)` runs `forward(x)`
        calls = (self.model.parent(callee) for callee in callees)
        return [call for call, callee in zip(calls, callees) if isinstance(call, cst.Call) and call.func is callee]

    def _handed_calls(self, load: cst.Name) -> list[cst.Call]:
        """The calls of a function handed by name to a function or class of this file
        (``Loss(gradient_penalty)``, ``fit(model, loss_fn=mse)`` by position): of the parameter
        that receives it (``fn(x)``), or of the attribute that parameter is kept in
        (``self._loss_fn = loss_fn`` in ``__init__``, then ``self._loss_fn(pred, y)`` in the
        methods of that class and of the classes of this file that extend it)."""
        arg = self.model.parent(load)
        if not isinstance(arg, cst.Arg) or arg.value is not load:
            return []
        call = self.model.parent(arg)
        receiver = None
        if isinstance(call, cst.Call) and arg.keyword is None and not any(a.star for a in call.args):
            made = self.infer(call.func)
            if made is not None and made.kind is Kind.CLASS and isinstance(made.cls, ClassInfo):
                init = self.method_of(made.cls, "__init__")
                receiver = self.receiving_parameter(arg, init) if init is not None else None
            else:
                receiver = self.receiving_parameter(arg)
        if receiver is None:
            return []
        function, _name, reads = receiver
        found: list[cst.Call] = []
        for read in reads:
            up = self.model.parent(read)
            if isinstance(up, cst.Call) and up.func is read:
                found.append(up)
            elif isinstance(up, cst.Assign) and up.value is read and len(up.targets) == 1 \
                    and function.cls is not None and function.self_name is not None \
                    and isinstance(up.targets[0].target, cst.Attribute) \
                    and isinstance(up.targets[0].target.value, cst.Name) \
                    and up.targets[0].target.value.value == function.self_name:
                attribute = up.targets[0].target.attr.value
                if len(function.cls.assignments(attribute)) != 1:
                    return []  # the attribute holds something else too
                for scope, name, used in self._attribute_loads(attribute):
                    caller = scope.function
                    site = self.model.parent(used)
                    if isinstance(site, cst.Call) and site.func is used and caller is not None \
                            and caller.cls is not None and name.value == caller.self_name \
                            and self._extends(caller.cls, function.cls):
                        found.append(site)
        return found

    def _extends(self, cls, base: ClassInfo) -> bool:
        """``cls`` is ``base`` or a class of this file that extends it (a few generations)."""
        for _ in range(5):
            if cls is base:
                return True
            if not isinstance(cls, ClassInfo) or cls.model is not self.model or len(cls.node.bases) != 1:
                return False
            parent = self.infer(cls.node.bases[0].value)
            cls = parent.cls if parent is not None and parent.kind is Kind.CLASS else None
        return False

    def takes_call_arguments(self, function: FunctionInfo) -> bool:
        """The function gets what the calls of its name pass: it has no decorator but those
        that hand the arguments on as they are (``@torch.no_grad()``, ``@staticmethod``); a
        call of a name decorated otherwise calls a wrapper (``@pytorch_wrap``)."""
        for decorator in getattr(function.node, "decorators", ()):
            expression = decorator.decorator
            if self.grad_mode(expression) is None and self.qualname(
                    expression.func if isinstance(expression, cst.Call) else expression) \
                    not in torch_api.ARGUMENT_KEEPING_DECORATORS:
                return False
        return True

    def _runs_method(self, receiver: cst.BaseExpression, method: FunctionInfo) -> bool:
        """Whether ``receiver.<method>(..)`` runs ``method``: the receiver holds an instance of
        its class, or of a class of the file that inherits it."""
        value = self.infer(receiver)
        cls = value.cls if value is not None and value.kind in (Kind.INSTANCE, Kind.MODULE, Kind.OPTIMIZER) else None
        return isinstance(cls, ClassInfo) and self._class_runs(cls, method)

    def _class_runs(self, cls: ClassInfo, method: FunctionInfo) -> bool:
        """``cls`` defines ``method``, or inherits it from a class of the file without overriding it."""
        return cls is method.cls or self.method_of(cls, method.name) is method

    def _alias_loads(self, load: cst.Name) -> list[cst.Name]:
        """The reads of a name bound to ``load`` and to nothing else (``net = linear_regression``,
        then ``net(X, w, b)``)."""
        assign = self.model.parent(load)
        if not isinstance(assign, cst.Assign) or assign.value is not load or len(assign.targets) != 1 \
                or not isinstance(assign.targets[0].target, cst.Name):
            return []
        alias = assign.targets[0].target.value
        return [other for scope in self.model.scopes_mentioning(alias) for _seq, other in scope.loads.get(alias, ())
                if (bindings := self.model.resolve(other)) and all(b.value is load for b in bindings)]

    def _instance_calls(self, cls: ClassInfo) -> list[cst.Name]:
        """The names called as functions that hold an instance of ``cls`` built in their scope
        (``m = Scaler(4)`` then ``m(x)``)."""
        found = []
        for scope in self.model.scopes_mentioning(cls.name):
            for _seq, load in scope.loads.get(cls.name, ()):
                construction = self.model.parent(load)
                assign = self.model.parent(construction) if isinstance(construction, cst.Call) else None
                if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or \
                        not isinstance(assign.targets[0].target, cst.Name):
                    continue
                name = assign.targets[0].target.value
                for _seq2, use in scope.loads.get(name, ()):
                    call = self.model.parent(use)
                    if isinstance(call, cst.Call) and call.func is use and self._instance_of(use, cls):
                        found.append(use)
        return found

    def _attribute_loads(self, attribute: str) -> list[tuple[Scope, cst.Name, cst.Attribute]]:
        """Every read of a name followed by ``.<attribute>`` (``self.fit``, ``trainer.fit``),
        with its scope: an index built once, on the scopes that mention ``attribute``."""
        index = self._attribute_index.get(attribute)
        if index is None:
            index = []
            for scope in self.model.scopes_mentioning(attribute):
                for load, parent in self._scope_attribute_loads(scope).get(attribute, ()):
                    index.append((scope, load, parent))
            self._attribute_index[attribute] = index
        return index

    def _scope_attribute_loads(self, scope: Scope) -> dict[str, list[tuple[cst.Name, cst.Attribute]]]:
        """The reads of ``scope`` followed by an attribute, by the attribute: one pass over
        the scope's reads, whatever the number of attributes asked about."""
        found = self._attributes_by_scope.get(id(scope))
        if found is None:
            found = self._attributes_by_scope[id(scope)] = {}
            for loads in scope.loads.values():
                for _seq, load in loads:
                    parent = load.parent
                    if isinstance(parent, cst.Attribute) and parent.value is load:
                        found.setdefault(parent.attr.value, []).append((load, parent))
        return found

    def _instance_of(self, name: cst.Name, cls) -> bool:
        """``name`` holds an instance of ``cls`` (a class of this file), known from a
        construction this inference sees without following call sites (no cycles)."""
        bindings = self.model.resolve(name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].iterates:
            return False
        value = tuple_element(bindings[0].value, bindings[0].path)  # `losses, top1 = Meter(), Meter()`
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return False
        return any(binding.definition is cls for binding in self.model.resolve(value.func))

    def _library_instance(self, binding: Binding) -> bool:
        """``name = Accelerator(..)``: an instance of a class imported from elsewhere than
        torch (named as Python names classes): a module perhaps, but how the name is used
        does not make it a tensor (`accelerator.backward(loss)`)."""
        value = binding.value if binding.kind is BindingKind.ASSIGN and not binding.path else None
        if not isinstance(value, cst.Call):
            return False
        qualname = self.qualname(value.func)
        return qualname is not None and not qualname.startswith(("torch.", "numpy.")) and \
            qualname.rsplit(".", 1)[-1][:1].isupper()

    def _usage_value(self, binding: Binding) -> Optional[Value]:
        """Evidence from how a name is used: ``loss.backward()`` means ``loss`` is a tensor."""
        if binding.kind not in (BindingKind.PARAM, BindingKind.ASSIGN, BindingKind.FOR, BindingKind.WITH):
            return None
        if not self.uses_torch:
            return self._helper_parameter(binding)
        for _seq, attribute, node in self.model.uses_of(binding):
            if attribute in TENSOR_USE_ATTRIBUTES:
                value = tensor(Step(node, f"`{binding.name}` is used as a tensor: `{{code}}`"))
                return value.in_graph(True) if attribute == "backward" else value
            if attribute == "size" and _asks_one_dimension(self.model.parent(node), node):
                return tensor(Step(node, f"`{binding.name}` is used as a tensor: `{{code}}(..)` asks the size of "
                                         f"one dimension (numpy's `size` is a number, not a method)"))
            if attribute == "view" and _passes_sizes(self.model.parent(node), node):
                return tensor(Step(node, f"`{binding.name}` is used as a tensor: `{{code}}(..)` with sizes "
                                         f"(numpy's `view` takes a dtype)"))
            if attribute in MODULE_USE_ATTRIBUTES:
                return Value(Kind.MODULE, (Step(node, f"`{binding.name}` is used as a torch.nn module: `{{code}}`"),))
            used = self._data_method(attribute, node, torch_api.DATA_TENSOR_USES)
            if used is not None and not torch_api.is_field_owner(binding.name):
                return tensor(Step(used, f"`{binding.name}` is used as a tensor: `{{code}}` is a tensor's, "
                                         f"and `{binding.name}.data` has it"))
        total = self._backpropagated_total(binding)
        if total is not None:
            added, backward = total
            return tensor(added, scalar=True, scalar_why=backward).in_graph(True)
        passed = self._passed_to_torch(binding)
        if passed is not None:
            return tensor(passed)
        operand = self._backpropagated_operand(binding)
        if operand is not None and self._has_tensor_attribute(binding):
            # `L = -elbo(x)`, `J = L + U`, `J.backward()`, then `L.data[0]`: a number has no `.data`.
            operation, backward = operand
            return tensor(operation, scalar=True, scalar_why=backward).in_graph(True)
        return None

    def _helper_parameter(self, binding: Binding) -> Optional[Value]:
        """A parameter of a function of a file without torch (a test helper) that a module
        of the package importing torch takes, used as ``x.data.t_()``: only a tensor's
        ``.data`` has that method."""
        function = binding.definition
        if binding.kind is not BindingKind.PARAM or not isinstance(function, FunctionInfo) \
                or function.kind != "function" or function.scope is None \
                or function.scope.parent is not self.model.module_scope \
                or self.project is None or self.model.analysis is None or torch_api.is_field_owner(binding.name):
            return None
        for _seq, attribute, node in binding.scope.attribute_uses.get(binding.name, ()):
            used = self._data_method(attribute, node, torch_api.TENSOR_ONLY_USES)
            if used is None or not any(b is binding for b in self.model.resolve(node.value)):
                continue
            found = self.project.torch_importer(self.model.analysis.file_path, function.name, self._consumer)
            if found is None:
                return None
            importer, statement = found
            shown = os.path.relpath(importer, os.path.dirname(self.model.analysis.file_path)).replace(os.sep, "/")
            return tensor(Step(used, f"`{binding.name}` is used as a tensor: `{{code}}` is a tensor's, and "
                                     f"`{binding.name}.data` has it; `{function.name}` is a helper of torch code "
                                     f"(`{shown}` imports torch and `{statement}`)"))
        return None

    def _data_method(self, attribute: str, node: cst.Attribute, methods: frozenset) -> Optional[cst.Attribute]:
        """``x.data.t_`` when ``node`` is ``x.data`` and the method follows it is in ``methods``."""
        if attribute != "data":
            return None
        used = self.model.parent(node)
        return used if isinstance(used, cst.Attribute) and used.value is node and used.attr.value in methods else None

    def _passed_to_torch(self, binding: Binding) -> Optional[Step]:
        """``loss = F.nll_loss(pred, target)``: ``pred`` goes where torch takes only a tensor."""
        for _seq, load in binding.scope.loads.get(binding.name, ()):
            argument = self.model.parent(load)
            call = self.model.parent(argument) if isinstance(argument, cst.Arg) else None
            if not isinstance(call, cst.Call) or argument.keyword is not None or argument.star \
                    or not any(b is binding for b in self.model.resolve(load)):
                continue
            position = call.args.index(argument)
            function = self.qualname(call.func)
            if function is not None and position in torch_api.tensor_positions(function):
                return Step(call, f"`{binding.name}` is used as a tensor: `{{code}}` takes only tensors there")
            callee = self._callee_parameter(call, position) if not any(a.star for a in call.args) else None
            if callee is not None:
                owner, parameter = callee
                used = owner._own_usage(parameter)
                if used is not None:
                    text = used.text.replace("{code}", owner.model.analysis.snippet(used.node))
                    return Step(call, f"`{binding.name}` is passed to `{{code}}`, whose parameter "
                                      f"`{parameter.name}` is used as only a tensor is ({text})")
        return None

    def _callee_parameter(self, call: cst.Call, position: int) -> Optional[tuple["Inference", Binding]]:
        """The parameter of a function of the project that the ``position``-th argument of
        ``call`` binds (``kl_divergence(mu, logvar)``), with the inference that owns it."""
        callee = self.infer(call.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not isinstance(function, FunctionInfo) or function.kind not in ("function", "staticmethod") \
                or not isinstance(function.node, cst.FunctionDef) or function.scope is None:
            return None
        for bindings in function.scope.bindings.values():
            for parameter in bindings:
                if parameter.kind is BindingKind.PARAM and parameter.param_index == position \
                        and isinstance(parameter.node, cst.Param) and parameter.path != (None,):
                    return self._owner(function), parameter
        return None

    def _own_usage(self, parameter: Binding) -> Optional[Step]:
        """Tensor evidence from how a parameter is used in its own function's body only."""
        key = id(parameter)
        if key in self._usage_in_progress:
            return None
        self._usage_in_progress.add(key)
        try:
            value = self._usage_value(parameter)
        finally:
            self._usage_in_progress.discard(key)
        return value.why[0] if value is not None and value.kind is Kind.TENSOR and value.why else None

    def _has_tensor_attribute(self, binding: Binding) -> bool:
        """``name.data`` or ``name.grad`` is read somewhere: not a Python number."""
        return any(attribute in ("data", "grad") for _seq, attribute, _node in self.model.uses_of(binding))

    def _scalar_use(self, binding: Binding) -> Optional[Step]:
        """``loss.backward()`` without a gradient, or ``loss.item()``: the tensor has one element."""
        for _seq, attribute, node in self.model.uses_of(binding):
            if attribute not in ("backward", "item"):
                continue
            call = self.model.parent(node)
            if isinstance(call, cst.Call) and call.func is node and not call.args:
                if attribute == "backward":
                    return Step(call, _BACKWARD_WITHOUT_GRADIENT)
                return Step(call, "`{code}` needs a one-element tensor")
        total = self._backpropagated_total(binding)
        if total is not None:
            return total[1]
        operand = self._backpropagated_operand(binding)
        return operand[1] if operand is not None else None

    def _backpropagated_operand(self, binding: Binding) -> Optional[tuple[Step, Step]]:
        """``loss = nll + kl`` (this binding is ``kl``), then ``loss.backward()`` without a
        gradient: an elementwise result has as many dimensions as its largest operand, so
        a 0-dim result has 0-dim operands.  The steps: the operation, and the call."""
        if binding.kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) or not self._mentions_backward():
            return None
        for _seq, load in binding.scope.loads.get(binding.name, ()):
            expression: cst.CSTNode = load
            parent = self.model.parent(load)
            while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)) and not (
                    isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.MatrixMultiply)):
                expression, parent = parent, self.model.parent(parent)
            if expression is load or not isinstance(parent, cst.Assign) or parent.value is not expression \
                    or len(parent.targets) != 1 or not isinstance(parent.targets[0].target, cst.Name) \
                    or not any(b is binding for b in self.model.resolve(load)):
                continue
            target = parent.targets[0].target
            result = next((b for b in binding.scope.bindings.get(target.value, ()) if b.node is target), None)
            backward = self._backward_call(result) if result is not None else None
            if backward is not None:
                return Step(parent, f"`{binding.name}` is an operand of `{{code}}`, elementwise"), backward
        return None

    def _backpropagated_total(self, binding: Binding, depth: int = 0) -> Optional[tuple[Step, Step]]:
        """``total = 0``, ``total += loss`` (this binding), then ``total.backward()`` without a
        gradient: ``total`` is a 0-dim tensor, so every tensor added to it is one. The steps:
        the addition, and the ``backward()`` call."""
        if depth > 4 or binding.kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN, BindingKind.FOR):
            return None
        for _seq, load in binding.scope.loads.get(binding.name, ()):
            statement = self.model.parent(load)
            if not (isinstance(statement, cst.AugAssign) and statement.value is load
                    and isinstance(statement.operator, (cst.AddAssign, cst.SubtractAssign))
                    and isinstance(statement.target, cst.Name)
                    and any(b is binding for b in self.model.resolve(load))):
                continue
            total = next((b for b in binding.scope.bindings.get(statement.target.value, ())
                          if b.node is statement.target), None)
            if total is None:
                continue
            prior = self.model.prior_binding(total)
            if prior is None or not _starts_from_number(self.binding_value(prior)):
                continue
            backward = self._backward_call(total)
            if backward is None:
                chained = self._backpropagated_total(total, depth + 1)  # `epoch += total`, `epoch.backward()`
                backward = chained[1] if chained is not None else None
            if backward is not None:
                return Step(statement, f"`{{code}}` adds `{binding.name}` to a total that is "
                                       f"back-propagated"), backward
        return None

    def _backward_call(self, binding: Binding) -> Optional[Step]:
        """``name.backward()`` without a gradient argument, for this binding of ``name``."""
        for _seq, attribute, node in self.model.uses_of(binding):
            call = self.model.parent(node)
            if attribute == "backward" and isinstance(call, cst.Call) and call.func is node and not call.args:
                return Step(call, _BACKWARD_WITHOUT_GRADIENT)
        return None

    # --- classes ---------------------------------------------------------------------

    def torch_base(self, cls: ClassInfo) -> Optional[str]:
        """The torch class a class defined in this file derives from, directly or through
        other local classes (``torch.nn.Linear``, ``torch.optim.Optimizer``), if any."""
        owner = self._owner(cls)
        if owner is not self:
            return owner.torch_base(cls)
        key = id(cls)
        if key in self._torch_base_memo:
            return self._torch_base_memo[key]
        self._torch_base_memo[key] = None  # a cycle of local classes derives from nothing
        found = None
        for base in cls.node.bases:
            value = self.infer(base.value)
            if value is None:
                continue
            if value.kind is Kind.EXTERNAL and value.qualname and (
                torch_api.is_module_class(value.qualname) or torch_api.is_optimizer_class(value.qualname)
                or torch_api.normalize(value.qualname) in torch_api.AUTOGRAD_FUNCTION_CLASSES
            ):
                found = value.qualname
            elif value.kind is Kind.EXTERNAL and value.qualname:
                other = self._project_name(value.qualname, base.value)
                if other is not None and other.kind is Kind.CLASS and isinstance(other.cls, ClassInfo):
                    found = self.torch_base(other.cls)
            elif value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
                found = self.torch_base(value.cls)
            if found:
                break
        self._torch_base_memo[key] = found
        return found

    def instance_of(self, cls: ClassInfo) -> Value:
        owner = self._owner(cls)
        if owner is not self:
            return owner.instance_of(cls)
        base = self.torch_base(cls) or ""
        if torch_api.is_module_class(base):
            return Value(Kind.MODULE, (Step(cls.node.name, "`{code}` is a torch.nn.Module subclass"),), cls=cls)
        if torch_api.is_optimizer_class(base):
            return Value(Kind.OPTIMIZER, (Step(cls.node.name, "`{code}` is a torch optimizer"),), cls=cls)
        return Value(Kind.INSTANCE, cls=cls)

    def class_attribute(self, cls: ClassInfo, attribute: str, seen: Optional[set] = None,
                        excluding: Optional[AttributeAssignment] = None) -> Optional[Value]:
        """What ``self.<attribute>`` holds, from every ``self.<attribute> = ..`` in the class
        (but ``excluding``)."""
        owner = self._owner(cls)
        if owner is not self:
            return owner.class_attribute(cls, attribute, seen, excluding)
        seen = seen or set()
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        values: list[Optional[Value]] = []
        for assignment in cls.assignments(attribute):
            if assignment is excluding:
                continue
            value = None
            if assignment.annotation is not None:
                value = self.annotation_value(assignment.annotation)
            if value is None and assignment.value is not None:
                value = unpack(self.infer(assignment.value), assignment.path)
                if value is not None and value.why:
                    value = value.because(Step(assignment.value, f"`self.{attribute}` = `{{code}}`"))
            values.append(value)
        if cls.scope is not None:
            for binding in cls.scope.bindings.get(attribute, ()):
                value = self.binding_value(binding)
                getter = cls.methods.get(attribute)
                if value is not None and value.kind is Kind.FUNCTION and getter is not None \
                        and getter.kind == "property":
                    if value.function is not getter:
                        continue  # the property's setter or deleter
                    value = self._returned_value(getter)
                values.append(value)
        if values:
            return combine(values)
        method = cls.methods.get(attribute)
        if method is not None:
            if method.kind == "property":
                return self._returned_value(method)
            return Value(Kind.FUNCTION, function=method)
        for base in self._local_bases(cls):
            found = self.class_attribute(base, attribute, seen)
            if found is not None:
                return found
        return None

    def file_lineage(self, cls: ClassInfo, generations: int) -> tuple[list[ClassInfo], bool]:
        """``cls`` and the classes of this file it derives from, nearest first (depth first,
        at most ``generations`` below it), and whether that is all it derives from: no
        class of elsewhere (a framework's) on the way (``object`` aside), none met twice,
        none past the bound."""
        found, whole = [cls], True

        def visit(owner: ClassInfo, depth: int) -> None:
            nonlocal whole
            ours = [base for base in self._local_bases(owner) if base.model is self.model]
            plain = sum(self.qualname(base.value) == "builtins.object" for base in owner.node.bases)
            if len(ours) + plain != len(owner.node.bases) or ours and depth >= generations:
                whole = False
            if depth >= generations:
                return
            for base in ours:
                if base in found:
                    whole = False
                    continue
                found.append(base)
                visit(base, depth + 1)

        visit(cls, 0)
        return found, whole

    def _local_bases(self, cls: ClassInfo) -> list[ClassInfo]:
        """Base classes defined in this file or elsewhere in the project."""
        bases = []
        for base in cls.node.bases:
            value = self.infer(base.value)
            if value is not None and value.kind is Kind.EXTERNAL and value.qualname:
                value = self._project_name(value.qualname, base.value)
            if value is not None and value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
                bases.append(value.cls)
        return bases

    def method_of(self, cls: ClassInfo, name: str, seen: Optional[set] = None) -> Optional[FunctionInfo]:
        owner = self._owner(cls)
        if owner is not self:
            return owner.method_of(cls, name, seen)
        seen = seen or set()
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        method = cls.methods.get(name)
        if method is not None:
            return method
        for base in self._local_bases(cls):
            found = self.method_of(base, name, seen)
            if found is not None:
                return found
        return None

    # --- annotations -----------------------------------------------------------------

    def annotation_value(self, annotation: cst.BaseExpression) -> Optional[Value]:
        if isinstance(annotation, cst.Subscript):
            outer = self.qualname(annotation.value) or ""
            inner = [
                element.slice.value
                for element in annotation.slice
                if isinstance(element.slice, cst.Index)
            ]
            last = outer.rsplit(".", 1)[-1]
            if last == "Optional" and len(inner) == 1:
                return self.annotation_value(inner[0])
            if last in ("List", "Sequence", "Iterable", "Iterator", "list", "tuple", "Tuple") and inner:
                return sequence_of(self.annotation_value(inner[0]))
            return None
        value = self.infer(annotation)
        if value is None:
            return None
        if value.kind is Kind.CLASS and isinstance(value.cls, ClassInfo):
            return self._instance_here(value.cls, annotation)
        if value.kind is not Kind.EXTERNAL or not value.qualname:
            return None
        qualname = value.qualname
        if torch_api.is_tensor_type(qualname):
            return tensor()
        if torch_api.is_module_class(qualname):
            return Value(Kind.MODULE, qualname=qualname)
        other = self._project_name(qualname, annotation)
        if other is not None and other.kind is Kind.CLASS and isinstance(other.cls, ClassInfo):
            return self._instance_here(other.cls, annotation)
        return None

    def _instance_here(self, cls: ClassInfo, node: cst.CSTNode) -> Optional[Value]:
        """An instance of ``cls`` when that tells us something (a module or optimizer)."""
        owner = self._owner(cls)
        instance = owner.instance_of(cls)
        if instance.kind is Kind.INSTANCE:
            return None
        return self._localize(instance, node, f"`{{code}}` is `{cls.name}`", owner)

    # --- expressions ---------------------------------------------------------------

    def _attribute(self, node: cst.Attribute) -> Optional[Value]:
        if node.attr.value in ("saved_tensors", "saved_variables") and self.uses_torch:
            # `ctx.saved_tensors` (`self.saved_tensors` before PyTorch 0.4): what forward saved.
            step = Step(node, "`{code}` holds the tensors an autograd Function saved for backward")
            return sequence_of(tensor(step), (step,))
        base = self.infer(node.value)
        if base is None:
            if node.attr.value == "param_groups" and self.uses_torch:
                step = Step(node, "`{code}` is an optimizer's parameter groups")
                return sequence_of(Value(Kind.PARAM_GROUP, (step,)), (step,))
            return None
        attribute = node.attr.value
        kind = base.kind
        if kind is Kind.EXTERNAL:
            if not base.qualname:
                return Value(Kind.EXTERNAL)
            return Value(Kind.EXTERNAL, qualname=torch_api.normalize(f"{base.qualname}.{attribute}"))
        if kind is Kind.TENSOR:
            return torch_api.tensor_attribute(base, attribute)
        if kind is Kind.MODULE:
            return self._module_attribute(base, attribute, node)
        if kind is Kind.INSTANCE and isinstance(base.cls, ClassInfo):
            return self._class_attribute_here(base.cls, attribute, node)
        if kind is Kind.CLASS and isinstance(base.cls, ClassInfo):
            # `Ops.split(x)`: a static method called through its class is a plain function.
            method = base.cls.methods.get(attribute)
            return Value(Kind.FUNCTION, function=method) if method is not None \
                and method.kind == "staticmethod" else None
        if kind is Kind.OPTIMIZER and attribute == "param_groups":
            return sequence_of(Value(Kind.PARAM_GROUP, base.why), base.why)
        if kind is Kind.SEQUENCE and attribute in ("values", "indices"):
            return base.element  # the namedtuple of torch.max(x, dim) and friends
        if kind is Kind.PACKED and attribute in ("data", "batch_sizes"):
            return tensor(Step(node, "`{code}` is a field of a PackedSequence"))
        if kind is Kind.NDARRAY:
            return NDARRAY if attribute == "T" else OTHER
        return None

    def _class_attribute_here(self, cls: ClassInfo, attribute: str, node: cst.Attribute) -> Optional[Value]:
        owner = self._owner(cls)
        value = owner.class_attribute(cls, attribute, excluding=self._assignment_around(cls, attribute, node))
        if value is not None and value.kind in (Kind.FUNCTION, Kind.CLASS):
            return value
        return self._localize(value, node, f"`{{code}}` is set in class `{cls.name}`", owner)

    def _assignment_around(self, cls: ClassInfo, attribute: str, node: cst.Attribute) -> Optional[AttributeAssignment]:
        """The ``self.<attribute> = ..`` whose value reads ``node``: ``self.c = torch.tensor([self.c])``
        reads what the attribute held before, never what this assignment makes."""
        if cls.model is not self.model:
            return None
        values = {id(a.value): a for a in cls.assignments(attribute) if a.value is not None}
        current: Optional[cst.CSTNode] = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            if id(current) in values:
                return values[id(current)]
            current = self.model.parent(current)
        return None

    def _module_attribute(self, base: Value, attribute: str, node: cst.Attribute) -> Optional[Value]:
        cls = base.cls if isinstance(base.cls, ClassInfo) else None
        if cls is not None:
            value = self._class_attribute_here(cls, attribute, node)
            if value is not None:
                return value
        if attribute == "training":
            return OTHER
        if torch_api.is_module_tensor_attribute(attribute) and (
            cls is None or self.torch_base(cls) not in (None, "torch.nn.Module")
        ):
            if attribute in torch_api.MODULE_BUFFER_ATTRIBUTES:
                return Value(Kind.TENSOR, (Step(node, "`{code}` is a buffer of a torch.nn module"),) + base.why,
                             attached=False, leaf=True)
            return Value(Kind.TENSOR, (Step(node, "`{code}` is a parameter of a torch.nn module"),) + base.why,
                         attached=True, leaf=True)
        return None

    def _call(self, node: cst.Call) -> Optional[Value]:
        result = self._call_result(node)
        if result is None or (result.kind is Kind.TENSOR and not result.scalar):
            backpropagated = self._backpropagated_method(node) or self._backpropagated_same_call(node)
            if backpropagated is not None:
                return backpropagated if result is None else result.with_scalar(backpropagated.scalar_why)
        if result is None:
            if is_true(keyword(node, "requires_grad")):
                return tensor(Step(node, "`{code}` is created with requires_grad=True")).in_graph(True, True)
        return result

    def _moved_batch(self, receiver: cst.BaseExpression, node: cst.Call) -> Optional[Value]:
        """``x.cuda()``, ``x.to(device)`` of a part of a `DataLoader`'s batch: a tensor (what
        else collated has `.cuda()`?), new, requiring no grad."""
        loaders = self.loader_batch(receiver)
        if not loaders:
            return None
        return Value(Kind.TENSOR, (
            Step(node, "`{code}` moves a part of a batch, collated by torch: a tensor that requires no grad"),
            Step(loaders[0], "the batches come from `{code}`"))).in_graph(False, True)

    def _made_elsewhere(self, func: cst.BaseExpression) -> bool:
        """``criterion = CTCLoss()`` with ``CTCLoss`` from another library (warp-ctc's returns
        a 1-element tensor): a callable made by code that is neither torch's nor the
        project's, whose result the name says nothing certain of."""
        if isinstance(func, cst.Name):
            values = [binding.value for binding in self.model.resolve(func)]
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = self.infer(func.value)
            cls = owner.cls if owner is not None and isinstance(owner.cls, ClassInfo) else None
            values = [assignment.value for assignment in cls.assignments(func.attr.value)] if cls else []
        else:
            return False
        for value in values:
            if isinstance(value, cst.Call):
                made_by = self.qualname(value.func) or ""
                root, name = made_by.split(".")[0], made_by.rsplit(".", 1)[-1]
                # A class (CapWords) of a library that is neither torch, the standard library
                # (`copy.copy(loss)` copies whatever it is given) nor the project.
                if name[:1].isupper() and root not in ("torch", "builtins") \
                        and root not in sys.stdlib_module_names and self._project_name(made_by, value.func) is None:
                    return True
        return False

    def _backpropagated_method(self, node: cst.Call) -> Optional[Value]:
        """``self.loss(..)`` in a class that back-propagates the result of another
        ``self.loss(..)`` call without a gradient argument (``loss = self.loss(out, batch)``,
        ``loss.backward()``): the method gives the class's 0-dim training loss."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) \
                or not torch_api.loss_reduces(node):
            return None
        bindings = self.model.resolve(func.value)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or bindings[0].param_index != 0:
            return None
        info = bindings[0].definition
        if not isinstance(info, FunctionInfo) or info.cls is None or info.kind != "method":
            return None
        defined = self.method_of(info.cls, func.attr.value)
        if defined is not None:
            returned = self._owner(defined)._returned_value(defined)
            if returned is not None and returned.kind is not Kind.TENSOR:
                return None
        for other, scope in self._self_calls(info.cls, func.attr.value):
            if other is node or not torch_api.loss_reduces(other):
                continue
            found = self._backpropagated_result(other, scope)
            if found is not None:
                bound, backward = found
                why = (Step(node, f"`{{code}}` calls `{self.model.analysis.snippet(func)}(..)`, whose result "
                                  f"class `{info.cls.name}` back-propagates elsewhere"), bound)
                return Value(Kind.TENSOR, why, scalar=True, scalar_why=backward, attached=True, leaf=False)
        return None

    def _backpropagated_same_call(self, node: cst.Call) -> Optional[Value]:
        """``loss_kl = kl(prob, n)`` in a validation loop, where the training loop's
        ``loss_kl = kl(prob, n)`` is back-propagated without a gradient argument (``loss =
        nll + loss_kl``, ``loss.backward()``): the same function, called the same way
        (same arguments by position and keyword, none of them `reduction='none'`), gives
        the same 0-dim loss."""
        func = node.func
        if not isinstance(func, cst.Name) or func.value in _BUILTIN_NAMES or not torch_api.loss_reduces(node) \
                or not self._mentions_backward():
            return None
        resolved = self.model.resolve(func)
        if any(binding.kind is BindingKind.PARAM for binding in resolved):
            return None  # a parameter may be a different callable at each call of its function
        key = (func.value, tuple(id(binding) for binding in resolved), _call_shape(node))
        if key not in self._same_call_memo:
            self._same_call_memo[key] = self._backpropagated_call_of(func.value, key[1], key[2])
        found = self._same_call_memo[key]
        if found is None or found[0] is node:
            return None
        other, bound, backward = found
        line = self.model.analysis.line_index.position(other.start)[0]
        why = (Step(node, f"`{{code}}` calls `{func.value}` the way line {line} does, whose result "
                          f"is back-propagated"), bound)
        return Value(Kind.TENSOR, why, scalar=True, scalar_why=backward, attached=True, leaf=False)

    def _backpropagated_call_of(self, name: str, bindings: tuple[int, ...],
                                shape: tuple) -> Optional[tuple[cst.Call, Step, Step]]:
        """The first call of ``name`` (resolving to ``bindings``, passing arguments the
        ``shape`` way) whose result is back-propagated without a gradient argument."""
        for scope in self.model.scopes_mentioning(name):
            for _seq, load in scope.loads.get(name, ()):
                other = self.model.parent(load)
                if not (isinstance(other, cst.Call) and other.func is load) or _call_shape(other) != shape \
                        or tuple(id(b) for b in self.model.resolve(load)) != bindings:
                    continue
                found = self._backpropagated_result(other, scope)
                if found is not None:
                    return (other, *found)
        return None

    def _mentions_backward(self) -> bool:
        if self._backward_in_text is None:
            self._backward_in_text = self.uses_torch and "backward" in self.model.module.code
        return self._backward_in_text

    def _self_calls(self, cls: ClassInfo, name: str) -> list[tuple[cst.Call, Scope]]:
        """Every ``self.<name>(..)`` in the methods of ``cls`` (in this file), with its scope."""
        key = (id(cls), name)
        cache = self._self_call_memo
        if key not in cache:
            calls = []
            for scope in self.model.scopes_mentioning(name):
                function = scope.function
                if function is None or function.cls is not cls or function.kind != "method" or not function.self_name:
                    continue
                for _seq, load in scope.loads.get(function.self_name, ()):
                    attribute = self.model.parent(load)
                    call = self.model.parent(attribute) if isinstance(attribute, cst.Attribute) else None
                    if isinstance(call, cst.Call) and call.func is attribute and attribute.attr.value == name:
                        calls.append((call, scope))
            cache[key] = calls
        return cache[key]

    def _backpropagated_result(self, call: cst.Call, scope: Scope) -> Optional[tuple[Step, Step]]:
        """``call(..).backward()``, ``loss = call(..)`` then ``loss.backward()`` (or ``loss``
        added to a total that is back-propagated), all without a gradient argument."""
        parent = self.model.parent(call)
        while isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
            call, parent = parent, self.model.parent(parent)  # `L = -elbo(x)`: the same shape
        if isinstance(parent, cst.Attribute) and parent.attr.value == "backward":
            backward = self.model.parent(parent)
            if isinstance(backward, cst.Call) and backward.func is parent and not backward.args:
                step = Step(backward, _BACKWARD_WITHOUT_GRADIENT)
                return step, step
            return None
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return None
        target = parent.targets[0].target
        binding = next((b for b in scope.bindings.get(target.value, ()) if b.node is target), None)
        if binding is None:
            return None
        backward = self._backward_call(binding)
        if backward is not None:
            return Step(parent, "`{code}` is back-propagated"), backward
        return self._backpropagated_total(binding) or self._backpropagated_operand(binding)

    def _call_result(self, node: cst.Call) -> Optional[Value]:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.infer(func.value)
            if receiver is not None and receiver.kind is not Kind.EXTERNAL:
                result = self._method_call(receiver, func.attr.value, node)
                if result is not None or receiver.kind not in (Kind.MODULE, Kind.INSTANCE):
                    return result
            elif receiver is None and func.attr.value in _BATCH_MOVES:
                moved = self._moved_batch(func.value, node)
                if moved is not None:
                    return moved
                # `self.fc(x)`: an attribute holding a module (or function), not a method.
        callee = self.infer(func)
        if callee is None:
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            # `criterion(output, target)`: a loss is computed from (prediction, target);
            # `criterion(**params)` would be building the criterion itself.
            if _names_a_loss(name) and self.uses_torch and not self._made_elsewhere(func) \
                    and len(positional_args(node)) >= 2:
                return tensor(
                    Step(node, "`{code}` is the result of a loss criterion"),
                    scalar=True,
                    scalar_why=Step(node, "`{code}` is a loss criterion's reduced result, 0-dimensional"),
                ).in_graph(True)
            return None
        kind = callee.kind
        if kind is Kind.EXTERNAL and callee.qualname:
            if callee.qualname.startswith("builtins."):
                return self._builtin_call(callee.qualname[len("builtins."):], node)
            result = torch_api.external_call(callee.qualname, node)
            if result is not None:
                if result.kind is Kind.MODULE and torch_api.normalize(callee.qualname) == "torch.nn.ModuleList":
                    return self._module_list(result, node)
                if result.kind is Kind.MODULE and torch_api.normalize(callee.qualname) == "torch.nn.Sequential":
                    return self._sequential(result, node)
                if result.kind is Kind.TENSOR and not result.scalar and torch_api.creates_from_sizes(callee.qualname):
                    result = _with_given_sizes(result, node)
                elif (result.kind is Kind.TENSOR and not result.scalar) or result.kind is Kind.SEQUENCE:
                    result = self._reduction_function(callee.qualname, result, node)
                return self._with_argument_graph(result, node)
            callee = self._project_name(callee.qualname, node.func)
            if callee is None:
                return None
            if callee.kind is Kind.EXTERNAL and callee.qualname:
                return torch_api.external_call(callee.qualname, node)
            kind = callee.kind
        if kind is Kind.CLASS and isinstance(callee.cls, ClassInfo):
            owner = self._owner(callee.cls)
            return self._localize(owner.instance_of(callee.cls), node,
                                  f"`{{code}}` creates a `{callee.cls.name}`", owner)
        if kind is Kind.MODULE:
            return self._module_call(callee, node)
        if kind is Kind.FUNCTION and isinstance(callee.function, FunctionInfo):
            return self._function_result(callee.function, node)
        if kind is Kind.INSTANCE and isinstance(callee.cls, ClassInfo):
            # `actor(data)`: an object of a class of the project that defines `__call__` runs it.
            method = self.class_attribute(callee.cls, "__call__")
            if method is not None and method.kind is Kind.FUNCTION and isinstance(method.function, FunctionInfo) \
                    and method.function.kind == "method":
                return self._function_result(method.function, node)
        return None

    def _with_argument_graph(self, result: Value, node: cst.Call) -> Value:
        """A torch function's result is in the graph when one of its tensor arguments is."""
        if result.kind is not Kind.TENSOR or result.attached is not None:
            return result
        values = []
        for arg in node.args:
            value = self.infer(arg.value)
            if value is not None and value.kind in (Kind.SEQUENCE, Kind.TUPLE):
                value = element_of(value)
            if value is not None and value.kind is Kind.TENSOR:
                values.append(value)
        return result.in_graph(_attached(values)) if values else result

    def _method_call(self, receiver: Value, method: str, node: cst.Call) -> Optional[Value]:
        kind = receiver.kind
        if kind is Kind.TENSOR:
            result = torch_api.tensor_method_result(receiver, method, node)
            if result is not None and result.kind is Kind.TENSOR and not result.scalar:
                result = self._with_dims(result, receiver, method, node)
            elif result is not None and result.kind is Kind.SEQUENCE and result.element is not None \
                    and receiver.dims_at_most is not None and method in torch_api.REDUCTIONS_WITH_INDICES \
                    and _reduces_one_dimension(node, 0):  # `x.max(1)`: (values, indices)
                result = replace(result, element=_one_dimension_less(result.element, receiver))
            return result
        if kind is Kind.MODULE:
            return self._module_method(receiver, method, node)
        if kind is Kind.INSTANCE and isinstance(receiver.cls, ClassInfo):
            function = self.method_of(receiver.cls, method)
            # `self.criterion(..)` of a property calls what the property returns (see _call_result).
            return self._function_result(function, node) if function and function.kind != "property" else None
        if kind is Kind.DICT:
            if method == "values":
                return sequence_of(receiver.element)
            if method == "items":
                return sequence_of(Value(Kind.TUPLE, items=(OTHER, receiver.element)))
            if method in ("get", "pop", "setdefault"):
                return receiver.element
            return None
        if kind in (Kind.SEQUENCE, Kind.TUPLE) and method == "pop":
            return element_of(receiver)
        if kind is Kind.NDARRAY:
            return NDARRAY if method in ("copy", "astype", "reshape", "transpose", "flatten", "squeeze", "ravel") else OTHER
        if kind is Kind.PACKED and method in ("to", "cuda", "cpu", "float", "double", "half"):
            return receiver
        return None

    def _with_dims(self, result: Value, receiver: Value, method: str, node: cst.Call) -> Value:
        """What ``receiver.method(..)`` tells of the result's number of dimensions."""
        if method == "t" and not node.args:
            return result.with_dims_at_most(2, Step(node, "`{code}` has at most 2 dimensions: `t()` accepts no more"))
        if method == "nonzero" and not node.args:
            return result.with_dims_at_most(2, Step(node, "`{code}` has 2 dimensions: `nonzero()` gives a row of "
                                                          "indices per element"))
        if method in ("view", "reshape", "repeat", "expand"):
            return _with_given_sizes(result, node)
        if receiver.dims_at_most is None:
            return result
        if method in torch_api.SHAPE_PRESERVING_METHODS and all(self._not_a_tensor(arg.value) for arg in node.args):
            return result.keeping_dims_of(receiver)
        if method in torch_api.SCALAR_REDUCTIONS and method != "norm" and _reduces_one_dimension(node, 0):
            return _one_dimension_less(result, receiver)
        return result

    def _reduction_function(self, qualname: str, result: Value, node: cst.Call) -> Value:
        """``torch.mean(x, dim=0)``: one dimension fewer than ``x``."""
        name = qualname[len("torch."):] if qualname.startswith("torch.") else ""
        arguments = positional_args(node)
        if name not in torch_api.SCALAR_REDUCTION_FUNCTIONS or name in ("norm", "nuclear_norm") or not arguments \
                or not _reduces_one_dimension(node, 1):
            return result
        reduced = self.infer(arguments[0].value)
        if reduced is None or reduced.kind is not Kind.TENSOR or reduced.dims_at_most is None:
            return result
        if result.kind is Kind.SEQUENCE and result.element is not None:  # `torch.max(x, 1)`: (values, indices)
            return replace(result, element=_one_dimension_less(result.element, reduced))
        return _one_dimension_less(result, reduced) if result.kind is Kind.TENSOR else result

    def _not_a_tensor(self, node: cst.BaseExpression) -> bool:
        value = self.infer(node)
        return value is not None and value.kind in (Kind.OTHER, Kind.NONE, Kind.EXTERNAL)

    def _module_method(self, module: Value, method: str, node: cst.Call) -> Optional[Value]:
        if method in _MODULE_SELF_METHODS:
            return module
        step = (Step(node, "`{code}` yields a module's parameters"),)
        parameter = tensor(step[0]).in_graph(method.endswith("parameters"), True)
        if method in ("parameters", "buffers"):
            return sequence_of(parameter, step)
        if method in ("named_parameters", "named_buffers"):
            return sequence_of(Value(Kind.TUPLE, items=(OTHER, parameter)), step)
        if method in ("modules", "children"):
            return sequence_of(Value(Kind.MODULE, module.why), module.why)
        if method in ("named_modules", "named_children"):
            return sequence_of(Value(Kind.TUPLE, items=(OTHER, Value(Kind.MODULE, module.why))))
        if method == "state_dict":
            return Value(Kind.DICT, element=tensor(Step(node, "`{code}` maps names to tensors")).in_graph(False, True))
        if method == "forward":
            return self._module_call(module, node)
        if isinstance(module.cls, ClassInfo):
            function = self.method_of(module.cls, method)
            if function is not None and function.kind != "property":
                return self._function_result(function, node)
        return None

    def _module_call(self, module: Value, node: cst.Call) -> Optional[Value]:
        """The output of calling an nn.Module."""
        output_step = Step(node, "`{code}` is the output of a torch.nn module")
        if module.loss:
            return Value(
                Kind.TENSOR,
                (Step(node, "`{code}` is the result of a loss criterion"),) + module.why,
                scalar=True,
                scalar_why=Step(node, "`{code}` is a loss criterion's reduced result, 0-dimensional"),
                attached=True, leaf=False,
            )
        qualname = module.qualname or ""
        layer = qualname.rsplit(".", 1)[-1] if qualname.startswith("torch.nn.") else ""
        if layer in torch_api.TUPLE_MODULES:
            output = tensor(output_step).in_graph(True)
            if module.why:
                output = output.because(module.why[0])
            if layer in torch_api.RECURRENT_MODULES:
                first = node.args[0].value if node.args else None
                first_value = self.infer(first) if first is not None else None
                if first_value is not None and first_value.kind is Kind.PACKED:
                    output = Value(Kind.PACKED, first_value.why)
                hidden = sequence_of(tensor(output_step)) if layer == "LSTM" else tensor(output_step)
                return Value(Kind.TUPLE, items=(output, hidden))
            return sequence_of(output)
        if isinstance(module.cls, ClassInfo):
            forward = self.method_of(module.cls, "forward")
            if forward is not None:
                owner = self._owner(forward)
                returned = owner._returned_value(forward)
                if returned is not None and (returned.kind is not Kind.TENSOR or returned.scalar):
                    return self._localize(returned, node, "`{code}` returns what `forward` returns", owner)
                reduced = owner._reduced_returns(forward)
                if reduced is not None:
                    if owner is not self:
                        reduced = Step(node, f"`{{code}}` is 0-dimensional: {owner.model.analysis.render(reduced)}")
                    return Value(Kind.TENSOR, (output_step,) + module.why, attached=True, leaf=False) \
                        .with_scalar(reduced)
        return Value(Kind.TENSOR, (output_step,) + module.why, attached=True, leaf=False)

    def _reduced_returns(self, function: FunctionInfo) -> Optional[Step]:
        """A module's ``forward`` whose every ``return`` is a full reduction (``x.sum()``, or
        arithmetic on such values and numbers): its output, a tensor, is 0-dim."""
        if function.is_generator or not function.returns:
            return None
        steps = [self.standalone._full_reduction(expression) for expression in function.returns]
        if not all(steps):
            return None
        name = f"{function.cls.name}.forward" if function.cls is not None else function.name
        reason = steps[0].text.replace("{code}", self.model.analysis.snippet(steps[0].node))
        return Step(function.returns[0], f"`{name}` returns `{{code}}`, a full reduction on every path "
                                         f"({reason}): 0-dimensional")

    def _full_reduction(self, node: cst.BaseExpression, depth: int = 0) -> Optional[Step]:
        """Evidence that ``node`` is 0-dim if it is a tensor at all, by its shape alone:
        ``x.sum()`` / ``x.mean()`` without a dimension, ``.clamp(..)`` and other
        shape-keeping methods of such a value, arithmetic of such values with numbers,
        and names every reaching assignment of which is one of these."""
        if depth > 12:
            return None
        value = self.infer(node)
        if value is not None and value.kind is Kind.TENSOR and value.scalar:
            return value.scalar_why
        if value is not None and value.kind is not Kind.TENSOR:
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            receiver = self.infer(node.func.value)
            if receiver is not None and receiver.kind is not Kind.TENSOR:
                return None
            method = node.func.attr.value
            if method in torch_api.SCALAR_REDUCTIONS and torch_api.reduces_to_scalar(node, 0):
                return Step(node, "`{code}` reduces over all elements")
            if method in torch_api.ALWAYS_SCALAR_METHODS:
                return Step(node, "`{code}` is always 0-dimensional")
            if method in torch_api.SHAPE_PRESERVING_METHODS:
                return self._full_reduction(node.func.value, depth + 1)
            return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return self._full_reduction(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            found = None
            for operand in (node.left, node.right):
                operand_value = self.infer(operand)
                if operand_value is not None and operand_value.kind is Kind.OTHER:
                    continue  # a number
                step = self._full_reduction(operand, depth + 1)
                if step is None:
                    return None
                found = found or step
            return found
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            steps = [self._full_reduction(b.value, depth + 1)
                     if b.kind is BindingKind.ASSIGN and b.value is not None and not b.path and not b.iterates
                     and b.annotation is None else None
                     for b in bindings]
            return steps[0] if steps and all(steps) else None
        return None

    def _returned_parameter(self, function: FunctionInfo) -> Optional[int]:
        """The index of the parameter a helper returns, possibly moved or converted:
        ``def to_gpu(x): return x.cuda() if USE_GPU else x`` returns parameter 0."""
        names = _argument_names(function)
        if names is None:
            return None
        found: set[int] = set()
        for expression in function.returns:
            branches = [expression]
            while branches:
                current = branches.pop()
                if isinstance(current, cst.IfExp):
                    branches += [current.body, current.orelse]
                    continue
                while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                        and current.func.attr.value in _ARGUMENT_PRESERVING:
                    current = current.func.value
                if not isinstance(current, cst.Name) or current.value not in names:
                    return None
                found.add(names.index(current.value))
        return found.pop() if len(found) == 1 else None

    def _returned_value(self, function: FunctionInfo) -> Optional[Value]:
        return self._answers.ask(self._return_memo, id(function), self._read_returned_value, function)

    def _read_returned_value(self, function: FunctionInfo) -> Optional[Value]:
        value: Optional[Value] = None
        returns = getattr(function.node, "returns", None)
        if returns is not None:
            value = self.annotation_value(returns.annotation)
            if value is not None and not value.why:
                value = value.because(Step(returns.annotation, f"`{function.name}` is annotated `-> {{code}}`"))
        if not function.is_generator and function.returns:
            returned = combine(self.standalone.infer(expression) for expression in function.returns)
            if value is None:
                value = returned
            elif value.kind is Kind.TENSOR and returned is not None and returned.scalar:
                # `-> torch.Tensor` says tensor; `return x.sum()` says which shape.
                value = value.with_scalar(returned.scalar_why)
        return value

    def _returned_elementwise(self, function: FunctionInfo) -> Optional[frozenset[int]]:
        """The parameters a function returns elementwise arithmetic of, with numbers and
        dtype conversions: ``return (0.5 * ((coords + 1.0) * T)).long()`` ({0, 1}, for
        ``denormalize(self, T, coords)``).  The result has as many dimensions as the widest
        tensor among the arguments."""
        names = _argument_names(function)
        if names is None:
            return None
        used: set[int] = set()
        for expression in function.returns:
            pending = [expression]
            while pending:
                current = pending.pop()
                if isinstance(current, cst.BinaryOperation) and not isinstance(current.operator, cst.MatrixMultiply):
                    pending += [current.left, current.right]
                elif isinstance(current, cst.UnaryOperation) and not isinstance(current.operator, cst.Not):
                    pending.append(current.expression)
                elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and not current.args \
                        and current.func.attr.value in _DIMS_KEEPING_CONVERSIONS:
                    pending.append(current.func.value)
                elif isinstance(current, cst.Name) and current.value in names:
                    used.add(names.index(current.value))
                elif not isinstance(current, (cst.Integer, cst.Float)):
                    return None
        return frozenset(used) if used else None

    def _elementwise_result(self, function: FunctionInfo, node: cst.Call) -> Optional[Value]:
        owner = self._owner(function)
        used = owner._returned_elementwise(function)
        arguments = positional_args(node)
        if used is None or max(used) >= len(arguments) or len(arguments) != len(node.args):
            return None
        values = [self.infer(arguments[index].value) for index in sorted(used)]
        tensors = [v for v in values if v is not None and v.kind is Kind.TENSOR]
        if not tensors or any(v is None or v.kind not in (Kind.TENSOR, Kind.OTHER) for v in values) \
                or any(t.dims_at_most is None for t in tensors):
            return None
        widest = max(tensors, key=lambda t: t.dims_at_most)
        step = Step(node, f"`{{code}}` returns elementwise arithmetic of its arguments and numbers "
                          f"(`{function.name}`): as many dimensions as its widest tensor argument")
        return Value(Kind.TENSOR, (step,) + widest.why).keeping_dims_of(widest)

    def _function_result(self, function: FunctionInfo, node: cst.Call) -> Optional[Value]:
        owner = self._owner(function)
        value = owner._returned_value(function)
        if value is None and owner is self:
            value = self._returned_at_sole_call(function, node)
        if value is None:
            index = owner._returned_parameter(function)
            arguments = positional_args(node)
            if index is not None and index < len(arguments):
                argument = self.infer(arguments[index].value)
                if argument is not None and argument.kind is Kind.TENSOR:
                    return argument.because(Step(node, f"`{{code}}` returns its argument (`{function.name}`)"))
            return self._elementwise_result(function, node)
        if owner is not self:
            return self._localize(value, node, f"`{{code}}` returns what `{function.name}` returns", owner)
        value = self._attached_by_arguments(value, function, node)
        if value is not None and value.kind is Kind.TENSOR:
            return value.because(Step(node, f"`{{code}}` returns what `{function.name}` returns, a tensor"))
        return value

    def _returned_at_sole_call(self, function: FunctionInfo, node: cst.Call) -> Optional[Value]:
        """What a helper called once in the file returns, read with what that call gives its
        parameters (`def _top_k(self, scores): return scores.max(-1)` called on a tensor)."""
        key = id(function)
        if key in self._contextual or function.is_generator or not function.returns or \
                self._call_sites(function) != [node]:
            return None
        self._contextual.add(key)
        try:
            return combine(self.infer(expression) for expression in function.returns)
        finally:
            self._contextual.discard(key)

    def _attached_by_arguments(self, value: Optional[Value], function: FunctionInfo, node: cst.Call
                               ) -> Optional[Value]:
        """What a helper returns, read without its callers, does not know whether it is in the
        graph; when it is computed by differentiable torch operations from parameters and this
        call passes one in the graph, it is too (`def _top_k(s): return torch.topk(s, k)`)."""
        parts = value.items if value is not None and value.kind is Kind.TUPLE else \
            (value.element,) if value is not None and value.kind is Kind.SEQUENCE else (value,)
        if value is None or not any(part is not None and part.kind is Kind.TENSOR and part.attached is None
                                    for part in parts):
            return value
        sources = self._returned_sources(function)
        arguments = positional_args(node)
        given = [self.infer(arguments[index].value) for index in sources if index < len(arguments)
                 and arguments[index].keyword is None and not arguments[index].star]
        if not any(argument is not None and argument.kind is Kind.TENSOR and argument.attached for argument in given):
            return value

        def attach(part: Optional[Value]) -> Optional[Value]:
            return part.in_graph(True) if part is not None and part.kind is Kind.TENSOR and part.attached is None \
                else part
        if value.kind is Kind.TUPLE:
            return replace(value, items=tuple(attach(item) for item in value.items))
        if value.kind is Kind.SEQUENCE:
            return replace(value, element=attach(value.element))
        return attach(value)

    def _returned_sources(self, function: FunctionInfo) -> frozenset[int]:
        """The positional parameters every value ``function`` returns is computed from by
        differentiable torch operations (functions and tensor methods of torch that
        differentiate, arithmetic, indexing), through the names it binds once; empty when
        a return is computed otherwise or gradients may be off there."""
        key = id(function)
        if key not in self._sources_memo:
            self._sources_memo[key] = self._find_returned_sources(function)
        return self._sources_memo[key]

    def _find_returned_sources(self, function: FunctionInfo) -> frozenset[int]:
        names = _argument_names(function)
        if names is None or _RE_GRAD_OFF.search(self.model.analysis.text[function.node.start:function.node.end]):
            return frozenset()
        found: set[int] = set()

        def sources(expression: cst.BaseExpression, depth: int) -> bool:
            if depth > 8:
                return False
            if isinstance(expression, cst.Name):
                if expression.value in names and all(binding.kind is BindingKind.PARAM
                                                     for binding in self.model.resolve(expression)):
                    found.add(names.index(expression.value))
                    return True
                values = self.model.assigned_values(expression)
                return bool(values) and len(values) == 1 and sources(values[0], depth + 1)
            if isinstance(expression, cst.BinaryOperation):
                return any([sources(expression.left, depth + 1), sources(expression.right, depth + 1)])
            if isinstance(expression, cst.Subscript):
                return sources(expression.value, depth + 1)
            if isinstance(expression, (cst.Tuple, cst.List)):
                return all(sources(element.value, depth + 1) for element in expression.elements
                           if not isinstance(element, cst.StarredElement))
            if not isinstance(expression, cst.Call):
                return False
            qualname = self.qualname(expression.func)
            if qualname is not None:
                fact = torch_facts.fact(qualname)
                if fact is None or fact.kind != "function" or fact.differentiable is False or fact.factory or \
                        fact.returns not in ("tensor", "tuple", "depends"):
                    return False
                # every argument is asked, so that each parameter it is computed from is recorded
                given = [sources(arg.value, depth + 1) for arg in expression.args if arg.keyword is None and not arg.star]
                return any(given)
            if isinstance(expression.func, cst.Attribute):
                fact = torch_facts.method(expression.func.attr.value)
                return fact is not None and fact.differentiable is not False and fact.kind == "method" and \
                    fact.returns in ("tensor", "tuple", "depends") and sources(expression.func.value, depth + 1)
            return False
        if not all(sources(expression, 0) for expression in function.returns):
            return frozenset()
        return frozenset(found)

    def _builtin_call(self, name: str, node: cst.Call) -> Optional[Value]:
        args = [arg.value for arg in positional_args(node)]
        if name in ("float", "int", "len", "str", "bool", "repr", "id", "hash", "type", "isinstance",
                    "issubclass", "hasattr", "callable", "print", "format", "ord", "chr"):
            return OTHER
        if name == "range":
            return sequence_of(OTHER)
        if not args:
            return None
        if name in ("list", "tuple", "sorted", "reversed", "iter", "set", "frozenset"):
            return sequence_of(element_of(self.infer(args[0])))
        if name == "filter" and len(args) >= 2:
            return sequence_of(element_of(self.infer(args[1])))
        if name == "enumerate":
            return sequence_of(Value(Kind.TUPLE, items=(OTHER, element_of(self.infer(args[0])))))
        if name == "zip":
            return sequence_of(Value(Kind.TUPLE, items=tuple(element_of(self.infer(a)) for a in args)))
        if name == "next":
            return element_of(self.infer(args[0]))
        if name == "dict":
            pair = element_of(self.infer(args[0]))
            if pair is not None and pair.kind is Kind.TUPLE and len(pair.items) == 2:
                return Value(Kind.DICT, element=pair.items[1])
            return None
        if name == "sum":
            element = element_of(self.infer(args[0]))
            return element if element is not None and element.kind is Kind.TENSOR else None
        if name in ("max", "min", "abs"):
            if len(args) == 1 and name != "abs":
                element = element_of(self.infer(args[0]))
            else:
                element = combine(self.infer(a) for a in args)
            return element if element is not None and element.kind is Kind.TENSOR else None
        return None

    def _module_list(self, made: Value, call: cst.Call) -> Value:
        """``nn.ModuleList(Block(..) for _ in range(n))`` (or a list of them written out),
        bound to a name or an attribute that nothing appends to, extends, inserts into or
        assigns an item of: every module it holds is an instance of that class of the file."""
        args = positional_args(call)
        if len(call.args) != 1 or len(args) != 1 or self._unchanged_container(call, "append|extend|insert") is None:
            return made
        given = args[0].value
        items = [given.elt] if isinstance(given, (cst.ListComp, cst.GeneratorExp)) else \
            [element.value for element in given.elements] if isinstance(given, (cst.List, cst.Tuple)) else []
        values = [self.infer(item) for item in items if not isinstance(item, cst.StarredElement)]
        if not values or len(values) != len(items) or any(value is None or value.kind is not Kind.MODULE
                                                          or not isinstance(value.cls, ClassInfo)
                                                          or value.cls is not values[0].cls for value in values):
            return made
        return replace(made, element=values[0])

    def _unchanged_container(self, call: cst.Call, methods: str) -> Optional[str]:
        """The name or attribute the container ``call`` builds is bound to (``layers =
        nn.ModuleList(..)``), when nothing in the file calls one of ``methods`` on it
        (``layers.append(..)``), assigns an item of it or adds to it (``+=``); else None."""
        parent = self.model.parent(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return None
        target = parent.targets[0].target
        name = target.attr.value if isinstance(target, cst.Attribute) else target.value \
            if isinstance(target, cst.Name) else None
        if name is None or re.search(rf"(?<!\w){re.escape(name)}\s*(?:\.\s*(?:{methods})\b|\[[^\]\n]*\]\s*="
                                     rf"(?!=)|\+=)", self.model.module.code):
            return None
        return name

    def _sequential(self, made: Value, call: cst.Call) -> Value:
        """``nn.Sequential(a, b, c)`` holds the modules it is given, in that order: indexing it
        with an integer gives that module (``model[0].weight``), and iterating over it gives
        instances of one class of the file when all of them are. Only when the name or attribute
        it is bound to is never appended to, extended, inserted into, given a module
        (``add_module``) or assigned an item, and no module is given by name (an OrderedDict)
        or unpacked (``*layers``)."""
        args = positional_args(call)
        if not args or len(args) != len(call.args) or any(arg.star for arg in call.args) \
                or self._unchanged_container(call, "append|extend|insert|add_module") is None:
            return made
        values = tuple(self.infer(arg.value) for arg in args)
        if any(value is None or value.kind is not Kind.MODULE for value in values):
            return made
        same = all(isinstance(value.cls, ClassInfo) and value.cls is values[0].cls for value in values)
        return replace(made, items=values, element=values[0] if same else made.element)

    def _subscript(self, node: cst.Subscript) -> Optional[Value]:
        base = self.infer(node.value)
        if base is None:
            return None
        kind = base.kind
        is_slice = any(isinstance(element.slice, cst.Slice) for element in node.slice)
        if kind is Kind.TENSOR:
            removed = self._integer_positions(node) if base.dims_at_most is not None else None
            if removed is not None:
                return base.less_dims(removed).in_graph(base.attached)
            return Value(Kind.TENSOR, base.why).in_graph(base.attached)
        if kind in (Kind.SEQUENCE, Kind.TUPLE) and is_slice:
            return sequence_of(element_of(base))
        if kind is Kind.SEQUENCE or kind is Kind.DICT:
            return _inside(base, base.element)
        if kind is Kind.TUPLE:
            index = integer_index(node)
            if index is not None and -len(base.items) <= index < len(base.items):
                return _inside(base, base.items[index])
            return _inside(base, combine(base.items))
        if kind is Kind.PARAM_GROUP:
            key = node.slice[0].slice.value if isinstance(node.slice[0].slice, cst.Index) else None
            if isinstance(key, cst.SimpleString) and key.evaluated_value == "params":
                return sequence_of(tensor(Step(node, "`{code}` holds an optimizer's parameters")))
            return None
        if kind is Kind.MODULE:
            if base.qualname in _PARAMETER_CONTAINERS:
                return tensor(Step(node, "`{code}` is a parameter of an nn.ParameterList")).in_graph(True, True)
            if base.items and not is_slice:
                index = integer_index(node)  # `model[0]` of `nn.Sequential(Encoder(..), head)`
                if index is not None and -len(base.items) <= index < len(base.items):
                    return base.items[index]
            if base.element is not None and not is_slice:
                return base.element  # a ModuleList of instances of one class of the file
            return Value(Kind.MODULE, base.why)  # nn.Sequential / nn.ModuleList indexing
        if kind is Kind.NDARRAY:
            return NDARRAY
        if kind is Kind.OTHER:
            return OTHER  # `x.size()[-1]`, `"abc"[0]`: never a tensor
        return None

    def keyed_item(self, node: cst.Subscript) -> Optional[Value]:
        """``state['loss']`` read from a mapping the inference knows nothing of (a hook's
        ``state`` parameter), when every value this file stores under that constant key
        (``state['loss'] = loss``, ``None`` aside) is a 0-dim tensor: that tensor, with the
        store as evidence.  Asked by rules only where a 0-dim value is what they are about."""
        key = _constant_key(node)
        if key is None or self.infer(node.value) is not None:
            return None
        stored: list[tuple[cst.Assign, Value]] = []
        for assign in self._keyed_stores().get(key, ()):
            if isinstance(assign.value, cst.Name) and assign.value.value == "None":
                continue
            value = self.tensor(assign.value)
            if value is None or not value.scalar:
                return None
            stored.append((assign, value))
        if not stored:
            return None
        assign, value = stored[0]
        return value.because(Step(assign.targets[0].target, "`{code}` stores a 0-dim tensor under the same key, "
                                                            "as every store of it in this file does"))

    def _keyed_stores(self) -> dict[str, list[cst.Assign]]:
        """The item assignments of this file by their constant string key (one walk)."""
        if self._keyed is None:
            self._keyed = {}
            for assign in iter_nodes(self.model.module):
                if isinstance(assign, cst.Assign) and len(assign.targets) == 1 \
                        and isinstance(assign.targets[0].target, cst.Subscript):
                    key = _constant_key(assign.targets[0].target)
                    if key is not None:
                        self._keyed.setdefault(key, []).append(assign)
        return self._keyed

    def _integer_positions(self, node: cst.Subscript) -> Optional[int]:
        """How many dimensions ``t[i, :, 0]`` takes away (2), where every index is an integer
        or a plain slice; None where an index may be a tensor, a list, None or ``...``."""
        removed = 0
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            if getattr(index, "star", None) or not self._is_python_integer(index.value):
                return None
            removed += 1
        return removed

    def _is_python_integer(self, node: cst.BaseExpression) -> bool:
        """An integer literal, ``len(..)``, ``x.size(0)``, ``x.shape[1]``, a loop variable over
        ``range(..)``, or arithmetic of those."""
        if _is_integer(node):
            return True
        if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star:
            func = node.func
            if isinstance(func, cst.Name) and func.value == "len" and not self.model.resolve(func):
                return True
            if isinstance(func, cst.Attribute) and func.attr.value == "size" \
                    and _asks_one_dimension(node, func) and self.tensor(func.value) is not None:
                return True
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "shape" and integer_index(node) is not None \
                and self.tensor(node.value.value) is not None:
            return True
        if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.MatrixMultiply):
            return self._is_python_integer(node.left) and self._is_python_integer(node.right)
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            return bool(bindings) and all(
                b.kind is BindingKind.FOR and b.iterates and not b.path and isinstance(b.value, cst.Call)
                and isinstance(b.value.func, cst.Name) and b.value.func.value == "range"
                and not self.model.resolve(b.value.func)
                for b in bindings)
        return False

    def _binary(self, node: cst.BinaryOperation) -> Optional[Value]:
        # `a + b + c + ...` nests to the left; walk the chain instead of recursing down it.
        operands: list[cst.BaseExpression] = []
        matmul = False
        current: cst.BaseExpression = node
        while True:
            operands.append(current.right)
            matmul = matmul or isinstance(current.operator, cst.MatrixMultiply)
            current = current.left
            if not isinstance(current, cst.BinaryOperation) or current.lpar:
                break
        operands.append(current)
        operands.reverse()
        values = [self.infer(operand) for operand in operands]
        sequences = [v for operand, v in zip(operands, values)
                     if isinstance(operand, (cst.List, cst.Tuple, cst.ListComp))
                     or (v is not None and v.kind in (Kind.SEQUENCE, Kind.TUPLE))]
        if sequences and not matmul:
            # `[0] * n`, `xs + [pad] * (n - len(xs))`: a Python list or tuple, even where `n`
            # is a 0-dim tensor (a list repeats itself `n.__index__()` times).
            first = sequences[0]
            return sequence_of(first.element if first is not None and first.kind is Kind.SEQUENCE else None)
        tensors = [v for v in values if v is not None and v.kind is Kind.TENSOR]
        if tensors:
            numbers = [self._documented_number(operand) if v is None else None for v, operand in zip(values, operands)]
            values = [OTHER if number is not None else v for v, number in zip(values, numbers)]
            others = [v for v in values if v is None or v.kind is not Kind.TENSOR]
            scalar = (
                all(t.scalar for t in tensors)
                and all(v is not None and v.kind is Kind.OTHER for v in others)
                and not matmul
            )
            result = Value(Kind.TENSOR, tensors[0].why).in_graph(_attached(tensors))
            documented = next((number for number in numbers if number is not None), None)
            if documented is not None:
                result = replace(result, why=result.why + (documented,))
            if scalar:
                return result.with_scalar(tensors[0].scalar_why)
            if not matmul and all(v is not None and v.kind is Kind.OTHER for v in others) \
                    and all(t.dims_at_most is not None or t.scalar for t in tensors):
                # Broadcasting: as many dimensions as the widest operand (`coords[:, 0] - size // 2`).
                return result.keeping_dims_of(max(tensors, key=lambda t: 0 if t.scalar else t.dims_at_most))
            return result
        if any(v is not None and v.kind is Kind.NDARRAY for v in values):
            return NDARRAY
        if all(v is not None and v.kind is Kind.OTHER for v in values):
            return OTHER
        return None

    def _unary(self, node: cst.UnaryOperation) -> Optional[Value]:
        if isinstance(node.operator, cst.Not):
            return OTHER
        return self.infer(node.expression)

    def _comparison(self, node: cst.Comparison) -> Optional[Value]:
        for target in node.comparisons:
            if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                return OTHER
        operands = [node.left] + [target.comparator for target in node.comparisons]
        for operand in operands:
            value = self.infer(operand)
            if value is not None and value.kind is Kind.TENSOR:
                return Value(Kind.TENSOR, value.why).in_graph(False, True)  # booleans: no gradient
        return None

    def _sequence_literal(self, node) -> Optional[Value]:
        if any(isinstance(element, cst.StarredElement) for element in node.elements):
            return sequence_of(combine(self.infer(element.value) for element in node.elements))
        return Value(Kind.TUPLE, items=tuple(self.infer(element.value) for element in node.elements))

    def _dict_literal(self, node: cst.Dict) -> Value:
        values = [self.infer(element.value) for element in node.elements if isinstance(element, cst.DictElement)]
        return Value(Kind.DICT, element=combine(values))


def _argument_names(function: FunctionInfo) -> Optional[list[str]]:
    """The names of the positional parameters a call's arguments fill (no ``self``), for a
    function whose returns are known; None for a generator or a body not read."""
    if function.is_generator or not function.returns or function.scope is None:
        return None
    params = function.positional_params()
    if function.kind in ("method", "classmethod", "property"):
        params = params[1:]
    return [p.name.value for p in params]


def _argument(call: cst.Call, name: str, index: int) -> Optional[cst.BaseExpression]:
    """What ``call`` passes for the parameter ``name`` at position ``index`` (None: nothing,
    or a ``*args`` before it hides what)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    if index < 0:
        return None
    for position, arg in enumerate(call.args):
        if arg.star or arg.keyword is not None:
            return None
        if position == index:
            return arg.value
    return None


def _starts_from_number(value: Optional[Value]) -> bool:
    """A running total's first value: a number (``total = 0``), known not to be a tensor."""
    return value is not None and value.kind is Kind.OTHER


def _elementwise(statement: Optional[cst.CSTNode]) -> bool:
    """``+=``, ``-=``, ``*=``, ``/=``: the result has the shape of the operands broadcast."""
    return isinstance(statement, cst.AugAssign) and isinstance(
        statement.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign))


def _attached(values: list[Value]) -> Optional[bool]:
    """In the graph if any of these tensors is; out of it if all are known to be out."""
    if any(value.attached for value in values):
        return True
    if values and all(value.attached is False for value in values):
        return False
    return None


def _constant_key(node: cst.Subscript) -> Optional[str]:
    """``'loss'`` of ``state['loss']``: the one index, a constant string."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    key = node.slice[0].slice.value
    if isinstance(key, cst.SimpleString):
        value = key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _names_a_loss(name: str) -> bool:
    """`criterion`, `loss_fn`, `self._loss`, `compute_loss`: a callable named for a loss."""
    name = name.strip("_").lower()
    return name in _LOSS_CALLABLE_NAMES or name.endswith("loss")


# What a `settle` function of `_nearest` returns to look further up.
_UP = object()


def _nearest(memo: dict, node: cst.CSTNode, settle):
    """The answer of ``settle(ancestor, child)`` for the nearest ancestor of ``node`` for
    which it is not ``_UP`` (None past the root), remembered for every node passed."""
    def step(child: cst.CSTNode):
        ancestor = child.parent
        if ancestor is None:
            return None, None
        answer = settle(ancestor, child)
        return (ancestor, None) if answer is _UP else (None, answer)

    return settle_upward(memo, node, step)


class _Negated:
    """The test of an ``if`` whose ``else`` branch a node is in: it did not hold there."""

    __slots__ = ("test",)

    def __init__(self, test: cst.BaseExpression):
        self.test = test


def _guard(ancestor: cst.CSTNode, child: cst.CSTNode):
    """(the test, the node it guards) when ``child`` runs only where ``ancestor``'s test held."""
    if isinstance(ancestor, (cst.If, cst.While, cst.IfExp)) and child is ancestor.body:
        return ancestor.test, ancestor
    if isinstance(ancestor, (cst.If, cst.IfExp)) and child is ancestor.orelse:
        return _Negated(ancestor.test), ancestor
    if isinstance(ancestor, cst.BooleanOperation) and isinstance(ancestor.operator, cst.And) \
            and child is ancestor.right:
        return ancestor.left, ancestor
    if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        return None
    return _UP


def _function(ancestor: cst.CSTNode, child: cst.CSTNode):
    return ancestor if isinstance(ancestor, cst.FunctionDef) else _UP


def _rewrite_why(value: Value, why: tuple[Step, ...]) -> Value:
    """``value`` (and the values inside it) with ``why`` as their evidence."""
    return replace(
        value,
        why=why if value.why or value.kind is not Kind.OTHER else (),
        scalar_why=why[0] if value.scalar else None,
        element=_rewrite_why(value.element, why) if value.element is not None else None,
        items=tuple(_rewrite_why(item, why) if item is not None else None for item in value.items),
    )


def _inside(container: Value, element: Optional[Value]) -> Optional[Value]:
    """An element taken out of a container, with the container's evidence in front."""
    if element is None or not container.why or element.kind is not Kind.TENSOR:
        return element
    return replace(element, why=container.why + element.why)


def element_of(value: Optional[Value]) -> Optional[Value]:
    """What iterating over ``value`` yields."""
    if value is None:
        return None
    kind = value.kind
    if kind is Kind.SEQUENCE:
        return _inside(value, value.element)
    if kind is Kind.TUPLE:
        return _inside(value, combine(value.items))
    if kind is Kind.TENSOR:
        return value.less_dims(1)
    if kind is Kind.MODULE:
        if value.qualname in _PARAMETER_CONTAINERS:
            return Value(Kind.TENSOR, value.why)
        if value.element is not None:
            return value.element  # a ModuleList of instances of one class of the file
        return Value(Kind.MODULE, value.why)  # iterating nn.Sequential / nn.ModuleList
    if kind is Kind.NDARRAY:
        return NDARRAY
    if kind is Kind.DICT:
        return OTHER  # keys
    return None


def unpack(value: Optional[Value], path: tuple[Optional[int], ...]) -> Optional[Value]:
    """The part of ``value`` a tuple target at ``path`` receives."""
    for index in path:
        if value is None:
            return None
        if index is None:
            return None  # starred: a list of the remaining elements
        kind = value.kind
        if kind is Kind.TUPLE:
            value = _inside(value, value.items[index]) if index < len(value.items) else None
        elif kind in (Kind.SEQUENCE, Kind.TENSOR, Kind.NDARRAY, Kind.MODULE):
            value = element_of(value)
        elif kind in (Kind.DICT, Kind.OTHER):
            value = OTHER  # a dict's keys; what a size, a number or a string holds
        else:
            return None
    return value


def _asks_one_dimension(call: Optional[cst.CSTNode], method: cst.Attribute) -> bool:
    """`x.size(0)`, `x.size(-1)`, `x.size(dim=1)`: only a tensor's `size` takes a dimension."""
    if not isinstance(call, cst.Call) or call.func is not method or len(call.args) != 1:
        return False
    arg = call.args[0]
    if arg.star or (arg.keyword is not None and arg.keyword.value != "dim"):
        return False
    return _is_integer(arg.value)


def _passes_sizes(call: Optional[cst.CSTNode], method: cst.Attribute) -> bool:
    """`x.view(n, -1)`, `x.view(-1)`, `x.view(b, c, h * w)`: sizes, with at least one integer among them
    (numpy's `view(dtype, type)` takes neither)."""
    if not isinstance(call, cst.Call) or call.func is not method or not call.args:
        return False
    if any(arg.star or arg.keyword is not None for arg in call.args):
        return False
    return any(_is_integer(arg.value) for arg in call.args) and (
        len(call.args) >= 2 or looks_like_size(call.args[0].value))


def _reduces_one_dimension(call: cst.Call, positional_before_dim: int) -> bool:
    """``x.sum(1)``, ``torch.mean(x, dim=0)``: one integer dimension, not kept."""
    if any(arg.star for arg in call.args) or is_true(keyword(call, "keepdim")):
        return False
    positional = [arg.value for arg in call.args if arg.keyword is None]
    named = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in ("dim", "axis")]
    if named:
        dims = named if len(positional) == positional_before_dim else []
    else:
        dims = positional[positional_before_dim:] if len(positional) == positional_before_dim + 1 else []
    return len(dims) == 1 and _is_integer(dims[0])


def _one_dimension_less(result: Value, reduced: Value) -> Value:
    if reduced.dims_at_most is None or reduced.dims_why is None:
        return result
    return result.with_dims_at_most(reduced.dims_at_most - 1, reduced.dims_why)


def _with_given_sizes(result: Value, call: cst.Call) -> Value:
    """``torch.zeros(3, 4)``, ``x.view(b, -1)``, ``x.view(-1)``: as many dimensions as sizes
    given (one argument that is not an integer literal may be a whole shape)."""
    if any(arg.keyword is not None for arg in call.args[:1]) or any(arg.star for arg in call.args):
        return result
    count = sum(1 for arg in call.args if arg.keyword is None)
    if count == 0 or (count == 1 and not _is_integer(call.args[0].value)):
        return result
    return result.with_dims_at_most(count, Step(call, f"`{{code}}` has {count} dimension"
                                                      f"{'s' if count > 1 else ''}, one per size given"))


def _is_integer(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


_BUILTIN_NAMES = frozenset(dir(builtins))


def _call_shape(call: cst.Call) -> tuple[int, tuple[str, ...]]:
    """How a call passes its arguments: how many by position, and which keywords."""
    return (sum(1 for arg in call.args if arg.keyword is None),
            tuple(sorted(arg.keyword.value for arg in call.args if arg.keyword is not None)))
