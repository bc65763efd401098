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

from torchlint.framework import torchfix

_CODE = r"[A-Z]+[0-9]+"
_LINE_DIRECTIVE = re.compile(
    rf"#\s*noqa(?::\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.IGNORECASE
)
_FILE_DIRECTIVE = re.compile(
    rf"#\s*torchlint\s*:\s*noqa(?:\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.IGNORECASE
)
_SPLIT = re.compile(r"[\s,]+")

ALL = None  # a directive without codes suppresses everything


@dataclass
class Directives:
    # row -> codes suppressed on that line (None: all)
    lines: dict[int, Optional[frozenset[str]]] = field(default_factory=dict)
    # codes suppressed in the whole file (None: all), or empty when there is no directive
    file: Optional[frozenset[str]] = frozenset()

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.file is None or code in self.file:
            return True
        for row in rows:
            if row in self.lines:
                codes = self.lines[row]
                if codes is None or code in codes:
                    return True
        return False


def _codes(match: re.Match) -> Optional[frozenset[str]]:
    codes = match.group("codes")
    if not codes:
        return None
    named = frozenset(code.upper() for code in _SPLIT.split(codes.strip()) if code)
    # A TorchFix code also suppresses the torchlint rules that cover it (torchfix.py).
    return named.union(*(torchfix.equivalent_codes(code) for code in named))


def _comments(source: str) -> list[tuple[int, str]]:
    try:
        return [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # The tokenizer of this Python may not know syntax the file uses;
        # fall back to the text after the last '#' of each line.
        found = []
        for row, line in enumerate(io.StringIO(source), start=1):
            position = line.find("#")
            if position >= 0:
                found.append((row, line[position:].rstrip("\r\n")))
        return found


def is_noqa_comment(comment: Optional[str]) -> bool:
    """Whether ``comment`` (a line's comment, or None) is a ``# noqa`` directive, with or
    without codes, in any case."""
    return comment is not None and _LINE_DIRECTIVE.search(comment) is not None


def parse_directives(source: str) -> Directives:
    directives = Directives()
    lowered = source.lower()
    if "noqa" not in lowered:
        return directives
    file_codes: set[str] = set()
    file_all = False
    for row, comment in _comments(source):
        file_match = _FILE_DIRECTIVE.search(comment)
        if file_match is not None:
            codes = _codes(file_match)
            if codes is None:
                file_all = True
            else:
                file_codes |= codes
            continue
        match = _LINE_DIRECTIVE.search(comment)
        if match is not None:
            codes = _codes(match)
            previous = directives.lines.get(row, frozenset())
            if codes is None or previous is None:
                directives.lines[row] = None
            else:
                directives.lines[row] = previous | codes
    directives.file = None if file_all else frozenset(file_codes)
    return directives
