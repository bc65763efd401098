"""``torchlint server``: a Language Server (LSP over standard input/output, built on pygls).

Every open document is linted from the editor's buffer, not from the disk, with the
configuration of the file's folder, on open, change and save; its diagnostics are
cleared on close.  Code actions offer a finding's own fix, every safe fix of the file
at once (``source.fixAll.torchlint``, what ``torchlint check --fix`` would write), and
a ``# noqa`` comment for the finding's line.  A notebook's code cells (LSP notebook
documents) are linted together, as ``check`` lints an .ipynb file, and get the same
actions, each editing the cells it changes.

Limits: every lint (and every fix and quick fix, whose checks take as long) runs in a
child process forked for it, within the per-file limits of ``check`` (``--file-timeout``
60 s, ``--file-memory`` 2G; a client may pass others as ``initializationOptions``
``{"fileTimeout": seconds, "fileMemory": bytes}``) and killed past the hard deadline, so
a document that is slow to lint gets the TL000 that says so while the server answers
the rest; a buffer over the size limit of a file (10 MiB) is not linted, and says so.
The server ends when its input closes, and when the client's process (``processId``)
is gone.

Positions: torchlint counts 1-based rows and columns in code points; LSP counts
0-based lines and columns in the negotiated encoding's code units (UTF-16 unless the
client offers another), so every position is converted through ``_Positions``.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import io
import os
import re
import signal
import threading
import time
import tokenize
from pathlib import Path
from typing import Optional
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchlint import __version__
from torchlint.syntax.source import MAX_FILE_BYTES, LineIndex, too_large
from torchlint.syntax.source import SourceText
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import (
    Applicability, Diagnostic, FileReport, Note, allowed_applicabilities, unlintable,
)
from torchlint.framework.noqa import comment_rows, parse_directives
from torchlint.engine.batch import FileLimits, fork_context
from torchlint.engine.config import NO_TARGET, ConfigError, Options, SettingsResolver
from torchlint.engine.fixer import FixOutcome, apply_edits, fix_source, verify
from torchlint.engine.guard import FileGuard, LimitExceeded, hard_deadline, time_limit_reason
from torchlint.engine.linter import lint_source
from torchlint.engine.notebook import Notebook, compiles_as_cells, fix_notebook, lint_notebook, read_notebook

SOURCE = "torchlint"
FIX_ALL_KIND = "source.fixAll.torchlint"
_NOQA_WITH_CODES = re.compile(r"#\s*noqa:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*", re.IGNORECASE)


class _Positions:
    """Converts torchlint's positions in one text to LSP positions."""

    def __init__(self, text: str, encoding: Optional[str]):
        self.index = LineIndex(text)
        self.encoding = encoding or types.PositionEncodingKind.Utf16

    def units(self, text: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(text.encode("utf-8", "surrogatepass"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        return len(text.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, row: int, column: int) -> types.Position:
        line = self.index.line(row) if row <= self.index.line_count else ""
        return types.Position(line=row - 1, character=self.units(line[: column - 1]))

    def at_offset(self, offset: int) -> types.Position:
        return self.position(*self.index.position(offset))

    def range(self, row: int, column: int, end_row: int, end_column: int) -> types.Range:
        if (row, column) == (end_row, end_column):
            # A point (a syntax error): underline the character there, if the line has one.
            end_column = min(column + 1, len(self.index.line(row)) + 1) if row <= self.index.line_count else column
        return types.Range(self.position(row, column), self.position(end_row, end_column))

    def end_of_line(self, row: int) -> types.Position:
        return self.position(row, len(self.index.line(row)) + 1)


class _Document:
    """One buffer linted once: its findings, and how to turn them into LSP objects."""

    def __init__(self, server: "TorchlintServer", uri: str, text: str):
        self.uri = uri
        self.text = text
        self.path = _uri_to_path(uri)
        self.display = str(self.path) if self.path is not None else uri
        self.positions = _Positions(text, server.workspace.position_encoding)
        self.config_error: Optional[str] = None
        self.rules = []
        self.target = NO_TARGET  # what `target-torch` does to the findings
        self.skipped = self.path is not None and self.path.suffix == ".ipynb"  # notebooks are JSON here
        if not self.skipped:
            try:
                self.rules, self.target = _rules_for(self.path, server.workspace.root_path)
            except ConfigError as error:
                self.config_error = str(error)
                self.skipped = True
        self.version: Optional[int] = None  # of the text linted
        self.report = FileReport(self.display)
        self._fixed_all: Optional[tuple[Optional[FixOutcome], Optional[str]]] = None

    async def lint(self, linting: "_Linting") -> bool:
        """Lint the buffer (in a child process, within the limits); False when a newer
        lint of it came first.  A buffer too large to lint, or stopped at a limit, gets
        the TL000 that says why, and nothing to fix."""
        if self.skipped:
            return True
        found = await _report(linting, self.uri, self.display, _lint_text, self.text, self.rules, self.target,
                              self.path)
        if found is None:
            return False
        self.report, complete = found
        self.skipped = not complete
        return True

    @staticmethod
    def source(text: str) -> SourceText:
        return SourceText(text, "utf-8", text.encode("utf-8", "surrogatepass"))

    @property
    def parses(self) -> bool:
        """False while the buffer has a syntax error (its report is the TL000 that says so)."""
        return not any(d.code == "TL000" and "was not linted: syntax error" in d.message
                       for d in self.report.diagnostics)

    def lsp_diagnostics(self, last_good: Optional["_Document"] = None) -> list[types.Diagnostic]:
        """The findings; while the buffer does not parse, also the findings of ``last_good``
        (the last version that parsed), marked stale, so they do not vanish while typing."""
        found = [self._to_lsp(diagnostic) for diagnostic in self.report.diagnostics]
        if last_good is not None and not self.parses:
            for diagnostic in last_good.report.diagnostics:
                stale = last_good._to_lsp(diagnostic)
                stale.message = f"{diagnostic.message} (stale: from before the syntax error)"
                stale.severity = types.DiagnosticSeverity.Information
                found.append(stale)
        if self.config_error:
            found.append(types.Diagnostic(
                range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                message=f"torchlint did not lint this file: {self.config_error}",
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
            ))
        return found

    def _to_lsp(self, diagnostic: Diagnostic) -> types.Diagnostic:
        return _lsp_diagnostic(diagnostic, self.positions,
                               [self._related(note) for note in (*diagnostic.related, *diagnostic.evidence)])

    def range_of(self, diagnostic: Diagnostic) -> types.Range:
        return self.positions.range(diagnostic.row, diagnostic.column, diagnostic.end_row, diagnostic.end_column)

    def _related(self, note: Note) -> types.DiagnosticRelatedInformation:
        position = self.positions.position(note.row, note.column)
        return types.DiagnosticRelatedInformation(
            location=types.Location(uri=self.uri, range=types.Range(position, position)),
            message=note.message,
        )

    # --- code actions ---------------------------------------------------------------

    async def code_actions(self, linting: "_Linting", wanted: types.Range,
                           kinds: Optional[list[str]]) -> list[types.CodeAction]:
        findings = [diagnostic for diagnostic in self.report.diagnostics
                    if diagnostic.code != "TL000" and _overlaps(self.range_of(diagnostic), wanted)]
        fix_all = await self.fix_all_action(linting) if _kind_wanted(FIX_ALL_KIND, kinds) else None
        return await _gathered(linting, self.uri, kinds, findings,
                               lambda diagnostic: (self.fix_action(diagnostic), self.ignore_action(diagnostic)), fix_all)

    def fix_action(self, diagnostic: Diagnostic) -> Optional[types.CodeAction]:
        if diagnostic.applicable_fix not in (Applicability.SAFE, Applicability.UNSAFE):
            return None
        # The same check `--fix` makes: the fixed text must parse and compile.
        if verify(apply_edits(self.text, diagnostic.text_edits), self.display) is not None:
            return None
        edits = [
            types.TextEdit(range=types.Range(self.positions.at_offset(edit.start), self.positions.at_offset(edit.end)),
                           new_text=edit.content)
            for edit in sorted(set(diagnostic.text_edits), key=lambda e: (e.start, e.end))
        ]
        return _fix_action(diagnostic, self._to_lsp(diagnostic), types.WorkspaceEdit(changes={self.uri: edits}))

    async def fix_all_action(self, linting: "_Linting") -> Optional[types.CodeAction]:
        if self.skipped:
            return None
        if self._fixed_all is None:  # (outcome, None), or (None, why it was stopped)
            self._fixed_all = await linting.run(("fix", self.uri), _fix_text, self.text, self.display, self.rules,
                                                self.target, self.path)
        outcome = self._fixed_all[0] if self._fixed_all is not None else None
        if outcome is None or not outcome.changed or outcome.error:
            return None
        return types.CodeAction(
            title="Fix all safe fixes in this file",
            kind=FIX_ALL_KIND,
            edit=types.WorkspaceEdit(changes={self.uri: [types.TextEdit(range=_whole(self.positions),
                                                                        new_text=outcome.text)]}),
        )

    def ignore_action(self, diagnostic: Diagnostic) -> Optional[types.CodeAction]:
        return _ignore_action(self.uri, self.text, self.positions, diagnostic, self._to_lsp(diagnostic),
                              lambda text: verify(text, self.display) is None)


def _ignore_action(uri: str, text: str, positions: _Positions, diagnostic: Diagnostic,
                   shown: types.Diagnostic, usable) -> Optional[types.CodeAction]:
    """A ``# noqa: CODE`` for ``diagnostic`` in ``text`` (a buffer or a notebook cell), when
    ``usable(new_text)``.  noqa counts on the finding's first or last line, or where the
    string or statement that line is inside ends; the first one that takes a comment gets it."""
    moved = comment_rows(text)
    rows = (diagnostic.row, diagnostic.end_row)
    for row in dict.fromkeys((*rows, *(moved.get(row, row) for row in rows))):
        edit = _noqa_edit(text, positions, row, diagnostic.code)
        if edit is None:
            continue
        new_text = _apply(text, positions, edit)
        if usable(new_text) and parse_directives(new_text).suppresses(diagnostic.code, (row,)):
            return types.CodeAction(
                title=f"Ignore {diagnostic.code} on this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[shown],
                edit=types.WorkspaceEdit(changes={uri: [edit]}),
            )
    return None


def _noqa_edit(text: str, positions: _Positions, row: int, code: str) -> Optional[types.TextEdit]:
    line = positions.index.line(row)
    comment = _comment_on(text, row)
    if comment is not None:
        column, comment_text = comment
        match = _NOQA_WITH_CODES.search(comment_text)
        if match is not None:  # extend `# noqa: TL101` to `# noqa: TL101, TL203`
            at = positions.position(row, column + 1 + match.end())
            return types.TextEdit(range=types.Range(at, at), new_text=f", {code}")
    content = line.rstrip()
    start = positions.position(row, len(content) + 1)
    end = positions.end_of_line(row)
    return types.TextEdit(range=types.Range(start, end), new_text=f"  # noqa: {code}")


def _apply(text: str, positions: _Positions, edit: types.TextEdit) -> str:
    """``text`` with one edit made (positions computed by ``positions``, so exact)."""
    index = positions.index

    def offset(position: types.Position) -> int:
        line = index.line(position.line + 1)
        prefix_units, column = 0, 0
        while column < len(line) and prefix_units < position.character:
            prefix_units += positions.units(line[column])
            column += 1
        return index.offset(position.line + 1, column + 1)

    start, end = offset(edit.range.start), offset(edit.range.end)
    return text[:start] + edit.new_text + text[end:]


def _fix_action(diagnostic: Diagnostic, shown: types.Diagnostic, edit: types.WorkspaceEdit) -> types.CodeAction:
    """The quick fix that applies ``diagnostic``'s fix by ``edit`` (of a buffer or of cells)."""
    safe = diagnostic.applicable_fix is Applicability.SAFE
    title = f"Fix: {diagnostic.fix.message}" + ("" if safe else " (unsafe: may change behaviour)")
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[shown], edit=edit,
                            is_preferred=safe)


async def _gathered(linting: "_Linting", uri: str, kinds: Optional[list[str]], findings: list[Diagnostic],
                    actions_of, fix_all: Optional[types.CodeAction]) -> list[types.CodeAction]:
    """The actions of the ``kinds`` asked for: the fix and ignore actions of each of
    ``findings`` (``actions_of(finding)`` gives the pair; made in a child process, as
    checking that an edit compiles takes as long as the text), then the fix-all action
    (if any, and asked for)."""
    actions: list[types.CodeAction] = []
    if findings and _kind_wanted(types.CodeActionKind.QuickFix, kinds):
        found = await linting.run(("actions", uri), _each_finding_actions, findings, actions_of)
        actions.extend(found[0] or () if found is not None else ())
    if fix_all is not None and _kind_wanted(FIX_ALL_KIND, kinds):
        actions.append(fix_all)
    return actions


def _each_finding_actions(findings: list[Diagnostic], actions_of) -> list[types.CodeAction]:
    return [action for finding in findings for action in actions_of(finding) if action is not None]


def _whole(positions: _Positions) -> types.Range:
    return types.Range(types.Position(0, 0), positions.end_of_line(positions.index.line_count))


def _lsp_diagnostic(diagnostic: Diagnostic, positions: _Positions,
                    related: Optional[list[types.DiagnosticRelatedInformation]] = None) -> types.Diagnostic:
    """``diagnostic`` as the editor gets it, placed by ``positions`` (of its buffer or cell)."""
    return types.Diagnostic(
        range=positions.range(diagnostic.row, diagnostic.column, diagnostic.end_row, diagnostic.end_column),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Warning,
        code=diagnostic.code,
        code_description=types.CodeDescription(href=diagnostic.url),
        source=SOURCE,
        related_information=related or None,
    )


def _comment_on(text: str, row: int) -> Optional[tuple[int, str]]:
    """(0-based column, text) of the comment token on line ``row``, if any."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] == row:
                return token.start[1], token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return None


def _kind_wanted(kind: str, kinds: Optional[list[str]]) -> bool:
    """LSP's ``only`` filter: a kind is wanted when it equals or extends one asked for."""
    return not kinds or any(kind == only or kind.startswith(only + ".") for only in kinds)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _uri_to_path(uri: str) -> Optional[Path]:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None  # an unsaved buffer: the workspace's configuration applies
    return Path(url2pathname(parsed.path)).resolve()


def _rules_for(path: Optional[Path], root: Optional[str]):
    """The rules ``torchlint check`` would use for this file, and what its `target-torch`
    does to their findings (fresh each time, so edits to pyproject.toml apply to the next lint)."""
    folder = path.parent if path is not None else Path(root or os.getcwd())
    resolver = SettingsResolver(Options(), cwd=folder)
    settings = resolver.for_file(path) if path is not None else resolver.for_directory(folder)
    return settings.rules_for(path), settings.target_for(path)


class _Notebook:
    """A notebook open in the editor, linted once as `check` lints an .ipynb file: the
    findings of each code cell, and the code actions on them.  A fix is checked as
    `check --fix` checks a notebook's (the cells, joined, must compile) and edits every
    cell it changes: adding `import torch` may touch the first one."""

    def __init__(self, server: "TorchlintServer", uri: str, cells: list[tuple[str, str]]):
        self.uri = uri
        self.cells = cells
        self.encoding = server.workspace.position_encoding
        self.path = _uri_to_path(uri)
        self.display = str(self.path) if self.path is not None else uri
        try:
            self.rules, self.target = _rules_for(self.path, server.workspace.root_path)
        except ConfigError:
            self.rules, self.target = [], NO_TARGET
        self.data = _notebook_json([text for _, text in cells])
        self.report = FileReport(self.display)
        self.positions = {uri: _Positions(text, self.encoding) for uri, text in cells}

    async def lint(self, linting: "_Linting") -> bool:
        """As ``_Document.lint``, the code cells as one module."""
        if not self.cells or not self.rules:
            return True
        found = await _report(linting, self.uri, self.display, _lint_notebook_data, self.data, self.rules,
                              self.target, self.path)
        if found is None:
            return False
        self.report, complete = found
        if not complete:
            self.rules = []  # nothing to fix
        return True

    def cell_of(self, diagnostic: Diagnostic) -> tuple[str, str]:
        """The (uri, text) of the cell a finding is on; cells count from 1 among the code
        cells given, and a note on the whole notebook goes on the first."""
        number = diagnostic.cell
        return self.cells[number - 1] if number and number <= len(self.cells) else self.cells[0]

    def lsp_diagnostics(self) -> dict[str, list[types.Diagnostic]]:
        found: dict[str, list[types.Diagnostic]] = {uri: [] for uri, _ in self.cells}
        for diagnostic in self.report.diagnostics:
            uri, _ = self.cell_of(diagnostic)
            found[uri].append(_lsp_diagnostic(diagnostic, self.positions[uri]))
        return found

    async def code_actions(self, linting: "_Linting", cell_uri: str, wanted: types.Range,
                           kinds: Optional[list[str]]) -> list[types.CodeAction]:
        def on_this_cell(diagnostic: Diagnostic) -> bool:
            uri, _ = self.cell_of(diagnostic)
            positions = self.positions[uri]
            where = positions.range(diagnostic.row, diagnostic.column, diagnostic.end_row, diagnostic.end_column)
            return uri == cell_uri and diagnostic.code != "TL000" and _overlaps(where, wanted)

        def actions_of(diagnostic: Diagnostic):
            uri, text = self.cell_of(diagnostic)
            positions = self.positions[uri]
            shown = _lsp_diagnostic(diagnostic, positions)
            return self._fix_action(diagnostic, shown), _ignore_action(
                uri, text, positions, diagnostic, shown,
                lambda new_text: self._compiles(self._cells_with(uri, new_text)))

        findings = [diagnostic for diagnostic in self.report.diagnostics if on_this_cell(diagnostic)]
        fix_all = await self._fix_all_action(linting) if _kind_wanted(FIX_ALL_KIND, kinds) else None
        return await _gathered(linting, cell_uri, kinds, findings, actions_of, fix_all)

    def _fix_action(self, diagnostic: Diagnostic, shown: types.Diagnostic) -> Optional[types.CodeAction]:
        if diagnostic.applicable_fix not in (Applicability.SAFE, Applicability.UNSAFE):
            return None
        notebook = self.notebook
        module = apply_edits(notebook.module, diagnostic.text_edits)
        if not compiles_as_cells(module, self.display):
            return None
        try:
            texts = _code_cells(notebook.rebuild(module))
        except ValueError:
            return None  # the edit would land on a magic line
        edit = self._edit(texts)
        return _fix_action(diagnostic, shown, edit) if edit is not None else None

    async def _fix_all_action(self, linting: "_Linting") -> Optional[types.CodeAction]:
        if not self.cells or not self.rules:
            return None
        found = await linting.run(("fix", self.uri), _fix_notebook_data, self.data, self.display, self.rules,
                                  self.target, self.path)
        outcome = found[0] if found is not None else None
        if outcome is None:
            return None
        edit = self._edit(_code_cells(outcome.text)) if outcome.changed and not outcome.error else None
        if edit is None:
            return None
        return types.CodeAction(title="Fix all safe fixes in this notebook", kind=FIX_ALL_KIND, edit=edit)

    def _edit(self, texts: list[str]) -> Optional[types.WorkspaceEdit]:
        """Each changed cell replaced whole (None when the cells did not come back as given)."""
        if len(texts) != len(self.cells):
            return None
        changes = {uri: [types.TextEdit(range=_whole(self.positions[uri]), new_text=new)]
                   for (uri, old), new in zip(self.cells, texts) if new != old}
        return types.WorkspaceEdit(changes=changes) if changes else None

    def _cells_with(self, uri: str, new_text: str) -> list[str]:
        return [new_text if cell_uri == uri else text for cell_uri, text in self.cells]

    @functools.cached_property
    def notebook(self) -> Notebook:
        return read_notebook(self.data)

    def _compiles(self, texts: list[str]) -> bool:
        return compiles_as_cells(read_notebook(_notebook_json(texts)).module, self.display)


def _notebook_json(texts: list[str]) -> bytes:
    """A notebook of these code cells, as `check` would read it from an .ipynb file."""
    content = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                          "source": text} for text in texts],
               "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(content).encode("utf-8")


