"""Functional dropouts in a module's forward that do not follow the module's mode.

``nn.Dropout`` reads the module's ``training`` flag, which ``model.eval()`` turns off; the
functions torch drops with take that flag as an argument, or not at all:

    def forward(self, x):
        x = F.dropout(x, self.p)                         # `training` defaults to True
        x = torch.dropout(x, self.p, True)               # `train` given as True
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p)  # no switch: drops whenever p > 0

Each drops at random after ``model.eval()`` as in training.  Which functions drop, the
argument that gives their rate and the one that switches them on (with its default) are
facts of the torch facts table (``torch_facts.dropout``), read from torch itself.

Looked at: the methods of each ``nn.Module`` subclass of the file that its ``forward``
runs (``forward`` and the methods it calls on ``self``, and theirs).  Left alone, as written
to follow the mode or decided elsewhere: a switch given anything but a literal True (a
literal True where True is the default is written on purpose: Monte Carlo dropout), a
rate that is literally 0 (also an attribute only ever set to 0, or a constructor argument
every construction of the class in the file gives 0), a rate that reads the mode
(``p if self.training else 0.0``), that the method is handed (its caller decides) or that
is set outside ``__init__`` or from outside the class, a call under an
``if``/conditional expression that tests the mode (or after one that returns), and a call
given ``*args``/``**kwargs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import keyword, positional_args
from torchlint.syntax.walk import children, is_descendant, iter_nodes
from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import BindingKind, ClassInfo, FunctionInfo, instance_attribute_assignments
from torchlint.analysis.values import Kind

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

# Names that say which mode the code runs in: `self.training` (the flag `train()`/`eval()` set
# on every module), a `train`/`is_training`/`eval_mode`/`deterministic` flag of the user's.
_MODE_WORD = re.compile(r"train|eval|infer|determinis|stochastic", re.IGNORECASE)
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


@dataclass(frozen=True)
class ModeBlindDropout:
    """``call`` (of the torch function ``function``) drops at random in the method ``method``
    of the module class ``cls``, which ``forward`` runs through ``via`` (the ``self.<m>(..)``
    calls from ``forward`` on, empty in ``forward`` itself), whatever the module's mode."""

    call: cst.Call
    function: str  # torch.nn.functional.dropout
    dropout: torch_facts.Dropout
    cls: ClassInfo
    method: FunctionInfo
    via: tuple[cst.Call, ...]
    # How it ignores the mode: "default" (the switch left out, its default True),
    # "given" (the switch a literal True where it has no default: `torch.dropout(x, p, True)`)
    # or "none" (no switch: `dropout_p` of `scaled_dot_product_attention`).
    how: str
    switch: Optional[cst.BaseExpression]  # the literal True given ("given")
    rate: Optional[cst.BaseExpression]  # the rate as written (None: its default)
    rate_set: Optional[cst.CSTNode]  # where the attribute the rate reads is set (`self.p = p` in __init__)

    @property
    def self_name(self) -> str:
        return self.method.self_name or "self"


def mode_blind_dropouts(analysis: "ModuleAnalysis") -> list[ModeBlindDropout]:
    if "forward" not in analysis.text or not _may_call_dropout(analysis.text):
        return []
    found: list[ModeBlindDropout] = []
    calls = _CallsOnce()
    for cls in analysis.model.classes.values():
        if cls.model is not analysis.model or "forward" not in cls.methods:
            continue
        base = analysis.inference.torch_base(cls)
        if base is None or not torch_api.is_module_class(torch_api.normalize(base)):
            continue
        for method, via in _run_by_forward(analysis, cls, calls):
            for call in calls(method):
                blind = _blind(analysis, cls, method, via, call)
                if blind is not None:
                    found.append(blind)
    found.sort(key=lambda blind: blind.call.start)
    return found


