"""Jupyter notebooks (``.ipynb``, nbformat 4): lint the code cells, report cell-relative
locations, and write fixes back into the cells.

The code cells of a notebook share one namespace, so they are linted as one module:
their sources joined in order, with a boundary comment between cells.  A tensor made in
cell 1 is then known in cell 3, and a finding maps back to (cell, row, column) through
the rows each cell starts at.  Cells are numbered as Jupyter shows them: the 1-based
index among *all* cells, markdown and raw cells included.

IPython syntax is not Python: line magics (``%time f()``, ``!pip install x``,
``files = !ls``, ``obj?``) are replaced by a placeholder ``pass`` of the same indentation
before parsing and put back verbatim after fixing; a cell magic (``%%bash``) makes the
whole cell not Python, except the few that run their body as Python (``%%time``).  A
code cell that does not parse on its own is reported as not linted (TL000) and left out.

``--fix`` rewrites only the sources of the cells that changed and writes the JSON back
the way it was written (indentation, key order, ``ensure_ascii``, newlines); a notebook
whose layout cannot be reproduced byte for byte is not rewritten, nor is one whose code
cells already hold the placeholder or boundary text: it would be taken for torchlint's own.
"""

from __future__ import annotations

import __future__
import ast
import bisect
import codecs
import copy
import dataclasses
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Optional, Sequence

from torchlint.syntax import cst, parsing
from torchlint.syntax.source import LINE_BREAK, LineIndex
from torchlint.syntax.source import SourceText, UnreadableSource
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import Applicability, Diagnostic, FileReport, Note, unlintable
from torchlint.framework.rule import Rule
from torchlint.engine.config import NO_TARGET, Target
from torchlint.engine.fixer import FixOutcome, fix_source, verify
from torchlint.engine.linter import lint_source, syntax_error_reason

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python run in the notebook's namespace; any other cell
# magic (%%bash, %%html, %%writefile, ...) makes the cell something else.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_BOUNDARY = "# ---- torchlint notebook cell {} ----\n"
_BOUNDARY_LINE = re.compile(r"^# ---- torchlint notebook cell (\d+) ----\n", re.MULTILINE)
_PLACEHOLDER = "pass  # <torchlint magic {}>"
_PLACEHOLDER_LINE = re.compile(r"([ \t]*)pass  # <torchlint magic (\d+)>(?:\r\n|\r|\n)?")
_OWN_TEXT = ("<torchlint magic ", "# ---- torchlint notebook cell ")  # what only torchlint may write
# A cell's `from __future__` imports hold in the cells run after it, as in IPython.
_FUTURE_FLAGS = sum(getattr(__future__, name).compiler_flag for name in __future__.all_feature_names)
_MAGIC_ASSIGNMENT = re.compile(r"[ \t]*[A-Za-z_][\w.,\s\[\]]*=[ \t]*[%!]")
_HELP = re.compile(r"[ \t]*[\w.*]+\?{1,2}[ \t]*(?:\r\n|\r|\n)?")


def is_notebook(path: Optional[Path]) -> bool:
    return path is not None and path.suffix.lower() == NOTEBOOK_SUFFIX


class Magic(NamedTuple):
    line: str  # as written, with its line break
    continuation: bool  # it continues the magic above it (after a backslash)


@dataclass
class CodeCell:
    number: int  # 1-based index among all cells, as Jupyter shows it
    text: str  # the source as written
    masked: str  # the source with magics replaced by placeholders, ending with a newline
    magics: dict[int, Magic]  # placeholder id -> the line it stands for
    added_newline: bool  # ``masked`` got a final newline the source did not have
    first_row: int = 0  # where the cell starts in the joined module