def _code_cells(notebook_json: str) -> list[str]:
    """The sources of a notebook's code cells, as the editor holds them (one string each)."""
    sources = []
    for cell in json.loads(notebook_json)["cells"]:
        if cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else source)
    return sources


class TorchlintServer(LanguageServer):
    def __init__(self, *args, private_fds: tuple[int, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.linting = _Linting(FileLimits(), private_fds)
        # uri -> the last lint of that buffer: editors ask for code actions on every
        # cursor move, and the text has usually not changed since it was published.
        self.linted: dict[str, _Document] = {}
        # uri -> the last lint of that buffer that parsed: its findings stay, marked stale,
        # while the buffer has a syntax error (as ruff keeps reporting while one types).
        self.last_good: dict[str, _Document] = {}
        # notebook uri -> the uris of the cells it last published diagnostics for
        self.notebook_cells: dict[str, list[str]] = {}
        # cell uri -> the last lint of its notebook, which answers the cell's code actions
        self.notebooks: dict[str, _Notebook] = {}

    def configure(self, params: types.InitializeParams) -> None:
        """The client's limits (``initializationOptions``), and its process to outlive not."""
        self.linting.limits = _limits(params.initialization_options)
        if params.process_id is not None:
            _watch_client(params.process_id, self.linting.stop)

    async def publish_notebook(self, notebook_uri: str) -> None:
        """Lint a notebook open in the editor as `check` lints an .ipynb file (its code cells
        as one module, magics masked) and publish each cell's findings on that cell."""
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
        cells = [(cell.document, self.workspace.get_text_document(cell.document).source)
                 for cell in notebook.cells if cell.kind == types.NotebookCellKind.Code]
        linted = _Notebook(self, notebook_uri, cells)
        if not await linted.lint(self.linting):
            return  # a newer version is being linted
        found = linted.lsp_diagnostics()
        for uri in self.notebook_cells.get(notebook_uri, []):
            found.setdefault(uri, [])  # a cell deleted or no longer code: its findings go
            self.notebooks.pop(uri, None)
        self.notebook_cells[notebook_uri] = [uri for uri, _ in cells]
        for uri, _ in cells:
            self.notebooks[uri] = linted
        for uri, diagnostics in found.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        notebook = self.notebooks.get(uri)
        if notebook is not None:
            return await notebook.code_actions(self.linting, uri, params.range, params.context.only)
        document = await self.lint(uri, reuse=True)
        if document is None:
            return []
        return await document.code_actions(self.linting, params.range, params.context.only)

    async def lint(self, uri: str, reuse: bool = False) -> Optional[_Document]:
        """The buffer's lint (the last one if ``reuse`` and its text is unchanged); None
        when a newer lint of it came first."""
        version = self.workspace.get_text_document(uri).version
        text = self.workspace.get_text_document(uri).source
        document = self.linted.get(uri)
        if reuse and document is not None and document.text == text:
            return document
        document = _Document(self, uri, text)
        if not await document.lint(self.linting):
            return None
        document.version = version
        self.linted[uri] = document
        if document.parses and not document.skipped:
            self.last_good[uri] = document
        if document.report.internal_error:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, document.report.internal_error))
        return document

    async def publish(self, uri: str) -> None:
        document = await self.lint(uri)
        if document is None:
            return  # a newer version is being linted: its findings will be published
        version = document.version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=document.lsp_diagnostics(self.last_good.get(uri)),
                                           version=version)
        )


