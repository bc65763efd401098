"""Apply fixes to one file's source, verifying every round, and write the result safely.

    lint ─ pick non-overlapping fixes ─ apply ─ parse + compile() ─ lint again ─ …

A round applies every allowed fix whose edits do not overlap an earlier one's; the
fixes it had to skip, and findings that only appear once others are fixed (an import
left unused), are handled by the next round.  If a round's result does not parse or
compile, or the rounds do not settle, the file is left exactly as it was and the
failure names the rule whose fix caused it.  Findings suppressed with ``# noqa`` never
reach this point, so their lines are never rewritten.
"""

from __future__ import annotations

import bisect
import os
import stat
import sys
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from torchlint.syntax import cst, parsing
from torchlint.syntax.source import LineIndex, SourceText, UnreadableSource, open_regular, read_descriptor
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import Applicability, Diagnostic, FileReport, TextEdit
from torchlint.framework.rule import Rule
from torchlint.engine.atomic import Changed, replace_unchanged, write_temporary
from torchlint.engine.config import NO_TARGET, Target
from torchlint.engine.linter import lint_source, parser_of

# Nested findings are fixed one level per round (`Variable(Variable(x))`, a chain of 120
# nested `.data` at Python's nesting limit); rounds that keep changing the text past this
# many are a bug (a text seen before is caught at once; --file-timeout bounds the time).
MAX_ROUNDS = 1000

# Compiles fixed text as what it will run as (raises what compile() raises): one module
# for a file, each cell alone for a notebook (notebook.compile_cells).
Compiler = Callable[[str, str], None]


