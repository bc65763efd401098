"""Gitignore patterns (``.gitignore``, ``exclude``, ``per-file-ignores``), matched as git
matches them, in at most len(pattern) * len(path) steps.

pathspec, used before, compiles each pattern to a Python regular expression, and ``re``
backtracks (it has no linear mode): ``a*a*a*...a*b`` against a long name of ``a``s ran
for minutes, and lines git accepts (``foo\\``, ``[z-a]``) raised.  Here a pattern becomes a
list of tokens, and a path is matched by following every place in the pattern at once,
one bit per place (a bit-parallel NFA), so nothing is ever retried.

The meaning is git's: dir.c (reading a line, basename or path patterns, ``!``, a trailing
``/`` for folders) and wildmatch.c (``*``, ``?``, ``[...]``, ``**``), as of git 2.52
(``foo**/bar`` does not match ``foobar``).  Paths and patterns are compared as bytes, as
git compares them.  A pattern that cannot match anything (an unterminated ``[``, an
unknown ``[:class:]``, a trailing unescaped ``\\``) matches nothing, as in git; its
``problem`` says why, for the settings that reject such a pattern.
"""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from typing import Iterable, Optional, Union

_SLASH = ord("/")
_BACKSLASH = ord("\\")
_STAR_BYTE, _QUESTION, _OPEN, _CLOSE, _COLON = b"*?[]:"
_GLOB_SPECIAL = (b"*", b"?", b"[", b"\\")
_ALL_BYTES = range(256)

# The classes of `[[:name:]]`, as git's own locale-free ctype defines them (sane-ctype.h).
_PUNCTUATION = frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_NAMED_CLASSES: dict[bytes, frozenset[int]] = {
    b"alnum": frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"alpha": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset([*range(32), 127]),
    b"digit": frozenset(b"0123456789"),
    b"graph": frozenset(range(0x21, 0x7F)),
    b"lower": frozenset(b"abcdefghijklmnopqrstuvwxyz"),
    b"print": frozenset(range(0x20, 0x7F)),
    b"punct": _PUNCTUATION,
    b"space": frozenset(b" \t\n\r"),
    b"upper": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    b"xdigit": frozenset(b"0123456789ABCDEFabcdef"),
}


class _Unmatchable(Exception):
    """The pattern can match nothing; the message says why."""


# --- tokens ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Byte:
    """One byte out of ``accepted``."""

    accepted: frozenset[int]


@dataclass(frozen=True)
class _Star:
    """Any run of bytes, without ``/`` unless ``crosses``."""

    crosses: bool


@dataclass(frozen=True)
class _Folders:
    """``**/``: nothing, or any run of bytes that ends with ``/`` (zero or more folders)."""


_Token = Union[_Byte, _Star, _Folders]
_LITERAL = tuple(_Byte(frozenset({byte})) for byte in _ALL_BYTES)
_STAR, _CROSSING_STAR = _Star(crosses=False), _Star(crosses=True)
_ANY, _ANY_BUT_SLASH = _Byte(frozenset(_ALL_BYTES)), _Byte(frozenset(_ALL_BYTES) - {_SLASH})


def _tokens(pattern: bytes, pathname: bool, notes: list[str]) -> list[_Token]:
    """wildmatch.c's reading of ``pattern``; with ``pathname`` (WM_PATHNAME), ``*``, ``?``
    and classes do not match ``/`` and ``**`` may cross folders.  ``notes`` gets what
    git accepts but is surely a mistake (a reversed range)."""
    tokens: list[_Token] = []
    any_byte = _ANY_BUT_SLASH if pathname else _ANY
    index = 0
    while index < len(pattern):
        byte = pattern[index]
        if byte == _BACKSLASH:
            if index + 1 == len(pattern):
                raise _Unmatchable("ends with a backslash, which escapes nothing (a backslash is written as two)")
            tokens.append(_LITERAL[pattern[index + 1]])
            index += 2
        elif byte == _QUESTION:
            tokens.append(any_byte)
            index += 1
        elif byte == _STAR_BYTE:
            index = _star(pattern, index, pathname, tokens)
        elif byte == _OPEN:
            accepted, index = _bracket(pattern, index, notes)
            tokens.append(_Byte(accepted & any_byte.accepted))
        else:
            tokens.append(_LITERAL[byte])
            index += 1
    return tokens


