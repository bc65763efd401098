"""Output formats for CI systems: SARIF 2.1.0, GitHub workflow commands, JUnit XML, GitLab
Code Quality, reviewdog's rdjson, Azure Pipelines logging commands, pylint's line format.

SARIF and GitHub annotations name files relative to the source root: the git repository
that contains the working directory, or the working directory itself outside a repository.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import socket
import textwrap
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Iterable, Optional, TextIO
from urllib.parse import quote

from torchlint import DOCUMENTATION_URL, __version__
from torchlint.syntax.source import printable
from torchlint.output.escape import (
    azure_data, azure_property, github_data, github_property, json_text, terminal,
)
from torchlint.framework.diagnostics import UNLINTABLE_FILE, Diagnostic, FileReport, Note, fingerprints

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
INFORMATION_URI = DOCUMENTATION_URL.split("/blob/")[0]


def source_root() -> tuple[Path, bool]:
    """The git repository root above the working directory (True), else the working directory (False)."""
    cwd = Path(os.getcwd())
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder, True
    return cwd, False


def root_relative(filename: str, root: Path) -> Optional[str]:
    """``filename`` as a POSIX path relative to ``root``, or None when it lies outside (or is not a file)."""
    if not os.path.isabs(filename):
        return None
    path = Path(filename)
    for candidate, base in ((path, root), (Path(os.path.realpath(path)), Path(os.path.realpath(root)))):
        try:
            return candidate.relative_to(base).as_posix()
        except ValueError:
            continue
    return None


# -- GitHub workflow commands -------------------------------------------------------------

def write_github(reports: Iterable[FileReport], out: TextIO) -> None:
    """``::error file=F,line=L,col=C,endLine=L,endColumn=C,title=TL102 data-inplace::message``"""
    root, _ = source_root()
    for report in reports:
        file = printable(root_relative(report.filename, root) or report.path)
        for d in report.diagnostics:
            cell = d.cell  # in a notebook, rows and columns count within this cell
            if cell is None:
                properties = {"file": file, "line": d.row, "col": d.column, "endLine": d.end_row,
                              "endColumn": d.end_column}
                where = ""
            else:  # lines of a cell are not lines of the notebook file: annotate the file as a whole
                properties = {"file": file}
                where = f"cell {cell}:{d.row}:{d.column}: "
            properties["title"] = f"{d.code} {d.name}"
            rendered = ",".join(f"{key}={github_property(str(value))}" for key, value in properties.items())
            verdict = f" [runtime: {d.runtime['verdict']}]" if d.runtime else ""
            message = github_data(f"{where}{d.message}{verdict}", d.url)
            out.write(f"::error {rendered}::{message}\n")


# -- JUnit XML ----------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all, not even escaped (terminal() took the controls).
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """A string from the repository as XML can carry it, and as a terminal can show it."""
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", terminal(text))


def write_junit(reports: Iterable[FileReport], out: TextIO) -> None:
    """One testsuite per file; a failing testcase per finding (an erroring one for TL000),
    a single passing testcase for a file without findings."""
    suites = ET.Element("testsuites")
    timestamp = datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    hostname = socket.gethostname() or "localhost"
    for index, report in enumerate(reports):
        path = _xml_text(report.path)
        suite = ET.SubElement(suites, "testsuite", {
            "name": path, "package": "torchlint", "id": str(index), "timestamp": timestamp,
            "hostname": hostname, "tests": str(max(1, len(report.diagnostics))),
            "failures": str(sum(d.code != UNLINTABLE_FILE.code for d in report.diagnostics)),
            "errors": str(sum(d.code == UNLINTABLE_FILE.code for d in report.diagnostics)),
            "time": "0",
        })
        ET.SubElement(suite, "properties")
        for d in report.diagnostics:
            place = f"{d.row}:{d.column}" if d.cell is None else f"cell {d.cell}:{d.row}:{d.column}"
            case = ET.SubElement(suite, "testcase", {
                "name": _xml_text(f"{d.code} {d.name} ({place})"), "classname": path, "time": "0",
            })
            kind = "error" if d.code == UNLINTABLE_FILE.code else "failure"
            problem = ET.SubElement(case, kind, {"message": _xml_text(d.message), "type": _xml_text(d.code)})
            problem.text = _junit_details(d)
        if not report.diagnostics:
            ET.SubElement(suite, "testcase", {"name": "no findings", "classname": path, "time": "0"})
        ET.SubElement(suite, "system-out")
        ET.SubElement(suite, "system-err")
    ET.indent(suites)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suites, encoding="unicode") + "\n")


def _junit_details(d: Diagnostic) -> str:
    lines = [f"{d.path}:{d.row}:{d.column}: {d.code} {d.message}"]
    lines += [f"evidence: {note.message} (line {note.row})" for note in d.evidence]
    lines += [f"related: {note.message} (line {note.row})" for note in d.related]
    if d.runtime:
        lines.append(f"runtime: {d.runtime['verdict']}: {d.runtime['evidence']}")
    lines.append(d.url)
    return "\n".join(map(_xml_text, lines))


# -- SARIF 2.1.0 --------------------------------------------------------------------------

def write_sarif(reports: Iterable[FileReport], out: TextIO) -> None:
    reports = list(reports)
    root, in_git = source_root()
    rules = _sarif_rules(reports)
    rule_index = {rule["id"]: index for index, rule in enumerate(rules)}
    results = []
    for report in reports:
        location = _artifact_location(report, root)
        for d, fingerprint in zip(report.diagnostics, fingerprints(report)):
            results.append(_sarif_result(d, report, location, rule_index, fingerprint))
    errors = [report.internal_error for report in reports if report.internal_error]
    run = {
        "tool": {"driver": {
            "name": "torchlint", "version": __version__, "semanticVersion": __version__,
            "informationUri": INFORMATION_URI, "rules": rules,
        }},
        "invocations": [{
            "executionSuccessful": not errors,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": error}} for error in errors],
        }],
        "originalUriBaseIds": {SRCROOT: {
            "uri": root.as_uri() if root.as_uri().endswith("/") else root.as_uri() + "/",
            "description": {"text": "The git repository root" if in_git else "The working directory"},
        }},
        "columnKind": "utf16CodeUnits",
        "results": results,
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    out.write(json_text(log, indent=2) + "\n")


def _sarif_rules(reports: list[FileReport]) -> list[dict]:
    """One reportingDescriptor per code that appears, in code order."""
    codes = sorted({d.code for report in reports for d in report.diagnostics})
    from torchlint.rules import all_rules  # the full documentation lives in the rule modules

    known = {UNLINTABLE_FILE.code: UNLINTABLE_FILE, **all_rules()}
    rules = []
    for code in codes:
        rule = known.get(code)
        if rule is None:
            continue
        documentation = rule.documentation()
        rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": _first_paragraph(rule.docs)},
            "help": {"text": documentation, "markdown": documentation},
            "helpUri": DOCUMENTATION_URL.format(code=rule.code, name=rule.name),
            "defaultConfiguration": {"level": "error", "enabled": rule.default_enabled},
            "properties": {"fix": rule.fix.value if rule.fix is not None else None},
        })
    return rules


def _first_paragraph(docs: str) -> str:
    """The opening paragraph of a rule's docs (its "What it does"), as one line."""
    text = "\n".join(line for line in textwrap.dedent(docs).strip().splitlines() if not line.startswith("#"))
    return " ".join(text.strip().split("\n\n")[0].split())