def compile_module(text: str, display_path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(cst.without_byte_order_mark(text), display_path, "exec", dont_inherit=True)


@dataclass
class FixOutcome:
    source: SourceText  # what was read
    text: str  # the fixed text; the original text when nothing was (or could be) fixed
    report: FileReport  # the findings that remain in ``text``
    fixed: Counter = field(default_factory=Counter)  # fixes applied, per rule code
    error: Optional[str] = None  # why the file was left unchanged

    @property
    def changed(self) -> bool:
        return self.text != self.source.text


def applicable(diagnostic: Diagnostic, allowed: frozenset[Applicability]) -> bool:
    return diagnostic.applicable_fix in allowed


def fix_source(source: SourceText, display_path: str, rules: Sequence[type[Rule]],
               allowed: frozenset[Applicability], file_path: Optional[Path] = None,
               project: Optional[Project] = None, target: Target = NO_TARGET,
               compiler: Compiler = compile_module) -> FixOutcome:
    """Fix ``source`` as far as the allowed fixes go and ``target-torch`` lets them
    (``Target``); every round's text must parse and pass ``compiler``.  Nothing here
    touches the disk."""
    report = target.apply(lint_source(source, display_path, rules, file_path, project))
    outcome = FixOutcome(source, source.text, report)
    text = source.text
    seen = {hash(text)}
    too_deep: set[tuple] = set()  # fixes that would nest the code deeper than Python compiles
    for round_number in range(MAX_ROUNDS + 1):
        if report.internal_error:
            # A rule failed: on the original, report it; on a fixed text, keep the original.
            return _failed(outcome, report.internal_error) if outcome.fixed else outcome
        chosen = _non_overlapping([d for d in report.diagnostics if applicable(d, allowed)
                                   and _identity(d, text) not in too_deep], LineIndex(text))
        if not chosen:
            added = _syntax_added(source.text, text, target)
            if added:
                return _failed(outcome, f"the fixes for {', '.join(sorted(outcome.fixed))} write {added}, "
                                        f"newer than `target-version`")
            outcome.text, outcome.report = text, report
            return outcome
        if round_number == MAX_ROUNDS:
            break
        new_text = apply_edits(text, [edit for d in chosen for edit in d.text_edits])
        problem = verify(new_text, display_path, parser_of(project), compiler)
        if problem is not None:
            deeper = [d for d in chosen if (alone := verify(apply_edits(text, d.text_edits), display_path,
                                                            parser_of(project), compiler)) is not None
                      and alone.too_deep]
            if deeper:
                # Code at Python's nesting limit: `x.data` -> `x.detach()` is one call deeper.
                # Those findings stay, unfixed, as they would for an unsafe fix not asked for.
                too_deep.update(_identity(d, text) for d in deeper)
                continue
            return _failed(outcome, f"{_culprit(text, chosen, display_path, parser_of(project), compiler)} {problem}")
        if hash(new_text) in seen:
            return _failed(outcome, f"the fixes for {', '.join(sorted({d.code for d in chosen}))} undo each other")
        seen.add(hash(new_text))
        text = new_text
        outcome.fixed.update(d.code for d in chosen)
        report = target.apply(lint_source(SourceText(text, source.encoding, source.data), display_path, rules,
                                          file_path, project))
    return _failed(outcome, f"fixes did not settle after {MAX_ROUNDS} rounds")


def _syntax_added(original: str, fixed: str, target: Target) -> Optional[str]:
    """A construct the target Python does not have, which the fixed text has and the
    original had nowhere (no rule's fix writes one today: this keeps it so)."""
    if target.python is None or fixed == original:
        return None
    before = {item.construct for item in target.newer_syntax(original)}
    added = [item for item in target.newer_syntax(fixed) if item.construct not in before]
    return f"{added[0].construct} (Python {added[0].release})" if added else None


def _identity(diagnostic: Diagnostic, text: str) -> tuple:
    """A fix as what it replaces and with what: the same in later rounds, when other
    fixes have moved it."""
    return diagnostic.code, tuple((text[edit.start:edit.end], edit.content) for edit in diagnostic.text_edits)


def _failed(outcome: FixOutcome, reason: str) -> FixOutcome:
    outcome.text = outcome.source.text
    outcome.fixed = Counter()
    outcome.error = f"not fixed, file left unchanged: {reason} (please report this)"
    return outcome


def _non_overlapping(diagnostics: list[Diagnostic], index: LineIndex) -> list[Diagnostic]:
    """The fixes to apply together: in source order, each whose edits touch no edit
    already taken (an identical edit, like the same `import torch`, is shared) and whose
    finding does not overlap one already taken.  A finding inside another's
    (`loss.data[0]` in `loss.data[0].data`) waits for the next round, which lints the
    result of the first fix again: both fixes at once could be wrong together
    (`loss.item().detach()`)."""
    taken = _Spans()
    findings = _Spans()
    shared = set()
    chosen = []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.row, d.column, d.code)):
        edits = [edit for edit in diagnostic.text_edits if edit not in shared]
        span = TextEdit(index.offset(diagnostic.row, diagnostic.column),
                        index.offset(diagnostic.end_row, diagnostic.end_column), "")
        if findings.overlaps(span) or any(taken.overlaps(edit) for edit in edits):
            continue
        for edit in edits:
            taken.add(edit)
            shared.add(edit)
        findings.add(span)
        chosen.append(diagnostic)
    return chosen


class _Spans:
    """Spans that do not overlap one another, sorted, to test a new one against."""

    def __init__(self):
        self.spans: list[TextEdit] = []
        self.keys: list[tuple[int, int]] = []

    def add(self, span: TextEdit) -> None:
        position = bisect.bisect_left(self.keys, (span.start, span.end))
        self.spans.insert(position, span)
        self.keys.insert(position, (span.start, span.end))

    def overlaps(self, span: TextEdit) -> bool:
        """Only the spans that start just before ``span`` or before its end can overlap it."""
        position = max(0, bisect.bisect_left(self.keys, (span.start, span.start)) - 2)
        while position < len(self.spans) and self.spans[position].start <= span.end:
            if _overlap(span, self.spans[position]):
                return True
            position += 1
        return False


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two different insertions at one place: order unclear
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    pieces = []
    position = 0
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
        pieces.append(text[position:edit.start])
        pieces.append(edit.content)
        position = max(position, edit.end)
    pieces.append(text[position:])
    return "".join(pieces)


@dataclass(frozen=True)
class Unusable:
    """Why fixed text cannot be written: ``message`` for the user; ``too_deep`` when only
    the nesting limit of Python's parser or compiler stands in the way."""

    message: str
    too_deep: bool = False

    def __str__(self) -> str:
        return self.message


def verify(text: str, display_path: str, parser: str = "auto",
           compiler: Compiler = compile_module) -> Optional[Unusable]:
    """None when ``text`` parses into torchlint's tree and compiles; otherwise what went
    wrong.  Code whose syntax is newer than this Python (parsed by libcst) cannot be
    compiled here: libcst's grammar is its only check."""
    try:
        _, parsed_by = parsing.parse(text, parser)
    except Exception as error:  # noqa: BLE001 - any failure means the text is unusable
        too_deep = isinstance(error, RecursionError) or getattr(error, "too_deep", False)
        return Unusable(f"produced code that does not parse ({type(error).__name__}: {str(error).splitlines()[0]})",
                        too_deep)
    try:
        compiler(text, display_path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        if parsed_by == "libcst" and isinstance(error, SyntaxError) and sys.version_info[:2] < parsing.NEWEST_SYNTAX:
            return None  # syntax newer than this Python: libcst's grammar is the only check here
        too_deep = isinstance(error, RecursionError) or (
            isinstance(error, SyntaxError) and cst.ParserSyntaxError.of(error).too_deep)
        return Unusable(f"produced code that does not compile ({type(error).__name__}: {error})", too_deep)
    return None


def _culprit(text: str, chosen: list[Diagnostic], display_path: str, parser: str, compiler: Compiler) -> str:
    for diagnostic in chosen:
        if verify(apply_edits(text, diagnostic.text_edits), display_path, parser, compiler) is not None:
            return f"the {diagnostic.code} fix at {diagnostic.row}:{diagnostic.column}"
    codes = ", ".join(sorted({d.code for d in chosen}))
    return f"the fixes for {codes}, applied together,"


# --- writing -----------------------------------------------------------------------


class WriteError(Exception):
    pass


def write_fixed(path: str, outcome: FixOutcome) -> None:
    """Replace the file at ``path`` with the fixed text, atomically: the new bytes go to a
    temporary file in the same folder, which then replaces the original, so a crash
    leaves either the old file or the new one.  Encoding (coding cookie, BOM), newlines
    (kept by the edits) and permissions stay as they were.  Not written: a file that
    changed on disk since it was read (up to the instant it is replaced: atomic.py), a
    symbolic link (discovery hands over the real path of a file a link leads to), a file
    its permissions do not let the user write."""
    source = outcome.source
    try:
        data = outcome.text.encode(source.encoding)
    except Exception as error:  # noqa: BLE001 - a codec may raise anything
        reason = error.reason if isinstance(error, UnicodeEncodeError) else f"{type(error).__name__}: {error}"
        raise WriteError(f"the fixed text cannot be encoded as {source.encoding} ({reason}); not written")
    try:
        with open_regular(path, follow_symlinks=False) as original:
            _write_over(path, original, source.data, data)
    except UnreadableSource as error:
        raise WriteError(f"cannot re-read the file before writing ({error.reason}); not written")


def _write_over(path: str, original: int, read: bytes, data: bytes) -> None:
    """Replace ``path``, open at ``original``, with ``data`` if it still holds ``read``."""
    if read_descriptor(original) != read:
        raise WriteError(_CHANGED)
    info = os.fstat(original)
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise WriteError("the file is read-only (its permissions do not let you write it); not written")
    try:
        temporary = write_temporary(path, data, stat.S_IMODE(info.st_mode))
    except OSError as error:
        raise WriteError(f"cannot create a temporary file next to it ({error.strerror or error}); not written")
    try:
        replace_unchanged(temporary, path, original, read)
    except Changed:
        raise WriteError(_CHANGED)
    except OSError as error:
        raise WriteError(f"cannot write the fixed file ({error.strerror or error}); the original is unchanged")


_CHANGED = "the file changed on disk while torchlint was running; not written"
