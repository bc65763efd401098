"""``# noqa`` and ``# torchlint: noqa`` directives.

Directives are read from real comment tokens, so ``"# noqa"`` inside a string does
not count.  Only files that have findings and mention ``noqa`` are tokenized.
TorchFix codes (``# noqa: TOR102``) count for the torchlint rules that cover them.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional

from torchlint.syntax.legacy import repair as repair_legacy_syntax
from torchlint.framework import torchfix

_CODE = r"[A-Z]+[0-9]+[A-Z0-9]*"  # a mistyped `TL1O1` is one (unknown) code, not `TL1`
_LINE_DIRECTIVE = re.compile(
    rf"#\s*noqa(?::\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.IGNORECASE
)
_FILE_DIRECTIVE = re.compile(
    rf"#\s*torchlint\s*:\s*noqa(?:\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.IGNORECASE
)
_SPLIT = re.compile(r"[\s,]+")

ALL = None  # a directive without codes suppresses everything


@dataclass(frozen=True)
class Directive:
    """One ``# noqa: ...`` (or ``# torchlint: noqa: ...``) comment that names codes."""

    row: int
    column: int  # 0-based, of the directive's ``#`` in the line
    text: str  # the directive itself: ``# noqa: TL101, TL203``
    codes: tuple[str, ...]  # as written, upper case
    codes_start: int  # where the codes start in ``text``
    file: bool = False  # ``# torchlint: noqa: ...``


@dataclass
class Directives:
    # row -> codes suppressed on that line (None: all)
    lines: dict[int, Optional[frozenset[str]]] = field(default_factory=dict)
    # codes suppressed in the whole file (None: all), or empty when there is no directive
    file: Optional[frozenset[str]] = frozenset()
    # the directives that name codes, for TL001 (unused-noqa)
    named: list[Directive] = field(default_factory=list)
    # (row, or 0 for the file-wide directives, code) of each suppression that took effect
    used: set[tuple[int, str]] = field(default_factory=set)
    # a row inside a multi-line string or continued statement -> the row whose directive covers it
    moved: dict[int, int] = field(default_factory=dict)

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.file is None or code in self.file:
            self.used.add((0, code))
            return True
        for row in dict.fromkeys(self.moved.get(row, row) for row in rows):
            if row in self.lines:
                codes = self.lines[row]
                if codes is None or code in codes:
                    self.used.add((row, code))
                    return True
        return False

    def unused(self, judged: frozenset[str]) -> list[tuple[Directive, tuple[str, ...]]]:
        """Each directive with the codes in it that suppressed nothing, of those whose rules
        all ran (``judged``: a code of a rule that did not run may be needed by a run that
        selects it).  A TorchFix code is used when one of the rules it stands for is."""
        found = []
        for directive in self.named:
            row = 0 if directive.file else directive.row
            idle = []
            for code in directive.codes:
                covering = {code} | set(torchfix.equivalent_codes(code))
                torchlint_codes = {c for c in covering if c.startswith("TL")}
                if not torchlint_codes or not torchlint_codes <= judged:
                    continue  # another linter's code (E501), or a rule that did not run
                if not any((row, c) in self.used for c in torchlint_codes):
                    idle.append(code)
            if idle:
                found.append((directive, tuple(idle)))
        return found


def _codes(match: re.Match) -> Optional[frozenset[str]]:
    codes = match.group("codes")
    if not codes:
        return None
    named = frozenset(code.upper() for code in _SPLIT.split(codes.strip()) if code)
    # A TorchFix code also suppresses the torchlint rules that cover it (torchfix.py).
    return named.union(*(torchfix.equivalent_codes(code) for code in named))


def _scan(source: str) -> tuple[list[tuple[int, int, str]], dict[int, int]]:
    """(row, 0-based column, text) of each comment, and where the directive of each row
    that cannot end in a comment goes (``comment_rows``)."""
    tokenized = _tokens(source)
    if tokenized is None:
        repaired = repair_legacy_syntax(source)  # Python 2: its rewrite has the same rows and columns
        tokenized = _tokens(repaired[0]) if repaired is not None else None
    if tokenized is not None:
        comments, moved = tokenized
        return comments, _settled(moved, source)
    # The tokenizer of this Python does not know the file's syntax: the text after the
    # first '#' of each line.
    found = []
    for row, line in enumerate(io.StringIO(source), start=1):
        position = line.find("#")
        if position >= 0:
            found.append((row, position, line[position:].rstrip("\r\n")))
    return found, _settled({}, source)


def _tokens(text: str) -> Optional[tuple[list[tuple[int, int, str]], dict[int, int]]]:
    comments = []
    moved: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments.append((token.start[0], token.start[1], token.string))
            elif token.end[0] > token.start[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                for row in range(token.start[0], token.end[0]):
                    moved[row] = token.end[0]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return comments, moved


def _settled(moved: dict[int, int], source: str) -> dict[int, int]:
    """``moved`` with the backslash continuations added (a continued line's directive goes
    to the line that ends the statement) and each row sent to its final row."""
    for row, line in enumerate(source.splitlines(), start=1):
        if line.endswith("\\") and row not in moved:
            moved[row] = row + 1
    for row in sorted(moved, reverse=True):
        target = moved[row]
        moved[row] = moved.get(target, target)
    return moved


def comment_rows(source: str) -> dict[int, int]:
    """Row -> the row whose comment speaks for it, for the rows whose end no comment can
    follow: inside a string that goes on (a directive after the string's closing quotes
    covers every line of it, as ruff reads them), or continued with a backslash."""
    return _scan(source)[1]


def is_noqa_comment(comment: Optional[str]) -> bool:
    """Whether ``comment`` (a line's comment, or None) is a ``# noqa`` directive, with or
    without codes, in any case."""
    return comment is not None and _LINE_DIRECTIVE.search(comment) is not None


def _directive(row: int, column: int, match: re.Match, file: bool = False) -> Directive:
    written = tuple(dict.fromkeys(code.upper() for code in _SPLIT.split(match.group("codes").strip()) if code))
    return Directive(row, column + match.start(), match.group(0), written, match.start("codes") - match.start(),
                     file=file)


def parse_directives(source: str) -> Directives:
    directives = Directives()
    lowered = source.lower()
    if "noqa" not in lowered:
        return directives
    file_codes: set[str] = set()
    file_all = False
    comments, directives.moved = _scan(source)
    for row, column, comment in comments:
        file_match = _FILE_DIRECTIVE.search(comment)
        if file_match is not None:
            codes = _codes(file_match)
            if codes is None:
                file_all = True
            else:
                file_codes |= codes
                directives.named.append(_directive(row, column, file_match, file=True))
            continue
        match = _LINE_DIRECTIVE.search(comment)
        if match is not None:
            codes = _codes(match)
            if codes is not None:
                directives.named.append(_directive(row, column, match))
            previous = directives.lines.get(row, frozenset())
            if codes is None or previous is None:
                directives.lines[row] = None
            else:
                directives.lines[row] = previous | codes
    directives.file = None if file_all else frozenset(file_codes)
    return directives
