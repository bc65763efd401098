"""``pytest --torchlint-runtime``: the project's own tests give torchlint's findings verdicts.

Registered through the ``pytest11`` entry point ``torchlint`` (``-p torchlint`` where
plugin autoloading is off), it does nothing unless asked.  Asked, it lints the
project before the first test (the paths of ``--torchlint-paths``, else pytest's rootdir),
runs the whole session under the runtime monitor (the same instruments as ``check
--runtime``: saved-tensor hooks, a dispatch mode, a function mode, a line tracer on the
flagged files only), and after the last test judges every finding the tests reached. The
tests run as the user's pytest runs them (their environment, fixtures and working
directory, unsandboxed: they are the user's own tests), so real inputs reach the flagged
lines.  The terminal summary lists the verdicts; ``--torchlint-output FILE`` writes the
findings with their verdicts as ``check --output-format json`` (or ``sarif``) does.

The monitor replaces the trace function (``sys.settrace``) for the session, so coverage
measurement cannot run in the same session.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Optional

import pytest

_STATE = pytest.StashKey["_Session"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("torchlint", "torchlint: runtime verdicts for the findings your tests reach")
    group.addoption("--torchlint-runtime", action="store_true", default=False,
                    help="lint the project, run the tests under torchlint's runtime monitor, and report a "
                         "verdict for every finding the tests reach")
    group.addoption("--torchlint-paths", action="append", default=[], metavar="PATH",
                    help="what to lint (repeatable; default: the rootdir)")
    group.addoption("--torchlint-output", metavar="FILE", default=None,
                    help="also write the findings and their verdicts to FILE")
    group.addoption("--torchlint-format", choices=("json", "sarif"), default="json",
                    help="the format of --torchlint-output (default: json)")


class _Session:
    """The findings being watched, the monitor, and what it needs undone at the end."""

    def __init__(self, reports, watched, monitor, stack: contextlib.ExitStack):
        self.reports = reports  # every FileReport linted
        self.watched = watched  # [(Diagnostic, Site)]
        self.monitor = monitor
        self.stack = stack


def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if not config.getoption("torchlint_runtime"):
        return
    from torchlint.runtime.check import RuntimeUnavailable, require_torch

    try:
        require_torch()
    except RuntimeUnavailable as error:
        raise pytest.UsageError(f"--torchlint-runtime: {error}") from None
    if getattr(config.option, "numprocesses", None) or hasattr(config, "workerinput"):
        raise pytest.UsageError("--torchlint-runtime watches the tests in this process; run it without "
                                "pytest-xdist's -n")
    paths = config.getoption("torchlint_paths") or [str(config.rootpath)]
    reports = _lint(paths, Path(config.invocation_params.dir))
    watched, monitor = _watch(reports)
    stack = contextlib.ExitStack()
    if watched:
        from torchlint.runtime.monitor import monitoring

        stack.enter_context(monitoring(monitor))
    config.stash[_STATE] = _Session(reports, watched, monitor, stack)


def _lint(paths: list[str], cwd: Path):
    """Lint ``paths`` as ``torchlint check`` would (configuration, exclusions), keeping the
    sources: the findings and what their files say."""
    from torchlint.engine import batch
    from torchlint.engine.config import ConfigError, Options, SettingsResolver
    from torchlint.engine.discovery import discover

    try:
        resolver = SettingsResolver(Options(), cwd=cwd)
        found = discover(paths, resolver)
    except ConfigError as error:
        raise pytest.UsageError(f"--torchlint-runtime: {error}") from None
    return [report for report, _outcome in batch.run(batch.jobs_for(found.files), 1, keep_source=True)]


def _watch(reports):
    """A site for every finding the runtime check judges, and a monitor watching them."""
    from torchlint.runtime.check import runs
    from torchlint.runtime.monitor import Monitor, Site
    from torchlint.runtime.plan import FilePlan

    watched, sites = [], []
    for report in reports:
        diagnostics = [d for d in report.diagnostics if runs(d)]
        if not diagnostics or report.source is None or report.filename.endswith(".ipynb"):
            continue
        try:
            plan = FilePlan(os.path.realpath(report.filename), report.source.text)
        except SyntaxError:
            continue
        for diagnostic in diagnostics:
            entry = plan.site(diagnostic)
            site = Site.of(len(sites), entry)
            sites.append(site)
            watched.append((diagnostic, site))
    return watched, Monitor(sites)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """pytest records each test's warnings in a list of its own, where the monitor would
    not see them: let each reach the monitor too, as it is issued (torch's `volatile`
    warning is TL202's evidence), then go on to pytest."""
    state: Optional[_Session] = item.config.stash.get(_STATE, None)
    if state is None or not state.watched:
        yield
        return
    from torchlint.runtime.monitor import recorded_warnings_to

    with recorded_warnings_to(state.monitor):
        yield


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state: Optional[_Session] = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state.stack.close()
    from torchlint.framework.verdicts import COULD_NOT_RUN
    from torchlint.runtime.check import _clean
    from torchlint.runtime.monitor import judge

    for diagnostic, site in state.watched:
        if site.hits == 0 and not site.events:
            verdict = {"verdict": COULD_NOT_RUN, "evidence": "not reached by the tests that ran"}
        else:
            verdict = judge(site, state.monitor, None)
        diagnostic.runtime = dict(verdict, evidence=_clean(verdict["evidence"]), run="pytest")
    output = session.config.getoption("torchlint_output")
    if output:
        from torchlint.output.report import write_findings

        with open(output, "w", encoding="utf-8") as handle:
            write_findings(state.reports, session.config.getoption("torchlint_format"), handle)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    state: Optional[_Session] = config.stash.get(_STATE, None)
    if state is None:
        return
    from torchlint.framework.verdicts import COULD_NOT_RUN
    from torchlint.output.escape import terminal
    from torchlint.output.report import runtime_summary

    terminalreporter.section("torchlint runtime")
    reached = [(report, d) for report in state.reports for d in report.diagnostics
               if d.runtime and d.runtime["verdict"] != COULD_NOT_RUN]
    for report, d in reached:
        terminalreporter.write_line(f"{terminal(report.path)}:{d.row}:{d.column}: {d.code} {terminal(d.message)}")
        terminalreporter.write_line(f"    {terminal(d.runtime['verdict'])}: {terminal(d.runtime['evidence'])}")
    unreached = len(state.watched) - len(reached)
    terminalreporter.write_line(f"{len(reached)} of {len(state.watched)} findings reached by the tests"
                                + (f"; {unreached} not reached" if unreached else "") + ".")
    from torchlint.runtime.check import style_findings

    terminalreporter.write_line(runtime_summary(state.reports, style=style_findings(state.reports)).splitlines()[0])