def _run_by_forward(analysis: "ModuleAnalysis", cls: ClassInfo,
                    calls: "_CallsOnce") -> list[tuple[FunctionInfo, tuple[cst.Call, ...]]]:
    """``forward`` and the methods of the class it calls on ``self`` (and they call), each
    with the calls that lead there, once each (the first way found)."""
    forward = cls.methods["forward"]
    reached = [(forward, ())]
    seen = {id(forward)}
    index = 0
    while index < len(reached):
        method, via = reached[index]
        index += 1
        if method.kind != "method" or not method.self_name:
            continue
        for call in calls(method):
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value == method.self_name:
                callee = cls.methods.get(func.attr.value)
                if callee is not None and id(callee) not in seen and isinstance(callee.node, cst.FunctionDef) \
                        and not _mode_gated(call, method):
                    seen.add(id(callee))
                    reached.append((callee, via + (call,)))
    return [(method, via) for method, via in reached if method.kind == "method" and method.self_name]


@lru_cache(maxsize=None)
def _dropout_text() -> "re.Pattern[str]":
    names = "|".join(sorted({re.escape(qualname.rsplit(".", 1)[1]) for qualname in torch_facts.dropouts()}))
    return re.compile(rf"\b(?:{names})\s*\(|\bimport\b(?:[^\n(]*|\s*\([^)]*)\b(?:{names})\b")


def _may_call_dropout(text: str) -> bool:
    """Whether the file calls a function named as torch's dropouts are (or imports one): most
    files that mention dropout hold `nn.Dropout` layers only, and their methods need no walk."""
    return _dropout_text().search(text) is not None


class _CallsOnce:
    """``_calls`` of each method, walked once: a method is searched for the methods it calls
    and again for its dropout calls."""

    def __init__(self):
        self._known: dict[int, list[cst.Call]] = {}

    def __call__(self, method: FunctionInfo) -> list[cst.Call]:
        known = self._known.get(id(method))
        if known is None:
            known = self._known[id(method)] = _calls(method)
        return known


def _calls(method: FunctionInfo) -> list[cst.Call]:
    """The calls in the body of ``method``, not in the functions, lambdas or classes it defines."""
    method.model.materialize(method)
    found = []
    stack: list[cst.CSTNode] = [method.node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED):
            continue
        if isinstance(node, cst.Call):
            found.append(node)
        stack.extend(children(node))
    found.sort(key=lambda call: call.start)
    return found


def _blind(analysis: "ModuleAnalysis", cls: ClassInfo, method: FunctionInfo, via: tuple[cst.Call, ...],
           call: cst.Call) -> Optional[ModeBlindDropout]:
    qualname = analysis.inference.qualname(call.func)
    if qualname is None:
        return None
    qualname = torch_api.normalize(qualname)
    dropout = torch_facts.dropout(qualname)
    if dropout is None or any(arg.star for arg in call.args):
        return None  # `*args`/`**kwargs` may carry the switch
    switch = dropout.switch
    given = _argument(call, switch) if switch is not None else None
    if switch is None:
        how = "none"
    elif given is None:
        if switch.default != "1":
            return None  # off unless switched on (`F.alpha_dropout`'s `training=False`)
        how = "default"
    elif _is_true(given) and switch.default is None:
        how = "given"  # `torch.dropout(x, p, True)`: the argument must be given, and True was
    else:
        return None  # follows whatever it is given (`self.training`, a flag), or True on purpose
    rate = _argument(call, dropout.rate)
    rate_set: Optional[cst.CSTNode] = None
    if rate is None:
        if _zero_text(dropout.rate.default):
            return None
    else:
        judged = _rate(analysis, rate, method, cls, 0)
        if judged is None:
            return None
        rate_set = judged if isinstance(judged, cst.CSTNode) else None
    if _mode_gated(call, method):
        return None
    return ModeBlindDropout(call, qualname, dropout, cls, method, via, how, given, rate, rate_set)


