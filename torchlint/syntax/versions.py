"""Syntax newer than the Python a project targets (``target-version``).

Python's own ``ast.parse(feature_version=...)`` is best-effort and checks different
constructs on different interpreters (3.13 no longer refuses ``f"{x=}"`` for 3.7), so
the answer would depend on the Python torchlint runs on.  This reads the tree ``ast``
builds on any of them and names each construct with the release that introduced it, as
ruff does for its ``target-version``.  A text is parsed only when a cheap search finds
something that could be such a construct.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Iterator, Optional

from torchlint.syntax.source import LINE_BREAK

# Oldest and newest releases a target may name (the ones whose syntax is told apart here).
OLDEST_TARGET = (3, 7)
NEWEST_TARGET = (3, 14)

# What could be one of the constructs below; a file with none of these is not parsed
# again.  Plain substring tests first, each regex anchored on a literal: a regex with
# alternatives and `^` would take most of a parse's time on every file.
_SUBSTRINGS = (
    ":=",                         # assignment expression (3.8)
    "=}", "= }", "=!", "=:",      # f"{x=}" (3.8)
    "except*", "except *",        # except* (3.11)
    "[*", "[ *", ": *",           # a[*b], *args: *Ts (3.11)
)
_PATTERNS = (
    re.compile(r"/\s*[,)]"),                                     # positional-only parameters (3.8)
    re.compile(r"\n[ \t]*@[ \t]*(?![\w.]+[ \t]*(?:\(|#|\r?\n))"),  # a decorator beyond `@a.b(...)` (3.9)
    re.compile(r"\n[ \t]*match[ \t(\[{]"),                       # match statement (3.10)
    re.compile(r"\n[ \t]*type[ \t]+\w"),                          # type alias (3.12)
    re.compile(r"def[ \t]+\w+[ \t]*\["),                          # type parameters (3.12, defaults 3.13)
    re.compile(r"class[ \t]+\w+[ \t]*\["),
)

_WITH = re.compile(r"with[ \t]*\(")  # parenthesized context managers (3.9), unless `startswith(`


def _may_have_newer_syntax(text: str) -> bool:
    return any(part in text for part in _SUBSTRINGS) or any(pattern.search(text) for pattern in _PATTERNS) \
        or text.lstrip().startswith(("@", "match", "type")) \
        or any(not text[max(0, found.start() - 1):found.start()].isidentifier() for found in _WITH.finditer(text))


@dataclass(frozen=True)
class NewerSyntax:
    construct: str  # "an assignment expression (`:=`)"
    since: tuple[int, int]
    row: int  # 1-based
    column: int  # 1-based

    @property
    def release(self) -> str:
        return f"{self.since[0]}.{self.since[1]}"


def newer_syntax(text: str, target: tuple[int, int]) -> list[NewerSyntax]:
    """The constructs in ``text`` that Python ``target`` does not have, in source order
    (the first of each kind per line); empty when the text does not parse here."""
    if not _may_have_newer_syntax(text):
        return []
    source = text[1:] if text.startswith("\ufeff") else text
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = LINE_BREAK.split(source)  # as ast numbers them: a form feed is no line break
    found = {}
    for construct, since, node in _constructs(tree, lines):
        if since > target:
            row = node.lineno
            column = len(_characters(lines[row - 1], 0, node.col_offset)) + 1 if row <= len(lines) else 1
            found.setdefault((row, construct), NewerSyntax(construct, since, row, column))
    return sorted(found.values(), key=lambda item: (item.row, item.column))


def _constructs(tree: ast.AST, lines: list[str]) -> Iterator[tuple[str, tuple[int, int], ast.AST]]:
    try_star = getattr(ast, "TryStar", None)
    type_alias = getattr(ast, "TypeAlias", None)
    match = getattr(ast, "Match", None)
    for node in ast.walk(tree):
        if isinstance(node, ast.NamedExpr):
            yield "an assignment expression (`:=`)", (3, 8), node
        elif isinstance(node, ast.arguments):
            if node.posonlyargs:
                yield "positional-only parameters (`/`)", (3, 8), node.posonlyargs[0]
            if node.vararg is not None and isinstance(node.vararg.annotation, ast.Starred):
                yield "a starred annotation (`*args: *Ts`)", (3, 11), node.vararg
        elif isinstance(node, ast.JoinedStr):
            if _self_documenting(node, lines):
                yield "a self-documenting f-string (`f\"{x=}\"`)", (3, 8), node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                if not _dotted_call(decorator):
                    yield "a decorator that is not a dotted name or its call", (3, 9), decorator
            parameters = getattr(node, "type_params", ())
            if parameters:
                yield "type parameters (`def f[T]`)", (3, 12), node
                if any(getattr(parameter, "default_value", None) is not None for parameter in parameters):
                    yield "a type parameter default (`[T = int]`)", (3, 13), node
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if _parenthesized_items(node, lines):
                yield "parenthesized context managers (`with (a as x, b as y):`)", (3, 9), node
        elif match is not None and isinstance(node, match):
            yield "a `match` statement", (3, 10), node
        elif try_star is not None and isinstance(node, try_star):
            yield "`except*`", (3, 11), node
        elif isinstance(node, ast.Subscript):
            index = node.slice
            elements = index.elts if isinstance(index, ast.Tuple) else [index]
            if not _in_brackets(index, lines) and any(isinstance(element, ast.Starred) for element in elements):
                yield "a starred expression in an index (`a[*b]`)", (3, 11), node
        elif type_alias is not None and isinstance(node, type_alias):
            yield "a `type` alias", (3, 12), node
            if any(getattr(parameter, "default_value", None) is not None for parameter in node.type_params):
                yield "a type parameter default (`[T = int]`)", (3, 13), node


def _dotted_call(decorator: ast.expr) -> bool:
    """``@name``, ``@a.b.c`` or a call of one: what Python before 3.9 allows."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    while isinstance(decorator, ast.Attribute):
        decorator = decorator.value
    return isinstance(decorator, ast.Name)