def create_server(private_fds: tuple[int, ...] = ()) -> TorchlintServer:
    """The server; ``private_fds``: descriptors of its channel, which no lint may keep open."""
    notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithCells(
        cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")])
    server = TorchlintServer("torchlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full,
                             notebook_document_sync=notebooks, private_fds=private_fds)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
        ls.configure(params)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_did_open(ls: TorchlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        await ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_did_change(ls: TorchlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        await ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_did_save(ls: TorchlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        await ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TorchlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.linting.cancel(("lint", params.notebook_document.uri))
        for uri in ls.notebook_cells.pop(params.notebook_document.uri, []):
            ls.notebooks.pop(uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.linting.cancel(("lint", params.text_document.uri))
        ls.linted.pop(params.text_document.uri, None)
        ls.last_good.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: TorchlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return await ls.code_actions(params)

    return server


def serve() -> None:
    """Serve over this process's standard input and output.  The server reads and writes
    its own copies of them: anything else that prints goes to standard error instead of
    into the protocol, and the lints it forks find standard input as nobody's (a child
    forked while a thread reads ``sys.stdin`` would block closing it)."""
    channel_in, channel_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    server = create_server((channel_in, channel_out))
    _warm_up()
    try:
        server.start_io(os.fdopen(channel_in, "rb"), os.fdopen(channel_out, "wb"))
    finally:
        server.linting.stop()


# --- linting in child processes -----------------------------------------------------------

_AT_ONCE = 2  # lints running at once (each may grow by the memory limit)
_POLL_SECONDS = 0.02  # how often a lint in flight is looked at, at most
_CLIENT_POLL_SECONDS = 1.0  # how often the client's process is looked for
# A forked lint inherits the documents and rules as they are: nothing is pickled to it.
_CAN_FORK = fork_context().get_start_method() == "fork"


class _Linting:
    """Every lint of the server, in a child process forked for it: ``FileGuard`` stops it
    at the CLI's per-file limits (guard.py), and one stuck where the guard cannot reach is
    killed at the hard deadline, so a document that is slow to lint costs that document a
    TL000 while the server goes on answering.  At most ``_AT_ONCE`` run at once; a newer
    call with the same key (the same buffer, a newer text) makes an older one give up."""

    def __init__(self, limits: FileLimits, private_fds: tuple[int, ...] = ()):
        self.limits = limits
        self.private_fds = private_fds
        self.children: set = set()
        self._slots: Optional[asyncio.Semaphore] = None
        self._latest: dict[tuple[str, str], int] = {}
        self._numbers = itertools.count()

    def cancel(self, key: tuple[str, str]) -> None:
        """Make the calls with ``key`` in flight give up."""
        if key in self._latest:
            self._latest[key] = next(self._numbers)

    async def run(self, key: tuple[str, str], function, *args):
        """``(function(*args), None)`` from a child process, ``(None, why it was stopped)``,
        or None when a newer call with ``key`` came first."""
        if not _CAN_FORK:
            return function(*args), None  # no limits where a lint cannot be forked (Windows)
        number = self._latest[key] = next(self._numbers)
        if self._slots is None:
            self._slots = asyncio.Semaphore(_AT_ONCE)
        try:
            async with self._slots:
                if self._latest.get(key) != number:
                    return None
                return await self._in_child(key, number, function, args)
        finally:
            if self._latest.get(key) == number:
                del self._latest[key]

    async def _in_child(self, key, number: int, function, args):
        context = fork_context()
        receiving, sending = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(sending, self.limits, self.private_fds, function, args),
                                daemon=True)
        child.start()
        sending.close()
        self.children.add(child)
        deadline = time.monotonic() + hard_deadline(self.limits.seconds)
        try:
            pause = _POLL_SECONDS / 16  # most lints take milliseconds
            while not receiving.poll():  # an answer, or the end of the pipe: the child is gone
                if self._latest.get(key) != number:
                    return None
                if time.monotonic() > deadline:
                    return None, time_limit_reason(self.limits.seconds)
                await asyncio.sleep(pause)
                pause = min(2 * pause, _POLL_SECONDS)
            try:
                return receiving.recv()
            except (EOFError, OSError):
                child.join(timeout=1)
                return None, f"the process linting it ended without an answer (exit status {child.exitcode})"
        finally:
            receiving.close()
            if child.is_alive():
                child.kill()
            child.join()
            self.children.discard(child)

    def stop(self) -> None:
        """Kill every lint in flight (the server is going)."""
        for child in list(self.children):
            if child.is_alive():
                child.kill()


def _child(connection, limits: FileLimits, private_fds: tuple[int, ...], function, args) -> None:
    """A forked lint: ``function(*args)`` within ``limits``, its answer sent back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the editor's Ctrl-C is the server's
    signal.set_wakeup_fd(-1)  # the server's event loop must not hear this process's timer
    for descriptor in private_fds:
        try:
            os.close(descriptor)  # a lint outliving the server must not hold the client's pipes
        except OSError:
            pass
    try:
        with FileGuard(limits.seconds, limits.memory):
            answer = (function(*args), None)
    except LimitExceeded as exceeded:
        answer = (None, exceeded.reason)
    connection.send(answer)


async def _report(linting: _Linting, uri: str, display: str, function, content, *args):
    """``(report, True)`` from ``function(content, display, *args)`` run by ``linting``;
    ``(the TL000 that says why, False)`` for ``content`` (a buffer's text, a notebook's
    data) too large to lint or stopped at a limit; None when a newer lint of ``uri`` came first."""
    refusal = _size_refusal(content)
    if refusal is None:
        found = await linting.run(("lint", uri), function, content, display, *args)
        if found is None:
            return None
        report, refusal = found
        if refusal is None:
            return report, True
    return FileReport(display, [unlintable(display, refusal)]), False


def _warm_up() -> None:
    """Lint a small text here once, so that what the rules build on first use (tables,
    parsers) is there in every lint forked from this process, instead of being built again
    in each."""
    from torchlint.rules import all_rules

    _lint_text("import torch\nx = torch.zeros(2, requires_grad=True)\nprint(x.data[0], x.sum().data)\n",
               "warm-up.py", list(all_rules().values()), NO_TARGET, None)


def _lint_text(text: str, display: str, rules, target, path: Optional[Path]) -> FileReport:
    report = target.apply(lint_source(_Document.source(text), display, rules, path, Project()))
    report.source = None  # what goes back is only what is shown
    return report


def _fix_text(text: str, display: str, rules, target, path: Optional[Path]) -> FixOutcome:
    return fix_source(_Document.source(text), display, rules, allowed_applicabilities(False), path, Project(), target)


def _lint_notebook_data(data: bytes, display: str, rules, target, path: Optional[Path]) -> FileReport:
    return target.apply(lint_notebook(data, display, rules, path, Project()))


def _fix_notebook_data(data: bytes, display: str, rules, target, path: Optional[Path]) -> FixOutcome:
    return fix_notebook(data, display, rules, allowed_applicabilities(False), path, Project(), target)


def _size_refusal(content) -> Optional[str]:
    """Why a buffer (text) or notebook (bytes) is not linted for its size: over the most
    ``check`` reads of a file."""
    size = len(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    if size <= MAX_FILE_BYTES:
        return None
    return "the document" + too_large(size, MAX_FILE_BYTES).removeprefix("file")


def _limits(options) -> FileLimits:
    """The per-file limits the client asked for in ``initializationOptions``:
    ``{"fileTimeout": seconds, "fileMemory": bytes}``, as ``check --file-timeout`` and
    ``--file-memory``; the CLI's defaults for what it does not give, or gives wrong."""
    default = FileLimits()
    options = options if isinstance(options, dict) else {}

    def number(name: str, least: float, fallback):
        value = options.get(name)
        usable = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= least
        return type(fallback)(value) if usable else fallback

    return FileLimits(seconds=number("fileTimeout", 0.1, default.seconds),
                      memory=number("fileMemory", 1 << 20, default.memory))


def _watch_client(pid: int, stop) -> None:
    """End this process once the client's process ``pid`` is gone (LSP's ``processId``:
    an editor that died never closes our input), after ``stop()``."""
    if os.name != "posix":
        return  # os.kill(pid, 0) would end that process on Windows

    def watch() -> None:
        while _alive(pid):
            time.sleep(_CLIENT_POLL_SECONDS)
        stop()
        os._exit(1)

    threading.Thread(target=watch, name="torchlint-client-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"  # a zombie has ended
    except (OSError, IndexError):
        return True
