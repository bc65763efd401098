"""Which parser builds a file's tree: torchlint's fast one, or libcst's.

    auto    the fast tree (cst.py, from ``ast``); where it cannot be built, libcst's
            parser (libcst_tree.py): syntax newer than the running Python, or a node
            the fast tree does not know.  The default.
    fast    the fast tree only: a file it cannot build is TL000.
    libcst  libcst's parser for every file (the reference; about ten times slower).

A syntax error that the running Python reports is final when it is the newest Python
whose syntax torchlint's tree mirrors: libcst accepts a few things CPython refuses, and
torchlint lints only what Python runs.  On an older Python, a file that ast refuses and
libcst parses is linted (Python 3.10 in CI linting a 3.12 project); a file both refuse
gets ast's message.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Callable, Optional, TypeVar

if TYPE_CHECKING:  # imported where a tree is built: a warm run (the cache) builds none
    from torchlint.syntax import cst
    from torchlint.syntax.legacy import Repair

T = TypeVar("T")
PARSERS = ("auto", "fast", "libcst")
# What may use syntax of a Python newer than this one, by the version that brought it:
# except*, starred subscripts and annotations (3.11); type parameters, `type` statements
# and any f-string (3.12, PEP 701); type parameter defaults (3.13, inside the brackets).
_NEWER_SYNTAX = (
    ((3, 11), re.compile(r"\bexcept\s*\*|\[\s*\*|:\s*\*\s*\w")),
    ((3, 12), re.compile(r"^[ \t]*type[ \t]+\w+[ \t]*[\[=]|\b(?:def|class)[ \t]+\w+[ \t]*\[|(?<![\w])[rRbB]?[fF][rR]?['\"]",
                         re.MULTILINE)),
    ((3, 13), re.compile(r"^[ \t]*type[ \t]+\w+[ \t]*\[|\b(?:def|class)[ \t]+\w+[ \t]*\[", re.MULTILINE)),
)
# The newest Python whose syntax torchlint's tree mirrors (cst.py's node classes).
NEWEST_SYNTAX = (3, 13)


def parse_module(text: str, parser: str = "auto", lazy_bodies: bool = False) -> "cst.Module":
    """The tree of ``text`` (a whole file); ``cst.ParserSyntaxError`` when it is not
    Python that torchlint lints."""
    return parse(text, parser, lazy_bodies)[0]


def parse(text: str, parser: str = "auto", lazy_bodies: bool = False) -> tuple["cst.Module", str]:
    """The tree of ``text`` and the parser that built it ("fast" or "libcst")."""
    from torchlint.syntax import cst

    return _first_that_parses(text, parser, lambda: cst.parse_module(text, lazy_bodies),
                              lambda: _libcst_tree().parse_module(text))


def check_syntax(text: str, parser: str = "auto") -> None:
    """``cst.ParserSyntaxError`` unless ``text`` is Python that torchlint lints, without
    building a tree where that can be avoided."""
    from torchlint.syntax import cst

    _first_that_parses(text, parser, lambda: cst.parse_ast(text), lambda: _libcst_tree().check(text))


def _first_that_parses(text: str, parser: str, fast: Callable[[], T], reference: Callable[[], T]) -> tuple[T, str]:
    """``fast()`` (the tree built from ``ast``), or ``reference()`` (libcst's parser) when
    ``parser`` says so, when the fast tree fails on a case it does not handle, or when it
    refuses syntax a newer Python may accept; with the parser that gave the result."""
    from torchlint.syntax import cst

    if parser == "libcst":
        return reference(), "libcst"
    try:
        return fast(), "fast"
    except cst.ParserSyntaxError as error:
        if parser == "fast" or not _newer_syntax_possible(error, text):
            raise
        try:
            return reference(), "libcst"
        except cst.ParserSyntaxError:
            raise error from None  # Python's own words for the error
    except RecursionError:
        raise
    except Exception as error:  # a node or case the fast tree does not handle
        if parser == "fast":
            raise
        try:
            return reference(), "libcst"
        except cst.ParserSyntaxError:
            raise cst.ParserSyntaxError(f"{type(error).__name__}: {error}", syntax=False) from error


def parse_reading_legacy(text: str, parser: str = "auto",
                         lazy_bodies: bool = False) -> tuple["cst.Module", tuple["Repair", ...]]:
    """``parse_module``, or where Python refuses the text for old syntax, the tree
    ``parse_repaired`` builds (every body built), with its rewrites; the first
    ``cst.ParserSyntaxError`` when neither reads it."""
    from torchlint.syntax import cst

    try:
        return parse_module(text, parser, lazy_bodies), ()
    except cst.ParserSyntaxError as error:
        recovered = parse_repaired(text, error)
        if recovered is None:
            raise
        return recovered


def parse_repaired(text: str, error: "cst.ParserSyntaxError") -> Optional[tuple["cst.Module", tuple["Repair", ...]]]:
    """For a text Python refused with ``error``: the fast tree of its legacy constructs
    rewritten (legacy.py), whose code is the text itself (the rewrites keep every
    offset), and the rewrites; None when it is not that kind of failure."""
    from torchlint.syntax import cst, legacy

    if not error.syntax or error.too_deep:
        return None
    found = legacy.repair(text)
    if found is None:
        return None
    repaired, repairs = found
    try:
        module = cst.parse_module(repaired)
    except cst.ParserSyntaxError:
        return None
    module.code = text
    return module, repairs


def _libcst_tree():
    from torchlint.syntax import libcst_tree  # imports libcst: only when it is needed

    return libcst_tree


def _newer_syntax_possible(error: "cst.ParserSyntaxError", text: str) -> bool:
    """Whether a newer Python than this one might parse what ``error`` refused: the text
    uses a construct whose syntax a newer Python changed (libcst is not asked about a
    Python 2 file, or a broken one without such constructs)."""
    if not error.syntax or error.too_deep:  # a newer Python refuses the file too
        return False
    return any(sys.version_info[:2] < version and pattern.search(text) for version, pattern in _NEWER_SYNTAX)