@dataclass
class Notebook:
    text: str  # the JSON text
    encoding: str
    content: dict  # the parsed JSON
    cells: list[CodeCell] = field(default_factory=list)  # the code cells that are linted
    problems: list[tuple[int, str, int, int]] = field(default_factory=list)  # (cell, reason, row, column)
    module: str = ""  # the linted cells joined into one module

    def source_of(self, number: int) -> str:
        return _source_text(self.content["cells"][number - 1], number)

    def join_cells(self) -> None:
        """Join the linted cells into one module, a boundary comment between cells."""
        parts = []
        row = 1
        for position, cell in enumerate(self.cells):
            if position:
                parts.append(_BOUNDARY.format(cell.number))
                row += 1
            cell.first_row = row
            parts.append(cell.masked)
            row += len(LINE_BREAK.findall(cell.masked))
        self.module = "".join(parts)

    def locate(self, row: int) -> tuple[CodeCell, int]:
        """The cell holding row ``row`` of the joined module, and the row within the cell."""
        starts = [cell.first_row for cell in self.cells]
        cell = self.cells[max(bisect.bisect_right(starts, row) - 1, 0)]
        return cell, max(row - cell.first_row + 1, 1)

    def rebuild(self, fixed_module: str) -> str:
        """The notebook JSON with each cell's source taken from the fixed module."""
        forged = next((cell.number for cell in self.cells if any(text in cell.text for text in _OWN_TEXT)), None)
        if forged is not None:
            raise ValueError(f"cell {forged} holds the text torchlint marks IPython magics or cell boundaries "
                             f"with, which it could not tell from its own")
        chunks = _BOUNDARY_LINE.split(fixed_module)
        numbers = [int(n) for n in chunks[1::2]]
        if numbers != [cell.number for cell in self.cells[1:]]:
            raise ValueError("the fixes moved a cell boundary (please report this)")
        layout = _layout(self.content, self.text)
        content = copy.deepcopy(self.content)
        for cell, chunk in zip(self.cells, chunks[0::2]):
            if chunk == cell.masked:
                continue
            text = _unmask(chunk, cell.magics)
            if cell.added_newline and text.endswith("\n"):
                text = text[:-1]
            raw = content["cells"][cell.number - 1]
            raw["source"] = text.splitlines(keepends=True) if isinstance(raw["source"], list) else text
        return _render(content, layout)


def read_notebook(data: bytes) -> Notebook:
    """Parse notebook bytes, or raise UnreadableSource saying what is wrong with them."""
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise UnreadableSource(f"not a notebook: it is not valid UTF-8 (byte 0x{data[error.start]:02x} "
                               f"at offset {error.start})")
    try:
        content = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableSource(f"not a notebook: invalid JSON: {error.msg}", error.lineno, error.colno)
    except RecursionError:
        raise UnreadableSource("not a notebook: the JSON is nested too deeply")
    if not isinstance(content, dict):
        raise UnreadableSource("not a notebook: the JSON is not an object")
    if content.get("nbformat") != 4:
        version = content.get("nbformat", "missing")
        raise UnreadableSource(f"not an nbformat 4 notebook (nbformat: {version}); "
                               "upgrade it with `jupyter nbconvert --to notebook`")
    cells = content.get("cells")
    if not isinstance(cells, list):
        raise UnreadableSource("not a notebook: `cells` is not a list")
    notebook = Notebook(text, encoding, content)
    for number, raw in enumerate(cells, start=1):
        if not isinstance(raw, dict) or not isinstance(raw.get("cell_type"), str):
            raise UnreadableSource(f"cell {number} is not a notebook cell (no `cell_type`)")
        if raw["cell_type"] == "code":
            _add_code_cell(notebook, number, _source_text(raw, number))
    notebook.join_cells()
    return notebook


def changed_cells(before: str, after: str) -> list[tuple[int, str, str]]:
    """(cell number, source before, source after) of each cell whose source differs
    between two versions of a notebook's JSON text (the number counts every cell, as
    Jupyter shows them)."""
    old, new = json.loads(before), json.loads(after)
    changed = []
    for number, (was, now) in enumerate(zip(old.get("cells", []), new.get("cells", [])), start=1):
        source_before, source_after = _source_text(was, number), _source_text(now, number)
        if source_before != source_after:
            changed.append((number, source_before, source_after))
    return changed


def _source_text(raw: dict, number: int) -> str:
    source = raw.get("source")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise UnreadableSource(f"cell {number}: `source` is not a string or a list of strings")


