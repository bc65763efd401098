"""Reading a file into text, or a clear reason why it cannot be linted.

Honours PEP 263 coding cookies and BOMs (via ``tokenize.detect_encoding``), refuses
binary and oversized files, and turns every I/O failure into an ``UnreadableSource``
naming the reason, so one bad file never stops a run.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from itertools import accumulate
from typing import Iterator, Optional


MAX_FILE_BYTES = 10 * 1024 * 1024


class UnreadableSource(Exception):
    """The file cannot be linted; ``reason`` says why, ``row``/``column`` where (1-based)."""

    def __init__(self, reason: str, row: int = 1, column: int = 1):
        super().__init__(reason)
        self.reason = reason
        self.row = row
        self.column = column


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # the codec used to decode, e.g. "utf-8", "utf-8-sig", "latin-1"
    data: bytes  # the bytes as read, to detect changes before writing back


def read_bytes(path: str, limit: int = MAX_FILE_BYTES, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``), or UnreadableSource.

    Anything but a regular file (a FIFO, a socket, a device) is refused before it is
    opened: opening a FIFO blocks until a writer comes, and opening some devices does
    something.  The file is opened non-blocking and checked again once open, so a file
    swapped for a FIFO after the check cannot block the run either.  Without
    ``follow_symlinks``, a symbolic link is refused too, also one put in its place after
    the check (``O_NOFOLLOW``): for a path whose links were resolved, and checked, already."""
    with open_regular(path, limit, follow_symlinks) as descriptor:
        return read_descriptor(descriptor, limit)


@contextlib.contextmanager
def open_regular(path: str, limit: int = MAX_FILE_BYTES, follow_symlinks: bool = True) -> Iterator[int]:
    """A read-only descriptor of the regular file at ``path``, opened as ``read_bytes``
    opens it (UnreadableSource when it cannot be), closed at the end."""
    with _reasons(follow_symlinks):
        kind = _special_kind((os.stat if follow_symlinks else os.lstat)(path).st_mode)
        if kind is not None:
            raise UnreadableSource(f"{kind}, not a regular file: skipped without opening it")
        descriptor = os.open(path, os.O_RDONLY | _OPEN_FLAGS | (0 if follow_symlinks else _NO_FOLLOW))
    try:
        with _reasons(follow_symlinks):
            info = os.fstat(descriptor)
        kind = _special_kind(info.st_mode)
        if kind is not None:
            raise UnreadableSource(f"{kind}, not a regular file (it was replaced while torchlint ran): skipped")
        if info.st_size > limit:
            raise UnreadableSource(too_large(info.st_size, limit))
        yield descriptor
    finally:
        os.close(descriptor)


def read_descriptor(descriptor: int, limit: int = MAX_FILE_BYTES) -> bytes:
    """All the bytes of the file open at ``descriptor``, from its start (at most ``limit``;
    UnreadableSource past it or when reading fails)."""
    chunks, size = [], 0
    with _reasons(True):
        os.lseek(descriptor, 0, os.SEEK_SET)
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    if size > limit:
        raise UnreadableSource(too_large(size, limit))
    return b"".join(chunks)


@contextlib.contextmanager
def _reasons(follow_symlinks: bool) -> Iterator[None]:
    """Turn the OSError of opening or reading a file into an UnreadableSource saying why."""
    try:
        yield
    except FileNotFoundError:
        raise UnreadableSource(FILE_NOT_FOUND)
    except NotADirectoryError:
        raise UnreadableSource("file not found: a folder on its path is a file")
    except PermissionError:
        raise UnreadableSource("permission denied: the file cannot be read")
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnreadableSource(SYMLINK_LOOP if follow_symlinks else f"{_LINK}, not a regular file: not followed")
        raise UnreadableSource(f"cannot read the file: {error.strerror or error}")
    except ValueError as error:  # a path with a NUL character
        raise UnreadableSource(f"cannot read the file: {error}")


