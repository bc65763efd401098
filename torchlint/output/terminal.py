"""The ``full`` format, for people: each finding with its source in context, the fix as a
diff of the lines it changes, and the evidence under it; in colour on a terminal.

Colour follows the conventions of https://no-color.org and https://force-color.org:
``NO_COLOR`` (set and not empty) turns it off, ``FORCE_COLOR`` (set, not empty and not
``0``) turns it on where the output is not a terminal (CI logs); otherwise it is on for a
terminal that is not ``TERM=dumb``.
"""

from __future__ import annotations

import os
from typing import Iterable, TextIO

from torchlint.framework.diagnostics import CONTEXT_LINES, Applicability, Diagnostic, FileReport
from torchlint.output.escape import source_line, terminal

_RESET = "\x1b[0m"
_STYLES = {"path": "1", "code": "1;31", "marker": "36", "gutter": "34", "caret": "1;31", "removed": "31",
           "added": "32", "note": "2", "fix": "36", "verdict": "1;33"}
_MAX_SPAN_LINES = 6  # a finding over more lines shows its first ones, then "..."
# A source line is shown whole up to this many characters; a longer one (minified or
# generated code) around the finding only, so that the output stays proportional to the
# number of findings, not to findings x line length.
_SHOWN_LINE = 160
_CONTEXT = 40  # characters shown on each side of a finding in a long line


def colour_wanted(out: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    forced = os.environ.get("FORCE_COLOR")
    if forced and forced != "0":
        return True
    try:
        return out.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


class Painter:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{_STYLES[style]}m{text}{_RESET}" if self.enabled and text else text


def marker(diagnostic: Diagnostic) -> str:
    return "[*] " if diagnostic.applicable_fix is Applicability.SAFE else ""


def write_full(reports: Iterable[FileReport], out: TextIO) -> None:
    paint = Painter(colour_wanted(out))
    for report in reports:
        for d in report.diagnostics:
            out.write(f"{paint(f'{terminal(d.path)}:{d.row}:{d.column}:', 'path')} {paint(d.code, 'code')} "
                      f"{paint(marker(d), 'marker')}{terminal(d.message)}\n")
            if report.line(d.row, d.cell) is not None:
                _write_source(report, d, out, paint)
            out.write("\n")


def _write_source(report: FileReport, d: Diagnostic, out: TextIO, paint: Painter) -> None:
    last = min(d.end_row, d.row + _MAX_SPAN_LINES - 1)
    first_context = max(1, d.row - CONTEXT_LINES)
    rows = [row for row in range(first_context, last + CONTEXT_LINES + 1) if report.line(row, d.cell) is not None]
    width = len(str(rows[-1])) if rows else len(str(d.row))
    gutter = paint(" " * width + " |", "gutter")
    out.write(f"{gutter}\n")
    for row in rows:
        line = report.line(row, d.cell)
        if row == d.row:
            end = d.end_column if d.end_row == d.row else len(line) + 1
            text, column, end = _excerpt(line, d.column, end)
            out.write(f"{paint(str(row).rjust(width) + ' |', 'gutter')}{_source(text)}\n")
            carets = "^" * max(1, end - column)
            out.write(f"{gutter} {' ' * (column - 1)}{paint(carets + ' ' + d.code, 'caret')}\n")
        else:
            text, _, _ = _excerpt(line, 1, 1)
            out.write(f"{paint(str(row).rjust(width) + ' |', 'gutter')}{_source(text)}\n")
        if row == last and last < d.end_row:
            out.write(f"{gutter} ...\n")
    out.write(f"{gutter}\n")
    pad = " " * width
    if d.fix is not None:
        out.write(f"{pad} {paint('= fix', 'fix')} ({_applicability(d)}): {terminal(d.fix.message)}\n")
        for line in _fix_diff(report, d, width, paint):
            out.write(line + "\n")
    for note in d.evidence:
        out.write(f"{pad} {paint('= evidence:', 'note')} {terminal(note.message)} (line {note.row})\n")
    for note in d.related:
        out.write(f"{pad} {paint('= related:', 'note')} {terminal(note.message)} (line {note.row})\n")
    if d.runtime:
        out.write(f"{pad} {paint('= runtime:', 'note')} {paint(terminal(d.runtime['verdict']), 'verdict')}: "
                  f"{terminal(d.runtime['evidence'])}\n")


def _source(text: str) -> str:
    """A source line after the gutter: a space, then the line (tabs one column each, as the
    caret counts them); nothing for an empty line."""
    return " " + source_line(text.expandtabs(1)) if text else ""


def _applicability(d: Diagnostic) -> str:
    applicability = d.applicable_fix
    if applicability is Applicability.SAFE:
        return "safe, --fix"
    if applicability is Applicability.UNSAFE:
        return "unsafe, --fix --unsafe-fixes"
    return "not applied automatically"


def _fix_diff(report: FileReport, d: Diagnostic, width: int, paint: Painter) -> list[str]:
    """The lines the fix changes, before (-) and after (+), when all of them are known."""
    if not d.fix_edits or d.cell is not None:
        return []
    first = min(edit[0] for edit in d.fix_edits)
    last = max(edit[2] for edit in d.fix_edits)
    if last - first >= _MAX_SPAN_LINES:
        return []
    lines = [report.line(row) for row in range(first, last + 1)]
    if any(line is None for line in lines):
        return []
    old = "\n".join(lines)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(row: int, column: int) -> int:
        return offsets[row - first] + column - 1

    new = old
    for row, column, end_row, end_column, content in sorted(d.fix_edits, key=lambda e: (e[0], e[1]), reverse=True):
        new = new[:offset(row, column)] + content + new[offset(end_row, end_column):]
    if new == old:
        return []
    # A long line is shown around the fix's first edit, as the finding's own line is.
    column = min(edit[1] for edit in d.fix_edits if edit[0] == first)
    shown_lines = []
    for sign, style, text in (("-", "removed", old), ("+", "added", new)):
        for row, line in enumerate(text.split("\n"), start=first):
            excerpt, _, _ = _excerpt(line, column if row == first else 1, column if row == first else 1)
            shown_lines.append(paint(f"{str(row).rjust(width)} {sign} {source_line(excerpt.expandtabs(1))}", style))
    return shown_lines


def _excerpt(text: str, column: int, end: int) -> tuple[str, int, int]:
    """The part of ``text`` to show for columns ``column`` to ``end`` (1-based), and those
    columns in it."""
    if len(text) <= _SHOWN_LINE:
        return text, column, end
    end = min(end, column + _SHOWN_LINE - 2 * _CONTEXT)  # a very long span: its start
    start = max(0, column - 1 - _CONTEXT)
    stop = min(len(text), end - 1 + _CONTEXT)
    head = "…" if start > 0 else ""
    tail = "…" if stop < len(text) else ""
    shift = start - len(head)
    return head + text[start:stop] + tail, column - shift, end - shift
