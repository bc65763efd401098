"""``check --add-noqa``: a ``# noqa: CODES`` directive on each line that has findings, so a
legacy repository adopts torchlint with every present finding acknowledged and only new
ones failing.

A line that already has a directive with codes gets the missing codes added to it; a
line with other comments gets the directive after them.  A finding on a line whose end is
inside a string or continued with a backslash gets it where the string or the statement
ends, which is where suppression looks for it (noqa.comment_rows).  The result is
written as fixes are: atomically, encoding, newlines and mode kept, and never when it
would not parse where the original did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from torchlint.syntax.source import SourceText, decode, read_bytes
from torchlint.framework.diagnostics import Diagnostic
from torchlint.framework.noqa import comment_rows, parse_directives
from torchlint.framework.rule import Rule
from torchlint.engine.config import NO_TARGET, Target
from torchlint.engine.fixer import FixOutcome, verify
from torchlint.engine.linter import lint_source

# Not acknowledged by a directive: the engine's own notes (a file that cannot be read) and
# TL901, whose answer is to remove the directive it reports.
NOT_SUPPRESSED = frozenset({"TL000", "TL901"})


@dataclass
class NoqaOutcome:
    outcome: Optional[FixOutcome]  # the text to write; None when nothing changes
    added: int = 0  # directives added or extended
    error: Optional[str] = None


def add_noqa(path: Path, display: str, rules: Sequence[type[Rule]], reason: str = "",
             target: Target = NO_TARGET) -> NoqaOutcome:
    """The file at ``path`` with a directive for each of its findings (read and linted
    again here, so the rows are those of the text written).  A notebook's code cells are
    edited as the one module they are linted as."""
    from torchlint.engine.notebook import is_notebook, module_text_of, read_notebook

    data = read_bytes(str(path))
    notebook = read_notebook(data) if is_notebook(path) else None
    source = decode(data) if notebook is None else module_text_of(notebook)
    if source is None:
        return NoqaOutcome(None)
    report = target.apply(lint_source(source, display, rules, path))
    text, added = with_noqa(source.text, report.diagnostics, reason)
    if not added:
        return NoqaOutcome(None)
    # Only where the original parses: comments cannot make Python 2 code any worse.
    if verify(source.text, display) is None and verify(text, display) is not None:
        return NoqaOutcome(None, 0, f"not changed: the directives would make it unparsable ({verify(text, display)})")
    if notebook is None:
        return NoqaOutcome(FixOutcome(source, text, report), added)
    try:
        rebuilt = notebook.rebuild(text)
    except ValueError as error:
        return NoqaOutcome(None, 0, f"not changed: {error}")
    return NoqaOutcome(FixOutcome(SourceText(notebook.text, notebook.encoding, data), rebuilt, report), added)


def with_noqa(text: str, diagnostics: Sequence[Diagnostic], reason: str = "") -> tuple[str, int]:
    """``text`` with the directives for ``diagnostics``, and the number of lines changed."""
    wanted: dict[int, set[str]] = {}
    moved = comment_rows(text)
    for diagnostic in diagnostics:
        if diagnostic.code not in NOT_SUPPRESSED:
            wanted.setdefault(moved.get(diagnostic.row, diagnostic.row), set()).add(diagnostic.code)
    if not wanted:
        return text, 0
    directives = parse_directives(text)
    existing = {d.row: d for d in directives.named if not d.file}
    lines = text.splitlines(keepends=True)
    changed = 0
    for row in sorted(wanted, reverse=True):  # from the end: earlier offsets stay valid
        if directives.lines.get(row, ()) is None:
            continue  # a bare `# noqa` suppresses everything there already
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        directive = existing.get(row)
        if directive is not None:
            missing = sorted(wanted[row] - set(directive.codes))
            if not missing:
                continue
            at = directive.column + len(directive.text)
            body = body[:at] + ", " + ", ".join(missing) + body[at:]
        else:
            body = body.rstrip(" \t") + "  # noqa: " + ", ".join(sorted(wanted[row])) + (f"  # {reason}" if reason else "")
        lines[row - 1] = body + ending
        changed += 1
    return "".join(lines), changed
