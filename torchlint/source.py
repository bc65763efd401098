"""Reading a file into text, or a clear reason why it cannot be linted.

Honours PEP 263 coding cookies and BOMs (via ``tokenize.detect_encoding``), refuses
binary and oversized files, and turns every I/O failure into an ``UnreadableSource``
naming the reason, so one bad file never stops a run.
"""

from __future__ import annotations

import bisect
import io
import os
import re
import tokenize
from dataclasses import dataclass


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


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            try:
                size = os.fstat(handle.fileno()).st_size
            except OSError:
                size = 0
            if size > MAX_FILE_BYTES:
                raise UnreadableSource(_too_large(size))
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UnreadableSource("file not found (it may have been removed while torchlint was running)")
    except IsADirectoryError:
        raise UnreadableSource("is a directory, not a file")
    except PermissionError:
        raise UnreadableSource("permission denied: the file cannot be read")
    except OSError as error:
        raise UnreadableSource(f"cannot read the file: {error.strerror or error}")
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableSource(_too_large(len(data)))
    return data


def _too_large(size: int) -> str:
    return (
        f"file is too large ({size / 1024 / 1024:.1f} MiB; torchlint skips files over "
        f"{MAX_FILE_BYTES // 1024 // 1024} MiB)"
    )


def decode(data: bytes) -> SourceText:
    """Decode source bytes the way Python would, or raise UnreadableSource."""
    if b"\x00" in data:
        row, column = _offset_position(data, data.index(b"\x00"))
        raise UnreadableSource("binary file: it contains NUL bytes, so it is not Python source", row, column)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
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
    return SourceText(text, encoding, data)


def _offset_position(data: bytes, offset: int) -> tuple[int, int]:
    before = data[:offset]
    row = before.count(b"\n") + 1
    column = offset - (before.rfind(b"\n") + 1) + 1
    return row, column


# A line break as Python counts them.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def line_start(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` starts."""
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


class LineIndex:
    """Offsets to 1-based (row, column) and back, with newline conventions of Python."""

    def __init__(self, source: str):
        self.source = source
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(source)]

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
