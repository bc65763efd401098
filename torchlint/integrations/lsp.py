"""``torchlint server``: a Language Server (LSP over standard input/output, built on pygls).

Every open document is linted from the editor's buffer, not from the disk, with the
configuration of the file's folder, on open, change and save; its diagnostics are
cleared on close.  Code actions offer a finding's own fix, every safe fix of the file
at once (``source.fixAll.torchlint``, what ``torchlint check --fix`` would write), and
a ``# noqa`` comment for the finding's line.  A notebook's code cells (LSP notebook
documents) are linted together, as ``check`` lints an .ipynb file, and get the same
actions, each editing the cells it changes.

Positions: torchlint counts 1-based rows and columns in code points; LSP counts
0-based lines and columns in the negotiated encoding's code units (UTF-16 unless the
client offers another), so every position is converted through ``_Positions``.
"""

from __future__ import annotations

import functools
import json
import io
import os
import re
import tokenize
from pathlib import Path
from typing import Optional
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from torchlint import __version__
from torchlint.syntax.source import LineIndex
from torchlint.syntax.source import SourceText
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import Applicability, Diagnostic, FileReport, Note, allowed_applicabilities
from torchlint.framework.noqa import comment_rows, parse_directives
from torchlint.engine.config import NO_TARGET, ConfigError, Options, SettingsResolver
from torchlint.engine.fixer import FixOutcome, apply_edits, fix_source, verify
from torchlint.engine.linter import lint_source
from torchlint.engine.notebook import Notebook, fix_notebook, lint_notebook, read_notebook

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
        self.report: FileReport = (
            FileReport(self.display) if self.skipped
            else self.target.apply(lint_source(self.source(text), self.display, self.rules, self.path, Project()))
        )

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

    def code_actions(self, wanted: types.Range, kinds: Optional[list[str]]) -> list[types.CodeAction]:
        def per_finding():
            for diagnostic in self.report.diagnostics:
                if diagnostic.code != "TL000" and _overlaps(self.range_of(diagnostic), wanted):
                    yield self.fix_action(diagnostic), self.ignore_action(diagnostic)

        return _gathered(kinds, per_finding, self.fix_all_action)

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

    @functools.cached_property
    def _fixed_all(self) -> FixOutcome:
        return fix_source(self.source(self.text), self.display, self.rules, allowed_applicabilities(False),
                          self.path, Project(), self.target)

    def fix_all_action(self) -> Optional[types.CodeAction]:
        outcome = self._fixed_all
        if not outcome.changed or outcome.error:
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


def _gathered(kinds: Optional[list[str]], per_finding, fix_all) -> list[types.CodeAction]:
    """The actions of the ``kinds`` asked for: each finding's fix and ignore actions
    (``per_finding()`` yields the pairs), then the fix-all action."""
    actions: list[types.CodeAction] = []
    if _kind_wanted(types.CodeActionKind.QuickFix, kinds):
        for pair in per_finding():
            actions.extend(action for action in pair if action is not None)
    if _kind_wanted(FIX_ALL_KIND, kinds):
        action = fix_all()
        if action is not None:
            actions.append(action)
    return actions


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
        self.report = (self.target.apply(lint_notebook(self.data, self.display, self.rules, self.path, Project()))
                       if cells and self.rules else FileReport(self.display))
        self.positions = {uri: _Positions(text, self.encoding) for uri, text in cells}

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

    def code_actions(self, cell_uri: str, wanted: types.Range, kinds: Optional[list[str]]) -> list[types.CodeAction]:
        def per_finding():
            for diagnostic in self.report.diagnostics:
                uri, text = self.cell_of(diagnostic)
                positions = self.positions[uri]
                where = positions.range(diagnostic.row, diagnostic.column, diagnostic.end_row, diagnostic.end_column)
                if uri != cell_uri or diagnostic.code == "TL000" or not _overlaps(where, wanted):
                    continue
                shown = _lsp_diagnostic(diagnostic, positions)
                yield self._fix_action(diagnostic, shown), _ignore_action(
                    uri, text, positions, diagnostic, shown,
                    lambda new_text: self._compiles(self._cells_with(uri, new_text)))

        return _gathered(kinds, per_finding, self._fix_all_action)

    def _fix_action(self, diagnostic: Diagnostic, shown: types.Diagnostic) -> Optional[types.CodeAction]:
        if diagnostic.applicable_fix not in (Applicability.SAFE, Applicability.UNSAFE):
            return None
        notebook = self.notebook
        module = apply_edits(notebook.module, diagnostic.text_edits)
        if verify(module, self.display) is not None:
            return None
        try:
            texts = _code_cells(notebook.rebuild(module))
        except ValueError:
            return None  # the edit would land on a magic line
        edit = self._edit(texts)
        return _fix_action(diagnostic, shown, edit) if edit is not None else None

    def _fix_all_action(self) -> Optional[types.CodeAction]:
        if not self.cells or not self.rules:
            return None
        outcome = fix_notebook(self.data, self.display, self.rules, allowed_applicabilities(False), self.path,
                               Project(), self.target)
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
        return verify(read_notebook(_notebook_json(texts)).module, self.display) is None


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
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
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

    def publish_notebook(self, notebook_uri: str) -> None:
        """Lint a notebook open in the editor as `check` lints an .ipynb file (its code cells
        as one module, magics masked) and publish each cell's findings on that cell."""
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        if notebook is None:
            return
        cells = [(cell.document, self.workspace.get_text_document(cell.document).source)
                 for cell in notebook.cells if cell.kind == types.NotebookCellKind.Code]
        linted = _Notebook(self, notebook_uri, cells)
        found = linted.lsp_diagnostics()
        for uri in self.notebook_cells.get(notebook_uri, []):
            found.setdefault(uri, [])  # a cell deleted or no longer code: its findings go
            self.notebooks.pop(uri, None)
        self.notebook_cells[notebook_uri] = [uri for uri, _ in cells]
        for uri, _ in cells:
            self.notebooks[uri] = linted
        for uri, diagnostics in found.items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        notebook = self.notebooks.get(uri)
        if notebook is not None:
            return notebook.code_actions(uri, params.range, params.context.only)
        return self.lint(uri, reuse=True).code_actions(params.range, params.context.only)

    def lint(self, uri: str, reuse: bool = False) -> _Document:
        text = self.workspace.get_text_document(uri).source
        document = self.linted.get(uri)
        if reuse and document is not None and document.text == text:
            return document
        document = self.linted[uri] = _Document(self, uri, text)
        if document.parses and not document.skipped:
            self.last_good[uri] = document
        if document.report.internal_error:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, document.report.internal_error))
        return document

    def publish(self, uri: str) -> None:
        document = self.lint(uri)
        version = self.workspace.get_text_document(uri).version
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=document.lsp_diagnostics(self.last_good.get(uri)),
                                           version=version)
        )


def create_server() -> TorchlintServer:
    notebooks = types.NotebookDocumentSyncOptions(notebook_selector=[types.NotebookDocumentFilterWithCells(
        cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")])
    server = TorchlintServer("torchlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full,
                             notebook_document_sync=notebooks)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: TorchlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: TorchlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: TorchlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.publish_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TorchlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        for uri in ls.notebook_cells.pop(params.notebook_document.uri, []):
            ls.notebooks.pop(uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.linted.pop(params.text_document.uri, None)
        ls.last_good.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def code_action(ls: TorchlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return ls.code_actions(params)

    return server


def serve() -> None:
    create_server().start_io()
