"""Compare torchlint's light syntax tree with libcst's, file by file.

    python scripts/compare_cst.py [-j JOBS] PATH...

Parses every .py file under the paths with both parsers and walks the two trees in
parallel over the fields torchlint's walk visits (``type(node)._fields``), comparing
at each node its class, its range (libcst's ``PositionProvider`` range, from
``torchlint/syntax/libcst_tree.py``), its parentheses (count and outer range), its
identifier / string / number value and its operator.  Prints the first difference of
each file and a summary; exits 1 when there is a difference.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from multiprocessing import Pool
from typing import Iterator, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import libcst  # noqa: E402

from torchlint.syntax import cst  # noqa: E402
from torchlint.syntax.libcst_tree import all_offsets  # noqa: E402

# Scalar fields compared by value, per libcst class name.
_VALUES = {
    "Name": ("value",), "Integer": ("value",), "Float": ("value",), "Imaginary": ("value",),
    "SimpleString": ("value", "prefix", "quote", "raw_value"), "FormattedStringText": ("value",),
    "FormattedString": ("prefix", "quote"), "NotEqual": ("value",), "Arg": ("star",),
    "Param": ("star",), "FormattedStringExpression": ("conversion",),
}
# Node-valued fields outside the walk that are compared too (class and range).
_EXTRA_NODES = ("operator", "keyword", "attr", "asynchronous", "relative", "name", "names", "module", "posonly_ind")


def _children(value) -> list:
    """A field's value as a list of nodes (libcst's or ours)."""
    if isinstance(value, (libcst.CSTNode, cst.CSTNode)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, (libcst.CSTNode, cst.CSTNode))]
    return []


def _star(value) -> str:
    return value if isinstance(value, str) else ""


def _value(node, field: str):
    value = getattr(node, field)
    if field == "star":
        return _star(value)
    return value


def compare_text(text: str) -> tuple[str, Optional[str]]:
    """("same" | "different" | "both-fail" | "libcst-fails" | "ast-fails", detail)."""
    try:
        theirs = libcst.parse_module(text)
    except Exception as error:  # noqa: BLE001 - libcst raises several kinds
        theirs = error
    try:
        ours = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        ours = error
    except Exception:  # noqa: BLE001 - a crash is a difference
        return "different", "crash:\n" + traceback.format_exc()
    if isinstance(theirs, Exception) and isinstance(ours, Exception):
        return "both-fail", None
    if isinstance(theirs, Exception):
        return "libcst-fails", str(theirs).splitlines()[0] if str(theirs) else type(theirs).__name__
    if isinstance(ours, Exception):
        return "ast-fails", str(ours)
    try:
        if theirs.code != text:  # e.g. `except X :` loses its space: libcst's positions are off
            return "libcst-fails", "libcst's tree does not reproduce the text"
        difference = compare_trees(theirs, ours, text)
    except RecursionError:  # libcst's code generation recurses once per nesting level
        return "libcst-fails", "RecursionError while generating the code"
    return ("different", difference) if difference else ("same", None)


def compare_trees(theirs: libcst.Module, ours: cst.Module, text: str) -> Optional[str]:
    for field in ("default_indent", "default_newline"):
        if getattr(theirs, field) != getattr(ours, field):
            return f"Module.{field}: libcst {getattr(theirs, field)!r}, ours {getattr(ours, field)!r}"
    found, outer = all_offsets(theirs)
    size = len(text)

    def where(node) -> tuple[int, int]:
        # Without a final line break libcst generates one and drops it again, after
        # the positions have counted it: clamp.
        start, end = found.get(id(node)) or outer[id(node)]
        return min(start, size), min(end, size)

    for path, their, our in _pairs(theirs, ours):
        problem = _compare_node(their, our, where, outer)
        if problem:
            mine = (our.start, our.end) if isinstance(our, cst.CSTNode) else where(their)
            start = max(0, min(where(their)[0], mine[0]) - 20)
            excerpt = text[start:max(where(their)[1], mine[1]) + 20]
            if len(excerpt) > 300:
                excerpt = excerpt[:150] + " ... " + excerpt[-150:]
            line = text.count("\n", 0, where(their)[0]) + 1
            return f"line {line}: {path}: {problem}\n    text: {excerpt!r}"
    return None


def _pairs(theirs, ours) -> Iterator[tuple[str, object, object]]:
    stack = [("Module", theirs, ours)]
    while stack:
        path, their, our = stack.pop()
        yield path, their, our
        if type(their).__name__ != type(our).__name__:
            continue
        fields = type(our)._fields
        extra = [f for f in _EXTRA_NODES if f not in fields and hasattr(our, f)]
        pushed = []
        for field in (*fields, *extra):
            their_children = _children(getattr(their, field, None))
            our_children = _children(getattr(our, field, None))
            if len(their_children) != len(our_children):
                yield (f"{path}.{field}", their, _Mismatch(field, their_children, our_children))
                return
            for index, (a, b) in enumerate(zip(their_children, our_children)):
                pushed.append((f"{path}.{field}[{index}]", a, b))
        stack.extend(reversed(pushed))


class _Mismatch:
    def __init__(self, field, theirs, ours):
        self.field, self.theirs, self.ours = field, theirs, ours


def _compare_node(their, our, where, outer) -> Optional[str]:
    if isinstance(our, _Mismatch):
        names = lambda nodes: [type(n).__name__ for n in nodes]  # noqa: E731
        return f"field {our.field}: libcst {names(our.theirs)}, ours {names(our.ours)}"
    name = type(their).__name__
    if type(our).__name__ != name:
        return f"class: libcst {name}, ours {type(our).__name__}"
    if where(their) != (our.start, our.end):
        return f"{name} range: libcst {where(their)}, ours {(our.start, our.end)}"
    their_lpar = getattr(their, "lpar", None)
    if isinstance(their_lpar, (list, tuple)) and hasattr(our, "lpar"):
        if len(their_lpar) != len(our.lpar) or len(their.rpar) != len(our.rpar):
            return f"{name} parentheses: libcst {len(their_lpar)}, ours {len(our.lpar)}"
        if their_lpar and outer[id(their)] != (our.outer_start, our.outer_end):
            return f"{name} outer range: libcst {outer[id(their)]}, ours {(our.outer_start, our.outer_end)}"
    for field in _VALUES.get(name, ()):
        if _value(their, field) != _value(our, field):
            return f"{name}.{field}: libcst {_value(their, field)!r}, ours {_value(our, field)!r}"
    return None


def python_files(paths: list[str]) -> list[str]:
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".py"))
        else:
            files.append(path)
    return files


def compare_file(path: str) -> tuple[str, str, Optional[str]]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
    except (UnicodeDecodeError, OSError) as error:
        return path, "unreadable", str(error)
    return (path, *compare_text(text))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    files = python_files(args.paths)
    counts: dict[str, int] = {}
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            results = list(pool.imap(compare_file, files, chunksize=8))
    else:
        results = map(compare_file, files)
    for path, outcome, detail in results:
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("different", "ast-fails", "libcst-fails"):
            print(f"{path}: {outcome}: {detail}")
    print(f"{len(files)} files: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 1 if counts.get("different") else 0


if __name__ == "__main__":
    sys.exit(main())