def _add_code_cell(notebook: Notebook, number: int, text: str) -> None:
    masked = _mask(text)
    if masked is None:
        return  # a cell magic that is not Python
    masked_text, magics = masked
    added_newline = not masked_text.endswith(("\n", "\r"))
    if added_newline:
        masked_text += "\n"
    try:
        parsing.check_syntax(masked_text)
    except cst.ParserSyntaxError as error:
        notebook.problems.append((number, *syntax_error_reason(error)))
        return
    except Exception as error:  # a bug in the tree's construction must not stop the run
        notebook.problems.append((number, f"cannot parse: {type(error).__name__}: {error}", 1, 1))
        return
    notebook.cells.append(CodeCell(number, text, masked_text, magics, added_newline))


def language(notebook: Notebook) -> str:
    """The notebook's kernel language, lower case ("python" when it does not say)."""
    metadata = notebook.content.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(name), str):
            return section[name].lower()
    return "python"


# --- IPython syntax -------------------------------------------------------------------


def _mask(text: str) -> Optional[tuple[str, dict[int, Magic]]]:
    """The cell with each magic line replaced by a ``pass`` placeholder; None when a cell
    magic makes the cell something other than Python."""
    lines = text.splitlines(keepends=True)
    indents: dict[int, str] = {}  # masked row -> its placeholder's indentation
    continued: set[int] = set()  # rows that continue a magic after a backslash
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(None, 1)
        if not name or name[0] not in PYTHON_CELL_MAGICS:
            return None
        indents[first] = ""
    scanner = _StatementStarts()
    indent = None  # while a magic continues after a backslash: its indentation
    for i, line in enumerate(lines):
        if i in indents:
            continue
        if indent is not None:
            indents[i] = indent
            continued.add(i)
        elif scanner.at_statement_start and _is_magic(line):
            indents[i] = line[: len(line) - len(line.lstrip(" \t"))]
        else:
            scanner.feed(line)
            continue
        indent = indents[i] if line.rstrip("\r\n").endswith("\\") else None
    magics = {}
    for number, i in enumerate(sorted(indents)):
        line = lines[i]
        magics[number] = Magic(line, i in continued)
        lines[i] = indents[i] + _PLACEHOLDER.format(number) + line[len(line.rstrip("\r\n")):]
    return "".join(lines), magics


def _is_magic(line: str) -> bool:
    stripped = line.lstrip(" \t")
    return (stripped.startswith(("%", "!", "?")) or _MAGIC_ASSIGNMENT.match(line) is not None
            or _HELP.fullmatch(line) is not None)


def _unmask(text: str, magics: dict[int, Magic]) -> str:
    """Put the original magic lines back in place of their placeholders."""
    left = dict(magics)
    restored = []
    for line in text.splitlines(keepends=True):
        match = _PLACEHOLDER_LINE.fullmatch(line)
        magic = left.pop(int(match.group(2)), None) if match else None
        if magic is None:
            restored.append(line)
        elif magic.continuation:
            restored.append(magic.line)
        else:
            # The placeholder's indentation: a fix may have re-indented the block around it.
            restored.append(match.group(1) + magic.line.lstrip(" \t"))
    if left:
        raise ValueError("the fixes removed an IPython magic line (please report this)")
    return "".join(restored)


