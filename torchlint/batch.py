"""Lint (or fix) many files: through the cache, then across worker processes.

    jobs ─ cache hits ──────────────────────────────┐
         └ misses ─ workers (lint_job) ─ cache store ┴─ results, in the jobs' order

Each worker keeps its own ``Project`` (the other modules it analysed), as a serial run
does; results come back as plain data (see diagnostics.py) and are put back in the
order of the jobs, so the output does not depend on which worker finished first.
``workers=1`` runs everything in this process.
"""

from __future__ import annotations

import gc
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from torchlint.cache import Cache, entry_key
from torchlint.diagnostics import Applicability, FileReport, unlintable
from torchlint.source import UnreadableSource, decode, read_bytes

if TYPE_CHECKING:
    from torchlint.fixer import FixOutcome
    from torchlint.project import Project


@dataclass(frozen=True)
class Job:
    path: Optional[Path]  # absolute; None for standard input without --stdin-filename
    display: str
    codes: tuple[str, ...]  # the rules that run on this file
    roots: tuple[Path, ...]  # where its imports are looked up (part of the cache key)

    @property
    def filename(self) -> str:
        """The file's name in reports: its absolute path, or "-" for standard input."""
        return str(self.path) if self.path is not None else self.display

    def key(self, data: bytes) -> str:
        """The cache key of this file when its bytes are ``data``."""
        from torchlint.project import content_digest

        return entry_key(self.path, self.display, self.codes, self.roots, content_digest(data))


@dataclass(frozen=True)
class FixMode:
    write: bool  # --fix writes the files; --diff only shows what would change
    allowed: frozenset[Applicability]


Result = tuple[FileReport, Optional["FixOutcome"]]


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(jobs: list[Job], workers: int, fix: Optional[FixMode] = None,
        cache_folder: Optional[Path] = None, keep_source: bool = False) -> list[Result]:
    """The report (and with ``fix``, the fix outcome) of every job, in the jobs' order.
    Reports hold the lines they show; with ``keep_source``, the whole source too."""
    cache = Cache(cache_folder) if cache_folder is not None else None
    results: list[Optional[Result]] = [None] * len(jobs)
    pending = []
    for index, job in enumerate(jobs):
        hit = _cached(cache, job, fix, keep_source) if cache is not None else None
        if hit is not None:
            results[index] = (hit, None)
        else:
            pending.append(index)
    if pending:
        from torchlint.config import rule_classes

        from torchlint import fixer, linter, notebook  # noqa: F401 - once, before the workers fork

        rule_classes(sorted({code for index in pending for code in jobs[index].codes}))
        folder = cache.root if cache is not None else None
        if workers <= 1 or len(pending) == 1:
            project = _new_project()
            for index in pending:
                results[index] = lint_job(jobs[index], fix, folder, project, keep_source=keep_source)
        else:
            _run_pool(jobs, pending, results, min(workers, len(pending)), fix, folder, keep_source)
    return results  # type: ignore[return-value]


def _cached(cache: Cache, job: Job, fix: Optional[FixMode], keep_source: bool) -> Optional[FileReport]:
    try:
        data = read_bytes(str(job.path))
    except UnreadableSource:
        return None  # the worker reports it
    report = cache.load(job.key(data), job.filename)
    if report is None:
        return None
    if fix is not None and any(d.applicable_fix in fix.allowed for d in report.diagnostics):
        return None  # there is something to fix: that takes the parser
    if keep_source and report.diagnostics and job.path.suffix.lower() != ".ipynb":
        try:
            report.source = decode(data)
        except UnreadableSource:
            pass  # the entry holds that diagnostic
    return report


# --- the work itself ----------------------------------------------------------------------

def lint_job(job: Job, fix: Optional[FixMode], cache_folder: Optional[Path],
             project: Optional["Project"] = None, data: Optional[bytes] = None,
             keep_source: bool = False) -> Result:
    """Lint (or fix) one file, and store the result in the cache when it is reusable.
    The report keeps the file's whole source only with ``keep_source``."""
    from torchlint.config import rule_classes
    from torchlint.fixer import WriteError, fix_source, write_fixed
    from torchlint.linter import lint_bytes
    from torchlint.notebook import fix_notebook, is_notebook

    project = project if project is not None else _worker_project()
    rules = rule_classes(job.codes)
    outcome = None
    try:
        data = data if data is not None else read_bytes(str(job.path))
        if fix is None:
            report = lint_bytes(data, job.display, rules, job.path, project)
        elif is_notebook(job.path):
            outcome = fix_notebook(data, job.display, rules, fix.allowed, job.path, project)
        else:
            outcome = fix_source(decode(data), job.display, rules, fix.allowed, job.path, project)
    except UnreadableSource as error:
        return FileReport(job.display, [unlintable(job.display, error.reason, error.row, error.column)],
                          filename=job.filename), None
    if outcome is not None:
        if fix.write and outcome.changed:
            try:
                write_fixed(str(job.path), outcome)
            except WriteError as error:
                outcome.error = str(error)
                outcome.fixed.clear()
                outcome.text = outcome.source.text
                outcome.report = lint_bytes(data, job.display, rules, job.path, project)
        report = outcome.report
    report.filename = job.filename
    reusable = outcome is None or not (outcome.changed or outcome.error)
    if cache_folder is not None and job.path is not None and reusable and not report.internal_error:
        dependencies, absent = project.dependencies(job.path)
        Cache(cache_folder).store(job.key(data), report, dependencies, absent)
    project.forget_records()
    if not (keep_source and report.diagnostics):
        report.source = None  # it holds the lines it shows; the parent need not hold every file
    return report, outcome


def _new_project() -> "Project":
    from torchlint.project import Project

    return Project()


_project: Optional["Project"] = None


def _worker_project() -> "Project":
    """The project of this worker process, kept across its jobs."""
    global _project
    if _project is None:
        _project = _new_project()
    return _project


def _pool_job(job: Job, fix: Optional[FixMode], cache_folder: Optional[Path], keep_source: bool) -> Result:
    return lint_job(job, fix, cache_folder, keep_source=keep_source)


# --- the pool ---------------------------------------------------------------------------

def _context():
    import multiprocessing

    # fork: workers start at once with what this process imported (the rules, the parser).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _run_pool(jobs: list[Job], pending: list[int], results: list, workers: int,
              fix: Optional[FixMode], cache_folder: Optional[Path], keep_source: bool) -> None:
    # Big files first, so that no worker is left with one at the end.
    order = sorted(pending, key=lambda index: -_size(jobs[index].path))
    unfinished = set(order)
    gc.freeze()  # what the workers inherit stays out of their collections: fewer pages copied
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
            futures = {pool.submit(_pool_job, jobs[index], fix, cache_folder, keep_source): index for index in order}
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                unfinished.discard(index)
    except BrokenProcessPool:
        # A worker died (killed, out of memory, a crash in native code).  Find the file:
        # each one left runs alone in a fresh worker.
        for index in sorted(unfinished):
            results[index] = _isolated(jobs[index], fix, cache_folder, keep_source)
    finally:
        gc.unfreeze()


def _isolated(job: Job, fix: Optional[FixMode], cache_folder: Optional[Path], keep_source: bool) -> Result:
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=_context()) as pool:
            return pool.submit(_pool_job, job, fix, cache_folder, keep_source).result()
    except BrokenProcessPool:
        message = "internal error: the worker process linting this file died (please report this)"
        report = FileReport(job.display, [unlintable(job.display, message)], filename=str(job.path))
        report.internal_error = f"{message}: {job.display}"
        return report, None


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
