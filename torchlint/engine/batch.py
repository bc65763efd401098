"""Lint (or fix) many files: through the cache, then across worker processes.

    jobs ─ cache hits ──────────────────────────────┐
         └ misses ─ workers (lint_job) ─ cache store ┴─ results, in the jobs' order

Each worker keeps its own ``Project`` (the other modules it analysed), as a serial run
does; results come back as plain data (see diagnostics.py) and are put back in the
order of the jobs, so the output does not depend on which worker finished first.
``workers=1`` runs everything in this process.

No file can stop the run: each is linted within ``FileLimits`` (guard.py), a worker that
dies costs only the file it was linting, and one stuck past its file's deadline is
killed and replaced; either way that file gets a TL000 that says why.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from torchlint.syntax.source import UnreadableSource, decode, read_bytes
from torchlint.framework.diagnostics import Applicability, FileReport, unlintable
from torchlint.engine.cache import Cache, entry_key
from torchlint.engine.guard import FileGuard, LimitExceeded, hard_deadline, time_limit_reason, uninterrupted

if TYPE_CHECKING:
    from torchlint.analysis.project import Project
    from torchlint.engine.config import Target
    from torchlint.engine.fixer import FixOutcome


@dataclass(frozen=True)
class Job:
    path: Optional[Path]  # absolute; None for standard input without --stdin-filename
    display: str
    codes: tuple[str, ...]  # the rules that run on this file
    roots: tuple[Path, ...]  # where its imports are looked up (part of the cache key)
    parser: str = "auto"  # parsing.py; the same for every job of a run
    # What target-torch does to its findings (``Settings.target_for``); None: no target.
    target: Optional["Target"] = None

    @property
    def filename(self) -> str:
        """The file's name in reports: its absolute path, or "-" for standard input."""
        return str(self.path) if self.path is not None else self.display

    def key(self, data: bytes) -> str:
        """The cache key of this file when its bytes are ``data``."""
        from torchlint.analysis.project import content_digest

        return entry_key(self.path, self.display, self.codes, self.roots, content_digest(data), self.parser,
                         self.target.key() if self.target is not None else None)


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


@dataclass(frozen=True)
class FileLimits:
    seconds: float = 60.0  # wall-clock time to lint (or fix) one file
    memory: int = 2 << 30  # bytes the process may grow by while linting one file


def run(jobs: list[Job], workers: int, fix: Optional[FixMode] = None,
        cache_folder: Optional[Path] = None, keep_source: bool = False,
        limits: FileLimits = FileLimits()) -> list[Result]:
    """The report (and with ``fix``, the fix outcome) of every job, in the jobs' order.
    Reports hold the lines they show; with ``keep_source``, the whole source too.
    A file that goes over ``limits`` is that file's TL000."""
    with _fewer_collections():
        return _run(jobs, workers, fix, cache_folder, keep_source, limits)


# Linting allocates millions of small objects that live as long as their file's trees and
# form no cycles; at the default threshold (700) the collector walks them again every few
# hundred allocations, a tenth of a run's time.  With 20000 it runs 30 times less often and
# the peak grows by about 1 MB; mypy does the same.
_YOUNG_COLLECTION_THRESHOLD = 20000