class _StatementStarts:
    """Fed the lines of a cell, says whether the next line starts a statement: it is not
    inside brackets or a triple-quoted string, nor continued by a backslash.  A line
    starting with ``%`` inside brackets is the modulo operator, not a magic."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.backslash = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.backslash

    def feed(self, line: str) -> None:
        self.backslash = False
        i, end = 0, len(line)
        while i < end:
            char = line[i]
            if self.quote is not None:
                if char == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
            elif char == "#":
                break
            elif char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif char in "'\"":
                self.quote = char * 3 if line.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            elif char == "\\" and not line[i + 1:].strip("\r\n"):
                self.backslash = True
            i += 1
        if self.quote in ("'", '"'):
            self.quote = None  # a one-quote string ends with its line


# --- JSON layout ----------------------------------------------------------------------


def _layout(content: dict, text: str) -> dict:
    """The ``json.dumps`` arguments (and line break) that reproduce ``text`` exactly.
    Jupyter writes indent 1, ``ensure_ascii=False`` and a final newline; other tools differ."""
    newline = "\r\n" if "\r\n" in text else "\n"
    for indent, separators in ((1, None), (2, None), (4, None), (None, None), (None, (",", ":"))):
        for ensure_ascii in (False, True):
            layout = {"indent": indent, "separators": separators, "ensure_ascii": ensure_ascii,
                      "newline": newline, "final_newline": text.endswith(newline)}
            if _render(content, layout) == text:
                return layout
    raise ValueError("its JSON layout cannot be reproduced exactly (save it from Jupyter, "
                     "which writes indent 1, and fix it again)")


def _render(content: dict, layout: dict) -> str:
    text = json.dumps(content, indent=layout["indent"], separators=layout["separators"],
                      ensure_ascii=layout["ensure_ascii"])
    if layout["newline"] != "\n":
        text = text.replace("\n", layout["newline"])  # JSON strings hold no raw line breaks
    return text + layout["newline"] if layout["final_newline"] else text


# --- lint and fix ---------------------------------------------------------------------


def lint_notebook(data: bytes, display_path: str, rules: Sequence[type[Rule]],
                  file_path: Optional[Path] = None, project: Optional[Project] = None) -> FileReport:
    """Lint a notebook's code cells; malformed notebooks are reported as not linted."""
    try:
        notebook = read_notebook(data)
    except UnreadableSource as error:
        return FileReport(display_path, [unlintable(display_path, error.reason, error.row, error.column)])
    return _lint(notebook, display_path, rules, file_path, project)


def _lint(notebook: Notebook, display_path: str, rules: Sequence[type[Rule]],
          file_path: Optional[Path], project: Optional[Project]) -> FileReport:
    linted = None
    if _lintable(notebook) and rules:
        linted = lint_source(_module_source(notebook), display_path, rules, file_path, project)
    return _report(notebook, display_path, linted)


def _lintable(notebook: Notebook) -> bool:
    # A notebook in another language is not ours to lint, like a file of another language.
    return language(notebook) == "python" and bool(notebook.cells)


def _report(notebook: Notebook, display_path: str, linted: Optional[FileReport]) -> FileReport:
    """The notebook's report: cells that could not be linted, then the findings of the
    joined module, moved into their cells.  It has no ``source``: rows count within cells."""
    report = FileReport(display_path)
    if language(notebook) != "python":
        return report
    report.cells = {cell.number: cell.text for cell in notebook.cells}
    report.cells.update({number: notebook.source_of(number) for number, *_ in notebook.problems})
    for number, reason, row, column in notebook.problems:
        diagnostic = unlintable(_cell_path(display_path, number), reason, row, column)
        diagnostic.cell = number
        report.diagnostics.append(diagnostic)
    if linted is not None:
        report.internal_error = linted.internal_error
        report.diagnostics.extend(_to_cells(notebook, display_path, linted.diagnostics))
    report.diagnostics.sort(key=lambda d: d.sort_key)
    return report


def fix_notebook(data: bytes, display_path: str, rules: Sequence[type[Rule]],
                 allowed: frozenset[Applicability], file_path: Optional[Path] = None,
                 project: Optional[Project] = None, target: Target = NO_TARGET) -> FixOutcome:
    """Fix a notebook's code cells (as ``target-torch`` lets them); the outcome's
    text is the notebook JSON to write.
    Raises UnreadableSource for a malformed notebook."""
    notebook = read_notebook(data)
    original = SourceText(notebook.text, notebook.encoding, data)
    if not _lintable(notebook) or not rules:
        return FixOutcome(original, notebook.text, _report(notebook, display_path, None))
    module = _module_source(notebook)
    fixed = fix_source(module, display_path, rules, allowed, file_path, project, target, compile_cells)
    if not fixed.changed:  # nothing to fix, or fixing failed (then the report is the original's)
        return FixOutcome(original, notebook.text, _report(notebook, display_path, fixed.report),
                          error=fixed.error and _fix_error(notebook, module.text, display_path, fixed.error))
    try:
        text = notebook.rebuild(fixed.text)
    except ValueError as error:
        report = _lint(notebook, display_path, rules, file_path, project)
        return FixOutcome(original, notebook.text, report,
                          error=f"not fixed, file left unchanged: {error}")
    # What remains is linted again from the rewritten notebook, so it lands in the right cells.
    remaining = _lint(read_notebook(text.encode(notebook.encoding)), display_path, rules, file_path, project)
    return FixOutcome(original, text, remaining, fixed.fixed)


