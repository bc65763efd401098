"""What a module's names are other names for, read from its text with ``ast``.

``from torch.autograd import Variable as V`` makes ``V`` another name for
``torch.autograd.Variable``, and ``Tensor = torch.FloatTensor`` makes ``Tensor`` one for
``torch.FloatTensor``; a module that imports ``V`` or ``Tensor`` from there uses a torch
name under another name.  The project follows such chains (``Project.other_name``) with
these summaries instead of analysed trees: a few names per module, built with CPython's
parser, kept for every module a run looks into.

Only what binds a name at module level counts, and a ``global`` name assigned in a
function: a name bound more than once to different things (``Tensor`` switched to
``torch.cuda.FloatTensor`` by a function), or to anything else than another name (a
class, a function, a value), is another name for nothing.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

# A binding that makes its name something of its own (a class, a function, a value).
VALUE = None


@dataclass
class Exports:
    # name -> what each of its bindings makes it: an absolute dotted name (imports), a
    # dotted name local to the module prefixed with "=" (``Tensor = torch.FloatTensor``),
    # or VALUE.
    names: dict[str, list[Optional[str]]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)  # absolute module names

    def target(self, name: str, depth: int = 0) -> Optional[str]:
        """The absolute dotted name ``name`` is another name for, or None."""
        bound = set(self.names.get(name, ()))
        if len(bound) != 1 or depth > 8:
            return None
        target = bound.pop()
        if target is VALUE or not target.startswith("="):
            return target
        root, _, rest = target[1:].partition(".")
        if root == name:
            return None
        base = self.target(root, depth + 1)
        return f"{base}.{rest}" if base and rest else base


def may_rename(text: str) -> Optional[frozenset[str]]:
    """A superset of the names ``text`` may make other names, from its text alone: the
    words of its import statements and the names given a dotted name (``T = a.b``);
    None after a star import (any name)."""
    if _STAR_IMPORT.search(text):
        return None
    names = {word for match in _IMPORT_STATEMENT.finditer(text) for word in _WORD.findall(match.group(1))}
    names.update(match.group(1) for match in _ALIAS_ASSIGNMENT.finditer(text))
    return frozenset(names)


_STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*\*", re.MULTILINE)
# An import statement's names, over parentheses or continued lines.
_IMPORT_STATEMENT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b[ \t]*(\([^)]*\)|(?:\\\n|[^\n])*)",
                               re.MULTILINE)
_ALIAS_ASSIGNMENT = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*[\w.]+[ \t]*(?:#.*)?$", re.MULTILINE)
_WORD = re.compile(r"\w+")


STAR_IMPORT = _STAR_IMPORT  # a star import somewhere in a text: the cheap test before parsing it
MAY_STAR_IMPORT = re.compile(r"import[ \t]*\*")  # faster, and necessary for STAR_IMPORT


def import_words(text: str) -> frozenset[str]:
    """Every word of the import statements of ``text`` (modules and names), from its text alone."""
    return frozenset(word for match in _IMPORT_STATEMENT.finditer(text) for word in _WORD.findall(match.group(0)))


@dataclass(frozen=True)
class Import:
    """One name an import statement takes from a module (``from .m import a as b`` gives
    ``Import("pkg.m", "a", ...)``), or a module it imports (``import a.b``: name None)."""
    module: str  # absolute dotted name of the module
    name: Optional[str]  # the name taken from it ("*" for a star import); None for `import module`
    relative: bool  # written with leading dots: looked up from the file's own package only
    whole: bool  # `import a.b as c` binds the module itself, not its package `a`
    text: str  # the statement with just this name, for messages: `from .m import a as b`


def imports_of(text: str, module_name: str, is_package: bool, stars_only: bool = False) -> Optional[list[Import]]:
    """Every import of ``text``, anywhere in it (``stars_only``: just its star imports);
    None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    collector = _Collector(Exports(), module_name, is_package)
    found = []
    for node in _statements(tree.body, not stars_only):
        if isinstance(node, ast.ImportFrom):
            written = "." * node.level + (node.module or "")
            module = collector.absolute(node.level, node.module or "")
            if not module:
                continue  # `from . import x` outside a package
            for alias in node.names:
                if stars_only and alias.name != "*":
                    continue
                shown = f"{alias.name} as {alias.asname}" if alias.asname else alias.name
                found.append(Import(module, alias.name, node.level > 0, True, f"from {written} import {shown}"))
        elif isinstance(node, ast.Import) and not stars_only:
            for alias in node.names:
                shown = f"{alias.name} as {alias.asname}" if alias.asname else alias.name
                found.append(Import(alias.name, None, False, alias.asname is not None, f"import {shown}"))
    return found