def _star(pattern: bytes, start: int, pathname: bool, tokens: list[_Token]) -> int:
    """Appends the token(s) of the stars at ``start``; returns where the pattern goes on."""
    end = start
    while end < len(pattern) and pattern[end] == _STAR_BYTE:
        end += 1
    if not pathname:
        tokens.append(_CROSSING_STAR)
        return end
    if end - start == 1 or not _is_whole_segment(pattern, start, end):
        tokens.append(_STAR)  # `a**b` is `a*b`
        return end
    if end < len(pattern) and pattern[end] == _SLASH:
        if not (tokens and isinstance(tokens[-1], _Folders)):  # `**/**/` is `**/`
            tokens.append(_Folders())
        return end + 1
    tokens.append(_CROSSING_STAR)  # a trailing `**`, or `**\/` (no zero-folder case in git)
    return end


def _is_whole_segment(pattern: bytes, start: int, end: int) -> bool:
    before = start == 0 or pattern[start - 1] == _SLASH
    after = end == len(pattern) or pattern[end] == _SLASH or pattern[end:end + 2] == b"\\/"
    return before and after


def _bracket(pattern: bytes, start: int, notes: list[str]) -> tuple[frozenset[int], int]:
    """The bytes the class at ``start`` (a ``[``) accepts, and the index after it; read
    exactly as wildmatch.c reads it (``]`` first is a member, ``[:digit:]``, ranges, ``\\``)."""

    def at(index: int) -> int:
        return pattern[index] if index < len(pattern) else 0

    members: set[int] = set()
    index = start + 1
    negated = at(index) in (ord("!"), ord("^"))
    if negated:
        index += 1
    previous = 0  # the member a `-` makes a range from; 0 after a range or a named class
    while True:
        byte = at(index)
        if byte == 0:
            raise _Unmatchable("has a `[` that is never closed")
        if byte == _BACKSLASH:
            index += 1
            byte = at(index)
            if byte == 0:
                raise _Unmatchable("has a `[` that is never closed")
            members.add(byte)
        elif byte == ord("-") and previous and at(index + 1) not in (0, _CLOSE):
            index += 1
            byte = at(index)
            if byte == _BACKSLASH:
                index += 1
                byte = at(index)
                if byte == 0:
                    raise _Unmatchable("has a `[` that is never closed")
            if byte < previous:  # git accepts it: it adds nothing to its first end
                notes.append(f"has the reversed range `{chr(previous)}-{chr(byte)}`")
            members.update(range(previous, byte + 1))
            byte = 0
        elif byte == _OPEN and at(index + 1) == _COLON:
            named, index = _named_class(pattern, index)
            if named is None:
                members.add(_OPEN)
            else:
                members |= named
                byte = 0
        else:
            members.add(byte)
        previous = byte
        index += 1
        if at(index) == _CLOSE:
            break
    accepted = _ANY.accepted - members if negated else frozenset(members)
    return accepted, index + 1


def _named_class(pattern: bytes, start: int) -> tuple[Optional[frozenset[int]], int]:
    """``[:name:]`` at ``start`` (its ``[``): its bytes and the index of its last ``]``, or
    (None, start) where there is no ``:]`` and the ``[`` is an ordinary member."""
    name_start = start + 2
    close = pattern.find(b"]", name_start)
    if close == -1:
        raise _Unmatchable("has a `[` that is never closed")
    if close - name_start < 1 or pattern[close - 1] != _COLON:
        return None, start
    name = pattern[name_start:close - 1]
    if name not in _NAMED_CLASSES:
        raise _Unmatchable(f"names an unknown character class `[:{name.decode('utf-8', 'replace')}:]`")
    return _NAMED_CLASSES[name], close


# --- matching --------------------------------------------------------------------------


class _Matcher:
    """Whether a whole text matches a token list.  The single bytes at both ends are
    compared directly; what lies between them is followed place by place, every place
    at once, each place one bit of an int (``_Places``)."""

    def __init__(self, tokens: list[_Token], exact: Optional[bytes] = None):
        self.exact = exact  # the text itself, for a pattern without wildcards
        head = 0
        while head < len(tokens) and isinstance(tokens[head], _Byte):
            head += 1
        tail = len(tokens)
        while tail > head and isinstance(tokens[tail - 1], _Byte):
            tail -= 1
        self.head = [token.accepted for token in tokens[:head]]
        self.tail = [token.accepted for token in tokens[tail:]]
        self.middle = tokens[head:tail]
        self.shortest = sum(1 for token in tokens if isinstance(token, _Byte))
        self._places = _Places(self.middle) if len(self.middle) > 1 else None

    @property
    def last_bytes(self) -> Optional[frozenset[int]]:
        """The bytes a matching text can end with, when a byte token ends the pattern."""
        return self.tail[-1] if self.tail else None

    def matches(self, text: bytes) -> bool:
        if self.exact is not None:
            return text == self.exact
        if len(text) < self.shortest:
            return False
        end = len(text) - len(self.tail)
        if not all(byte in accepted for accepted, byte in zip(self.head, text)):
            return False
        if not all(byte in accepted for accepted, byte in zip(self.tail, text[end:])):
            return False
        rest = text[len(self.head):end]
        if self._places is not None:
            return self._places.match(rest)
        if not self.middle:
            return not rest
        only = self.middle[0]  # one star (the common case) or `**/`
        if isinstance(only, _Star):
            return only.crosses or _SLASH not in rest
        return not rest or rest.endswith(b"/")


