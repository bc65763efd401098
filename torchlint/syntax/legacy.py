"""Old syntax in old training scripts, read as Python 3 so that the file is still linted.

A 2017 script often has a construct today's Python refuses: ``x.cuda(async=True)`` (a
keyword since Python 3.7), a Python 2 ``print x`` or ``except E, e:``.  Each would make
the whole file unlintable and lose every finding in it.  When Python's parser refuses a
file, ``repair`` rewrites each such construct into Python 3 of *the same length*, so that
every offset, line and column of the file stays what it was: the tree is built from the
repaired text, while snippets, positions and fixes refer to the file as it is.

    async=True           ->  _sync=True        (a keyword argument, parameter or attribute)
    print x, y           ->  print,x, y        (a tuple: the expressions are still there)
    exec code in ns      ->  exec,code in ns
    except E, e:         ->  except(E,e):
    raise E, "message"   ->  raise(E,"message")
    0777, 10L            ->   777, 10          (octal and long literals)
    `x`                  ->  (x)               (repr backquotes)
    a <> b               ->  a != b
    ur"text"             ->   r"text"

Only what the parser points at is rewritten (``print`` and ``exec`` statements, being
the most common, are rewritten in one pass first), line by line whatever the file's line
breaks, and only when the result parses; a file with anything else stays unparsable, with
Python's own error.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Optional

from torchlint.syntax import cst
from torchlint.syntax.source import LineIndex

# The rewrites tried, at most: past it the file is reported as it is.
MAX_REPAIRS = 100
# Larger texts are not repaired (each rewrite re-parses the file).
MAX_LENGTH = 500_000
ASYNC_PLACEHOLDER = "_sync"  # the same length as `async`

_STATEMENT = re.compile(r"^([ \t]*)(print|exec)([ \t]+)(?=[^\s=(.,;:)\]}+*/%&|^<>!~-]|-[\w.(])")
_KEYWORD_NAME = re.compile(r"\b(async|await)\b(?=[ \t]*(?:=(?!=)|[,)]))|(?<=\.)\s*\b(async|await)\b")
_EXCEPT_COMMA = re.compile(r"^([ \t]*except)([ \t]+)([^,:#]+?),([ \t]+)([A-Za-z_]\w*)([ \t]*:)")
_RAISE_COMMA = re.compile(r"^([ \t]*raise)([ \t]+)([^,#]+?),([ \t]+)([^#]*?)([ \t]*)(#.*)?$")
_OCTAL = re.compile(r"(?<![\w.])0+(?=[0-9]+\b)")
_LONG = re.compile(r"(?<![\w.])((?:0[xX][0-9a-fA-F]+)|[0-9]+)[lL]\b")
_BACKQUOTES = re.compile(r"`([^`]*)`")
_UNICODE_RAW = re.compile(r"(?<![\w])[uU](?=[rR]['\"])")


@dataclass(frozen=True)
class Repair:
    """One rewrite: the characters ``start``..``end`` of the original text held ``construct``."""

    start: int
    end: int
    construct: str  # "async keyword", "print statement", ...


def repair(text: str) -> Optional[tuple[str, tuple[Repair, ...]]]:
    """``text``, which Python's parser refused, rewritten as described above, and the
    rewrites; None when rewriting does not make it parse (or finds nothing to rewrite)."""
    if len(text) > MAX_LENGTH:
        return None
    current, repairs = _statements(text)
    for _ in range(MAX_REPAIRS):
        error = _syntax_error(current)
        if error is None:
            return (current, tuple(sorted(repairs, key=lambda r: r.start))) if repairs else None
        found = _repair_at(current, error) if error.syntax and not error.too_deep else None
        if found is None:
            return None
        current, new = found
        repairs.append(new)
    return None


def _syntax_error(text: str) -> Optional[cst.ParserSyntaxError]:
    """Why Python refuses ``text`` (as the fast tree asks it: a leading BOM skipped)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cst.parse_ast(text)
    except cst.ParserSyntaxError as error:
        return error
    return None