def _in_brackets(node: ast.expr, lines: list[str]) -> bool:
    """Whether ``node`` (a tuple) is written in brackets of its own: ``a[(b, *c)]``."""
    if node.lineno > len(lines):
        return False
    return _characters(lines[node.lineno - 1], node.col_offset, None).startswith("(")


def _segment(lines: list[str], node: ast.AST) -> Optional[str]:
    end_row, end_column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_row is None or end_column is None:
        return None
    return _text(lines, (node.lineno, node.col_offset), (end_row, end_column))


def _characters(line: str, start: int, end: Optional[int]) -> str:
    """``line`` from byte offset ``start`` to ``end`` (ast counts UTF-8 bytes)."""
    data = line.encode("utf-8")
    return data[start:end].decode("utf-8", "replace")


def _self_documenting(node: ast.JoinedStr, lines: list[str]) -> bool:
    """Whether an f-string has a ``{expression=}`` part.  ast keeps no trace of the
    ``=`` but its text: it is a replacement field whose expression ends in ``=``."""
    if not any(isinstance(value, ast.FormattedValue) for value in node.values):
        return False
    text = _segment(lines, node)
    if text is None:
        return False
    depth = 0
    field_start = None
    position = 0
    while position < len(text):
        character = text[position]
        if character == "{":
            if depth == 0 and text.startswith("{{", position):
                position += 2
                continue
            if depth == 0:
                field_start = position
            depth += 1
        elif character == "}" and depth:
            depth -= 1
            if depth == 0 and field_start is not None:
                if _ends_in_equals(text[field_start + 1:position]):
                    return True
                field_start = None
        position += 1
    return False


def _ends_in_equals(field: str) -> bool:
    """Whether a replacement field's expression ends in ``=`` (``{x=}``, ``{x = !r:>9}``):
    not an ``=`` inside brackets (``{f(a=1)}``), of a comparison, or of the format spec."""
    depth = 0
    for position, character in enumerate(field):
        if character in "([{":
            depth += 1
        elif character in ")]}":
            depth -= 1
        elif depth == 0 and character == ":":
            return False  # the format spec: the expression ended without `=`
        elif depth == 0 and character == "!" and field[position + 1:position + 2] != "=":
            return False  # the conversion
        elif depth == 0 and character == "=":
            before = field[position - 1] if position else ""
            after = field[position + 1:position + 2]
            if before in "=!<>" or after == "=":
                continue
            rest = field[position + 1:].lstrip()
            return rest == "" or rest[0] in "!:"
    return False


def _parenthesized_items(node: ast.With, lines: list[str]) -> bool:
    """``with (a as x, b):``, ``with (a, b):``: the items stand in brackets of their own,
    which Python before 3.9 reads as one expression: a syntax error with ``as`` inside, a
    tuple that is no context manager without.  (``with (a):`` is fine there.)"""
    if len(node.items) == 1 and node.items[0].optional_vars is None:
        return False
    first, last = node.items[0], node.items[-1]
    start = (first.context_expr.lineno, first.context_expr.col_offset)
    if (node.lineno, node.col_offset) >= start:
        return False
    head = _between(lines, (node.lineno, node.col_offset), start)
    if head is None or "(" not in head.split("with", 1)[-1]:
        return False
    end_node = last.optional_vars if last.optional_vars is not None else last.context_expr
    body_start = (node.body[0].lineno, node.body[0].col_offset)
    tail = _between(lines, (end_node.end_lineno, end_node.end_col_offset), body_start)
    return tail is not None and ")" in tail.split(":", 1)[0]


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> Optional[str]:
    """The text from ``start`` to ``end`` ((row, byte column) pairs), comments dropped."""
    text = _text(lines, start, end)
    return None if text is None else "\n".join(piece.split("#", 1)[0] for piece in text.split("\n"))


def _text(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> Optional[str]:
    """The text from ``start`` to ``end`` ((row, byte column) pairs)."""
    (start_row, start_column), (end_row, end_column) = start, end
    if start_row > end_row or end_row > len(lines):
        return None
    if start_row == end_row:
        return _characters(lines[start_row - 1], start_column, end_column)
    return "\n".join([_characters(lines[start_row - 1], start_column, None), *lines[start_row:end_row - 1],
                      _characters(lines[end_row - 1], 0, end_column)])