def _statements(body: list[ast.stmt], functions: bool):
    """The statements of ``body`` and of the blocks in them (the bodies of functions and
    classes too with ``functions``), without walking any expression."""
    for statement in body:
        yield statement
        if not functions and isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for part in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(statement, part, None)
            if inner:
                yield from _statements(inner, functions)


def summarize(text: str, module_name: str, is_package: bool) -> Optional[Exports]:
    """The exports of a module's text; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    exports = Exports()
    _Collector(exports, module_name, is_package).statements(tree.body, None)
    return exports


class _Collector:
    def __init__(self, exports: Exports, module_name: str, is_package: bool):
        self.exports = exports
        self.package = module_name.split(".") if is_package else module_name.split(".")[:-1]

    def bind(self, name: str, target: Optional[str], shared: Optional[set[str]]) -> None:
        if shared is None or name in shared:
            self.exports.names.setdefault(name, []).append(target)

    def absolute(self, level: int, module: str) -> str:
        if not level:
            return module
        parts = self.package[: len(self.package) - (level - 1)] if level - 1 <= len(self.package) else []
        return ".".join([*parts, module] if module else parts)

    def statements(self, body: list[ast.stmt], shared: Optional[set[str]]) -> None:
        """Bindings of ``body`` at module level (``shared`` None), or in a function of
        the names it declares ``global``."""
        for statement in body:
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname:
                        self.bind(alias.asname, alias.name, shared)
                    else:
                        top = alias.name.split(".")[0]
                        self.bind(top, top, shared)
            elif isinstance(statement, ast.ImportFrom):
                module = self.absolute(statement.level, statement.module or "")
                for alias in statement.names:
                    if alias.name == "*":
                        if shared is None:
                            self.exports.star_imports.append(module)
                    else:
                        self.bind(alias.asname or alias.name, f"{module}.{alias.name}" if module else alias.name, shared)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                value = statement.value
                if value is None or isinstance(value, ast.Constant) and value.value is None:
                    continue  # `Tensor = None` first, or a bare annotation: no other object
                dotted = _dotted(value) if not isinstance(statement, ast.AugAssign) else None
                for target in targets:
                    for name in _names(target):
                        alone = isinstance(target, ast.Name)
                        self.bind(name, f"={dotted}" if dotted and alone else VALUE, shared)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bind(statement.name, VALUE, shared)
                if shared is None and not isinstance(statement, ast.ClassDef):
                    declared = {name for node in ast.walk(statement) if isinstance(node, ast.Global)
                                for name in node.names}
                    if declared:
                        self.statements(statement.body, declared)
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                for name in _names(statement.target):
                    self.bind(name, VALUE, shared)
                self.statements(statement.body + statement.orelse, shared)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    if item.optional_vars is not None:
                        for name in _names(item.optional_vars):
                            self.bind(name, VALUE, shared)
                self.statements(statement.body, shared)
            elif isinstance(statement, (ast.If, ast.While)):
                self.statements(statement.body + statement.orelse, shared)
            elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
                self.statements(statement.body + statement.orelse + statement.finalbody, shared)
                for handler in statement.handlers:
                    self.statements(handler.body, shared)


def _dotted(node: ast.expr) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _names(element)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []
