"""Small questions about syntax tree nodes that several modules ask."""

from __future__ import annotations

from typing import Callable, Optional, TypeVar

from torchlint.syntax import cst


def keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value passed as ``name=...`` to ``call``, if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def is_true(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_false(node: Optional[cst.BaseExpression]) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def requires_grad_switch(node: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, bool]]:
    """(the receiver, the flag) of ``x.requires_grad = True/False`` (one target) or
    ``x.requires_grad_()`` / ``x.requires_grad_(True/False)``; None for anything else,
    or where the flag is not a literal."""
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        attribute = node.targets[0].target
        if isinstance(attribute, cst.Attribute) and attribute.attr.value == "requires_grad" \
                and (is_true(node.value) or is_false(node.value)):
            return attribute.value, is_true(node.value)
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value == "requires_grad_":
        if not node.args:
            return node.func.value, True
        flag = node.args[0].value
        if len(node.args) == 1 and (is_true(flag) or is_false(flag)):
            return node.func.value, is_true(flag)
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def dotted(node: cst.CSTNode) -> str:
    """``a.b.c`` for a Name/Attribute chain, "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def called_name(func: cst.BaseExpression) -> str:
    """The last name of a call's function, ``f`` of ``f(..)`` and ``a.b.f(..)``; "" for
    anything else.  Rules compare it with their names before resolving any import."""
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def imported_module(node: cst.ImportFrom) -> Optional[str]:
    """The module of ``from torch.nn import init`` (None for a relative or star import)."""
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return None
    return dotted(node.module) or None


_SIZE_CALLS = frozenset({"size", "numel", "dim", "nelement"})


def looks_like_size(node: cst.BaseExpression) -> bool:
    """Integer literals, `len(..)`, `x.size(..)`, `x.shape`, and arithmetic on those."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.UnaryOperation):
        return looks_like_size(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return looks_like_size(node.left) and looks_like_size(node.right)
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name) and node.func.value == "len":
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value in _SIZE_CALLS
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    if isinstance(node, cst.Subscript):
        return isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
    return False


def integer_index(node: cst.Subscript) -> Optional[int]:
    """The integer of ``x[1]`` or ``x[-1]`` (one index, a literal), else None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    negative = False
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        negative = True
        value = value.expression
    if isinstance(value, cst.Integer):
        number = int(value.value, 0)
        return -number if negative else number
    return None


def tuple_element(value: Optional[cst.BaseExpression], path) -> Optional[cst.BaseExpression]:
    """The part of ``value`` that a target at ``path`` of a tuple assignment gets, when it
    is written out (``a, (b, c) = x, (y, z)``: ``z`` for the path ``(1, 1)``), or None."""
    for index in path:
        if index is None or not isinstance(value, (cst.Tuple, cst.List)) or index >= len(value.elements) \
                or isinstance(value.elements[index], cst.StarredElement):
            return None
        value = value.elements[index].value
    return value


Origin = TypeVar("Origin")


def decide_test(test: cst.BaseExpression, known: Callable[[str], Optional[tuple[bool, bool, Origin]]]
                ) -> Optional[tuple[bool, Origin]]:
    """The truth of an ``if`` test made of one name, when ``known(name)`` says what the name
    holds (is None, truthy, and what the caller keeps with it): ``p``, ``not p``, ``p is
    None``, ``p is not None``; with what ``known`` kept.  None: not decided."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decide_test(test.expression, known)
        return None if inner is None else (not inner[0], inner[1])
    if isinstance(test, cst.Name):
        value = known(test.value)
        return None if value is None else (value[1], value[2])
    if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)) \
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        value = known(test.left.value)
        if value is None:
            return None
        return (value[0] if isinstance(test.comparisons[0].operator, cst.Is) else not value[0]), value[2]
    return None