# Never block on open, never make a terminal ours, never leak into a child.
_OPEN_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
SYMLINK_LOOP = "too many levels of symbolic links (a symlink loop?)"
FILE_NOT_FOUND = "file not found (it may have been removed while torchlint was running)"
_LINK = "a symbolic link (it was put in place while torchlint ran)"
_SPECIAL_KINDS = (
    (stat.S_ISLNK, _LINK),  # only without following links
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _special_kind(mode: int) -> Optional[str]:
    """What a file that is not a regular one is ("a named pipe (FIFO)"), else None."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in _SPECIAL_KINDS:
        if test(mode):
            return kind
    return "a special file"


def too_large(size: int, limit: int) -> str:
    """Why a file of ``size`` bytes is not read, as every way in says it."""
    return f"file is too large ({size / 1024 / 1024:.1f} MiB; torchlint skips files over {limit / 1024 / 1024:g} MiB)"


def decode(data: bytes) -> SourceText:
    """Decode source bytes the way Python would, or raise UnreadableSource."""
    if b"\x00" in data:
        row, column = _offset_position(data, data.index(b"\x00"))
        raise UnreadableSource("binary file: it contains NUL bytes, so it is not Python source", row, column)
    try:
        encoding, _ = tokenize.detect_encoding(_lines(data))
    except SyntaxError as error:
        message = str(getattr(error, "msg", error))
        if "invalid or missing encoding declaration" not in message:
            raise UnreadableSource(f"invalid encoding declaration: {message}")
        # Undecodable bytes in the first two lines with no cookie: decoding as UTF-8
        # below reports exactly where.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except LookupError:
        raise UnreadableSource(f"unknown encoding {encoding!r} in the coding declaration")
    except UnicodeDecodeError as error:
        row, column = _offset_position(data, error.start)
        declared = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        raise UnreadableSource(
            f"not valid {declared}: cannot decode byte 0x{data[error.start]:02x} "
            f"at line {row}, column {column} (declare the encoding with a PEP 263 "
            f"coding comment if the file is not {declared})",
            row,
            column,
        )
    except Exception as error:  # a codec may raise anything: `undefined`, `punycode` raise UnicodeError
        raise UnreadableSource(f"cannot decode the file as {encoding!r}, its declared encoding: "
                               f"{type(error).__name__}: {_first_line(error)}")
    if encoding == "utf-8-sig" and text.startswith("\ufeff"):
        # Python skips one byte-order mark; a second one is a character it rejects.
        raise UnreadableSource("a second byte-order mark (U+FEFF) follows the first: Python rejects the file "
                               "(invalid non-printable character U+FEFF)")
    return SourceText(text, encoding, data)


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [""])[0][:200]


def _lines(data: bytes):
    """A ``readline`` over ``data`` that ends lines where Python does: at \\r\\n, \\r or
    \\n (``io.BytesIO`` knows only \\n, and would miss the coding cookie of a file with
    old Mac line endings)."""
    lines = _BYTE_LINE.finditer(data)
    return lambda: next((line.group() for line in lines if line.group()), b"")


_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?")
_BYTE_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def _offset_position(data: bytes, offset: int) -> tuple[int, int]:
    row, start = 1, 0
    for line_break in _BYTE_LINE_BREAK.finditer(data, 0, offset):
        row, start = row + 1, line_break.end()
    return row, offset - start + 1


def printable(text: str) -> str:
    """``text`` with what cannot be written as UTF-8 shown as an escape: the bytes of a
    file name that is not UTF-8 (``bad\\xffname.py``), a lone surrogate (``\\udcff``)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


# A line break as Python counts them.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (one past the last line break too)."""
    if "\r" in text:
        return [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    # The common case, in C: a match object per line costs more than the line.
    lines = text.split("\n")
    lines.pop()
    return list(accumulate(map((1).__add__, map(len, lines)), initial=0))


def line_start(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` starts."""
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


class LineIndex:
    """Offsets to 1-based (row, column) and back, with newline conventions of Python."""

    def __init__(self, source: str):
        self.source = source
        self.starts = line_starts(source)

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1] + 1

    def offset(self, row: int, column: int) -> int:
        return self.starts[row - 1] + column - 1

    def line(self, row: int) -> str:
        """The text of line ``row`` without its line break."""
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.source)
        return self.source[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self.starts)