def _artifact_location(report: FileReport, root: Path) -> dict:
    relative = root_relative(report.filename, root)
    if relative is not None:
        return {"uri": quote(os.fsencode(relative)), "uriBaseId": SRCROOT}  # exact, even if not UTF-8
    if os.path.isabs(report.filename):
        return {"uri": Path(report.filename).as_uri()}
    return {"uri": quote(os.fsencode(report.path))}  # standard input without --stdin-filename


def _utf16_column(report: FileReport, row: int, column: int) -> int:
    """Our columns count code points; SARIF's default unit is UTF-16 code units."""
    line = report.line(row)
    if line is None:
        return column
    return column + bisect.bisect_left(_astral(line), column - 1)


@functools.lru_cache(maxsize=64)
def _astral(line: str) -> list[int]:
    """The positions of the characters of ``line`` that take two UTF-16 units (a line with
    thousands of findings is scanned once, not once per finding)."""
    return [] if line.isascii() else [i for i, char in enumerate(line) if ord(char) > 0xFFFF]


def _region(report: FileReport, row: int, column: int, end_row: Optional[int] = None, end_column: Optional[int] = None) -> dict:
    region = {"startLine": row, "startColumn": _utf16_column(report, row, column)}
    if end_row is not None and end_column is not None:
        region.update(endLine=end_row, endColumn=_utf16_column(report, end_row, end_column))
    return region


