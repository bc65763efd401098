"""Searching source text with alternations of names, fast.

``re`` skips ahead to a likely start only when it can read one off the pattern: a literal
prefix, or a set of first characters when every branch of an alternation starts with a
literal.  A ``\\b`` at the start of a branch (``\\bno_grad\\b|\\binference_mode\\b``) hides
that set, and the pattern is then tried at every character of the file; a set of common
first characters (``(?:add|sub)..``: every `a` and `s`) is little better.  On timm,
searches of such patterns were an eighth of a whole run's instructions.

``TextPattern`` finds the places a match may start first: where the pattern's every match
starts with one of a few strings (read off its parse tree, leading ``\\b`` skipped), with
``str.find`` for each; otherwise with a scout, the pattern without the ``\\b`` that start
its branches.  Either finds at least every place the pattern matches, and each place is
confirmed with the pattern itself (``\\b`` there still sees the character before, as
``match`` at a position does), in order: the result is the pattern's own leftmost match.
"""

from __future__ import annotations

import re
from typing import Optional

try:  # Python 3.11+
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef]

_QUANTIFIERS = frozenset("*+?{")
_SHORTEST_START = 2  # a one-character start is in nearly every line: `re` alone does better
_MOST_STARTS = 16  # each start is one scan of the text


def top_level_branches(source: str) -> Optional[list[str]]:
    """``source`` cut at its top-level ``|`` (None when it cannot be read safely)."""
    branches, start, depth, index, in_class = [], 0, 0, 0, False
    while index < len(source):
        character = source[index]
        if character == "\\":
            index += 2
            continue
        if in_class:
            in_class = character != "]"
        elif character == "[":
            in_class = True
            if source[index + 1:index + 2] == "^":
                index += 1
            if source[index + 1:index + 2] == "]":  # `[]..]`: a literal `]` first
                index += 1
        elif character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        elif character == "|" and depth == 0:
            branches.append(source[start:index])
            start = index + 1
        index += 1
    if depth != 0 or in_class:
        return None
    branches.append(source[start:])
    return branches


def scout_source(source: str) -> Optional[str]:
    """``source`` without the ``\\b`` that starts any of its top-level branches, or None when
    none does (or the pattern sets flags inline, which a cut could move)."""
    if source.startswith("(?") and source[2:3].isalpha():
        return None
    branches = top_level_branches(source)
    if branches is None:
        return None
    changed = False
    for number, branch in enumerate(branches):
        if branch.startswith(r"\b") and branch[2:3] not in _QUANTIFIERS:
            branches[number] = branch[2:]
            changed = True
    return "|".join(branches) if changed else None


def match_starts(pattern: re.Pattern) -> Optional[tuple[str, ...]]:
    """Strings one of which every match of ``pattern`` starts with, or None when the pattern
    does not show a few such strings, none shorter than two characters."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    except (re.error, RecursionError):
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    starts, _whole = _prefixes(list(parsed))
    if starts is None or not starts or len(starts) > _MOST_STARTS or min(map(len, starts)) < _SHORTEST_START:
        return None
    return tuple(dict.fromkeys(starts))


def _prefixes(items: list) -> tuple[Optional[list[str]], bool]:
    """The strings the sequence ``items`` starts with, and whether they are all it matches.
    Zero-width assertions are passed over: leaving one out only lets more places through."""
    found = [""]
    for op, argument in items:
        name = str(op)
        if name == "AT":
            continue
        if name == "LITERAL":
            found = [prefix + chr(argument) for prefix in found]
            continue
        if name == "BRANCH":
            parts = [_prefixes(list(branch)) for branch in argument[1]]
        elif name == "SUBPATTERN" and not argument[1] and not argument[2]:
            parts = [_prefixes(list(argument[3]))]
        else:
            return found, False
        if any(strings is None for strings, _whole in parts):
            return None, False
        found = [prefix + rest for prefix in found for strings, _whole in parts for rest in strings]
        if len(found) > _MOST_STARTS:
            return None, False
        if not all(whole for _strings, whole in parts):
            return found, False
    return found, True


class TextPattern:
    """A compiled pattern whose ``search`` finds the same match as ``re``'s, faster when
    its matches start with one of a few names or its branches at a word boundary."""

    __slots__ = ("pattern", "_starts", "_scout")

    def __init__(self, pattern: "str | re.Pattern", flags: int = 0):
        self.pattern = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, flags)
        self._starts = match_starts(self.pattern)
        if self._starts is not None and len(self._starts) == 1 and self.pattern.pattern.startswith(self._starts[0]):
            self._starts = None  # a literal prefix: `re` looks for it itself
        scout = scout_source(self.pattern.pattern) if self._starts is None else None
        try:
            self._scout = re.compile(scout, self.pattern.flags) if scout is not None else None
        except re.error:
            self._scout = None

    def search(self, text: str, pos: int = 0, endpos: Optional[int] = None) -> Optional[re.Match]:
        if endpos is None:
            endpos = len(text)
        if self._starts is not None:
            return self._search_starts(text, pos, endpos)
        if self._scout is None:
            return self.pattern.search(text, pos, endpos)
        scout, match = self._scout.search, self.pattern.match
        while True:
            candidate = scout(text, pos, endpos)
            if candidate is None:
                return None
            found = match(text, candidate.start(), endpos)
            if found is not None:
                return found
            pos = candidate.start() + 1

    def _search_starts(self, text: str, pos: int, endpos: int) -> Optional[re.Match]:
        match, find = self.pattern.match, text.find
        following = {start: find(start, pos, endpos) for start in self._starts}
        while True:
            places = [place for place in following.values() if place >= 0]
            if not places:
                return None
            place = min(places)
            found = match(text, place, endpos)
            if found is not None:
                return found
            for start, at in following.items():
                if at == place:
                    following[start] = find(start, place + 1, endpos)