class _Places:
    """A bit-parallel NFA over tokens: bit ``i`` set means "the tokens before place ``i``
    match the text read so far".  A byte token has one place; a star one place that a
    byte may stay in; ``**/`` two: one that leads on to the second (or past it, matching
    no folder), and one that any byte stays in and a ``/`` leaves."""

    def __init__(self, tokens: list[_Token]):
        self.take: list[tuple[int, frozenset[int]]] = []  # (place, the bytes that move it on)
        self.stay_slash = self.stay_other = 0  # the places a `/` (or another byte) stays in
        self.lead = self.leap = 0  # the places that lead on to the next (or the one after) unread
        place = 0
        for token in tokens:
            bit = 1 << place
            if isinstance(token, _Byte):
                self.take.append((place, token.accepted))
            elif isinstance(token, _Star):
                self.stay_other |= bit
                self.stay_slash |= bit if token.crosses else 0
                self.lead |= bit
            else:
                self.lead |= bit
                self.leap |= bit
                self.stay_other |= bit << 1
                self.stay_slash |= bit << 1
                self.take.append((place + 1, _LITERAL[_SLASH].accepted))
                place += 1
            place += 1
        self.final = 1 << place
        self._takes: dict[int, int] = {}  # byte -> the places it moves on

    def match(self, text: bytes) -> bool:
        places = self._closure(1)
        for byte in text:
            stay = self.stay_slash if byte == _SLASH else self.stay_other
            places = self._closure(((places & self._taking(byte)) << 1) | (places & stay))
            if not places:
                return False
        return bool(places & self.final)

    def _closure(self, places: int) -> int:
        """``places`` and every place they lead on to without reading a byte."""
        while True:
            wider = places | ((places & self.lead) << 1) | ((places & self.leap) << 2)
            if wider == places:
                return places
            places = wider

    def _taking(self, byte: int) -> int:
        mask = self._takes.get(byte)
        if mask is None:
            mask = sum(1 << place for place, accepted in self.take if byte in accepted)
            self._takes[byte] = mask
        return mask


# --- lines -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """One line of a .gitignore (or one ``exclude`` entry)."""

    text: str  # the line as written
    negative: bool  # `!pattern`: re-includes
    directory_only: bool  # `pattern/`: folders only
    basename: bool  # no `/` inside: matched against the last part of a path
    body: bytes  # what is matched, without `!`, a leading or trailing `/`
    matcher: Optional[_Matcher] = field(compare=False, repr=False)  # None: matches nothing
    problem: Optional[str] = None  # why it matches nothing (or surely not what was meant)

    @property
    def literal(self) -> bool:
        return self.matcher is not None and self.matcher.exact is not None

    def matches(self, path: bytes, name: bytes, is_dir: bool) -> bool:
        if self.matcher is None or (self.directory_only and not is_dir):
            return False
        return self.matcher.matches(name if self.basename else path)


def parse_line(line: bytes) -> Optional[Pattern]:
    """A line as git's dir.c reads it (add_pattern, parse_path_pattern); None for a blank
    line or a comment."""
    line = line.split(b"\0", 1)[0]  # git reads a line as a C string
    if not line or line.startswith(b"#"):
        return None
    text = os.fsdecode(line)
    body = _trim_trailing_spaces(line) if line.endswith(b" ") else line
    negative = body.startswith(b"!")
    if negative:
        body = body[1:]
    directory_only = body.endswith(b"/")
    if directory_only:
        body = body[:-1]
    basename = b"/" not in body
    if not basename and body.startswith(b"/"):
        body = body[1:]
    notes: list[str] = []
    try:
        matcher: Optional[_Matcher] = _Matcher(_tokens(body, not basename, notes)) if _has_glob(body) \
            else _Matcher([], exact=body)
    except _Unmatchable as unmatchable:
        matcher, notes = None, [str(unmatchable)]
    return Pattern(text, negative, directory_only, basename, body, matcher, notes[0] if notes else None)


def _has_glob(body: bytes) -> bool:
    return any(special in body for special in _GLOB_SPECIAL)


def _trim_trailing_spaces(line: bytes) -> bytes:
    """Without its trailing spaces, unless escaped (`foo\\ ` keeps one): dir.c's rule."""
    last_space = None
    index = 0
    while index < len(line):
        byte = line[index]
        if byte == ord(" "):
            if last_space is None:
                last_space = index
        else:
            if byte == _BACKSLASH:
                index += 1
                if index == len(line):
                    return line
            last_space = None
        index += 1
    return line if last_space is None else line[:last_space]