def _sarif_result(d: Diagnostic, report: FileReport, location: dict, rule_index: dict[str, int],
                  fingerprint: str) -> dict:
    def note_location(index: int, note: Note) -> dict:
        return {"id": index, "message": {"text": note.message}, "physicalLocation": {
            "artifactLocation": location, "region": _region(report, note.row, note.column)}}

    cell = d.cell  # in a notebook, rows and columns count within this cell
    if cell is None:
        physical = {"artifactLocation": location, "region": _region(report, d.row, d.column, d.end_row, d.end_column)}
        message = d.message
    else:
        # A region would name lines of the notebook's JSON text: name the cell in words instead.
        physical = {"artifactLocation": location}
        message = f"cell {cell}:{d.row}:{d.column}: {d.message}"
    result = {
        "ruleId": d.code,
        "level": "error",
        "message": {"text": message},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {"torchlintFingerprint/v1": fingerprint},
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    notes = [*d.related, *d.evidence]
    if notes and cell is None:
        result["relatedLocations"] = [note_location(index, note) for index, note in enumerate(notes)]
    if d.fix is not None and d.fix_edits and cell is None:
        result["fixes"] = [_sarif_fix(d, report, location)]
    properties = {"runtime": d.runtime, "cell": cell}
    if any(value is not None for value in properties.values()):
        result["properties"] = {key: value for key, value in properties.items() if value is not None}
    return result


def _sarif_fix(d: Diagnostic, report: FileReport, location: dict) -> dict:
    """The finding's fix, whatever its applicability (named in properties, as in the JSON output)."""
    replacements = [
        {"deletedRegion": _region(report, row, column, end_row, end_column), "insertedContent": {"text": content}}
        for row, column, end_row, end_column, content in d.fix_edits
    ]
    return {
        "description": {"text": d.fix.message},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        "properties": {"applicability": d.fix.applicability.value},
    }


# -- GitLab Code Quality, reviewdog (rdjson), Azure Pipelines, pylint -------------------------

def _cell_prefix(d: Diagnostic) -> str:
    """Rows of a notebook's cell are not rows of the notebook file: say where in the cell."""
    return f"cell {d.cell}:{d.row}:{d.column}: " if d.cell is not None else ""


def write_gitlab(reports: Iterable[FileReport], out: TextIO) -> None:
    """A GitLab Code Quality report: the subset of the Code Climate issue format that
    GitLab reads (https://docs.gitlab.com/ci/testing/code_quality/), paths relative to
    the repository root (``CI_PROJECT_DIR`` inside GitLab CI)."""
    project = os.environ.get("CI_PROJECT_DIR")
    root = Path(project) if project else source_root()[0]
    issues = []
    for report in reports:
        path = root_relative(report.filename, root) or report.path
        for d, fingerprint in zip(report.diagnostics, fingerprints(report)):
            lines = {"begin": d.row, "end": d.end_row} if d.cell is None else {"begin": 1}
            issues.append({
                "type": "issue",
                "check_name": d.code,
                "description": f"{_cell_prefix(d)}{d.code} {d.message}",
                "content": {"body": d.url},
                "categories": ["Bug Risk"],
                "severity": "major" if d.code != UNLINTABLE_FILE else "critical",
                "fingerprint": fingerprint,
                "location": {"path": path, "lines": lines},
            })
    out.write(json_text(issues, indent=2) + "\n")


def _utf8_column(report: FileReport, row: int, column: int, cell: Optional[int]) -> int:
    """reviewdog counts columns in UTF-8 bytes, from 1."""
    line = report.line(row, cell)
    if line is None:
        return column
    return len(line[:column - 1].encode("utf-8", "surrogatepass")) + 1


def write_rdjson(reports: Iterable[FileReport], out: TextIO) -> None:
    """reviewdog's Diagnostic Format (rdjson), with each fix as a suggestion."""
    diagnostics = []
    for report in reports:
        for d in report.diagnostics:
            def position(row: int, column: int) -> dict:
                return {"line": row, "column": _utf8_column(report, row, column, d.cell)}

            item = {
                "message": f"{_cell_prefix(d)}{d.message}",
                "location": {"path": report.path,
                             "range": {"start": position(d.row, d.column), "end": position(d.end_row, d.end_column)}},
                "severity": "WARNING",
                "code": {"value": d.code, "url": d.url},
            }
            if d.fix_edits and d.cell is None:
                item["suggestions"] = [{"range": {"start": position(row, column), "end": position(end_row, end_column)},
                                        "text": content}
                                       for row, column, end_row, end_column, content in d.fix_edits]
            diagnostics.append(item)
    out.write(json_text({"source": {"name": "torchlint", "url": INFORMATION_URI}, "severity": "WARNING",
                         "diagnostics": diagnostics}, indent=2) + "\n")


def write_azure(reports: Iterable[FileReport], out: TextIO) -> None:
    """Azure Pipelines logging commands: ``##vso[task.logissue type=error;sourcepath=F;
    linenumber=L;columnnumber=C;code=TL102;]message``."""
    for report in reports:
        for d in report.diagnostics:
            properties = {"type": "error", "sourcepath": report.path}
            if d.cell is None:
                properties.update(linenumber=d.row, columnnumber=d.column)
            properties["code"] = d.code
            rendered = "".join(f"{key}={azure_property(str(value))};" for key, value in properties.items())
            out.write(f"##vso[task.logissue {rendered}]{azure_data(_cell_prefix(d) + d.message)}\n")


def write_pylint(reports: Iterable[FileReport], out: TextIO) -> None:
    """``path:line: [CODE] message``, the line format pylint's parsable output uses."""
    for report in reports:
        for d in report.diagnostics:
            message = f"{_cell_prefix(d)}{d.message}".replace("\n", " ")
            out.write(f"{terminal(report.path)}:{d.row}: [{d.code}] {terminal(message)}\n")
