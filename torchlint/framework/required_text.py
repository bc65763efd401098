"""What text a rule's ``requires`` pattern cannot match without: plain strings to look for
with ``in`` before the pattern itself is searched.

``re`` searches an alternation (``backward|autograd\\.grad|\\bforward\\b``) position by
position, about ten times slower than ``str.__contains__`` looks for each literal; with sixty
rules gating every file on their patterns, that search was a seventh of a whole run on timm.
A pattern's necessary literals are read from its parse tree: a run of literal characters in
a sequence, or, for an alternation, one literal from every branch (in lower case for a
case-insensitive pattern, looked for in the lowered text).  Where no branch gives one (a
pattern that starts with a character class) there is no shortcut and the pattern alone
decides.  A pattern that is nothing but literals (``lr_scheduler|swa_utils``) is decided
by them alone, the shortest (the likeliest found) first.  The standard library exposes no
such analysis, and an Aho-Corasick extension would be a compiled dependency for a linter
that has none.  Whether a pattern is found is asked branch by branch: each top-level
branch of an alternation is decided by its own literals where it is nothing else, and is
otherwise searched alone, where ``re`` can skip ahead to its literal start (the whole
alternation is tried at every character).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from torchlint.syntax.text_search import TextPattern, sre_parse, top_level_branches


_SHORTEST_USEFUL = 2  # a one-character literal is in nearly every file: no shortcut
_MOST_USEFUL = 64  # past this many, an alternation is left to the pattern


@dataclass(frozen=True)
class Literals:
    """Strings one of which is in every text a pattern matches; ``folded``: in the text
    lowered (the pattern ignores case)."""

    strings: tuple[str, ...]
    folded: bool = False
    exact: bool = False  # the pattern matches exactly the texts holding one of them


def necessary_literals(pattern: str) -> Optional[Literals]:
    """What every text ``pattern`` matches holds, or None when the pattern does not show
    such strings (then the pattern must be searched)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError):
        return None
    if parsed.state.flags & re.IGNORECASE:
        found = _of_sequence(list(parsed), folded=True)
        if found:
            found = tuple(dict.fromkeys(s.lower() for s in found))
        return Literals(_likeliest_first(found), folded=True) if found and len(found) <= _MOST_USEFUL else None
    exact = _expansions(list(parsed))
    if exact is not None and len(exact) <= _MOST_USEFUL and all(exact):
        return Literals(_likeliest_first(exact), exact=True)
    found = _of_sequence(list(parsed))
    return Literals(_likeliest_first(found)) if found and len(found) <= _MOST_USEFUL else None


def _expansions(items: list) -> Optional[tuple[str, ...]]:
    """Every string the sequence ``items`` matches when it is made of literals and
    alternations only (None otherwise), without those that hold another."""
    found = [""]
    for op, argument in items:
        name = str(op)
        if name == "LITERAL":
            found = [prefix + chr(argument) for prefix in found]
        elif name == "BRANCH":
            branches = [_expansions(list(branch)) for branch in argument[1]]
            if any(branch is None for branch in branches):
                return None
            found = [prefix + rest for prefix in found for branch in branches for rest in branch]
        else:
            return None
        if len(found) > 4 * _MOST_USEFUL:
            return None
    unique = list(dict.fromkeys(found))
    return tuple(text for text in unique if not any(other != text and other in text for other in unique))


def _likeliest_first(literals: tuple[str, ...]) -> tuple[str, ...]:
    """The shortest first: the likeliest to be found, ending the search early."""
    return tuple(sorted(literals, key=len))


def _of_sequence(items: list, folded: bool = False) -> Optional[tuple[str, ...]]:
    """The best set of literals one of which the sequence ``items`` must contain (``folded``:
    the pattern ignores case everywhere)."""
    candidates: list[tuple[str, ...]] = []
    run: list[str] = []
    for op, argument in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(argument))
            continue
        if run:
            candidates.append(("".join(run),))
            run = []
        if name == "AT":
            continue  # zero-width (`\b`, `^`): the literals around it are still necessary
        if name == "BRANCH":
            branches = [_of_sequence(list(branch), folded) for branch in argument[1]]
            if all(branches):
                candidates.append(tuple(dict.fromkeys(literal for branch in branches for literal in branch)))
        elif name == "SUBPATTERN":
            _group, add_flags, _del_flags, inner = argument
            if folded or not add_flags & re.IGNORECASE:
                found = _of_sequence(list(inner), folded)
                if found:
                    candidates.append(found)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            minimum, _maximum, inner = argument
            if minimum >= 1:
                found = _of_sequence(list(inner), folded)
                if found:
                    candidates.append(found)
    if run:
        candidates.append(("".join(run),))
    candidates = [found for found in candidates if min(map(len, found)) >= _SHORTEST_USEFUL]
    if not candidates:
        return None
    # The rarest-looking set: its shortest literal as long as possible, then the fewest.
    return max(candidates, key=lambda found: (min(map(len, found)), -len(found)))


def may_contain(text: str, literals: Optional[Literals], seen: Optional[dict] = None) -> bool:
    """False only when ``text`` holds none of ``literals`` (None: no shortcut, True).
    ``seen`` keeps whether ``text`` holds each literal looked for: the rules' patterns share
    literals (`backward`, `torch.`), and each look goes over the whole text."""
    if literals is None:
        return True
    if literals.folded:
        text = text.lower()
    if seen is None:
        return any(literal in text for literal in literals.strings)
    for literal in literals.strings:
        key = (literal, literals.folded)
        held = seen.get(key)
        if held is None:
            held = seen[key] = literal in text
        if held:
            return True
    return False


class RequiredPattern:
    """One ``requires`` pattern, ready to be looked for in a file's text."""

    __slots__ = ("pattern", "literals", "_branches")

    def __init__(self, source: str):
        self.pattern = re.compile(source)
        self.literals = necessary_literals(source)
        self._branches: Optional[tuple[tuple[TextPattern, Optional[Literals]], ...]] = None

    def may_be_in(self, text: str, seen: Optional[dict] = None) -> bool:
        """False only when ``text`` holds none of the pattern's necessary literals (``seen``:
        see ``may_contain``)."""
        return may_contain(text, self.literals, seen)

    def found_in(self, text: str, seen: Optional[dict] = None) -> bool:
        """The pattern matches somewhere in ``text``."""
        if self.literals is not None and self.literals.exact:
            return may_contain(text, self.literals, seen)
        if self._branches is None:
            self._branches = self._split()
        for branch, literals in self._branches:
            if literals is not None and literals.exact:
                if may_contain(text, literals, seen):
                    return True
            elif may_contain(text, literals, seen) and branch.search(text) is not None:
                return True
        return False

    def _split(self) -> tuple[tuple[TextPattern, Optional[Literals]], ...]:
        source = self.pattern.pattern
        branches = None if self.pattern.flags & ~re.UNICODE or source.startswith("(?") \
            else top_level_branches(source)
        if branches and len(branches) > 1:
            try:  # a branch may not stand alone (a reference to another's group)
                return tuple((TextPattern(branch), necessary_literals(branch)) for branch in branches)
            except re.error:
                pass
        return ((TextPattern(self.pattern), self.literals),)