def _statements(text: str) -> tuple[str, list[Repair]]:
    """Every line that starts with a ``print`` or ``exec`` statement, rewritten."""
    index = LineIndex(text)
    repairs: list[Repair] = []
    pieces: list[str] = []
    position = 0
    for row in range(1, index.line_count + 1):
        found = _print_statement(index.line(row))
        if found is None:
            continue
        new_line, (start, end, construct) = found
        line_start = index.starts[row - 1]
        pieces += [text[position:line_start], new_line]
        position = line_start + len(new_line)
        repairs.append(Repair(line_start + start, line_start + end, construct))
    pieces.append(text[position:])
    return "".join(pieces), repairs


def _repair_at(text: str, error: cst.ParserSyntaxError) -> Optional[tuple[str, Repair]]:
    """The text with the construct on the line ``error`` points at rewritten."""
    index = LineIndex(text)
    if not 1 <= error.editor_line <= index.line_count:
        return None
    line_start = index.starts[error.editor_line - 1]
    line = index.line(error.editor_line)
    for rewrite in (_print_statement, _keyword_name, _except_comma, _raise_comma, _octal, _long, _backquotes,
                    _not_equal, _unicode_raw):
        found = rewrite(line)
        if found is not None:
            new_line, (start, end, construct) = found
            assert len(new_line) == len(line)
            rewritten = text[:line_start] + new_line + text[line_start + len(line):]
            return rewritten, Repair(line_start + start, line_start + end, construct)
    return None


_Found = Optional[tuple[str, tuple[int, int, str]]]  # the line rewritten, and what was where


def _print_statement(line: str) -> _Found:
    match = _STATEMENT.match(line)
    if match is None:
        return None
    new = line[:match.start(3)] + "," + match.group(3)[1:] + line[match.end(3):]
    return new, (match.start(2), match.end(2), f"{match.group(2)} statement")


def _keyword_name(line: str) -> _Found:
    match = _KEYWORD_NAME.search(line)
    if match is None:
        return None
    group = 1 if match.group(1) else 2
    start, end = match.start(group), match.end(group)
    placeholder = ASYNC_PLACEHOLDER if match.group(group) == "async" else "_wait"
    return line[:start] + placeholder + line[end:], (start, end, f"`{match.group(group)}` as a name")


def _except_comma(line: str) -> _Found:
    match = _EXCEPT_COMMA.match(line)
    if match is None:
        return None
    head, space, types, after_comma, name, colon = match.groups()
    new = f"{head}{space[:-1]}({types},{after_comma[1:]}{name}){colon}"
    return new + line[match.end():], (match.start(3), match.end(5), "`except E, e:`")


def _raise_comma(line: str) -> _Found:
    match = _RAISE_COMMA.match(line)
    if match is None or not match.group(5):
        return None
    head, space, kind, after_comma, rest, trailing, comment = match.groups()
    new = f"{head}{space[:-1]}({kind},{after_comma[1:]}{rest}){trailing}{comment or ''}"
    return new, (match.start(3), match.end(5), "`raise E, message`")


def _octal(line: str) -> _Found:
    match = _OCTAL.search(line)
    if match is None:
        return None
    return line[:match.start()] + " " * len(match.group()) + line[match.end():], \
        (match.start(), match.end() + 1, "an octal literal without `0o`")


def _long(line: str) -> _Found:
    match = _LONG.search(line)
    if match is None:
        return None
    end = match.end()
    return line[:end - 1] + " " + line[end:], (match.start(), end, "a long integer literal")


def _backquotes(line: str) -> _Found:
    match = _BACKQUOTES.search(line)
    if match is None:
        return None
    return line[:match.start()] + f"({match.group(1)})" + line[match.end():], \
        (match.start(), match.end(), "repr backquotes")


def _not_equal(line: str) -> _Found:
    index = line.find("<>")
    if index < 0:
        return None
    return line[:index] + "!=" + line[index + 2:], (index, index + 2, "`<>`")


def _unicode_raw(line: str) -> _Found:
    match = _UNICODE_RAW.search(line)
    if match is None:
        return None
    return line[:match.start()] + " " + line[match.end():], (match.start(), match.end() + 1, "a `ur` string")