@contextmanager
def _fewer_collections():
    previous = gc.get_threshold()
    gc.set_threshold(max(previous[0], _YOUNG_COLLECTION_THRESHOLD), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def _run(jobs: list[Job], workers: int, fix: Optional[FixMode], cache_folder: Optional[Path],
         keep_source: bool, limits: FileLimits) -> list[Result]:
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
        from torchlint.engine import fixer, linter, notebook  # noqa: F401 - once, before the workers fork
        from torchlint.engine.config import rule_classes

        rule_classes(sorted({code for index in pending for code in jobs[index].codes}))
        folder = cache.root if cache is not None else None
        if workers <= 1 or len(pending) == 1:
            parser = jobs[pending[0]].parser
            project = _new_project(parser)
            for index in pending:
                results[index], stopped = guarded_lint_job(jobs[index], fix, folder, project, limits,
                                                           keep_source=keep_source)
                if stopped:
                    project = _new_project(parser)
        else:
            _run_pool(jobs, pending, results, min(workers, len(pending)), fix, folder, keep_source, limits)
    if fix is not None and fix.write:
        write_fixes(jobs, results)  # type: ignore[arg-type]
    return results  # type: ignore[return-value]


def write_fixes(jobs: list[Job], results: list[Result]) -> None:
    """Write every fixed file, once all of them are fixed: each fix was computed against
    the other files as they were (a module's fix can depend on another module: the
    names it takes from there), whatever order the workers finished in.  A file that
    cannot be written keeps its original text and findings, and says why."""
    from torchlint.engine.files import lint_bytes
    from torchlint.engine.fixer import WriteError, write_fixed

    for index, (job, (report, outcome)) in enumerate(zip(jobs, results)):
        if outcome is None or not outcome.changed or outcome.error:
            continue
        try:
            with uninterrupted():
                write_fixed(str(job.path), outcome)
        except WriteError as error:
            from torchlint.engine.config import rule_classes

            outcome.error = str(error)
            outcome.fixed.clear()
            outcome.text = outcome.source.text
            outcome.report = _targeted(job, lint_bytes(outcome.source.data, job.display, rule_classes(job.codes),
                                                       job.path, _new_project(job.parser)))
            outcome.report.filename = job.filename
            results[index] = (outcome.report, outcome)


def _cached(cache: Cache, job: Job, fix: Optional[FixMode], keep_source: bool) -> Optional[FileReport]:
    try:
        data = read_bytes(str(job.path), follow_symlinks=False)  # discovery resolved the links
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
    from torchlint.engine.config import rule_classes
    from torchlint.engine.files import lint_bytes
    from torchlint.engine.fixer import fix_source
    from torchlint.engine.notebook import fix_notebook, is_notebook

    project = project if project is not None else _new_project(job.parser)
    rules = rule_classes(job.codes)
    outcome = None
    try:
        data = data if data is not None else read_bytes(str(job.path), follow_symlinks=False)
        if fix is None:
            report = _targeted(job, lint_bytes(data, job.display, rules, job.path, project))
        elif is_notebook(job.path):
            outcome = fix_notebook(data, job.display, rules, fix.allowed, job.path, project, *_target_of(job))
        else:
            outcome = fix_source(decode(data), job.display, rules, fix.allowed, job.path, project, *_target_of(job))
    except UnreadableSource as error:
        return FileReport(job.display, [unlintable(job.display, error.reason, error.row, error.column)],
                          filename=job.filename), None
    if outcome is not None:
        report = outcome.report  # a fixed text is written by ``write_fixes``, after every job
    report.filename = job.filename
    reusable = outcome is None or not (outcome.changed or outcome.error)
    if cache_folder is not None and job.path is not None and reusable and not report.internal_error:
        dependencies, absent = project.dependencies(job.path)
        with uninterrupted():
            Cache(cache_folder).store(job.key(data), report, dependencies, absent)
    project.forget_records()
    if not (keep_source and report.diagnostics):
        report.source = None  # it holds the lines it shows; the parent need not hold every file
    return report, outcome


def guarded_lint_job(job: Job, fix: Optional[FixMode], cache_folder: Optional[Path],
                     project: "Project", limits: FileLimits, data: Optional[bytes] = None,
                     keep_source: bool = False, in_worker: bool = False) -> tuple[Result, bool]:
    """``lint_job`` within ``limits``; True when it was stopped (the project may then hold
    a half-analysed module: the caller starts a new one)."""
    try:
        with FileGuard(limits.seconds, limits.memory, job.display, watchdog=not in_worker):
            return lint_job(job, fix, cache_folder, project, data, keep_source), False
    except LimitExceeded as exceeded:
        return _unlintable(job, exceeded.reason), True


def _targeted(job: Job, report: FileReport) -> FileReport:
    return job.target.apply(report) if job.target is not None else report


def _target_of(job: Job) -> tuple:
    """The target argument of fix_source and fix_notebook, when the job has one."""
    return (job.target,) if job.target is not None else ()


def _unlintable(job: Job, reason: str, internal: bool = False) -> Result:
    report = FileReport(job.display, [unlintable(job.display, reason)], filename=job.filename)
    if internal:
        report.internal_error = f"{reason}: {job.display}"
    return report, None


def jobs_for(candidates, parser: str = "auto") -> list[Job]:
    """A job for each file discovery found (``discovery.Discovery.files``), its imports
    looked up where its project's are."""
    roots = _new_project(parser)  # only to say where each file's imports are looked up
    return [Job(candidate.path, candidate.display, candidate.settings.codes_for(candidate.path),
                roots.roots_for(candidate.path), parser, candidate.settings.target_for(candidate.path))
            for candidate in candidates]


def _new_project(parser: str = "auto") -> "Project":
    from torchlint.analysis.project import Project

    return Project(parser=parser)


# --- the pool ---------------------------------------------------------------------------

def fork_context():
    """The multiprocessing context workers start from: fork where there is one."""
    import multiprocessing

    # fork: workers start at once with what this process imported (the rules, the parser).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


class _Worker:
    """A process that lints the files it is sent, one at a time, within the limits."""

    def __init__(self, context, limits: FileLimits, parser: str):
        self.connection, theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(theirs, limits, parser), daemon=True)
        self.process.start()
        theirs.close()
        self.index: Optional[int] = None  # the job it is linting
        self.deadline = 0.0

    def send(self, index: int, request: tuple, deadline: float) -> None:
        self.index, self.deadline = index, deadline
        self.connection.send(request)

    def receive(self) -> Optional[Result]:
        """Its result, or None when it died before sending one."""
        try:
            return self.connection.recv()
        except (EOFError, OSError):
            return None

    def death(self) -> str:
        self.process.join(timeout=1)
        code = self.process.exitcode
        if code is not None and code < 0:
            import signal

            name = signal.Signals(-code).name
            likely = " (the system may have run out of memory)" if name == "SIGKILL" else ""
            return f"was killed by {name}{likely}"
        return f"exited with status {code}"

    def stop(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            self.process.kill()
        else:
            try:
                self.connection.send(None)
            except (OSError, ValueError):
                pass
        self.connection.close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def _serve(connection, limits: FileLimits, parser: str) -> None:
    """A worker's loop: a job in, its result out, until told to stop."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    project = _new_project(parser)
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        job, fix, cache_folder, keep_source = request
        result, stopped = guarded_lint_job(job, fix, cache_folder, project, limits, keep_source=keep_source,
                                           in_worker=True)
        if stopped:
            project = _new_project(parser)
        connection.send(result)


def _run_pool(jobs: list[Job], pending: list[int], results: list, workers: int,
              fix: Optional[FixMode], cache_folder: Optional[Path], keep_source: bool,
              limits: FileLimits) -> None:
    """Lint the pending jobs in ``workers`` processes.  A worker that dies or is stuck past
    its file's deadline costs that file only (its TL000); a new worker takes its place."""
    import time
    from multiprocessing.connection import wait

    # Big files first, so that no worker is left with one at the end.
    queue = sorted(pending, key=lambda index: -_size(jobs[index].path))
    queue.reverse()  # popped from the end
    context = fork_context()
    parser = jobs[pending[0]].parser
    gc.freeze()  # what the workers inherit stays out of their collections: fewer pages copied
    pool: list[_Worker] = []
    try:
        pool = [_Worker(context, limits, parser) for _ in range(workers)]
        while True:
            for worker in pool:
                if worker.index is None and queue:
                    index = queue.pop()
                    worker.send(index, (jobs[index], fix, cache_folder, keep_source),
                                time.monotonic() + hard_deadline(limits.seconds))
            busy = [worker for worker in pool if worker.index is not None]
            if not busy:
                break
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy],
                             timeout=max(0.0, min(w.deadline for w in busy) - time.monotonic())))
            for position, worker in enumerate(pool):
                if worker.index is None:
                    continue
                job = jobs[worker.index]
                if worker.connection in ready or worker.process.sentinel in ready:
                    result = worker.receive() if worker.connection in ready else None
                    if result is None:
                        message = (f"internal error: the worker process linting this file "
                                   f"{worker.death()} (please report this)")
                        results[worker.index] = _unlintable(job, message, internal=True)
                        worker.stop(kill=True)
                        pool[position] = _Worker(context, limits, parser)
                        continue
                    results[worker.index] = result
                    worker.index = None
                elif time.monotonic() >= worker.deadline:
                    results[worker.index] = _unlintable(job, time_limit_reason(limits.seconds))
                    worker.stop(kill=True)
                    pool[position] = _Worker(context, limits, parser)
    finally:
        for worker in pool:
            worker.stop(kill=worker.index is not None)
        gc.unfreeze()


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