_FEW_BYTES = 16
_REMEMBERED_FOLDERS = 4096


def _first(entry: tuple[int, Pattern]) -> int:
    return entry[0]


class PatternList:
    """Patterns where the last that matches decides, as in one .gitignore file."""

    def __init__(self, patterns: Iterable[Pattern]):
        # A repeated line decides nothing its last copy does not: keep the last copy only.
        last: dict[Pattern, int] = {}
        for index, pattern in enumerate(patterns):
            last.pop(pattern, None)
            last[pattern] = index
        self.patterns = [pattern for pattern in last if pattern.matcher is not None]
        # A long .gitignore stays cheap: lines without wildcards are looked up by name or
        # path, and a line that ends with one of a few bytes is tried only on paths that
        # end with one of them; the rest are tried from the last down to the best match.
        self._names: dict[tuple[bytes, bool], int] = {}
        self._paths: dict[tuple[bytes, bool], int] = {}
        self._ending: dict[int, list[tuple[int, Pattern]]] = {}
        self._anywhere: list[tuple[int, Pattern]] = []
        for index, pattern in enumerate(self.patterns):
            last_bytes = pattern.matcher.last_bytes  # type: ignore[union-attr]
            if pattern.literal:
                table = self._names if pattern.basename else self._paths
                table[pattern.body, pattern.directory_only] = index
            elif last_bytes is not None and len(last_bytes) <= _FEW_BYTES:
                for byte in last_bytes:
                    self._ending.setdefault(byte, []).append((index, pattern))
            else:
                self._anywhere.append((index, pattern))
        self._folders: dict[str, bool] = {}  # folder -> covers(folder): the files of a folder ask alike

    @classmethod
    def from_gitignore(cls, data: bytes) -> "PatternList":
        """The patterns of a .gitignore file's contents."""
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        lines = (line[:-1] if line.endswith(b"\r") else line for line in data.split(b"\n"))
        return cls(pattern for pattern in map(parse_line, lines) if pattern is not None)

    @classmethod
    def from_strings(cls, lines: Iterable[str]) -> "PatternList":
        """Patterns given one per string (settings)."""
        return cls(pattern for pattern in (parse_line(os.fsencode(line)) for line in lines) if pattern is not None)

    def decide(self, relative: str, is_dir: bool) -> Optional[bool]:
        """Whether ``relative`` (a path below the patterns' folder) is ignored: True or
        False (re-included by a ``!`` line) by the last pattern that matches it; None
        when none does.  Its folders are not looked at (git would not look into an
        ignored one)."""
        path = os.fsencode(relative)
        name = path.rsplit(b"/", 1)[-1]
        best = max(self._names.get((name, False), -1), self._paths.get((path, False), -1))
        if is_dir:
            best = max(best, self._names.get((name, True), -1), self._paths.get((path, True), -1))
        for index, pattern in self._candidates(path[-1] if path else None):
            if index < best:
                break
            if pattern.matches(path, name, is_dir):
                best = index
                break
        return None if best < 0 else not self.patterns[best].negative

    def _candidates(self, last: Optional[int]) -> Iterable[tuple[int, Pattern]]:
        """The patterns with wildcards that may match a path ending with ``last``, from
        the last line up."""
        ending = self._ending.get(last, []) if last is not None else []
        if not ending or not self._anywhere:
            return reversed(ending or self._anywhere)
        return heapq.merge(reversed(ending), reversed(self._anywhere), key=_first, reverse=True)

    def covers(self, relative: str, is_dir: bool) -> bool:
        """Whether ``relative`` or one of its folders is ignored (git does not re-include
        anything inside an ignored folder)."""
        folder, _slash, _name = relative.rpartition("/")
        return (bool(folder) and self._covers_folder(folder)) or bool(self.decide(relative, is_dir))

    def _covers_folder(self, folder: str) -> bool:
        covered = self._folders.get(folder)
        if covered is None:
            covered = self.covers(folder, is_dir=True)
            if len(self._folders) >= _REMEMBERED_FOLDERS:
                self._folders.clear()
            self._folders[folder] = covered
        return covered


def problems(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(line, why) for each line that git accepts but that matches nothing, or not what
    was surely meant: a trailing unescaped ``\\``, an unterminated ``[``, an unknown
    ``[:class:]``, a reversed range (``[z-a]`` is ``[z]`` to git)."""
    found = []
    for line in lines:
        pattern = parse_line(os.fsencode(line))
        if pattern is not None and pattern.problem is not None:
            found.append((line, pattern.problem))
    return found