def _argument(call: cst.Call, argument: torch_facts.Argument) -> Optional[cst.BaseExpression]:
    found = keyword(call, argument.name)
    if found is None and argument.position is not None:
        positional = positional_args(call)
        if argument.position < len(positional):
            found = positional[argument.position].value
    return found


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _zero_text(text: Optional[str]) -> bool:
    try:
        return text is not None and float(text) == 0
    except ValueError:
        return False


def _zero(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, (cst.Integer, cst.Float)) and _zero_text(node.value.replace("_", ""))


def _reads_mode(node: cst.CSTNode) -> bool:
    """``node`` reads the mode (``self.training``, a ``train``/``is_training`` flag) or decides
    between values (a conditional expression: the author gates the rate)."""
    return any(isinstance(sub, cst.IfExp) or isinstance(sub, cst.Attribute) and _MODE_WORD.search(sub.attr.value)
               or isinstance(sub, cst.Name) and _MODE_WORD.search(sub.value) for sub in iter_nodes(node))


def _rate(analysis: "ModuleAnalysis", rate: cst.BaseExpression, method: FunctionInfo, cls: ClassInfo, depth: int):
    """None when the rate as written may be 0 or follow the mode (literally 0, read from the
    mode, handed to the method, set elsewhere than in ``__init__``, 0 in every construction of
    the class in the file); else True, or the assignment of the attribute it reads (evidence)."""
    if _zero(rate) or _reads_mode(rate) or depth > 6:
        return None
    if isinstance(rate, cst.Name):
        bindings = analysis.model.resolve(rate)
        if any(binding.kind is BindingKind.PARAM for binding in bindings):
            return None  # handed to the method: its caller decides
        for binding in bindings:
            if binding.kind is not BindingKind.ASSIGN or binding.path or binding.value is None:
                return None  # a loop target, an unpacking
            if _rate(analysis, binding.value, method, cls, depth + 1) is None:
                return None
        return True if _may_be_nonzero(analysis, rate, depth) else None
    if isinstance(rate, cst.Attribute) and isinstance(rate.value, cst.Name) and rate.value.value == method.self_name:
        name = rate.attr.value
        if _set_elsewhere(analysis, cls, name):
            return None  # `model.attn.p = 0.0`: the file sets it from outside
        assignments = instance_attribute_assignments(analysis.model, rate)
        if not assignments:
            return _class_value(cls, name)
        for assignment in assignments:
            if assignment.function.name != "__init__" or assignment.value is None or assignment.path:
                return None  # switched elsewhere (`eval()` overridden, a `set_dropout`)
            if _reads_mode(assignment.value) or not _may_be_nonzero(analysis, assignment.value, depth + 1):
                return None
        return assignments[0].node
    return True if _may_be_nonzero(analysis, rate, depth) else None


def _may_be_nonzero(analysis: "ModuleAnalysis", value: cst.BaseExpression, depth: int) -> bool:
    """Whether ``value`` may be a rate above 0 as far as the file shows: False for a literal 0,
    a name only ever bound to 0, a parameter every call of its function (or construction of
    its class) in the file gives 0 or leaves at a default of 0 (``Block(drop=drop_rate)`` in a
    model built with ``drop_rate=0.0``), an attribute the file also sets from outside
    (``config.dropout = 0.0``).  A function or class the file never calls may be given any
    rate."""
    if _zero(value):
        return False
    if depth > 8:
        return True
    if _reads_mode(value):
        return False
    if isinstance(value, cst.Attribute):
        return not _assigned_outside(analysis, value)
    if not isinstance(value, cst.Name):
        return True
    bindings = analysis.model.resolve(value)
    if not bindings:
        return True
    for binding in bindings:
        if binding.kind is BindingKind.PARAM:
            given = _passed(analysis, binding)
            if given is None or any(item is None or _may_be_nonzero(analysis, item, depth + 1) for item in given):
                return True
        elif binding.kind is BindingKind.ASSIGN and not binding.path and binding.value is not None:
            if _may_be_nonzero(analysis, binding.value, depth + 1):
                return True
        else:
            return True
    return False


