"""A fast, iterative traversal of a libcst tree in evaluation order.

libcst's own visitor rebuilds every node it passes (``_visit_and_replace_children``),
which costs about as much as parsing.  This walk reads the dataclass fields directly,
skips pure syntax trivia (whitespace, commas, parentheses) and never recurses, so
deeply nested expressions cannot overflow the Python stack.

Children come in the order Python evaluates them where that matters for flow
analysis: the value of an assignment before its targets, the iterable of a ``for``
before its target, the ``for`` clauses of a comprehension before its element.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Iterable, Optional

import libcst as cst

CSTNode = cst.CSTNode

# Fields that only hold whitespace, punctuation, operators or plain strings.
_TRIVIA_FIELD = re.compile(
    r"^(whitespace.*|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon|"
    r"leading_lines|leading_whitespace|trailing_whitespace|header|footer|"
    r"lines_after_decorators|equal|colon|first_colon|second_colon|star|dot|"
    r"operator|asynchronous|indent|encoding|default_indent|default_newline|"
    r"has_trailing_newline|start|end|conversion|newline|relative)$"
)

# Evaluation order (and the fields that are not expressions worth visiting).
_FIELD_ORDER: dict[type, tuple[str, ...]] = {
    cst.Assign: ("value", "targets"),
    cst.AugAssign: ("value", "target"),
    cst.AnnAssign: ("annotation", "value", "target"),
    cst.NamedExpr: ("value", "target"),
    cst.For: ("iter", "target", "body", "orelse"),
    cst.CompFor: ("iter", "target", "ifs", "inner_for_in"),
    cst.ListComp: ("for_in", "elt"),
    cst.SetComp: ("for_in", "elt"),
    cst.GeneratorExp: ("for_in", "elt"),
    cst.DictComp: ("for_in", "key", "value"),
    cst.FunctionDef: ("decorators", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "bases", "keywords", "body"),
    cst.Lambda: ("params", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    # `x.attr`: the attribute name is not a reference to anything.
    cst.Attribute: ("value",),
    # A parameter's name is bound by the scope analysis, not visited as a reference.
    cst.Param: ("annotation", "default"),
    cst.Arg: ("value",),
    cst.Decorator: ("decorator",),
    # Import statements are inspected as a whole by whoever needs them.
    cst.Import: (),
    cst.ImportFrom: (),
    cst.Global: (),
    cst.Nonlocal: (),
    cst.Name: (),
    cst.Integer: (),
    cst.Float: (),
    cst.Imaginary: (),
    cst.SimpleString: (),
}

_fields_cache: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    fields = _fields_cache.get(cls)
    if fields is None:
        fields = _FIELD_ORDER.get(cls)
        if fields is None:
            fields = tuple(
                f.name for f in dataclasses.fields(cls) if not _TRIVIA_FIELD.match(f.name)
            )
        _fields_cache[cls] = fields
    return fields


def children(node: CSTNode) -> list[CSTNode]:
    """The semantically interesting children of ``node``, in evaluation order."""
    result: list[CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            result.append(value)
        elif type(value) is tuple or type(value) is list:
            result.extend(v for v in value if isinstance(v, CSTNode))
    return result


Enter = Callable[[CSTNode, Optional[CSTNode]], None]
Leave = Callable[[CSTNode], None]

_LEAVE = object()


def walk(
    root: CSTNode,
    enter: Enter,
    leave: Optional[Leave] = None,
    parents: Optional[dict[int, CSTNode]] = None,
) -> None:
    """Visit ``root`` and its descendants depth-first in evaluation order.

    ``enter(node, parent)`` runs before a node's children, ``leave(node)`` after them.
    When ``parents`` is given it is filled with ``id(child) -> parent``.
    """
    stack: list = [(root, None)]
    pop = stack.pop
    push = stack.append
    fields_cache = _fields_cache
    while stack:
        node, parent = pop()
        if parent is _LEAVE:
            leave(node)  # type: ignore[misc]
            continue
        enter(node, parent)
        if leave is not None:
            push((node, _LEAVE))
        fields = fields_cache.get(type(node)) or _fields(type(node))
        # Push in reverse so that the first child is visited first.
        for name in reversed(fields):
            value = getattr(node, name)
            if isinstance(value, CSTNode):
                if parents is not None:
                    parents[id(value)] = node
                push((value, node))
            elif type(value) is tuple or type(value) is list:
                for child in reversed(value):
                    if isinstance(child, CSTNode):
                        if parents is not None:
                            parents[id(child)] = node
                        push((child, node))


def iter_nodes(root: CSTNode) -> Iterable[CSTNode]:
    """Every node below ``root`` (inclusive), in evaluation order."""
    found: list[CSTNode] = []
    walk(root, lambda node, parent: found.append(node))
    return found
