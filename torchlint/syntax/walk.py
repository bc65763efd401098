"""A fast, iterative traversal of a syntax tree (torchlint/syntax/cst.py) in evaluation order.

Each node class lists its child fields in ``_fields``; the walk reads them directly and
never recurses, so deeply nested expressions cannot overflow the Python stack.

Children come in the order Python evaluates them where that matters for flow
analysis: the value of an assignment before its targets, the iterable of a ``for``
before its target, the ``for`` clauses of a comprehension before its element.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

from torchlint.syntax import cst

CSTNode = cst.CSTNode


def children(node: CSTNode) -> list[CSTNode]:
    """The semantically interesting children of ``node``, in evaluation order."""
    result: list[CSTNode] = []
    for name in type(node)._fields:
        value = getattr(node, name)
        if isinstance(value, CSTNode):
            result.append(value)
        elif type(value) is tuple or type(value) is list:
            result.extend(v for v in value if isinstance(v, CSTNode))
    return result


Enter = Callable[[CSTNode, Optional[CSTNode]], None]
Leave = Callable[[CSTNode], None]

_LEAVE = object()
# Per node class: its child fields in reverse, pushed so that the first is visited first.
_REVERSED_FIELDS: dict[type, tuple[str, ...]] = {}


def _learn_reversed_fields(cls: type) -> tuple[str, ...]:
    """The first node of ``cls`` met: its reversed fields, kept (the walks read the table
    themselves, a call per node costing what the table saves)."""
    fields = _REVERSED_FIELDS[cls] = tuple(reversed(cls._fields))
    return fields


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
    reversed_fields = _REVERSED_FIELDS
    while stack:
        node, parent = pop()
        if parent is _LEAVE:
            leave(node)  # type: ignore[misc]
            continue
        enter(node, parent)
        if leave is not None:
            push((node, _LEAVE))
        cls = type(node)
        fields = reversed_fields.get(cls)
        if fields is None:
            fields = _learn_reversed_fields(cls)
        for name in fields:
            value = getattr(node, name)
            if isinstance(value, CSTNode):
                if link_parents:
                    value.parent = node
                push((value, node))
            elif type(value) is tuple or type(value) is list:
                for child in reversed(value):
                    if isinstance(child, CSTNode):
                        if link_parents:
                            child.parent = node
                        push((child, node))


def iter_nodes(root: CSTNode) -> Iterable[CSTNode]:
    """Every node below ``root`` (inclusive), in evaluation order."""
    # `walk`'s loop without its callback and (node, parent) pairs: the rules and analyses
    # ask for every node of a subtree thousands of times per file.
    found: list[CSTNode] = []
    keep = found.append
    stack: list = [root]
    pop = stack.pop
    push = stack.append
    reversed_fields = _REVERSED_FIELDS
    while stack:
        node = pop()
        keep(node)
        cls = type(node)
        fields = reversed_fields.get(cls)
        if fields is None:
            fields = _learn_reversed_fields(cls)
        for name in fields:
            value = getattr(node, name)
            if isinstance(value, CSTNode):
                push(value)
            elif type(value) is tuple or type(value) is list:
                for child in reversed(value):
                    if isinstance(child, CSTNode):
                        push(child)
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
        if id(current) in memo:
            answer = memo[id(current)]
            break
        passed.append(current)
        current, answer = step(current)
    for passed_node in passed:
        memo[id(passed_node)] = answer
    return answer