def _assigned_outside(analysis: "ModuleAnalysis", attribute: cst.Attribute) -> bool:
    """``config.dropout`` of a ``config`` the file also assigns ``.dropout`` of (``cfg.dropout =
    0.0`` before building the model for evaluation): the file decides the rate."""
    name = attribute.attr.value
    for target in analysis.nodes_of(cst.AssignTarget, cst.AugAssign):
        node = target.target
        if isinstance(node, cst.Attribute) and node.attr.value == name and node is not attribute \
                and not (isinstance(node.value, cst.Name) and node.value.value in ("self", "cls")):
            return True
    return False


def _passed(analysis: "ModuleAnalysis", binding) -> Optional[list]:
    """What the calls of this file pass for the parameter ``binding`` of a function (or of a
    class's ``__init__``), its default where a call leaves it out (None in the list where it
    has none); None when no call of the file is seen or one hands over ``*args``/``**kwargs``."""
    function = binding.scope.function if binding.scope is not None else None
    if function is None or binding.param_index < 0:
        return None
    given: list = []
    for call in analysis.nodes_of(cst.Call):
        value = analysis.inference.infer(call.func)
        if value is None:
            continue
        constructs = value.kind is Kind.CLASS and function.name == "__init__" and value.cls is function.cls \
            and function.cls is not None
        if not constructs and not (value.kind is Kind.FUNCTION and value.function is function):
            continue
        if any(arg.star for arg in call.args):
            return None
        argument = analysis.inference.passed_argument(call, function, binding.node)
        given.append(argument if argument is not None else binding.node.default)
    return given or None


def _set_elsewhere(analysis: "ModuleAnalysis", cls: ClassInfo, name: str) -> bool:
    """The attribute ``name`` is set outside the class (``model.attn.p = 0.0``,
    ``setattr(m, "p", 0)``): the rate is the file's to decide."""
    if re.search(rf"""setattr\([^)]*['"]{re.escape(name)}['"]""", analysis.text):
        return True
    for target in analysis.nodes_of(cst.AssignTarget, cst.AugAssign):
        node = target.target
        if isinstance(node, cst.Attribute) and node.attr.value == name and not is_descendant(node, cls.node):
            return True
    return False


def _class_value(cls: ClassInfo, name: str):
    """A rate read from the class body (``p = 0.1`` there): None when it may be 0."""
    bindings = cls.scope.bindings.get(name, ()) if cls.scope is not None else ()
    if not bindings:
        return None  # nothing of this class sets it: inherited, or set from outside
    for binding in bindings:
        if binding.kind is not BindingKind.ASSIGN or binding.value is None or _zero(binding.value) \
                or _reads_mode(binding.value):
            return None
    return bindings[0].node


def _mode_gated(node: cst.CSTNode, method: FunctionInfo) -> bool:
    """``node`` runs only in one mode: under an ``if``/``while``/conditional expression that
    reads the mode, or after an ``if`` of the method that reads it and leaves (``return``,
    ``raise``)."""
    body = method.node.body
    child: cst.CSTNode = node
    parent = getattr(node, "parent", None)
    while parent is not None and parent is not body:
        if isinstance(parent, (cst.If, cst.While)) and child is not parent.test and _reads_mode(parent.test):
            return True
        if isinstance(parent, cst.IfExp) and child is not parent.test and _reads_mode(parent.test):
            return True
        if isinstance(parent, cst.BooleanOperation) and child is parent.right and _reads_mode(parent.left):
            return True  # `self.training and F.dropout(..)`
        child, parent = parent, getattr(parent, "parent", None)
    for statement in iter_nodes(body):
        if isinstance(statement, cst.If) and statement.end <= node.start and _reads_mode(statement.test) \
                and not is_descendant(node, statement) \
                and any(isinstance(sub, (cst.Return, cst.Raise)) for sub in iter_nodes(statement.body)):
            return True
    return False
