"""What torchlint reports: diagnostics per file, their fixes and positions.

Plain data with no syntax tree in it, so that reports cross process boundaries (the
``--jobs`` pool), go into the cache and come back out of it, and so that a run whose
files are all cached never imports the parser.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from torchlint import DOCUMENTATION_URL
from torchlint.syntax.source import LineIndex, SourceText

if TYPE_CHECKING:
    from torchlint.framework.rule import Edit


class Applicability(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


def allowed_applicabilities(unsafe: bool) -> frozenset[Applicability]:
    """The fixes that may be applied: safe ones, and with ``--unsafe-fixes`` unsafe ones too."""
    return frozenset({Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE})


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` (character offsets) with ``content``."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    """A rewrite that resolves a finding.  ``message`` says what it does ("Replace
    `.data` with `.detach()`"); its edits are applied together or not at all."""

    applicability: Applicability
    message: str
    edits: tuple["Edit", ...] = ()  # empty once the engine has turned them into TextEdits


@dataclass(frozen=True)
class EngineRule:
    """Diagnostics the engine itself emits (not selectable, not suppressible)."""

    code: str
    name: str
    summary: str
    docs: str
    fix: Optional[Applicability] = None
    default_enabled: bool = True

    def documentation(self) -> str:
        return f"# {self.code} {self.name}\n\n{self.summary}\n\n{textwrap.dedent(self.docs).strip()}\n"


UNLINTABLE_FILE = EngineRule(
    code="TL000",
    name="unlintable-file",
    summary="a file could not be read, decoded or parsed, so it was not linted",
    docs="""
    torchlint reports this instead of crashing when a file does not parse, is not valid
    in its declared encoding (UTF-8 unless a PEP 263 coding cookie or a BOM says
    otherwise), is binary, is too large, cannot be read, or disappears while torchlint
    runs. The message names the reason; every other file is still linted.

    A file with syntax that today's Python refuses but old scripts have (Python 2's
    `print x`, `except E, e:`; see TL205 for `async=`) is still linted: torchlint reads
    each such construct as Python 3 of the same length, reports the findings at the file's
    own lines and columns, and a TL000 note names the constructs. No fix is offered in
    such a file, since none would make it Python 3.

    It cannot be deselected or suppressed with `# noqa`: a file torchlint cannot read
    is a file nobody has checked. Exclude the file instead (`exclude` or
    `extend-exclude` in `[tool.torchlint]`).
    """,
)


@dataclass(frozen=True)
class Note:
    """A located sentence attached to a diagnostic: evidence, or a related place."""

    message: str
    row: int
    column: int


@dataclass
class Diagnostic:
    code: str
    name: str
    message: str
    path: str
    row: int
    column: int
    end_row: int
    end_column: int
    fix: Optional[Fix] = None
    evidence: list[Note] = field(default_factory=list)
    related: list[Note] = field(default_factory=list)
    # The fix's edits as character offsets into the source, for the fixer...
    text_edits: list[TextEdit] = field(default_factory=list)
    # ...and as (row, column, end_row, end_column, content), 1-based, for reporters.
    fix_edits: list[tuple[int, int, int, int, str]] = field(default_factory=list)
    # With --runtime: {"verdict", "evidence", "run", ["differential"]} from running the code.
    runtime: Optional[dict] = None
    # In a notebook: the cell (1-based among all cells, as Jupyter shows them); ``path``
    # then reads "nb.ipynb:cell 3" and row/column count within that cell.
    cell: Optional[int] = None
    # The torch release from which this finding holds, where it is not the rule's own
    # (a rule over a table of APIs, each deprecated in its release): see `target-torch`.
    since: Optional[str] = None

    @property
    def applicable_fix(self) -> Optional[Applicability]:
        """The applicability of a fix that can be applied (one with edits), else None."""
        return self.fix.applicability if self.fix is not None and self.text_edits else None

    @property
    def url(self) -> str:
        return DOCUMENTATION_URL.format(code=self.code, name=self.name)

    @property
    def sort_key(self):
        if self.cell is not None:  # "cell 10" sorts after "cell 9"
            return (self.path.rpartition(":cell ")[0], self.cell, self.row, self.column, self.code)
        return (self.path, 0, self.row, self.column, self.code)


CONTEXT_LINES = 2  # shown above and below a finding by the full format


@dataclass
class FileReport:
    path: str  # as shown to the user (relative to the working directory when inside it)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The whole source: kept only where the caller asked for it (the runtime check, fixes).
    source: Optional[SourceText] = None
    internal_error: Optional[str] = None
    filename: str = ""  # absolute path, for machine-readable output
    cells: dict[int, str] = field(default_factory=dict)  # a notebook's code cells, by number
    # The source lines the diagnostics point at (findings, their notes, their fixes), by
    # row, without line breaks: enough to show a report without holding the whole file.
    shown_lines: dict[int, str] = field(default_factory=dict)
    _cell_lines: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.filename:
            self.filename = self.path

    def line(self, row: int, cell: Optional[int] = None) -> Optional[str]:
        """Line ``row`` of the source (of a notebook: of the cell), if it is known."""
        if cell is None:
            return self.shown_lines.get(row)
        index = self._cell_lines.get(cell)
        if index is None:
            text = self.cells.get(cell)
            if text is None:
                return None
            # Indexed once per cell: a report asks for several lines around every finding.
            index = self._cell_lines[cell] = LineIndex(text)
        return index.line(row) if 1 <= row <= index.line_count else None

    def keep_shown_lines(self, text: str) -> None:
        """Fill ``shown_lines`` from the file's ``text``."""
        rows = set()
        for d in self.diagnostics:
            if d.cell is None:
                # The finding's lines with CONTEXT_LINES around them, and every line a fix edits.
                rows.update(range(max(1, d.row - CONTEXT_LINES), d.end_row + CONTEXT_LINES + 1))
                rows.update(note.row for note in (*d.evidence, *d.related))
                rows.update(row for edit in d.fix_edits for row in range(edit[0], edit[2] + 1))
        if not rows:
            self.shown_lines = {}
            return
        index = LineIndex(text)
        self.shown_lines = {row: index.line(row) for row in sorted(rows) if 1 <= row <= index.line_count}


def unlintable(path: str, reason: str, row: int = 1, column: int = 1) -> Diagnostic:
    return file_note(path, f"{path} was not linted: {reason}", row, column)


def file_note(path: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    """A TL000 that says something about the whole file (it was not linted, or was linted
    only in part, or as another Python reads it) at ``row``, ``column``."""
    return Diagnostic(
        code=UNLINTABLE_FILE.code,
        name=UNLINTABLE_FILE.name,
        message=message,
        path=path,
        row=row,
        column=column,
        end_row=row,
        end_column=column,
    )


def rows_phrase(rows: list[int]) -> str:
    """``line 4``, ``lines 4, 9``, ``lines 1, 2, 3, 4, 5 and 3 more``."""
    shown = ", ".join(str(row) for row in rows[:5])
    return ("line " if len(rows) == 1 else "lines ") + shown + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")


# --- plain-data form, for the cache ------------------------------------------------------

def report_to_data(report: FileReport) -> dict:
    """A JSON-ready form of ``report`` without its source (the cache has the bytes), with
    the lines it shows."""
    return {
        "path": report.path,
        "cells": {str(number): text for number, text in report.cells.items()},
        "shown_lines": {str(row): text for row, text in report.shown_lines.items()},
        "diagnostics": [_diagnostic_to_data(d) for d in report.diagnostics],
    }


def report_from_data(data: dict, filename: str) -> FileReport:
    """The inverse of ``report_to_data`` (without the source); raises (KeyError, TypeError, ValueError) on
    anything malformed, which the cache treats as a miss."""
    return FileReport(
        str(data["path"]),
        [_diagnostic_from_data(d) for d in data["diagnostics"]],
        filename=filename,
        cells={int(number): str(text) for number, text in data["cells"].items()},
        shown_lines={int(row): str(text) for row, text in data["shown_lines"].items()},
    )


def _diagnostic_to_data(d: Diagnostic) -> dict:
    return {
        "code": d.code, "name": d.name, "message": d.message, "path": d.path,
        "range": [d.row, d.column, d.end_row, d.end_column],
        "fix": [d.fix.applicability.value, d.fix.message] if d.fix is not None else None,
        "evidence": [[n.message, n.row, n.column] for n in d.evidence],
        "related": [[n.message, n.row, n.column] for n in d.related],
        "text_edits": [[e.start, e.end, e.content] for e in d.text_edits],
        "fix_edits": [list(e) for e in d.fix_edits],
        "cell": d.cell,
        "since": d.since,
    }


def _diagnostic_from_data(data: dict) -> Diagnostic:
    row, column, end_row, end_column = (int(value) for value in data["range"])
    fix = data["fix"]
    return Diagnostic(
        code=str(data["code"]), name=str(data["name"]), message=str(data["message"]), path=str(data["path"]),
        row=row, column=column, end_row=end_row, end_column=end_column,
        fix=Fix(Applicability(fix[0]), str(fix[1])) if fix is not None else None,
        evidence=[Note(str(m), int(r), int(c)) for m, r, c in data["evidence"]],
        related=[Note(str(m), int(r), int(c)) for m, r, c in data["related"]],
        text_edits=[TextEdit(int(s), int(e), str(t)) for s, e, t in data["text_edits"]],
        fix_edits=[(int(a), int(b), int(c), int(d), str(t)) for a, b, c, d, t in data["fix_edits"]],
        cell=int(data["cell"]) if data["cell"] is not None else None,
        since=str(data["since"]) if data.get("since") is not None else None,
    )


def fingerprints(report: FileReport) -> list[str]:
    """One fingerprint per diagnostic of ``report``, in order, stable when lines move: the
    rule, the finding's source line with whitespace normalized, and how many earlier
    findings in the file share both (SARIF's partialFingerprints, GitLab's fingerprint,
    the baseline's entries)."""
    occurrences: dict[tuple[str, str, str], int] = {}
    found = []
    for d in report.diagnostics:
        line = report.line(d.row, d.cell)
        key = (d.code, d.name, _normalized(line) if line is not None else "")
        occurrence = occurrences.get(key, 0)
        occurrences[key] = occurrence + 1
        digest = _digest_of(*key).copy()  # a long line with many findings is hashed once
        digest.update(f"\0{occurrence}".encode())
        found.append(digest.hexdigest()[:32])
    return found


@functools.lru_cache(maxsize=256)
def _normalized(line: str) -> str:
    return " ".join(line.split())


@functools.lru_cache(maxsize=256)
def _digest_of(code: str, name: str, text: str):
    return hashlib.sha256(f"{code}\0{name}\0{text}".encode("utf-8", "surrogatepass"))
