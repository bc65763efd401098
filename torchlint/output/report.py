"""Output formats: full (default), concise, json, json-lines (the CI formats are in formats.py);
and ``--statistics``."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Iterable, Optional, TextIO

from torchlint.framework.catalogue import names as rule_names
from torchlint.framework.diagnostics import Applicability, Diagnostic, FileReport, Note
from torchlint.framework.verdicts import MISSING_FILE
from torchlint.output.escape import json_text, source_line, terminal
from torchlint.output.terminal import Painter, colour_wanted, marker, write_full
from torchlint.output.formats import (
    write_azure, write_github, write_gitlab, write_junit, write_pylint, write_rdjson, write_sarif,
)


def _location(row: int, column: int) -> dict:
    return {"row": row, "column": column}


def _note_json(note: Note) -> dict:
    return {"message": note.message, "location": _location(note.row, note.column)}


def diagnostic_json(diagnostic: Diagnostic, filename: str) -> dict:
    fix = None
    if diagnostic.fix is not None:
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "message": diagnostic.fix.message,
            "edits": [
                {
                    "content": content,
                    "location": _location(row, column),
                    "end_location": _location(end_row, end_column),
                }
                for row, column, end_row, end_column, content in diagnostic.fix_edits
            ],
        }
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "filename": filename,
        **({"cell": diagnostic.cell} if diagnostic.cell is not None else {}),  # notebooks only
        "location": _location(diagnostic.row, diagnostic.column),
        "end_location": _location(diagnostic.end_row, diagnostic.end_column),
        "fix": fix,
        "url": diagnostic.url,
        "evidence": [_note_json(note) for note in diagnostic.evidence],
        "related": [_note_json(note) for note in diagnostic.related],
        "runtime": diagnostic.runtime,
    }


def write_json(reports: Iterable[FileReport], out: TextIO) -> None:
    items = []
    for report in reports:
        for diagnostic in report.diagnostics:
            items.append(diagnostic_json(diagnostic, report.filename))
    out.write(json_text(items, indent=2) + "\n")


def write_json_lines(reports: Iterable[FileReport], out: TextIO) -> None:
    """One ``diagnostic_json`` object per line."""
    for report in reports:
        for diagnostic in report.diagnostics:
            out.write(json_text(diagnostic_json(diagnostic, report.filename)) + "\n")


def write_concise(reports: Iterable[FileReport], out: TextIO) -> None:
    paint = Painter(colour_wanted(out))
    for report in reports:
        for d in report.diagnostics:
            out.write(f"{paint(f'{terminal(d.path)}:{d.row}:{d.column}:', 'path')} {paint(d.code, 'code')} "
                      f"{paint(marker(d), 'marker')}{terminal(d.message)}{_verdict(d)}\n")


def write_grouped(reports: Iterable[FileReport], out: TextIO) -> None:
    """The findings under their file's name, one line each, as ruff's grouped format."""
    paint = Painter(colour_wanted(out))
    for report in reports:
        if not report.diagnostics:
            continue
        out.write(f"{paint(terminal(report.path) + ':', 'path')}\n")
        width = max(len(f"{d.row}:{d.column}") for d in report.diagnostics)
        for d in report.diagnostics:
            where = f"{d.row}:{d.column}" if d.cell is None else f"cell {d.cell}:{d.row}:{d.column}"
            out.write(f"  {where.ljust(width)} {paint(d.code, 'code')} {paint(marker(d), 'marker')}"
                      f"{terminal(d.message)}{_verdict(d)}\n")
        out.write("\n")


def _verdict(d: Diagnostic) -> str:
    return f" [{terminal(d.runtime['verdict'])}]" if d.runtime else ""


WRITERS = {
    "full": write_full,
    "concise": write_concise,
    "json": write_json,
    "json-lines": write_json_lines,
    "sarif": write_sarif,
    "github": write_github,
    "junit": write_junit,
    "grouped": write_grouped,
    "gitlab": write_gitlab,
    "rdjson": write_rdjson,
    "azure": write_azure,
    "pylint": write_pylint,
}
OUTPUT_FORMATS = tuple(WRITERS)
# Read by programs: nothing but the document goes to standard output.
MACHINE_FORMATS = ("json", "json-lines", "sarif", "junit", "gitlab", "rdjson", "azure", "pylint")
# --statistics prints counts per rule, which only these can show.
STATISTICS_FORMATS = ("full", "concise", "json", "json-lines")


def write_findings(reports: list[FileReport], output_format: str, out: TextIO) -> None:
    WRITERS[output_format](reports, out)


def statistics(reports: Iterable[FileReport]) -> list[dict]:
    counts: Counter = Counter()
    fixable: Counter = Counter()
    names = rule_names()
    for report in reports:
        for d in report.diagnostics:
            counts[d.code] += 1
            if d.applicable_fix is Applicability.SAFE:
                fixable[d.code] += 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"code": code, "name": names.get(code, ""), "count": count, "fixable": fixable[code] > 0}
        for code, count in ordered
    ]


def write_statistics(reports: list[FileReport], output_format: str, out: TextIO) -> None:
    rows = statistics(reports)
    if output_format == "json":
        out.write(json_text(rows, indent=2) + "\n")
        return
    if output_format == "json-lines":
        out.writelines(json_text(row) + "\n" for row in rows)
        return
    width = max((len(str(row["count"])) for row in rows), default=1)
    for row in rows:
        mark = "*" if row["fixable"] else " "
        out.write(f"{row['count']:>{width}}\t{terminal(row['code'])}\t[{mark}] {terminal(row['name'])}\n")


def summary(reports: list[FileReport], fixed: Optional[Counter] = None, unsafe_fixes: bool = False) -> str:
    """The closing line(s): how many findings, how many were fixed, what else could be."""
    remaining = sum(len(report.diagnostics) for report in reports)
    fixed_total = sum(fixed.values()) if fixed else 0
    if remaining == 0 and not fixed_total:
        return "All checks passed!"
    if fixed is not None and fixed_total:
        text = (f"Found {count(remaining + fixed_total, 'finding')} "
                f"({fixed_total} fixed, {remaining} remaining).")
    elif remaining:
        files = sum(1 for report in reports if report.diagnostics)
        text = f"Found {count(remaining, 'finding')} in {count(files, 'file')}."
    else:
        text = "All checks passed!"
    applicabilities = Counter(d.applicable_fix for report in reports for d in report.diagnostics)
    safe, unsafe = applicabilities[Applicability.SAFE], applicabilities[Applicability.UNSAFE]
    if unsafe_fixes:
        safe, unsafe = safe + unsafe, 0
    if safe:
        text += f"\n[*] {safe} fixable with the `--fix` option"
        text += f" ({unsafe} more with `--unsafe-fixes`)." if unsafe else "."
    elif unsafe:
        text += f"\nNo fixes available ({unsafe} with the `--unsafe-fixes` option)."
    return text


def runtime_summary(reports: list[FileReport], note: str = "", entry_given: bool = False, style: int = 0) -> str:
    """``Runtime check: 3 confirmed, 1 latent, 2 not reproduced, 0 could not run.``, the
    findings not run because no run could show them wrong, and what would let more run."""
    verdicts = Counter(d.runtime["verdict"] for report in reports for d in report.diagnostics if d.runtime)
    parts = ", ".join(f"{verdicts[v]} {v.lower()}" for v in ("CONFIRMED", "LATENT", "NOT REPRODUCED", "COULD NOT RUN"))
    text = f"Runtime check: {parts}"
    text += f"; {count(style, 'style finding')} not run (nothing a run could show)." if style else "."
    unreached = sum(1 for report in reports for d in report.diagnostics
                    if d.runtime and d.runtime["verdict"] == "COULD NOT RUN"
                    and d.runtime.get("run") in ("call", "entry", "module", None)
                    and _NEEDS_A_REAL_RUN.search(d.runtime["evidence"]))
    if unreached and not entry_given:
        whose = "its code needs" if unreached == 1 else "their code needs"
        text += (f"\n{count(unreached, 'finding')} could not run: {whose} real arguments or is never reached "
                 "by running the file; run your program under the monitor with --entry, e.g. "
                 "--entry 'train.py --epochs 1' or --entry 'pytest tests/'")
    missing = Counter(match.group(1) for report in reports for d in report.diagnostics
                      if d.runtime and d.runtime["verdict"] == "COULD NOT RUN"
                      for match in [MISSING_FILE.search(d.runtime["evidence"])] if match)
    if missing:
        shown = ", ".join(terminal(name) for name, _ in missing.most_common(3)) + (", ..." if len(missing) > 3 else "")
        text += (f"\n{count(sum(missing.values()), 'finding')} stopped at a missing file ({shown}): "
                 "run where the data is, with --entry")
    if note:
        text += f"\nnote: the runtime check ran without full isolation here: {terminal(note)}"
    return text


# COULD NOT RUN evidence that a real run of the program (--entry) could get past.
_NEEDS_A_REAL_RUN = re.compile(r"synthesized arguments|not reached by any run|never executed")


def count(number: int, noun: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{number} {noun}{'s' if number != 1 else ''}"


def write_fixes(fixed_by_file: list[tuple[str, Counter]], out: TextIO) -> None:
    """``--show-fixes``: what was fixed, per file and rule."""
    names = rule_names()
    total = sum(sum(counts.values()) for _, counts in fixed_by_file)
    if not total:
        return
    out.write(f"\nFixed {count(total, 'finding')}:\n")
    for path, counts in fixed_by_file:
        if not counts:
            continue
        out.write(f"- {terminal(path)}:\n")
        for code, number in sorted(counts.items()):
            out.write(f"    {number} × {code} ({names.get(code, '')})\n")


def write_diff(path: str, before: str, after: str, out: TextIO) -> None:
    """A unified diff of one file's fix, as `--diff` prints it."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=terminal(path), tofile=terminal(path),
    )
    for line in lines:
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        out.write(source_line(body) + ending if ending else source_line(body) + "\n\\ No newline at end of file\n")