def _fix_error(notebook: Notebook, module: str, display_path: str, error: str) -> str:
    """The fixer's complaint, with rows of the joined module moved into cells.  When a
    cell already fails to compile as IPython would run it, say so instead of blaming a rule."""
    try:
        compile_cells(module, display_path)
    except SyntaxError as problem:
        cell, row = notebook.locate(problem.lineno or 1)
        return (f"not fixed, file left unchanged: fixes are checked by compiling each code cell, "
                f"and cell {cell.number} does not compile as it is (line {row}: {problem.msg})")

    def in_cell(match: re.Match) -> str:
        cell, row = notebook.locate(int(match.group(1)))
        return f"fix at cell {cell.number}:{row}:{match.group(2)}"

    return re.sub(r"fix at (\d+):(\d+)", in_cell, error)


def compile_cells(module: str, display_path: str) -> None:
    """Compile the joined module's cells each alone, as IPython runs them: a cell may
    start with `from __future__` imports after other cells, and may `await` at top level.
    Raises what compile() raises, with rows of the joined module."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    row = 1
    for position, chunk in enumerate(_BOUNDARY_LINE.split(module)[0::2]):
        row += bool(position)  # the boundary line
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                code = compile(cst.without_byte_order_mark(chunk), display_path, "exec", flags=flags,
                               dont_inherit=True)
        except SyntaxError as error:
            if error.lineno is not None:
                error.lineno += row - 1
            if error.end_lineno is not None:
                error.end_lineno += row - 1
            raise
        flags |= code.co_flags & _FUTURE_FLAGS
        row += len(LINE_BREAK.findall(chunk))


def compiles_as_cells(module: str, display_path: str) -> bool:
    """The joined module parses and each of its cells compiles (``compile_cells``)."""
    return verify(module, display_path, compiler=compile_cells) is None


def module_text_of(notebook: Notebook) -> Optional[SourceText]:
    """The notebook's code cells as the one module they are linted as (rows: those of the
    module; ``notebook.rebuild`` puts an edited module back), or None when it has none."""
    return _module_source(notebook) if _lintable(notebook) else None


def _module_source(notebook: Notebook) -> SourceText:
    text = notebook.module
    return SourceText(text, "utf-8", text.encode("utf-8", "surrogatepass"))


def _cell_path(display_path: str, number: int) -> str:
    return f"{display_path}:cell {number}"


def _to_cells(notebook: Notebook, display_path: str, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics of the joined module, moved to cell-relative rows; none on a magic line."""
    placed = []
    for d in diagnostics:
        cell, row = notebook.locate(d.row)
        if _PLACEHOLDER_LINE.fullmatch(LineIndex(cell.masked).line(row) + "\n"):
            continue
        _, end_row = notebook.locate(d.end_row)
        placed.append(dataclasses.replace(
            d,
            path=_cell_path(display_path, cell.number),
            cell=cell.number,
            row=row,
            end_row=max(end_row, row),
            message=d.message.replace(f"{display_path} was not linted", f"{_cell_path(display_path, cell.number)} "
                                      "was not linted"),
            evidence=[_note(notebook, note, cell) for note in d.evidence],
            related=[_note(notebook, note, cell) for note in d.related],
            fix_edits=[_edit(notebook, edit) for edit in d.fix_edits],
        ))
    return placed


def _note(notebook: Notebook, note: Note, home: CodeCell) -> Note:
    cell, row = notebook.locate(note.row)
    message = note.message if cell is home else f"{note.message} [cell {cell.number}]"
    return Note(message, row, note.column)


def _edit(notebook: Notebook, edit: tuple[int, int, int, int, str]) -> tuple[int, int, int, int, str]:
    row, column, end_row, end_column, content = edit
    return notebook.locate(row)[1], column, notebook.locate(end_row)[1], end_column, content
