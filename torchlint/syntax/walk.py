"""A fast, iterative traversal of a syntax tree (torchlint/syntax/cst.py) in evaluation order.

Each node class lists its child fields in ``_fields``; the walk reads them directly and
never recurses, so deeply nested expressions cannot overflow the Python stack.

Children come in the order Python evaluates them where that matters for flow
analysis: the value of an assignment before its targets, the iterable of a ``for``
before its target, the ``for`` clauses of a comprehension before its element.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterable, Iterator, Optional

from torchlint.syntax import cst

CSTNode = cst.CSTNode


def children(node: CSTNode) -> list[CSTNode]:
    """The semantically interesting children of ``node``, in evaluation order."""
    result: list[CSTNode] = []
    cls = type(node)
    try:
        getter = _CHILD_GETTERS[cls]
    except KeyError:
        getter = _child_getter(cls)
    nodes, others = _NODE_CLASSES, _OTHER_CLASSES
    for value in reversed(getter(node)):
        kind = type(value)
        if kind is tuple or kind is list:
            for child in value:
                kind = type(child)
                if kind in nodes or kind not in others and _is_node_class(kind):
                    result.append(child)
        elif kind in nodes or kind not in others and _is_node_class(kind):
            result.append(value)
    return result


Enter = Callable[[CSTNode, Optional[CSTNode]], None]
Leave = Callable[[CSTNode], None]

_LEAVE = object()

# Per node class: one call that reads all its child fields, last first (pushed so that the
# first is visited first). A class with fewer than two fields reads `__class__` besides,
# so that the getter always gives a tuple; a class is never a node, so the walk skips it.
_CHILD_GETTERS: dict[type, Callable[[CSTNode], tuple]] = {}
# The classes of the values met in child fields, sorted once each: nodes, and the rest
# (strings, numbers, None, the classes the getters read); lists and tuples are opened.
_NODE_CLASSES: set[type] = set()
_OTHER_CLASSES: set[type] = {str, int, float, bool, bytes, type(None), type}


def _child_getter(cls: type) -> Callable[[CSTNode], tuple]:
    """The first node of ``cls`` met: its getter, kept (the walks read the table
    themselves, a call per node costing what the table saves)."""
    fields = tuple(reversed(cls._fields))
    if len(fields) < 2:
        fields = fields + ("__class__",) * (2 - len(fields))
    getter = _CHILD_GETTERS[cls] = operator.attrgetter(*fields)
    return getter


def _is_node_class(cls: type) -> bool:
    """The first value of ``cls`` met in a child field: whether it is a node, kept."""
    if issubclass(cls, CSTNode):
        _NODE_CLASSES.add(cls)
        return True
    _OTHER_CLASSES.add(cls)
    return False


def walk(
    root: CSTNode,
    enter: Enter,
    leave: Optional[Leave] = None,
    link_parents: bool = False,
) -> None:
    """Visit ``root`` and its descendants depth-first in evaluation order.

    ``enter(node, parent)`` runs before a node's children, ``leave(node)`` after them.
    With ``link_parents``, each child's ``parent`` is set to the node it hangs from.
    """
    stack: list = [(root, None)]
    pop = stack.pop
    push = stack.append
    getters = _CHILD_GETTERS
    nodes = _NODE_CLASSES
    others = _OTHER_CLASSES
    while stack:
        node, parent = pop()
        if parent is _LEAVE:
            leave(node)  # type: ignore[misc]
            continue
        enter(node, parent)
        if leave is not None:
            push((node, _LEAVE))
        cls = type(node)
        try:
            getter = getters[cls]
        except KeyError:
            getter = _child_getter(cls)
        for value in getter(node):
            kind = type(value)
            if kind is tuple or kind is list:
                for child in reversed(value):
                    kind = type(child)
                    if kind in nodes or kind not in others and _is_node_class(kind):
                        if link_parents:
                            child.parent = node
                        push((child, node))
            elif kind in nodes or kind not in others and _is_node_class(kind):
                if link_parents:
                    value.parent = node
                push((value, node))


def iter_nodes(root: CSTNode) -> Iterable[CSTNode]:
    """Every node below ``root`` (inclusive), in evaluation order."""
    # The rules and analyses ask for every node of a subtree thousands of times per file.
    # The semantic model's walk of a tree left the node and its descendants side by side in
    # its list (a preorder), and the node says where: a slice of that list.
    nodes = getattr(root, "walked_in", None)
    if nodes is not None:
        return nodes[root.span:root.span_end]
    # Else (a tree whose bodies were built lazily, a node made after the walk) a walk.
    found: list[CSTNode] = []
    keep = found.append
    walk(root, lambda node, parent: keep(node))
    return found


def ancestors(node: CSTNode) -> Iterator[CSTNode]:
    """The nodes above ``node`` (through ``parent`` links), nearest first."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def is_descendant(node: CSTNode, container: CSTNode) -> bool:
    """``node`` is ``container`` or below it (through ``parent`` links)."""
    current: Optional[CSTNode] = node
    while current is not None:
        if current is container:
            return True
        current = current.parent
    return False


def in_branch(node: CSTNode, container: CSTNode) -> bool:
    """``node`` is in a branch of ``container`` that may not run (an ``if``, a ``try``'s
    handler, a conditional expression, a short-circuit operand)."""
    current = node
    while current is not None and current is not container:
        parent = current.parent
        if isinstance(parent, (cst.If, cst.IfExp, cst.BooleanOperation, cst.ExceptHandler)) and current is not \
                getattr(parent, "test", None):
            return True
        current = parent
    return False


def enclosing_loops(node: CSTNode) -> list[CSTNode]:
    """The ``for``/``while`` loops whose body holds ``node``, in its function (or class, or
    module), innermost first: not a loop's `else`, nor its iterable."""
    found = []
    child, parent = node, node.parent
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
        if isinstance(parent, (cst.For, cst.While)) and child is parent.body:
            found.append(parent)
        child, parent = parent, parent.parent
    return found


def enclosing_code(node: CSTNode) -> Optional[CSTNode]:
    """The function, lambda or module whose code runs ``node``."""
    for ancestor in ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.Module)):
            return ancestor
    return None


def settle_upward(memo: dict, node: CSTNode, step: Callable[[CSTNode], tuple[Optional[CSTNode], object]]):
    """Follow ``step`` from ``node`` (``step(current)`` gives the next node to look at, or
    None and the answer) and return the answer.  ``memo`` keeps it for every node passed,
    by id, so that asking every node of a deep expression costs linear time in all."""
    passed = []
    current: Optional[CSTNode] = node
    answer = None
    while current is not None:
        key = id(current)
        if key in memo:
            answer = memo[key]
            break
        passed.append(key)
        current, answer = step(current)
    for key in passed:
        memo[key] = answer
    return answer
