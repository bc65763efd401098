"""``torchlint check --runtime``: run the flagged code and give each finding a verdict.

The path is short: plan the sites of every file with findings -> run the user's entry
point once (``--entry``) -> run each file whole when it is a script (its module level
reaches the lines) -> call the enclosing function with synthesized arguments for lines
still not reached -> a differential run of the autofixed file -> attach
``Diagnostic.runtime``.  Each run is a job in the sandbox (a fork server that imported
torch once); ``monitor.run_job`` is what runs inside it.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
import re
import shlex
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterable, Optional

from torchlint.framework.diagnostics import Diagnostic, FileReport, TextEdit
from torchlint.framework.verdicts import CONFIRMED, COULD_NOT_RUN, VERDICTS, Observation
from torchlint.rules import all_rules
from torchlint.syntax.legacy import repair as repair_legacy_syntax
from torchlint.syntax.source import LineIndex, SourceText, UnreadableSource
from torchlint.engine.fixer import apply_edits, verify
from torchlint.engine.linter import lint_source
from torchlint.engine.notebook import NOTEBOOK_SUFFIX, Notebook, read_notebook
from torchlint.output.escape import terminal
from torchlint.runtime import made_inputs, view
from torchlint.runtime.call_sites import CallSites
from torchlint.runtime.drivers import ProjectImports
from torchlint.runtime.plan import (
    UNJUDGED, FilePlan, argparse_defaults, class_count, gradient_parameters, guarded_by_defaults, package_of,
    periodic_guards, read_tree, string_options,
)
from torchlint.runtime.stand_ins import (ASSUMED_CUDA, CHECKPOINT, CLIMBING, CUDA_ON_CPU, CUDA_VERSION, FOLDER,
                                        GIVEN_OPTION, LEFT_OUT, NUMPY_ALIAS, OPTION, PERIODIC, PORTED, SYNTHETIC)

MAX_EVIDENCE = 2000  # characters of a verdict's evidence
JOB = "torchlint.runtime.monitor:run_job"
MAX_RERUNS = 12  # each rerun gets one confirmed stop further; a driver's loop may hold several in a row
ARGUMENT_VARIANTS = 12  # kinds of synthesized arguments tried in turn (monitor.ARGUMENT_VARIANTS)
# Rules whose bug is a wrong gradient: a gradient that differs from the fixed run's is evidence.
GRADIENT_RULES = ("TL101", "TL102", "TL103", "TL201", "TL301", "TL303", "TL304", "TL403")


class RuntimeUnavailable(Exception):
    """The runtime check cannot start (torch is not installed)."""


@dataclass(frozen=True)
class RuntimeOptions:
    entry: Optional[tuple[str, ...]] = None  # ("train.py", "--epochs", "1") or ("pytest", "tests/x.py::t")
    timeout: float = 30.0
    memory: int = 4 << 30
    jobs: int = 1
    scripts: bool = True  # the project's own scripts drive what no other run reached (drivers.py)
    budget: float = 600.0  # seconds all the runs together may take (--runtime-budget)


def parse_entry(text: str, cwd: str) -> tuple[str, ...]:
    """``"train.py --epochs 1"``, ``"python train.py"`` or ``"pytest tests/x.py::test_y"``,
    with paths made absolute; ValueError when it names a file that does not exist."""
    words = shlex.split(text)
    if words and os.path.basename(words[0]).startswith("python") and len(words) > 1 and words[1] != "-m":
        words = words[1:]  # `python train.py ...`: the monitor's interpreter runs it
    elif len(words) > 2 and os.path.basename(words[0]).startswith("python") and words[1:3] == ["-m", "pytest"]:
        words = words[2:]
    if not words:
        raise ValueError("--entry is empty")
    if words[0] in ("pytest", "py.test"):
        arguments = [_absolute(word, cwd) if not word.startswith("-") else word for word in words[1:]]
        for word, original in zip(arguments, words[1:]):
            if not original.startswith("-") and not os.path.exists(word.partition("::")[0]):
                raise ValueError(f"pytest would find no {original.partition('::')[0]!r} in {cwd}")
        return ("pytest", *arguments)
    script = _absolute(words[0], cwd)
    if not os.path.isfile(script):
        raise ValueError(f"no such script: {words[0]!r} (in {cwd}); give the program as you run it, "
                         f"e.g. 'train.py --epochs 1' or 'pytest tests/test_x.py'")
    return (script, *words[1:])


def _absolute(word: str, cwd: str) -> str:
    path, separator, rest = word.partition("::")
    return os.path.realpath(os.path.join(cwd, path)) + separator + rest


def project_folders(path: str) -> list[str]:
    """What a job running the file at ``path`` may read: its folder, the folder its package
    imports start from, and the project around it (the nearest folder above with a
    pyproject.toml, setup.py, setup.cfg or .git), where its data files usually are.

    None is above the file's repository (the nearest folder with a ``.git``) nor, for a file
    in the current folder, above the current folder's repository (``_bound``).  Outside
    both, a package whose root has an ``__init__.py`` (a download) is exposed without the
    folder it lies in: that folder holds the user's other files, not the package's."""
    folder = os.path.dirname(path)
    bound = _bound(folder)
    top, package = folder, folder
    # A repository whose root has an `__init__.py` (yolo-v3's) still ends at its root.
    while top != bound and os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top \
            and not _has_marker(top):
        package, top = top, os.path.dirname(top)
    if bound is None and not _has_marker(top):
        top = package
    folders = [folder, top]
    current = top
    for _level in range(4):
        if _has_marker(current):
            folders.append(current)
            break
        if current == bound or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    return folders


_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _has_marker(folder: str) -> bool:
    return any(os.path.lexists(os.path.join(folder, marker)) for marker in _PROJECT_MARKERS)


def _bound(folder: str) -> Optional[str]:
    """The folder that the project around ``folder`` (a real path) stays in: the nearer of
    its repository and, for a folder in the current one, the current folder's repository
    or, outside any, the current folder (the folder of it that holds ``folder`` when it holds
    repositories: a folder of clones is no project).  Never a folder too broad to be a
    project (the home folder: `torchlint check --runtime Downloads/x` run there)."""
    here = os.path.realpath(os.getcwd())
    nearest = [_narrow(_repository(folder))]
    if view.covered(folder, [here]):
        clone = here
        if folder != here and _holds_repositories(here):
            clone = os.path.join(here, os.path.relpath(folder, here).split(os.sep)[0])
        nearest.append(_narrow(_repository(here)) or _narrow(clone))
    return max(filter(None, nearest), key=len, default=None)  # each holds folder: the longer is nearer


def _narrow(folder: Optional[str]) -> Optional[str]:
    return folder if folder and not view.broad(folder, os.path.expanduser("~")) else None


def _repository(folder: str) -> Optional[str]:
    """The nearest folder at or above ``folder`` with a ``.git`` (a folder, or a submodule's file)."""
    current = folder
    while not os.path.lexists(os.path.join(current, ".git")):
        if os.path.dirname(current) == current:
            return None
        current = os.path.dirname(current)
    return current


@functools.lru_cache(maxsize=16)
def _holds_repositories(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(entry.is_dir(follow_symlinks=False) and os.path.lexists(os.path.join(entry.path, ".git"))
                       for entry in entries)
    except OSError:
        return False


def _python_files(root: str, limit: int = 400) -> list[str]:
    """The project's own .py files, shallowest first: no hidden folders, environments or caches."""
    found = []
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith((".", "__pycache__"))
                            and name not in ("venv", "env", "site-packages", "node_modules", "build", "dist"))
        found += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
        if len(found) >= limit:
            break
    return found[:limit]


def _is_notebook(report: FileReport) -> bool:
    return report.filename.lower().endswith(NOTEBOOK_SUFFIX)


def _in_cells(runtime: dict, notebook: Notebook) -> dict:
    """A verdict on a notebook's joined cells, its lines named by cell: "line 9 never
    executed" becomes "cell 4, line 1 never executed"."""
    last = notebook.module.count("\n") + 1

    def cell_line(match: re.Match) -> str:
        row = int(match.group(1))
        if not 1 <= row <= last:
            return match.group(0)
        cell, row_in_cell = notebook.locate(row)
        return f"cell {cell.number}, line {row_in_cell}"

    return dict(runtime, evidence=re.sub(r"\bline (\d+)\b", cell_line, runtime["evidence"]))


def working_folder(path: str, source: str = "") -> str:
    """Where the file at ``path`` runs, as ``python train.py`` would: the folder torchlint
    runs in when the file is inside it (a repository's root), else the file's own folder;
    also its own folder when its ``source`` names paths above the folder it runs in
    (``sys.path.append("../semi-supervised")``, ``open("../data/x.txt")``), or adds to
    its import path a folder found beside it and not there (transformer-xl's
    ``sys.path.append('utils')``): its author ran it from there."""
    here = os.path.realpath(os.getcwd())
    own = os.path.dirname(path)
    # Not from a folder above the file's project: a folder of clones would open every clone.
    inside = path.startswith(here.rstrip(os.sep) + os.sep) and view.covered(here, [_bound(own) or here])
    beside = [folder for folder in _ADDED_TO_PATH.findall(source) if not os.path.isabs(folder)
              and os.path.isdir(os.path.join(own, folder)) and not os.path.isdir(os.path.join(here, folder))]
    return here if inside and not _CLIMBS.search(source) and not beside else own


_CLIMBS = re.compile(r"""(?<![\w.])[rRbBuU]?["']\.\.[/\\]""")  # a string literal that starts with ../
_ADDED_TO_PATH = re.compile(r"""sys\.path\.(?:append\(|insert\(\s*\d+\s*,)\s*[rRuU]?["']([^"'\n]+)["']\s*\)""")


def outermost(folders: list[str]) -> list[str]:
    """``folders`` less those inside another of them: a folder made writable (an overlay)
    makes the folders inside it writable too, and an overlay cannot be mounted inside one."""
    return [folder for folder in folders
            if not any(folder != other and folder.startswith(other.rstrip(os.sep) + os.sep) for other in folders)]


def require_torch() -> None:
    if importlib.util.find_spec("torch") is None:
        raise RuntimeUnavailable("the runtime check needs torch, which is not installed here: "
                                 "`pip install torch==2.13.0` (a CPU build; any release from 2.1 works), then "
                                 "`pip install -e '.[runtime]'` in a checkout of torchlint for numpy and rich")


def runs(diagnostic: Diagnostic) -> bool:
    """Whether the runtime check runs ``diagnostic``'s code: not for a finding of a file that
    could not be linted, nor for one that running could never show wrong (TL402, the data
    form of TL204...: its rule says so)."""
    rule = all_rules().get(diagnostic.code)
    return diagnostic.code not in UNJUDGED and (rule is None or rule.runs(diagnostic))


def style_findings(reports: list[FileReport]) -> int:
    """How many findings of ``reports`` are not run: no run could show them wrong."""
    return sum(1 for report in reports for d in report.diagnostics if not runs(d))


def _unplannable(report: FileReport) -> str:
    """Why the file of ``report`` cannot be run: Python refuses it (legacy syntax, which
    torchlint reads but Python does not run), or its source is not at hand."""
    if report.source is None:
        return "the file's source could not be planned"
    try:
        ast.parse(report.source.text)
    except SyntaxError as error:
        hint = " (`torchlint check --fix` renames `async=`)" if any(d.code == "TL205" for d in report.diagnostics) \
            else ""
        return (f"Python {sys.version_info[0]}.{sys.version_info[1]} cannot parse the file ({error.msg}, line "
                f"{error.lineno}): it cannot run until that is fixed{hint}")
    return "the file's source could not be planned"


@dataclass
class _File:
    report: FileReport
    plan: FilePlan
    diagnostics: list[Diagnostic]  # as they are run: in a notebook, rows of its joined code cells
    sites: list[dict]
    originals: list[Diagnostic] = field(default_factory=list)  # the reported ones, given the verdicts at the end
    notebook: Optional[Notebook] = None  # a notebook's code cells run joined as one script
    ported: Optional[str] = None  # Python 2 code, run as rewritten: the constructs rewritten ("print statement")
    # Of Python 2 code: the fixes of its rewrite's findings, by (row, column, code), once asked for.
    ported_edits: Optional[dict[tuple[int, int, str], list[TextEdit]]] = None
    # The fixes of the confirmed findings its run stopped at, and their rows: the calls of
    # its functions run on that text too (a script's top-level code runs when it is imported).
    stop_fixes: tuple[list, list[int]] = ([], [])

    def __post_init__(self) -> None:
        self.originals = self.originals or self.diagnostics

    def pending(self) -> list[int]:
        return [i for i, d in enumerate(self.diagnostics)
                if d.runtime is None or d.runtime["verdict"] == COULD_NOT_RUN]

    def fix_edits(self, i: int) -> list[TextEdit]:
        """The edits of finding ``i``'s fix, for a rerun past it.  The report of Python 2
        code offers no fix (none could make the file parse); the text the run uses is
        its Python 3 rewrite, of the same length, so its fixes apply there."""
        d = self.diagnostics[i]
        if d.text_edits or self.ported is None:
            return d.text_edits
        if self.ported_edits is None:
            codes = sorted({found.code for found in self.diagnostics})
            rules = [all_rules()[code] for code in codes if code in all_rules()]
            linted = lint_source(SourceText(self.plan.source, "utf-8", self.plan.source.encode("utf-8", "replace")),
                                 self.report.path, rules, Path(self.plan.path))
            self.ported_edits = {(found.row, found.column, found.code): found.text_edits
                                  for found in linted.diagnostics}
        return self.ported_edits.get((d.row, d.column, d.code), [])


@dataclass(frozen=True)
class FixProof:
    """What running a file before and after its fixes showed."""

    text: str  # "the fixed code runs to the end; the original stopped at line 8 with IndexError: ..."
    vetoed: bool = False  # the fixed code fails where the original did not: the fixes must not be written


class RuntimeCheck:
    def __init__(self, options: RuntimeOptions, fix_all: Callable[[FileReport], Optional[str]],
                 progress: Optional[Callable[[str, int, int], None]] = None,
                 fixes_to_prove: Optional[Callable[[FileReport], Optional[str]]] = None):
        """``fix_all(report)`` is the file's text with every fix applied (None if nothing changes).
        ``fixes_to_prove(report)``: the text ``--fix`` or ``--diff`` would give the file; each
        such file runs before and after, and ``proofs`` says what that showed."""
        self.options = options
        self.fix_all = fix_all
        self.fixes_to_prove = fixes_to_prove
        self.proofs: dict[str, FixProof] = {}  # report.path -> proof
        self.progress = progress or (lambda label, done, total: None)
        self.isolation_note = ""
        self.style = 0  # findings no run can show wrong (style, or a form that only modernizes): not run
        # Why the --entry program failed, with the end of its output; None when it ran through,
        # or stopped at one of the findings it confirmed (the bug it was run to show).
        self.entry_failure: Optional[str] = None
        self._ported_scripts: dict[str, str] = {}  # a driver script run as rewritten -> what was rewritten
        # The input files scripts of the project made (encoded, by absolute path) and how a run names each.
        self._made: Optional[tuple[dict[str, str], dict[str, str]]] = None
        self._periodic: dict[str, list[int]] = {}  # a file -> its periodic `if`s taken on their first pass
        self._options: dict[str, dict[str, str]] = {}  # a file -> options naming what the project made
        self.done = 0
        self.total = 0

    def run(self, reports: list[FileReport]) -> None:
        require_torch()
        from torchlint.runtime.sandbox import Limits, Sandbox

        self.style = style_findings(reports)
        files = []
        for report in reports:
            f = self._file(report)
            if f is not None:
                files.append(f)
                continue
            for d in report.diagnostics:
                if runs(d) and d.runtime is None:
                    reason = "the notebook's code cells could not be read" if _is_notebook(report) \
                        else _unplannable(report)
                    d.runtime = {"verdict": COULD_NOT_RUN, "evidence": reason, "run": "none"}
        if not files and self.fixes_to_prove is None:
            return
        limits = Limits(timeout=self.options.timeout, memory=self.options.memory)
        drivers = self._plan_drivers(files) if self.options.scripts and not self.options.entry else []
        working = sorted({working_folder(f.plan.path, f.plan.source) for f in files}
                         | {working_folder(path, source) for path, source, _files in drivers}
                         | ({os.getcwd()} if self.options.entry else set()))
        readable = sorted({folder for f in files for folder in project_folders(f.plan.path)} | set(working))
        with Sandbox(limits, jobs=self.options.jobs, preload=("torch", "torchlint.runtime.monitor"),
                     readable=readable, writable=outermost(working), budget=self.options.budget) as sandbox:
            self.isolation_note = sandbox.isolation.note
            self.sandbox = sandbox
            self.total = len(files) + (1 if self.options.entry else 0)
            if self.options.entry:
                self._entry(files)
            self._modules(files)
            self._calls(files)
            self._drivers(drivers)
            self._make_missing_inputs(files, drivers)
            self._periodic_branches(files)
            self._differential(files)
            if self.fixes_to_prove is not None:
                self._prove(reports, files)
            unreached = self._budget_spent if sandbox.budget_spent else "not reached by any run"
        for f in files:
            for d in f.diagnostics:
                if d.runtime is None:
                    d.runtime = {"verdict": COULD_NOT_RUN, "evidence": unreached}
            for original, judged in zip(f.originals, f.diagnostics):
                original.runtime = judged.runtime if f.notebook is None else _in_cells(judged.runtime, f.notebook)

    # -- planning -------------------------------------------------------------------------

    def _file(self, report: FileReport) -> Optional[_File]:
        diagnostics = [d for d in report.diagnostics if runs(d)]
        if not diagnostics:
            return None
        if _is_notebook(report):
            return self._notebook(report, diagnostics)
        if report.source is None:
            return None
        path = os.path.realpath(report.filename)
        ported = None
        try:
            plan = FilePlan(path, report.source.text)
        except SyntaxError:
            # Python 2 code (`print x`, `except E, e:`, `.cuda(async=True)`) runs as torchlint
            # reads it: rewritten in place to Python 3 of the same length, so lines and columns hold.
            repaired = repair_legacy_syntax(report.source.text)
            if repaired is None:
                return None
            plan = FilePlan(path, repaired[0])
            ported = ", ".join(dict.fromkeys(repair.construct for repair in repaired[1]))
            # A finding on the rewritten syntax itself (`async=`) is about what Python refuses.
            index = LineIndex(report.source.text)
            on_syntax = [d for d in diagnostics if any(
                repair.start <= index.offset(d.row, d.column) < repair.end for repair in repaired[1])]
            reason = _unplannable(report) if on_syntax else ""
            for d in on_syntax:
                d.runtime = {"verdict": COULD_NOT_RUN, "evidence": reason, "run": "none"}
            diagnostics = [d for d in diagnostics if d not in on_syntax]
            if not diagnostics:
                return None
        return _File(report, plan, diagnostics, [plan.site(d) for d in diagnostics], ported=ported)

    def _notebook(self, report: FileReport, diagnostics: list[Diagnostic]) -> Optional[_File]:
        """A notebook runs as a script: its code cells in order, joined as they were linted
        (magics as ``pass``), with each finding moved from its cell to the joined text."""
        path = os.path.realpath(report.filename)
        try:
            with open(path, "rb") as handle:
                notebook = read_notebook(handle.read())
            plan = FilePlan(path, notebook.module)
        except (OSError, UnreadableSource, SyntaxError):
            return None
        starts = {cell.number: cell.first_row for cell in notebook.cells}
        if any(d.cell not in starts for d in diagnostics):
            return None

        def row(cell: int, row_in_cell: int) -> int:
            return starts[cell] + row_in_cell - 1

        index = LineIndex(notebook.module)
        joined = [replace(d, row=row(d.cell, d.row), end_row=row(d.cell, d.end_row), fix_edits=[],
                          text_edits=[TextEdit(index.offset(row(d.cell, start_row), start_column),
                                               index.offset(row(d.cell, end_row), end_column), content)
                                      for start_row, start_column, end_row, end_column, content in d.fix_edits],
                          related=[replace(note, row=row(d.cell, note.row)) for note in d.related
                                   if "[cell " not in note.message])
                  for d in diagnostics]
        return _File(report, plan, joined, [plan.site(d) for d in joined], originals=diagnostics, notebook=notebook)

    def _payload(self, f: _File, indices: list[int], **extra) -> dict:
        # The text that was linted runs (standard input has no file to read).
        extra = {**extra, "ported": f.ported} if f.ported else extra
        extra = {**extra, "periodic": self._periodic[f.plan.path]} if f.plan.path in self._periodic else extra
        extra = {**extra, "options": self._options[f.plan.path]} if f.plan.path in self._options else extra
        return {**self._script(f.plan.path, f.plan.source, [f.sites[i] for i in indices], f.plan.tree), **extra}

    def _script(self, path: str, source: str, sites: list[dict], tree: Optional[ast.AST] = None) -> dict:
        """A job that runs ``source`` as the file at ``path``, the way every run of a file
        runs: from its working folder, within the budget, with its folder on the import path
        and the working folder (the repository's root, where `tests/test_x.py` finds the
        project's own package); a file of a package runs as `python -m` runs it, its relative
        imports working from the folder its package name starts in."""
        try:
            name, start = package_of(path, tree if tree is not None else ast.parse(source))
        except (SyntaxError, ValueError):
            name, start = None, None
        working = working_folder(path, source)
        # A package's file finds its package first, as `python -m` would (its folder may hold a
        # module of the package's own name, `models/models.py`), then its siblings by their
        # plain names, as Python 2 code imports them.
        order = (start, working, os.path.dirname(path)) if name else (os.path.dirname(path), working)
        # Last, the repository's root: `train/voc/train.py` imports the project's `datasets`
        # and `models` from there (its author set PYTHONPATH), not a stand-in for them.
        order += (project_folders(path)[-1],)
        sys_path = list(dict.fromkeys(folder for folder in order if folder))
        return {"path": path, "sites": sites, "source": source, "sys_path": sys_path, "package": name,
                "cwd": working, **self._job_settings}

    @property
    def _job_settings(self) -> dict:
        """What every job is told: its budget, whether its writes land in a layer of its
        own, so that it may make the output folders a fresh clone lacks (stand_ins.output_folders),
        and the input files the project's own scripts made (made_inputs), once made."""
        made = {"made": self._made[0], "makers": self._made[1]} if self._made else {}
        return {"budget": self._budget, "make_folders": bool(self.sandbox.isolation.copy_on_write), **made}

    @property
    def _budget(self) -> float:
        """The seconds a run may take before the monitor stops it and judges what it reached:
        most of the job's time limit, leaving time to judge and report."""
        return round(self.options.timeout * BUDGET_SHARE, 2)

    @property
    def _budget_spent(self) -> str:
        from torchlint.runtime.sandbox import BUDGET_SPENT

        return f"{BUDGET_SPENT} (--runtime-budget {self.options.budget:g} s)"

    def _submit(self, requests: list[tuple[str, dict]], labels: list[str]) -> list:
        results = []
        for label, result in zip(labels, self.sandbox.map(requests)):
            self.done += 1
            self.progress(label, self.done, max(self.total, self.done))
            results.append(result)
        return results

    # -- the runs ---------------------------------------------------------------------------

    def _entry(self, files: list[_File]) -> None:
        sites, owners = [], []
        for f in files:
            for i in range(len(f.diagnostics)):
                sites.append(f.sites[i])
                owners.append((f, i))
        entry = self.options.entry
        # It runs where the user runs it: relative data paths resolve; what it writes there
        # lands in a copy-on-write layer of the job's (read-only where the machine has none).
        payload = {"mode": "entry", "entry": list(entry), "path": entry[0] if entry[0] != "pytest" else "",
                   "sites": sites, "sys_path": [os.getcwd()], "cwd": os.getcwd(), **self._job_settings}
        [result] = self._submit([(JOB, payload)], [" ".join(entry)])
        verdicts = self._verdicts(result, len(sites), "entry")
        for (f, i), verdict in zip(owners, verdicts):
            if verdict["verdict"] != COULD_NOT_RUN or not f.diagnostics[i].runtime:
                f.diagnostics[i].runtime = verdict
        self.entry_failure = _entry_failure(result, verdicts)

    def _modules(self, files: list[_File]) -> None:
        todo, requests = [], []
        for f in files:
            indices = f.pending()
            if not indices:
                continue
            payload = self._payload(f, indices)
            indices = _past_stop_fixes(f, indices, payload)  # a run again (made inputs, periodic branches)
            if indices:
                todo.append((f, indices, payload.get("note", "")))
                requests.append((JOB, payload))
        results = self._submit(requests, [f.report.path for f, _i, _n in todo])
        for (f, indices, note), result in zip(todo, results):
            if not note:
                f.module_result = result  # the run of the file as it is, for _differential
            self._assign(f, indices, self._verdicts(result, len(indices), "module", note))
            self._rerun_past_stops(f, result, indices)

    def _rerun_past_stops(self, f: _File, result, indices: list[int]) -> None:
        """A run that stopped at a confirmed finding (an IndexError, autograd's error) never
        reached the lines after it: run again with that finding's own fix applied."""
        original = f.plan.source
        edits, fixed_rows = list(f.stop_fixes[0]), list(f.stop_fixes[1])
        for _round in range(MAX_RERUNS):
            pending = f.pending()
            if not pending:
                return
            stoppers = [indices[k] for k in _stopped_at(result, len(indices))
                        if f.diagnostics[indices[k]].runtime["verdict"] == CONFIRMED]
            new_edits = [edit for i in stoppers for edit in f.fix_edits(i)]
            if not new_edits:
                return
            edits += new_edits
            fixed_rows += [f.diagnostics[i].row for i in stoppers]
            source = _fixed_text(f, edits)
            if source is None:
                return
            f.stop_fixes = (list(edits), list(fixed_rows))
            shifted = {i: _shifted(f.sites[i], original, edits) for i in pending}
            indices = [i for i in pending if shifted[i] is not None]
            if not indices:
                return
            payload = {**self._payload(f, indices, source=source), "sites": [shifted[i] for i in indices]}
            [result] = self._submit([(JOB, payload)], [f.report.path])
            note = _fixed_note(f"line {row}" for row in fixed_rows)
            self._assign(f, indices, self._verdicts(result, len(indices), "module", note))

    def _calls(self, files: list[_File]) -> None:
        requests, owners = [], []
        for f in files:
            by_function: dict[str, list[int]] = {}
            functions = {}
            for i in f.pending():
                function = f.plan.enclosing_function(f.diagnostics[i].row)
                if function is None:
                    continue
                qualname = f.plan.qualname(function)
                if qualname is None:
                    continue
                by_function.setdefault(qualname, []).append(i)
                functions[qualname] = function
            for qualname, indices in by_function.items():
                call = {"qualname": qualname, "params": f.plan.parameters(functions[qualname]),
                        "gradients": gradient_parameters(functions[qualname])}
                guards = guarded_by_defaults(functions[qualname])
                if guards:
                    call["guards"] = guards
                classes = class_count(functions[qualname])
                if classes:
                    call["classes"] = classes
                constructor = f.plan.constructor(qualname) if "." in qualname else None
                if constructor is not None:
                    call["init"] = f.plan.parameters(constructor)[1:]
                if any(param.get("use") == "settings" for param in [*call["params"], *call.get("init", ())]):
                    call["settings"] = self._settings(f.plan.path)
                self._given_by_callers(f.plan.path, qualname, call)
                payload = self._payload(f, indices, mode="call", call=call)
                indices = _past_stop_fixes(f, indices, payload)
                if not indices:
                    continue
                requests.append((JOB, payload))
                owners.append((f, indices, qualname))
        furthest: dict[tuple[int, str], int] = {}  # (file, function) -> lines its best failing call ran
        fewest: dict[tuple[int, str], tuple[int, int]] = {}  # (file, function) -> (unrun findings, variant)
        by_path = {os.path.realpath(f.plan.path): f for f in files if f.notebook is None}
        stopped_elsewhere: dict[tuple[int, str], tuple] = {}  # calls stopped at a finding (confirmed, or of another file)
        while requests:  # each function with the kinds of arguments of monitor.ARGUMENT_VARIANTS in turn
            self.total += len(requests)
            results = self._submit(requests, [f"{f.report.path}: {qualname}()" for f, _, qualname in owners])
            retry = []
            for (f, indices, qualname), (function, payload), result in zip(owners, requests, results):
                verdicts = self._verdicts(result, len(indices), "call", payload.get("note", ""))
                value = result.value if result.status == "ok" and isinstance(result.value, dict) else {}
                # Of the calls that all failed, the one that got furthest says best why.
                lines = value.get("lines", 0)
                key = (id(f), qualname)
                if isinstance(lines, int):
                    if all(v["verdict"] == COULD_NOT_RUN for v in verdicts) and key in furthest \
                            and lines <= furthest[key]:
                        verdicts = [f.diagnostics[i].runtime for i in indices]
                    furthest[key] = max(furthest.get(key, lines), lines)
                # Without gradients, the variants that differ only in requires_grad are the same;
                # a call that ran out of its time fitted its arguments (another kind would too).
                following = payload["call"].get("variant", 0) + (1 if payload["call"]["gradients"] else 2)
                stopped = value.get("stopped")
                timed_out = isinstance(stopped, dict) and stopped.get("type") == "time limit"
                call = None
                if payload["call"].get("flip"):
                    pass  # the last try
                elif following < ARGUMENT_VARIANTS and not timed_out \
                        and any(v["verdict"] == COULD_NOT_RUN for v in verdicts):
                    call = {**payload["call"], "variant": following}
                elif not timed_out and any(v["verdict"] == COULD_NOT_RUN for v in verdicts):
                    # The values the project's calls fix did not fit with the ones made here:
                    # every kind of argument once more with all of them made here.
                    call = _without_given(payload["call"])
                unrun = sum(v["verdict"] == COULD_NOT_RUN for v in verdicts)
                if key not in fewest or unrun < fewest[key][0]:
                    fewest[key] = (unrun, payload["call"].get("variant", 0))
                if call is None and not timed_out and not payload["call"].get("flip"):
                    # The best kind of arguments once more, with the defaults that kept the
                    # unrun lines' branches from running turned (`use_cuda=True`).
                    call = _flipped(payload["call"], fewest[key][1],
                                    [f.sites[i]["stmt_line"] for i, v in zip(indices, verdicts)
                                     if v["verdict"] == COULD_NOT_RUN and "never executed" in v["evidence"]])
                if call is not None:
                    retry.append(((f, indices, qualname), (function, {**payload, "call": call})))
                self._assign(f, indices, verdicts)
                found = _stop_in_other_file(value, f, by_path)
                if found is None and _confirmed_stop(f, indices, result) is not None:
                    # At its own finding: the first call that got there, not a later kind of arguments.
                    stopped_elsewhere.setdefault(key, ((f, indices, qualname), payload, result))
                if found is not None:
                    stopped_elsewhere[key] = ((f, indices, qualname), payload, result)
                    other, i, verdict = found
                    if verdict is not None:  # the error there is that finding's own signature
                        shown = os.path.relpath(f.plan.path, os.path.dirname(other.plan.path))
                        verdict = dict(verdict, evidence=f"{verdict['evidence']} (raised there when `{qualname}()` "
                                                         f"of {shown} was called with synthesized arguments: "
                                                         f"{value.get('arguments', '')})")
                        ran = SimpleNamespace(status="ok", value={**value, "verdicts": [verdict]}, detail=None)
                        self._assign(other, [i], self._verdicts(ran, 1, "call", payload.get("note", "")))
            owners = [owner for owner, _ in retry]
            requests = [request for _, request in retry]
        for owner, payload, result in stopped_elsewhere.values():
            self._rerun_call_past_stops(owner, payload, result, by_path)

    def _rerun_call_past_stops(self, owner: tuple, payload: dict, result, by_path: dict[str, _File]) -> None:
        """A call that stopped at a finding confirmed in another file (the project's
        `accuracy()` under the flagged `train()`) runs again with that file fixed, as a
        script that stopped there does (_rerun_driver_past_stops); one that stopped at a
        finding of its own file that it confirmed, with that one fixed (seq2seq's
        `TopKDecoder.forward()` past its float beam indices)."""
        f, indices, qualname = owner
        edits: dict[str, tuple[_File, list]] = {}  # path -> the file and the fixes applied to it
        own = {f.plan.path: (f, list(f.stop_fixes[0]))}  # the file's own fixes, from what its calls run on
        fixed = [f"line {row}" for row in f.stop_fixes[1]]
        for _round in range(MAX_RERUNS):
            if not any(f.diagnostics[i].runtime["verdict"] == COULD_NOT_RUN for i in indices):
                return
            value = result.value if result.status == "ok" and isinstance(result.value, dict) else {}
            found = _stop_in_other_file(value, f, by_path)
            if found is not None:
                other, i, _verdict = found
                if not _add_fixes(edits, other, i):
                    return
                fixed.append(f"{os.path.relpath(other.plan.path, os.path.dirname(f.plan.path))}:"
                             f"{other.diagnostics[i].row}")
                patched = _patched_sources(edits)
                if patched is None:
                    return
                payload = {**payload, "patched": patched}
            else:
                stop = _confirmed_stop(f, indices, result)
                if stop is None or not _add_fixes(own, f, stop):
                    return
                own_edits = own[f.plan.path][1]
                text = _fixed_text(f, own_edits)
                if text is None:
                    return
                # The findings the fix touches keep their verdicts; the others are judged again.
                kept = [(i, _shifted(f.sites[i], f.plan.source, own_edits)) for i in indices]
                indices = [i for i, site in kept if site is not None]
                if not indices:
                    return
                fixed.append(f"line {f.diagnostics[stop].row}")
                payload = {**payload, "source": text, "sites": [site for _i, site in kept if site is not None]}
            self.total += 1
            [result] = self._submit([(JOB, payload)], [f"{f.report.path}: {qualname}()"])
            self._assign(f, indices, self._verdicts(result, len(indices), "call", _fixed_note(fixed)))

    def _tree(self, path: str) -> Optional[ast.Module]:
        """read_tree, once per file in a run: the call sites, the argparse defaults and the
        scripts are all read from the same project files."""
        trees = self.__dict__.setdefault("_trees", {})
        if path not in trees:
            trees[path] = read_tree(path)
        return trees[path]

    def _project_files(self, path: str) -> tuple[tuple[str, ...], list[str]]:
        """project_folders(path), and the .py files in them (the file's own folder first)."""
        folders = tuple(project_folders(path))
        cache = self.__dict__.setdefault("_files_by_folders", {})
        if folders not in cache:
            cache[folders] = list(dict.fromkeys(file for folder in folders for file in _python_files(folder)))
        return folders, cache[folders]

    def _given_by_callers(self, path: str, qualname: str, call: dict) -> None:
        """Mark the parameters the project's own calls give a fixed value (call_sites)."""
        owner, _, name = qualname.rpartition(".")
        folders, files = self._project_files(path)
        cache = self.__dict__.setdefault("_call_sites_by_folders", {})
        if folders not in cache:
            cache[folders] = CallSites(files, folders[-1], self._tree)
        sites = cache[folders]
        targets = [(owner, call.get("init", ()))] if owner else [(name, call["params"])]
        if owner and name == "__init__":
            targets.append((owner, call["params"][1:]))
        for called, params in targets:
            for param_name, (text, where) in sites.arguments(called, params, path).items():
                for param in params:
                    if param["name"] == param_name:
                        param["given"], param["given_at"] = text, where
        for param in [*call["params"], *call.get("init", ())]:
            if "given" not in param and param.get("use", "").startswith("attributes:"):
                found = sites.project_class(set(param["use"].partition(":")[2].split(",")))
                importable = found and _importable(found[0], self._tree(found[0]))
                if importable:
                    param["given_class"] = {"module": importable[0], "folder": importable[1], "name": found[1],
                                            "at": os.path.relpath(found[0], folders[-1])}

    def _plan_drivers(self, files: list[_File]) -> list[tuple[str, str, list[_File]]]:
        """For each project, the scripts of it (drivers.py) that import the flagged files:
        ``(script, its text, the flagged files it reaches)``."""
        by_root: dict[str, list[_File]] = {}
        for f in files:
            if f.notebook is None:
                by_root.setdefault(project_folders(f.plan.path)[-1], []).append(f)
        planned = []
        for root, flagged in by_root.items():
            # The scripts beside each flagged file and in the folders above it first: the
            # project's first 400 files may not reach them (a data or corpus folder).
            nearby = []
            for f in flagged:
                folder = os.path.dirname(f.plan.path)
                while folder.startswith(os.path.realpath(root)):
                    try:
                        nearby += sorted(os.path.join(folder, name) for name in os.listdir(folder)
                                         if name.endswith(".py"))
                    except OSError:
                        pass
                    if folder == os.path.realpath(root) or os.path.dirname(folder) == folder:
                        break
                    folder = os.path.dirname(folder)
            project = ProjectImports([*nearby, *_python_files(root)], os.path.realpath(root), self._tree)
            by_path = {f.plan.path: f for f in flagged}
            for script, reached in project.drivers({f.plan.path: len(f.sites) for f in flagged}):
                try:
                    with open(script, encoding="utf-8") as handle:
                        source = handle.read()
                    ast.parse(source)
                except (OSError, UnicodeDecodeError):
                    continue
                except SyntaxError:
                    # Python 2 (or `async=`) runs as rewritten, as a flagged file's own run does.
                    repaired = repair_legacy_syntax(source)
                    if repaired is None:
                        continue
                    source = repaired[0]
                    self._ported_scripts[script] = ", ".join(
                        dict.fromkeys(repair.construct for repair in repaired[1]))
                planned.append((script, source, [by_path[path] for path in sorted(reached)]))
        return planned

    def _drivers(self, drivers: list[tuple[str, str, list[_File]]]) -> None:
        """Run each planned script as `python script.py` runs it, watching the findings of the
        files it reaches, where any is not judged yet (those judged are watched too: the run
        may stop at one); its verdicts say which script ran."""
        requests, owners = [], []
        for script, source, reached in drivers:
            if not any(f.pending() for f in reached):
                continue
            targets = [(f, i) for f in reached for i in range(len(f.sites))]
            payload = self._script(script, source, [f.sites[i] for f, i in targets])
            if script in self._ported_scripts:
                payload["ported"] = self._ported_scripts[script]
            requests.append((JOB, payload))
            owners.append((script, targets))
        if not requests:
            return
        self.total += len(requests)
        results = self._submit(requests, [script for script, _ in owners])
        for (script, targets), (_job, payload), result in zip(owners, requests, results):
            self._judge_driven(script, targets, result, "")
            self._rerun_driver_past_stops(script, targets, payload, result)

    def _judge_driven(self, script: str, targets: list[tuple[_File, int]], result, fixed: str) -> None:
        note = f"reached by running {os.path.relpath(script, project_folders(script)[-1])}"
        note += f" after fixing {fixed}" if fixed else ""
        for (f, i), verdict in zip(targets, self._verdicts(result, len(targets), "driver", note)):
            if verdict["verdict"] != COULD_NOT_RUN:  # a failed driver says less than the calls did
                self._assign(f, [i], [verdict])

    def _rerun_driver_past_stops(self, script: str, targets: list[tuple[_File, int]], payload: dict, result) -> None:
        """A script that stopped at a finding it confirmed in a module it imports runs again
        with that module fixed (its text given to the job in place of the file's)."""
        edits: dict[str, tuple[_File, list]] = {}  # path -> the file and the fixes applied to it
        fixed: list[str] = []
        for _round in range(MAX_RERUNS):
            stoppers = [targets[k] for k in _stopped_at(result, len(targets))
                        if (targets[k][0].diagnostics[targets[k][1]].runtime or {}).get("verdict") == CONFIRMED]
            added = [_add_fixes(edits, f, i) for f, i in stoppers]  # every one: not `any()`, which stops early
            if not any(added):
                return
            fixed += [f"{os.path.basename(f.plan.path)}:{f.diagnostics[i].row}" for f, i in stoppers]
            fixed = list(dict.fromkeys(fixed))
            patched = _patched_sources(edits)
            if patched is None:
                return
            shifted = [(f, i, _shifted(f.sites[i], f.plan.source, edits.get(f.plan.path, (f, ()))[1]))
                       for f, i in targets]
            targets = [(f, i) for f, i, site in shifted if site is not None]
            if not any(f.diagnostics[i].runtime is None or f.diagnostics[i].runtime["verdict"] == COULD_NOT_RUN
                       for f, i in targets):
                return
            payload = {**payload, "patched": patched, "sites": [site for _f, _i, site in shifted if site is not None]}
            [result] = self._submit([(JOB, payload)], [script])
            self._judge_driven(script, targets, result, ", ".join(fixed))

    def _make_missing_inputs(self, files: list[_File], drivers: list[tuple[str, str, list[_File]]]) -> None:
        """Where runs stopped at a missing file that a script of the project writes (NRI's
        `data/generate_dataset.py` writes the arrays `train.py` loads), run that script once,
        its own loops cut short and its writes kept in memory (made_inputs); then the runs
        of the files that stopped there again, reading what it made."""
        wanted: dict[str, list[_File]] = {}  # a missing file's absolute path -> the files stopped at it
        for f in files:
            folder = working_folder(f.plan.path, f.plan.source)
            for i in f.pending():
                runtime = f.diagnostics[i].runtime or {}
                for name in made_inputs.missing_files(runtime.get("evidence", "")):
                    stopped = wanted.setdefault(os.path.normpath(os.path.join(folder, name)), [])
                    if not any(f is g for g in stopped):
                        stopped.append(f)
        makers: dict[tuple[str, str], str] = {}  # (script, folder to run it in) -> the project's root
        for missing, stopped in wanted.items():
            root = project_folders(stopped[0].plan.path)[-1]
            for script, folder in made_inputs.writers(missing, _python_files(root), self._tree)[:2]:
                makers.setdefault((script, folder), root)
        made: dict[str, bytes] = {}
        names: dict[str, str] = {}
        for (script, folder), root in makers.items():
            try:
                with open(script, encoding="utf-8") as handle:
                    source = handle.read()
                ast.parse(source)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            payload = {**self._script(script, source, []), "cwd": folder, "capture": [root]}
            self.total += 1
            [result] = self._submit([(JOB, payload)], [f"{script} (making missing inputs)"])
            value = result.value if result.status == "ok" and isinstance(result.value, dict) else {}
            for path, data in made_inputs.decoded(value.get("written")).items():
                if path not in made and sum(map(len, made.values())) + len(data) <= made_inputs.MAX_MADE_BYTES:
                    made[path] = data
                    names[path] = f"{os.path.relpath(script, root)}:{os.path.relpath(path, root)}"
        stopped_at_made = [f for missing, stopped in wanted.items() if missing in made for f in stopped]
        for missing, stopped in wanted.items():
            for f in stopped if missing not in made else ():
                if f.plan.path in self._options:
                    continue
                given = made_inputs.option_naming(missing, list(made), string_options(f.plan.tree))
                if given is not None:
                    self._options[f.plan.path] = dict([given])
                    stopped_at_made.append(f)
        if not stopped_at_made:
            return
        self._made = (made_inputs.encoded(made), names)
        self._run_again(list({id(f): f for f in stopped_at_made}.values()), drivers)

    def _periodic_branches(self, files: list[_File]) -> None:
        """Findings left unrun in the body of a periodic `if` (`if self.global_iter %
        self.display_step == 0:`, every 10000 steps): the files run again, each such test
        taken on its first pass (plan.periodic_guards), as it is at step 10000."""
        again = []
        for f in files:
            rows = [f.diagnostics[i].row for i in f.pending()
                    if "never executed" in (f.diagnostics[i].runtime or {}).get("evidence", "")]
            guards = periodic_guards(f.plan.tree, rows) if rows else []
            if guards:
                self._periodic[f.plan.path] = guards
                again.append(f)
        if again:
            self._run_again(again)

    def _run_again(self, again: list[_File], drivers: list[tuple[str, str, list[_File]]] = ()) -> None:
        """The runs of ``again`` once more, for what they left COULD NOT RUN, with what the
        job settings now add (made inputs, periodic branches): as a file, its calls, and the
        ``drivers`` that reach it."""
        self.total += len(again)
        self._modules(again)
        self._calls(again)
        self._drivers([driver for driver in drivers if any(f is g for f in driver[2] for g in again)])

    def _settings(self, path: str) -> dict:
        """The options the project around ``path`` declares with argparse, at their defaults."""
        folders, files = self._project_files(path)  # the file's folder first: its own parser comes first
        cache = self.__dict__.setdefault("_settings_by_folders", {})
        if folders not in cache:
            cache[folders] = argparse_defaults(files, read=self._tree)
        return cache[folders]

    def _differential(self, files: list[_File]) -> None:
        """Run the autofixed file beside the original: does the fix raise, or change a gradient?"""
        todo = []
        for f in files:
            original = getattr(f, "module_result", None)
            if f.notebook is not None or original is None or original.status != "ok" or not any(
                    d.runtime and d.runtime["verdict"] == CONFIRMED for d in f.diagnostics):
                continue
            fixed = self.fix_all(f.report)
            if fixed is None:
                continue
            todo.append((f, original, self._script(f.plan.path, fixed, [])))
        self.total += len(todo)
        results = self._submit([(JOB, payload) for _f, _o, payload in todo],
                               [f"{f.report.path} (fixed)" for f, _o, _p in todo])
        for (f, original, _payload), result in zip(todo, results):
            if result.status != "ok":
                continue
            try:
                text = _clean(_compare(original.value, result.value))
            except (AttributeError, KeyError, TypeError, ValueError):
                continue  # a result the job's code rewrote: no evidence from it
            if not text:
                continue
            for d in f.diagnostics:
                if d.runtime and d.runtime["verdict"] == CONFIRMED and d.code in GRADIENT_RULES:
                    d.runtime["differential"] = text
                    d.runtime["evidence"] += f"; {text}"

    def _prove(self, reports: list[FileReport], files: list[_File]) -> None:
        """Run each file that would be fixed as it is and as fixed, and compare the runs."""
        module_results = {id(f.report): getattr(f, "module_result", None) for f in files if f.notebook is None}
        todo, requests = [], []
        for report in reports:
            if report.source is None or _is_notebook(report):
                continue
            fixed = self.fixes_to_prove(report)
            if fixed is None:
                continue
            path = os.path.realpath(report.filename)
            original = module_results.get(id(report))
            if original is None:
                requests.append((JOB, self._script(path, report.source.text, [])))
            requests.append((JOB, self._script(path, fixed, [])))
            todo.append((report, original))
        self.total += len(requests)
        labels = [f"{report.path} ({'fixed' if i else 'as it is'})" for report, original in todo
                  for i in range(1 if original is not None else 0, 2)]
        results = iter(self._submit(requests, labels))
        for report, original in todo:
            before = original if original is not None else next(results)
            self.proofs[report.path] = _proof(before, next(results))

    # -- results ----------------------------------------------------------------------------

    def _verdicts(self, result, count: int, how: str, note: str = "") -> list[dict]:
        """The verdicts a job's result gives.  The job ran untrusted code, which may have
        rewritten what it returns: anything not shaped like verdicts is COULD NOT RUN, and
        every text is cut to one line of printable characters."""
        if result.status == "budget":
            return [{"verdict": COULD_NOT_RUN, "evidence": self._budget_spent, "run": how} for _ in range(count)]
        if result.status != "ok" or not isinstance(result.value, dict):
            reason = {"timeout": "timeout", "memory": "memory limit", "processes": "process limit",
                      "disk": "disk limit"}.get(result.status, "the run failed")
            evidence = f"{reason}: {result.detail}" if result.detail else reason
            return [{"verdict": COULD_NOT_RUN, "evidence": _clean(evidence), "run": how} for _ in range(count)]
        used = result.value.get("stand_ins")
        if isinstance(used, list) and used and all(isinstance(name, str) for name in used):
            def tagged(prefix: str) -> list[str]:
                return [name[len(prefix):] for name in used if name.startswith(prefix)]

            modules = [name for name in used if name not in (CUDA_ON_CPU, CUDA_VERSION) and not name.startswith(
                (SYNTHETIC, OPTION, GIVEN_OPTION, CHECKPOINT, PORTED, FOLDER, NUMPY_ALIAS, CLIMBING, LEFT_OUT,
                 made_inputs.MADE, PERIODIC))]
            ported, made, options, checkpoints = tagged(PORTED), tagged(SYNTHETIC), tagged(OPTION), tagged(CHECKPOINT)
            folders, aliases, climbing = tagged(FOLDER), tagged(NUMPY_ALIAS), tagged(CLIMBING)
            left_out = [entry.split(" ", 1) for entry in tagged(LEFT_OUT)]
            note = "; ".join(filter(None, [
                note, ported and f"ran the Python 2 code as Python 3 (rewritten: {ported[0]}; `xrange`, "
                                 "`unicode`, `raw_input`... as their Python 3 names)",
                modules and "ran with stand-ins for the missing modules " + ", ".join(modules),
                options and "with made-up values for the required options " + ", ".join(options),
                made and "with synthetic " + ", ".join(made),
                checkpoints and "with the initial weights in place of the missing files " + ", ".join(checkpoints),
                folders and "with the missing output folders " + ", ".join(f"{name}/" for name in folders) + " made",
                tagged(GIVEN_OPTION) and "run with " + ", ".join(f"`{given}`" for given in tagged(GIVEN_OPTION))
                + ": the name the project's own script gives the files it makes (the default names files it does not)",
                _made_note(tagged(made_inputs.MADE)),
                tagged(PERIODIC) and "with the periodic `if` at line" + ("s " if len(tagged(PERIODIC)) > 1 else " ")
                + ", ".join(tagged(PERIODIC)) + " taken on its first pass (a run this short never reaches its period)",
                aliases and "with " + ", ".join(f"`{name}`" for name in aliases)
                + " as the builtin it meant (numpy 1.24 removed it: today the program stops there)",
                left_out and "the file imported without its line" + ("s " if len(left_out) > 1 else " ")
                + ", ".join(line for line, _ in left_out) + f", which raised {left_out[0][1]}"
                + (" first" if len(left_out) > 1 else ""),
                climbing and "with " + ", ".join(f"`from {name} import`" for name in climbing)
                + " taken from the project's root (it climbs above its package: Python raises ImportError there)",
                CUDA_ON_CPU in used and "ran on the CPU: this machine has no CUDA, so `.cuda()` kept tensors there",
                CUDA_VERSION in used and f"with `torch.version.cuda` read as {ASSUMED_CUDA} (this torch is built "
                                         "without CUDA: None)"]))
        verdicts = []
        for verdict in result.value.get("verdicts", ()) if isinstance(result.value.get("verdicts"), list) else ():
            if not (isinstance(verdict, dict) and verdict.get("verdict") in VERDICTS
                    and isinstance(verdict.get("evidence"), str)):
                verdict = {"verdict": COULD_NOT_RUN, "evidence": "the run returned a malformed verdict"}
            verdict = dict(verdict, evidence=_clean(verdict["evidence"]), run=how)
            if note:
                verdict["evidence"] += f" ({note})"
            verdicts.append(verdict)
        return verdicts

    @staticmethod
    def _assign(f: _File, indices: list[int], verdicts: list[dict]) -> None:
        for i, verdict in zip(indices, verdicts):
            current = f.diagnostics[i].runtime
            if current is None or current["verdict"] == COULD_NOT_RUN:
                f.diagnostics[i].runtime = verdict


ENTRY_OUTPUT_LINES = 15
BUDGET_SHARE = 0.7
_READ_ONLY = re.compile(r"Read-only file system|Permission denied|Operation not permitted")


def _made_note(made: list[str]) -> str:
    """"with data/a.npy and 2 more files made by data/generate.py (...)" for the files a run
    read that a script of the project made (``script:file`` each)."""
    by_script: dict[str, list[str]] = {}
    for entry in made:
        script, _, name = entry.partition(":")
        by_script.setdefault(script, []).append(name)
    return "; ".join(
        f"with {names[0]}" + (f" and {len(names) - 1} more file{'s' if len(names) > 2 else ''}" if len(names) > 1 else "")
        + f" made by running {script} first, its own loops cut to {made_inputs.LOOP_PASSES} passes (a fresh clone "
        "has no such file)" for script, names in by_script.items())


def _stopped_at(result, count: int) -> list[int]:
    """The indices, among the job's ``count`` sites, of the findings its run stopped at."""
    stopped = result.value.get("stopped") if result.status == "ok" and isinstance(result.value, dict) else None
    if not isinstance(stopped, dict) or not isinstance(stopped.get("sites"), list):
        return []
    return [k for k in stopped["sites"] if isinstance(k, int) and 0 <= k < count]


def _past_stop_fixes(f: _File, indices: list[int], payload: dict) -> list[int]:
    """A later run of ``f`` (a call, a run again) goes past the findings its reruns stopped at
    and confirmed (``f.stop_fixes``), as those reruns went on: ``payload`` runs the text with
    their fixes, at the sites it still has, its note naming them. The indices of those sites."""
    edits, fixed_rows = f.stop_fixes
    if not edits:
        return indices
    shifted = {i: _shifted(f.sites[i], f.plan.source, edits) for i in indices}
    indices = [i for i in indices if shifted[i] is not None]
    payload.update(source=_fixed_text(f, edits), sites=[shifted[i] for i in indices],
                   note=_fixed_note(f"line {row}" for row in fixed_rows))
    return indices


def _fixed_note(fixes: Iterable[str]) -> str:
    """The note of a rerun, naming the fixes it ran with: "after fixing line 240, ops.py:5"."""
    return "after fixing " + ", ".join(fixes)


def _fixed_text(f: _File, edits: list) -> Optional[str]:
    """The file's text with ``edits`` applied, for a rerun; None where it would not parse
    or its lines would move (the sites could no longer be matched)."""
    source = apply_edits(f.plan.source, edits)
    if verify(source, f.plan.path) is not None or source.count("\n") != f.plan.source.count("\n"):
        return None
    return source


def _importable(path: str, tree: Optional[ast.Module]) -> Optional[tuple[str, str]]:
    """The module name of the file at ``path`` and the folder that name starts in."""
    if tree is None:
        return None
    name, start = package_of(path, tree)
    stem = os.path.splitext(os.path.basename(path))[0]
    if name is None:
        return stem, os.path.dirname(path)
    return (name if stem == "__init__" else f"{name}.{stem}"), start


def _confirmed_stop(f: _File, indices: list[int], result) -> Optional[int]:
    """The finding of ``f`` (one of a call's ``indices``) its run stopped at, where the run
    confirmed it; None where it stopped elsewhere or at nothing confirmed."""
    return next((indices[k] for k in _stopped_at(result, len(indices))
                 if f.diagnostics[indices[k]].runtime["verdict"] == CONFIRMED), None)


def _add_fixes(edits: dict[str, tuple[_File, list]], f: _File, i: int) -> bool:
    """Add finding ``i``'s fix to the edits of its file, for a rerun past it; False when
    it brings no edit not already there."""
    file_edits = edits.get(f.plan.path, (f, []))[1]
    new = [edit for edit in f.fix_edits(i) if edit not in file_edits]
    if new:
        edits[f.plan.path] = (f, file_edits + new)
    return bool(new)


def _patched_sources(edits: dict[str, tuple[_File, list]]) -> Optional[dict[str, str]]:
    """The text of each file with its fixes applied, by path, for a rerun that imports it
    in place of the file's; None where one would not parse or its lines would move."""
    patched = {path: _fixed_text(f, file_edits) for path, (f, file_edits) in edits.items()}
    return None if None in patched.values() else patched


def _stop_in_other_file(value: dict, f: _File,
                        by_path: dict[str, _File]) -> Optional[tuple[_File, int, Optional[dict]]]:
    """The finding of another checked file that a job's run stopped at (the innermost frame
    of the error in a checked file other than ``f`` is on its lines), where it is confirmed
    or the error is its rule's own signature: then also that verdict, else None."""
    stopped = value.get("stopped")
    frames = stopped.get("frames") if isinstance(stopped, dict) else None
    if not isinstance(frames, list) or not isinstance(stopped.get("type"), str) \
            or not isinstance(stopped.get("message"), str):
        return None
    for frame in reversed(frames):
        if not (isinstance(frame, list) and len(frame) == 2 and isinstance(frame[0], str)
                and isinstance(frame[1], int)):
            return None
        other = by_path.get(os.path.realpath(frame[0]))
        if other is None:
            continue
        if other is f:
            return None
        for i, d in enumerate(other.diagnostics):
            site = other.sites[i]
            rule = all_rules().get(d.code)
            if not site["stmt_line"] <= frame[1] <= site["end_line"] \
                    and not (rule is not None and rule.raised_where_used and frame[1] in site["related_lines"]):
                continue
            if d.runtime and d.runtime["verdict"] == CONFIRMED:
                return other, i, None
            if rule is not None and rule.runtime_signature:
                raised = {"type": stopped["type"], "message": stopped["message"], "line": frame[1]}
                verdict = rule.judge(Observation(raised=raised)).as_dict()
                if verdict["verdict"] == CONFIRMED:
                    return other, i, verdict
        return None
    return None


def _flipped(call: dict, variant: int, unrun_lines: list[int]) -> Optional[dict]:
    """``call`` with ``variant``'s arguments and the parameters whose default guards one of
    ``unrun_lines`` given the other value; None where none does, or it was done."""
    if call.get("flip") or not unrun_lines:
        return None
    flip = {name: guard["default"] for name, guard in sorted(call.get("guards", {}).items())
            if any(start <= line <= end for start, end in guard["lines"] for line in unrun_lines)}
    return {**call, "variant": variant, "flip": flip} if flip else None


def _without_given(call: dict) -> Optional[dict]:
    """``call`` from its first kind of arguments, without the values of the project's own
    calls; None where it had none. A parameter with a default keeps its project class: it
    is made only when the last try turns its default (``_flipped``)."""
    def given(param: dict) -> bool:
        return "given" in param or "given_class" in param and not param["default"]

    def plain(params: list[dict]) -> list[dict]:
        return [{key: value for key, value in param.items() if key not in ("given", "given_at", "given_class")
                 or key == "given_class" and not given(param)} for param in params]

    if not any(given(param) for param in [*call["params"], *call.get("init", ())]):
        return None
    return {**call, "variant": 0, "params": plain(call["params"]), **({"init": plain(call["init"])} if "init" in call else {})}


def _entry_failure(result, verdicts: list[dict]) -> Optional[str]:
    """How the --entry program failed, and the end of what it printed; None when it ran
    through, or stopped at a finding it confirmed (a `loss.data[0]` IndexError is the bug
    the run was asked to show, not a broken entry point)."""
    output = "\n".join((result.stdout + result.stderr).rstrip().splitlines()[-ENTRY_OUTPUT_LINES:])
    if result.status != "ok" or not isinstance(result.value, dict):
        reason = {"timeout": "it timed out", "memory": "it ran out of memory",
                  "processes": "it started too many processes", "disk": "it wrote more than its disk limit",
                  "budget": "the run's time budget was spent before it ended"}.get(result.status, "it crashed")
        why = f"{reason} ({result.detail})" if result.detail else reason
    else:
        stopped = result.value.get("stopped")
        status = result.value.get("entry_status")
        if isinstance(stopped, dict):
            stopped_at = [k for k in stopped.get("sites", ()) if isinstance(k, int) and 0 <= k < len(verdicts)]
            if any(verdicts[k]["verdict"] == CONFIRMED for k in stopped_at) or stopped.get("type") == "time limit":
                return None  # the bug it was run to show, or stopped by the monitor: not the program's failure
            if stopped.get("type") == "SystemExit":
                why = f"it exited with status {stopped.get('message')}"
            elif _READ_ONLY.search(str(stopped.get("message"))):
                why = (f"it raised {stopped.get('type')}: {stopped.get('message')}: the runtime check never "
                       f"changes your files, so the project is read-only to the program; let it write "
                       f"elsewhere (an option for its output folder, e.g. /tmp)")
            else:
                why = f"it raised {stopped.get('type')}: {stopped.get('message')}"
            traceback_text = result.value.get("traceback")
            if isinstance(traceback_text, str) and traceback_text.strip() and traceback_text.strip() not in output:
                output = (output + "\n" + _users_frames(traceback_text)).strip()
        elif isinstance(status, int) and status != 0:
            why = f"pytest exited with status {status}"
        else:
            return None
    output = "\n".join(_clean(line) for line in output.splitlines()[-ENTRY_OUTPUT_LINES:])
    # The exception's type and message are the program's: escaped as its output is.
    return terminal(why) + (f"; its output ended with:\n{output}" if output else "; it printed nothing")


def _users_frames(traceback_text: str) -> str:
    """A traceback without the frames of the monitor that ran the program (runpy, torchlint)."""
    kept, skipping = [], False
    for line in traceback_text.rstrip().splitlines():
        if line.startswith("  File "):
            skipping = "<frozen runpy>" in line or _RUNTIME_FOLDER in line
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


_RUNTIME_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _clean(text: str) -> str:
    """``text`` as one line without control characters or CI workflow commands (a terminal
    escape sequence or a ``::add-mask::`` from the job would reach the user's terminal or
    CI log), at most MAX_EVIDENCE long."""
    text = terminal(text)
    return text if len(text) <= MAX_EVIDENCE else text[:MAX_EVIDENCE - 1] + "…"


def _shifted(site: dict, source: str, edits) -> Optional[dict]:
    """The site with its columns moved past the edits made before it on its line; None
    when an edit touches the site itself (it cannot be judged on the edited text)."""
    lines = source.splitlines(True)
    line_start = sum(len(line) for line in lines[:site["line"] - 1])
    start = line_start + site["col"] - 1
    end = sum(len(line) for line in lines[:site["end_line"] - 1]) + site["end_col"] - 1
    delta = 0
    for edit in edits:
        if edit.start < end and start < edit.end:
            return None
        if edit.end <= start and edit.start >= line_start:
            delta += len(edit.content) - (edit.end - edit.start)
    site = dict(site, col=site["col"] + delta)
    if site["end_line"] == site["line"]:
        site["end_col"] += delta
    return site


def _proof(before, after) -> FixProof:
    """What the runs of a file as it is (``before``) and as fixed (``after``) show."""
    for result, which in ((before, "as it is"), (after, "as fixed")):
        if result.status != "ok" or not isinstance(result.value, dict):
            return FixProof(_clean(f"not proven: the run of the file {which} failed ({result.detail or result.status})"))
    stopped, stops = before.value.get("stopped"), after.value.get("stopped")
    if not isinstance(stopped, dict):
        stopped = None
    if not isinstance(stops, dict):
        stops = None
    if any(stop is not None and stop.get("type") == "time limit" for stop in (stopped, stops)):
        return FixProof("not proven: the monitor stopped a run at its time limit")
    if stops is not None and stopped is None:
        return FixProof(_clean(f"the fixed code stops {_where(stops)}, where the file as it is ran to the end"),
                        vetoed=True)
    if stopped is not None and stops is None:
        return FixProof(_clean(f"the fixed code runs to the end; as it is, the file stopped {_where(stopped)}"))
    if stopped is not None and stops is not None:
        if (stopped.get("line"), stopped.get("type")) == (stops.get("line"), stops.get("type")):
            return FixProof(_clean(f"not proven: both versions stop {_where(stopped)}"))
        return FixProof(_clean(f"the fixed code gets past the stop {_where(stopped)}, and stops {_where(stops)}"))
    grads_before, grads_after = before.value.get("grads"), after.value.get("grads")
    if not isinstance(grads_before, dict) or not isinstance(grads_after, dict) or not grads_before:
        return FixProof("the fixed code runs to the end, as the file did (no gradients to compare)")
    try:
        changes = _gradient_changes({"grads": grads_before}, {"grads": grads_after})
    except (AttributeError, KeyError, TypeError, ValueError):
        return FixProof("not proven: the runs returned gradients that cannot be compared")
    if changes:
        return FixProof(_clean("the fix changes gradients: " + "; ".join(
            f"`{name}.grad` was {old}, now {new}" for name, old, new in changes)))
    names = ", ".join(f"`{name}`" for name in sorted(grads_before))
    return FixProof(_clean(f"gradients identical after the fix ({names})"))


def _where(stop: dict) -> str:
    line = stop.get("line")
    message = str(stop.get("message")).split(". ")[0]  # torch's advice after the first sentence is the fix's
    return f"{'at line ' + str(line) + ' ' if isinstance(line, int) else ''}with {stop.get('type')}: {message}"


def _compare(original: dict, fixed: dict) -> str:
    if any(isinstance(run.get("stopped"), dict) and run["stopped"].get("type") == "time limit"
           for run in (original, fixed)):
        return ""  # a run the monitor cut short compares with nothing
    if fixed.get("stopped") and not original.get("stopped"):
        stop = fixed["stopped"]
        return f"the fixed version raises {stop['type']}: {stop['message']}"
    return "; ".join(f"gradient of `{name}` differs: got {got}, correct {correct}"
                     for name, got, correct in _gradient_changes(original, fixed))


def _gradient_changes(before: dict, after: dict) -> list[tuple[str, str, str]]:
    """(name, as shown before, as shown after) for each gradient the runs both have that differs."""
    changes = []
    for name, old in before.get("grads", {}).items():
        new = after.get("grads", {}).get(name)
        if new is None or len(new["values"]) != len(old["values"]):
            continue
        if any(abs(a - b) > 1e-5 * max(1.0, abs(b)) for a, b in zip(old["values"], new["values"])):
            changes.append((name, old["shown"], new["shown"]))
    return changes

