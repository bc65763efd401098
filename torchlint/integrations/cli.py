"""The ``torchlint`` command line.

    torchlint check [PATHS]...   lint files and folders (default: the current folder)
    torchlint rule CODE|NAME     a rule's documentation
    torchlint rules              the rule table

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import stat
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

import click

from torchlint import __version__
from torchlint.syntax.parsing import PARSERS
from torchlint.syntax.source import MAX_FILE_BYTES
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import UNLINTABLE_FILE, FileReport, allowed_applicabilities, unlintable
from torchlint.engine import batch
from torchlint.engine.atomic import replace_file
from torchlint.engine.cache import DEFAULT_FOLDER as DEFAULT_CACHE_FOLDER
from torchlint.engine.config import PYTHON_TARGETS, ConfigError, Options, SettingsResolver
from torchlint.engine.discovery import discover, display_path
from torchlint.output.escape import terminal, terminal_lines
from torchlint.output.report import (
    MACHINE_FORMATS,
    OUTPUT_FORMATS,
    STATISTICS_FORMATS,
    count,
    summary,
    write_diff,
    write_findings,
    write_fixes,
    write_statistics,
    runtime_summary,
)

if TYPE_CHECKING:
    from torchlint.engine.fixer import FixOutcome

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by SIGINT


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--select TL1,TL2 --select TL3`` -> ("TL1", "TL2", "TL3")."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _selection(values: tuple[str, ...]) -> Optional[tuple[str, ...]]:
    """``--select``'s rules; an empty one (``--select=``) is an error, not every rule off."""
    if not values:
        return None
    selected = _split(values)
    if not selected:
        raise click.BadParameter("names no rule; give codes (TL101), prefixes (TL1), names or ALL "
                                 "(to turn every rule off, use --ignore ALL)", param_hint="--select")
    return selected


def _per_file_ignores(values: tuple[str, ...], option: str = "--per-file-ignores") \
        -> Optional[tuple[tuple[str, tuple[str, ...]], ...]]:
    if not values:
        return None
    entries = []
    for value in values:
        pattern, separator, codes = value.rpartition(":")
        if not separator or not pattern:
            raise click.BadParameter(f"{value!r} is not PATTERN:CODE[,CODE...]", param_hint=option)
        entries.append((pattern, _split((codes,))))
    return tuple(entries)


def _fail(message: str) -> None:
    _error(message)
    sys.exit(EXIT_ERROR)


def _error(message: str) -> None:
    _say(f"torchlint: error: {message}")


def _say(text: str) -> None:
    """A line (or lines) on standard error, with what came from the repository escaped."""
    click.echo(terminal_lines(text), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="torchlint")
def commands() -> None:
    """A linter for PyTorch autograd and aliasing mistakes."""


def main() -> None:
    """The ``torchlint`` program.  Exit status 1 means findings and nothing else: a usage
    error, or an error inside torchlint wherever it happens, exits 2 with a message."""
    for stream in (sys.stdout, sys.stderr):
        try:  # a file name or a source line that is not valid UTF-8 must not stop the output
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        status = _reporting_errors(lambda: commands.main(prog_name="torchlint", standalone_mode=False))
    except (click.Abort, KeyboardInterrupt):  # Ctrl-C
        _say("torchlint: interrupted")
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(status)


def _reporting_errors(command: Callable[[], Optional[int]]) -> int:
    """Run ``command``, and give its exit status: a usage error is shown, an error inside
    torchlint is reported with its traceback. SystemExit and Ctrl-C (click.Abort, or
    KeyboardInterrupt outside click) go through."""
    try:
        return command() or EXIT_CLEAN
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except BrokenPipeError:  # the reader of our output went away (`| head`)
        _silence_stdout()
        return EXIT_ERROR
    except (SystemExit, KeyboardInterrupt, click.Abort):
        raise
    except BaseException as error:
        _say(traceback.format_exc().rstrip("\n"))
        _say(f"torchlint: internal error: {type(error).__name__}: {error} (please report this)")
        return EXIT_ERROR


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit cannot raise again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@commands.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="RULES", help="Rules to enable (codes, prefixes like TL1, names, or ALL); replaces the configured selection.")
@click.option("--extend-select", multiple=True, metavar="RULES", help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, metavar="RULES", help="Rules to disable.")
@click.option("--per-file-ignores", multiple=True, metavar="PATTERN:RULES", help="Disable rules for files matching a glob, e.g. 'tests/*:TL101'; replaces the configured table.")
@click.option("--extend-per-file-ignores", multiple=True, metavar="PATTERN:RULES", help="Like --per-file-ignores, on top of the configured table.")
@click.option("--exclude", multiple=True, metavar="GLOBS", help="Paths to exclude; replaces the default exclusions.")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS", help="Paths to exclude on top of the defaults.")
@click.option("--force-exclude/--no-force-exclude", default=None, help="Apply exclusions to files named on the command line too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files ignored by .gitignore (default: on).")
@click.option("--target-torch", metavar="VERSION", help="The torch release the code runs on (e.g. 2.4): findings that hold only on later releases are not reported, and fixes that need a later one are only shown.")
@click.option("--target-version", type=click.Choice(PYTHON_TARGETS), metavar="PYTHON", help=f"The oldest Python the code runs on ({PYTHON_TARGETS[0]} to {PYTHON_TARGETS[-1]}; default: from requires-python): syntax newer than it is reported (TL000), and no fix may write such syntax.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Use this configuration file instead of the nearest pyproject.toml.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default=None, help="How to print findings (default: full, or github when GITHUB_ACTIONS=true).")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("-e", "--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, writable=True, path_type=Path), help="Write the findings (and the summary) to this file instead of standard output.")
@click.option("-w", "--watch", is_flag=True, help="Lint again whenever a linted file or a configuration file changes (until Ctrl-C).")
@click.option("--show-settings", is_flag=True, help="Print the settings the first path is linted with (configuration file, rules, exclusions, targets), and exit.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--stdin-filename", metavar="NAME", help="The name to use for source read from standard input ('-').")
@click.option("--show-files", is_flag=True, help="List the files that would be linted, and exit.")
@click.option("--fix", is_flag=True, help="Apply safe fixes, then report what remains.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (with --fix) or show (with --diff) unsafe fixes.")
@click.option("--fix-only", is_flag=True, help="Apply fixes and do not report what remains.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing (exit 1 if there is one).")
@click.option("--show-fixes", is_flag=True, help="List the fixes that were applied, per file and rule.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when anything was fixed, even if nothing remains.")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODES` directive to every line with findings, so that "
                                                  "only new findings fail.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Findings recorded in this file fail no run: the first run records them, later runs report only new ones and drop the entries of findings that are gone.")
@click.option("--noqa-reason", metavar="TEXT", help="With --add-noqa: a comment after each directive it adds "
                                                    "(`# noqa: TL101  # TEXT`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N", help="Lint in N processes (default: the number of CPUs; 1 lints in this process).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, envvar="TORCHLINT_CACHE_DIR", help=f"Where to keep results of unchanged files (default: {DEFAULT_CACHE_FOLDER} beside the configuration, else in the current folder).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--file-timeout", type=click.FloatRange(min=0.1), default=batch.FileLimits.seconds, show_default=True, metavar="SECONDS", help="Stop linting a file after this long and report it as TL000.")
@click.option("--file-memory", default="2G", show_default=True, metavar="SIZE", help="Stop linting a file that needs more memory than this (e.g. 2G, 512M) and report it as TL000.")
@click.option("--parser", type=click.Choice(PARSERS), default="auto", show_default=True, help="What builds each file's syntax tree: torchlint's fast tree, falling back to libcst's parser where it cannot be built (auto); the fast tree only; or libcst's parser for every file (about ten times slower).")
@click.option("--runtime", is_flag=True, help="Run the flagged code under real torch (sandboxed) and give each finding a verdict.")
@click.option("--entry", metavar="COMMAND", help="With --runtime: run this program once under the monitor, e.g. 'train.py --epochs 1' or 'pytest tests/test_x.py::test_y'.")
@click.option("--runtime-timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, metavar="SECONDS", help="Wall-clock limit of each runtime job.")
@click.option("--runtime-memory", default="4G", show_default=True, metavar="SIZE", help="Memory (address space) each runtime job may add, e.g. 2G or 512M.")
@click.option("--runtime-jobs", type=click.IntRange(min=1), default=None, metavar="N", help="Runtime jobs at once (default: the number of CPUs).")
@click.option("--runtime-scripts/--no-runtime-scripts", default=True, show_default=True, help="With --runtime: also run the project's own scripts (with a __main__ block) that import the flagged files, to reach what no other run reached.")
@click.option("--runtime-budget", type=click.FloatRange(min=0.1), default=600.0, show_default=True, metavar="SECONDS", help="Wall-clock limit of all runtime jobs together: findings not run by then are COULD NOT RUN.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    extend_per_file_ignores: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: Optional[bool],
    respect_gitignore: Optional[bool],
    target_torch: Optional[str],
    target_version: Optional[str],
    config_path: Optional[Path],
    isolated: bool,
    output_format: Optional[str],
    statistics: bool,
    exit_zero: bool,
    output_file: Optional[Path],
    watch: bool,
    show_settings: bool,
    quiet: bool,
    stdin_filename: Optional[str],
    show_files: bool,
    fix: bool,
    unsafe_fixes: bool,
    fix_only: bool,
    diff: bool,
    show_fixes: bool,
    exit_non_zero_on_fix: bool,
    add_noqa: bool,
    baseline: Optional[Path],
    noqa_reason: Optional[str],
    jobs: Optional[int],
    cache_dir: Optional[Path],
    no_cache: bool,
    file_timeout: float,
    file_memory: str,
    parser: str,
    runtime: bool,
    entry: Optional[str],
    runtime_timeout: float,
    runtime_memory: str,
    runtime_jobs: Optional[int],
    runtime_scripts: bool,
    runtime_budget: float,
) -> None:
    """Lint PATHS (files or folders; default: the current folder; '-' for standard input)."""
    output_format = _output_format(output_format, statistics)
    if diff and (fix or fix_only):
        raise click.UsageError("--diff shows fixes without applying them; it cannot be combined with --fix or --fix-only")
    runtime_options = _runtime_options(runtime, entry, runtime_timeout, runtime_memory, runtime_jobs, runtime_scripts,
                                       runtime_budget)
    if baseline is not None and (add_noqa or diff):
        raise click.UsageError(f"--baseline hides recorded findings; it cannot be combined with "
                               f"{'--add-noqa' if add_noqa else '--diff'}")
    if noqa_reason is not None and not add_noqa:
        raise click.UsageError("--noqa-reason is the comment --add-noqa writes; give --add-noqa too")
    if add_noqa:
        clashing = [flag for flag, given in (("--fix", fix), ("--fix-only", fix_only), ("--diff", diff),
                                             ("--runtime", runtime), ("--show-files", show_files)) if given]
        if clashing:
            raise click.UsageError(f"--add-noqa writes directives for the findings as they are; it cannot be combined "
                                   f"with {', '.join(clashing)}")
        if noqa_reason is not None and ("\n" in noqa_reason or "\r" in noqa_reason):
            raise click.UsageError("--noqa-reason must be one line")
    plan = FixPlan(
        mode="diff" if diff else "fix" if (fix or fix_only) else None,
        allowed=allowed_applicabilities(unsafe_fixes),
    )
    limits = batch.FileLimits(seconds=file_timeout, memory=_size(file_memory, "--file-memory"))
    cli = Options(
        select=_selection(select),
        extend_select=_split(extend_select),
        ignore=_split(ignore),
        per_file_ignores=_per_file_ignores(per_file_ignores),
        extend_per_file_ignores=_per_file_ignores(extend_per_file_ignores, "--extend-per-file-ignores") or (),
        exclude=_split(exclude) if exclude else None,
        extend_exclude=_split(extend_exclude),
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        target_torch=target_torch,
        target_version=target_version,
    )
    try:
        resolver = SettingsResolver(cli, config=config_path, isolated=isolated)
        if watch:
            clashing = [flag for flag, given in (("--fix", fix), ("--fix-only", fix_only), ("--diff", diff),
                                                 ("--runtime", runtime), ("--add-noqa", add_noqa),
                                                 ("--baseline", baseline is not None), ("-o", output_file is not None))
                        if given]
            if clashing or paths == ("-",):
                raise click.UsageError(f"--watch lints files again as they change; it cannot be combined with "
                                       f"{', '.join(clashing) or 'standard input'}")
            context = click.get_current_context()
            _watch(resolver, paths, force_exclude, lambda: context.invoke(check, **{**context.params, "watch": False}))
            return
        if show_settings:
            _show_settings(resolver, paths)
            return
        keep_source = runtime_options is not None  # the runtime check runs the files' code
        use_stdin = paths == ("-",) or (not paths and stdin_filename is not None)
        if "-" in paths and not use_stdin:
            raise click.UsageError("'-' (standard input) cannot be combined with other paths")
        proving = runtime_options is not None and plan.mode is not None
        runtime = None
        if use_stdin:
            if proving:
                raise click.UsageError("--runtime with --fix or --diff runs files; it cannot read standard input")
            if add_noqa or baseline is not None:
                raise click.UsageError(f"{'--add-noqa' if add_noqa else '--baseline'} works on files; it cannot read "
                                       f"standard input")
            reports = _lint_stdin(resolver, stdin_filename, force_exclude, plan, keep_source, limits, parser)
        else:
            cache_folder = None if no_cache else _cache_folder(cache_dir, resolver)
            workers = jobs or batch.default_workers()
            vetoed: list[FileReport] = []
            if proving:
                # Each file runs as it is and as fixed before anything is written; a file whose
                # fixed code fails where it ran through is not fixed.
                as_is = _lint_paths(resolver, list(paths) or ["."], force_exclude, show_files,
                                    FixPlan(None, plan.allowed), workers, cache_folder, True, limits, parser)
                if as_is is None:
                    return
                runtime = _run_runtime(as_is, runtime_options, resolver, quiet, parser, prove=plan.allowed)
                vetoed = [report for report in as_is
                          if report.path in runtime.proofs and runtime.proofs[report.path].vetoed]
            reports = _lint_paths(resolver, list(paths) or ["."], force_exclude, show_files, plan, workers,
                                  cache_folder, keep_source, limits, parser,
                                  skip={report.filename for report in vetoed}, progress=not quiet)
            if reports is None:
                return
            if proving:
                reports += vetoed
                _carry_verdicts(as_is, reports)
    except ConfigError as error:
        _fail(str(error))
        return

    reports.sort(key=lambda report: report.path)
    if add_noqa:
        _add_noqa(reports, resolver, noqa_reason or "", quiet)
        return
    if baseline is not None:
        _apply_baseline(baseline, reports, resolver)
    if runtime_options is not None and runtime is None:
        runtime = _run_runtime(reports, runtime_options, resolver, quiet, parser)
    runtime_note = runtime.note if runtime is not None else None
    entry_failure = runtime.entry_failure if runtime is not None else None
    proofs = runtime.proofs if runtime is not None else {}
    # The report for --output-file is kept until it is complete, then written at once.
    out = io.StringIO() if output_file is not None else sys.stdout
    fix_errors = [(report.path, plan.outcomes[id(report)].error) for report in reports
                  if id(report) in plan.outcomes and plan.outcomes[id(report)].error]
    fix_errors += [(path, f"not fixed: {proof.text} (--runtime)") for path, proof in proofs.items() if proof.vetoed]
    proof_lines = "".join(f"\n- {terminal(path)}: {terminal(proof.text)}" for path, proof in sorted(proofs.items()))
    if proof_lines and (plan.mode == "diff" or output_format in MACHINE_FORMATS):
        _say(f"{_PROOFS} (--runtime):{proof_lines}")
    for path, message in fix_errors:
        _error(f"{terminal(path)}: {terminal(message)}")
    if plan.mode == "diff":
        status = _finish_diff(reports, plan, out, quiet)
        if output_file is not None:
            _save_report(output_file, out.getvalue())
        sys.exit(status)
    if plan.stdin_fixed is not None:
        # The fixed source is the output; findings go to standard error (or --output-file).
        sys.stdout.flush()
        sys.stdout.buffer.write(plan.stdin_fixed)
        sys.stdout.buffer.flush()
        out = out if output_file is not None else sys.stderr
    fixed = plan.fixed_counts(reports)
    if fix_only:
        pass  # fixes only: what remains is not reported
    elif statistics:
        write_statistics(reports, output_format, out)
    else:
        write_findings(reports, output_format, out)
    if show_fixes:
        write_fixes([(report.path, plan.outcomes[id(report)].fixed) for report in reports
                     if id(report) in plan.outcomes], out)
    if not quiet and output_format not in MACHINE_FORMATS and not fix_only:
        out.write(summary(reports, fixed if plan.mode else None, unsafe_fixes) + "\n")
        if runtime is not None:
            out.write(runtime_summary(runtime.judged or reports, runtime_note, entry_given=runtime_options.entry is not None,
                                      style=runtime.style) + "\n")
        if proof_lines:
            out.write(f"{_PROOFS}:{proof_lines}\n")
    elif not quiet and fix_only and sum(fixed.values()):
        out.write(f"Fixed {count(sum(fixed.values()), 'finding')}.\n")
    if runtime_note and output_format in MACHINE_FORMATS:
        # Machine-readable output has no room for it, but the user must see it.
        _say(f"torchlint: note: the runtime check ran without full isolation here: {terminal(runtime_note)}")
    if output_file is not None:
        _save_report(output_file, out.getvalue())

    internal_errors = [report.internal_error for report in reports if report.internal_error]
    for message in internal_errors:
        _say(f"torchlint: {terminal(message)}")
    if entry_failure:
        # Its lines: why, then the end of the program's output (escaped line by line).
        _error(f"--entry {terminal(shlex.quote(entry))} failed: {entry_failure}")
    if internal_errors or fix_errors or entry_failure:
        sys.exit(EXIT_ERROR)
    if exit_non_zero_on_fix and sum(fixed.values()):
        sys.exit(EXIT_FINDINGS)
    has_findings = any(report.diagnostics for report in reports) and not fix_only
    sys.exit(EXIT_FINDINGS if has_findings and not exit_zero else EXIT_CLEAN)


def _apply_baseline(path: Path, reports: list[FileReport], resolver: SettingsResolver) -> None:
    """Record the findings in a new baseline, or hide those an existing one has (and drop
    its entries whose findings are gone); what was done goes to standard error."""
    from torchlint.engine.baseline import Baseline, BaselineError

    try:
        if not path.exists():
            recorded = Baseline(path).record(reports)
            _say(f"torchlint: recorded {count(recorded, 'finding')} in the baseline {terminal(str(path))}; later runs "
                 f"report only new ones")
            return
        hidden, dropped = Baseline.load(path).apply(
            reports, lambda file: frozenset(resolver.for_file(file).codes_for(file)))
    except BaselineError as error:
        _fail(str(error))
        return
    if dropped:
        _say(f"torchlint: {count(dropped, 'finding')} of the baseline {terminal(str(path))} "
             f"{'is' if dropped == 1 else 'are'} gone: removed from it")
    if hidden:
        _say(f"torchlint: {count(hidden, 'finding')} in the baseline {terminal(str(path))} not shown")


def _save_report(path: Path, text: str) -> None:
    """Write the report to ``path`` whole: beside it first, then renamed over it, so that a
    full disk leaves an earlier report as it was, not a truncated one (an error, exit 2).
    What is not a regular file (``/dev/stdout``, a named pipe) is written to as it is."""
    data = text.encode("utf-8", "backslashreplace")
    try:
        info = os.stat(path)
    except OSError:
        info = None  # no file yet (or none we can see): a new one
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with open(path, "wb") as handle:
                handle.write(data)
            return
        target = os.path.realpath(path)  # through a symlink, never replacing the link
        mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
        try:
            replace_file(target, data, mode)
        except PermissionError:
            if info is None:
                raise
            with open(target, "wb") as handle:  # a writable file in a folder we cannot write to
                handle.write(data)
    except OSError as error:
        kept = "the earlier report there is unchanged" if info is not None else "no report was written"
        _fail(f"--output-file {path}: cannot write the report ({error.strerror or error}); {kept}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _watch(resolver: SettingsResolver, paths: tuple[str, ...], force_exclude: Optional[bool],
           check_again: Callable[[], None]) -> None:
    """Run ``check_again`` (the same check without --watch) now and after every change of a
    file it lints or of a configuration file, polling twice a second; Ctrl-C ends it with
    status 0. It runs in this process: a new ``python -m torchlint`` in the linted folder
    would import that folder's own ``torchlint``, ``click`` or ``tokenize`` first."""
    from torchlint.engine.config import CONFIG_NAMES

    def state() -> dict[str, tuple[int, int]]:
        found = discover(list(paths) or ["."], resolver, force_exclude)
        files = [str(candidate.path) for candidate in found.files]
        folders = {os.path.dirname(file) for file in files} | {str(folder) for folder in (resolver.cwd,
                                                                                         *resolver.cwd.parents)}
        files += [os.path.join(folder, name) for folder in folders for name in CONFIG_NAMES]
        seen = {}
        for file in files:
            try:
                info = os.stat(file)
            except OSError:
                continue
            seen[file] = (info.st_mtime_ns, info.st_size)
        return seen

    def run_once() -> None:
        try:
            _reporting_errors(check_again)
        except SystemExit:
            pass  # its exit status: this run's, not the watch's
        finally:
            sys.stdout.flush()

    try:
        while True:
            before = state()
            click.echo(f"[{time.strftime('%H:%M:%S')}] torchlint: checking {count(len(before), 'file')}...", err=True)
            run_once()
            click.echo("torchlint: watching for changes (Ctrl-C to stop)", err=True)
            while state() == before:
                time.sleep(0.5)
    except (KeyboardInterrupt, click.Abort):
        sys.exit(EXIT_CLEAN)


def _show_settings(resolver: SettingsResolver, paths: tuple[str, ...]) -> None:
    from torchlint.engine.config import describe

    given = next((path for path in paths if path != "-"), ".")
    target = Path(given).resolve()
    settings = resolver.for_directory(target) if target.is_dir() else resolver.for_file(target)
    click.echo(f"Settings for {terminal(given)}:")
    for name, value in describe(settings):
        click.echo(f"  {name}: {terminal(str(value))}")


def _add_noqa(reports: list[FileReport], resolver: SettingsResolver, reason: str, quiet: bool) -> None:
    """Write a directive for each finding of each file, and say what was done."""
    from torchlint.syntax.source import UnreadableSource
    from torchlint.engine.add_noqa import NOT_SUPPRESSED, add_noqa
    from torchlint.engine.fixer import WriteError, write_fixed
    from torchlint.engine.guard import uninterrupted

    added = files = 0
    errors = [report.internal_error for report in reports if report.internal_error]
    for report in reports:
        if not any(d.code not in NOT_SUPPRESSED for d in report.diagnostics):
            continue
        path = Path(report.filename)
        settings = resolver.for_file(path)
        try:
            outcome = add_noqa(path, report.path, settings.rules_for(path), reason, settings.target_for(path))
        except UnreadableSource as error:
            errors.append(f"{report.path}: {error.reason}; not changed")
            continue
        if outcome.error:
            errors.append(f"{report.path}: {outcome.error}")
            continue
        if outcome.outcome is None:
            continue
        try:
            with uninterrupted():
                write_fixed(str(path), outcome.outcome)
        except WriteError as error:
            errors.append(f"{report.path}: {error}")
            continue
        added += outcome.added
        files += 1
    if not quiet:
        click.echo(f"Added {count(added, 'noqa directive')} to {count(files, 'file')}.")
    for message in errors:
        _error(terminal(message))
    sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)


def _output_format(given: Optional[str], statistics: bool) -> str:
    """The format asked for; else github inside GitHub Actions (unless counting), else full."""
    if given is None:
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" and not statistics else "full"
    if statistics and given not in STATISTICS_FORMATS:
        raise click.UsageError(f"--statistics prints counts per rule, which --output-format {given} cannot show; "
                               f"use one of {', '.join(STATISTICS_FORMATS)}")
    return given


def _runtime_options(runtime: bool, entry: Optional[str], timeout: float, memory: str,
                     jobs: Optional[int], scripts: bool = True, budget: float = 600.0):
    if not runtime:
        if entry:
            raise click.UsageError("--entry needs --runtime")
        return None
    from torchlint.runtime.check import RuntimeOptions, parse_entry

    try:
        parsed_entry = parse_entry(entry, str(Path.cwd())) if entry else None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--entry")
    return RuntimeOptions(entry=parsed_entry, timeout=timeout, memory=_size(memory, "--runtime-memory"),
                          jobs=jobs or os.cpu_count() or 1, scripts=scripts, budget=budget)


def _size(text: str, option: str) -> int:
    """``4G``, ``512M``, ``1.5GiB``, ``1000000`` -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text, re.IGNORECASE)
    if not match:
        raise click.BadParameter(f"{text!r} is not a size like 4G or 512M", param_hint=option)
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


# The heading of what --runtime showed of each file's fixes (--fix or --diff).
_PROOFS = "Fixes run as the file was and as fixed"


@dataclass
class RuntimeOutcome:
    note: str  # what isolation this machine lacked ("" when none)
    entry_failure: Optional[str]  # why the --entry program failed; None when it did not
    style: int  # findings not run because no run could show them wrong
    proofs: dict  # report.path -> FixProof, with --fix or --diff
    judged: list[FileReport]  # the reports the verdicts were given on


def _run_runtime(reports: list[FileReport], options, resolver: SettingsResolver, quiet: bool,
                 parser: str, prove=None) -> RuntimeOutcome:
    """Give every finding a runtime verdict; with ``prove`` (the fixes allowed), also run
    each file as it would be fixed, beside the file as it is."""
    from torchlint.engine.fixer import fix_source
    from torchlint.runtime.check import RuntimeCheck, RuntimeUnavailable

    def fixed_with(allowed) -> Callable[[FileReport], Optional[str]]:
        def fixed(report: FileReport) -> Optional[str]:
            path = Path(report.filename)
            settings = resolver.for_file(path)
            outcome = fix_source(report.source, report.path, settings.rules_for(path), allowed, path,
                                 Project(parser=parser), settings.target_for(path))
            return outcome.text if outcome.changed and not outcome.error else None
        return fixed

    with _progress(quiet) as progress:
        check = RuntimeCheck(options, fixed_with(allowed_applicabilities(True)), progress,
                             fixes_to_prove=fixed_with(prove) if prove is not None else None)
        try:
            check.run(reports)
        except RuntimeUnavailable as error:
            _fail(str(error))
    return RuntimeOutcome(check.isolation_note, check.entry_failure, check.style, check.proofs, reports)


def _carry_verdicts(judged: list[FileReport], reports: list[FileReport]) -> None:
    """The verdicts given to the findings as they were, on the findings that remain after
    the fixes: the same rule and message, in the same order, in the same file."""
    verdicts: dict[tuple, list] = {}
    for report in judged:
        for d in report.diagnostics:
            verdicts.setdefault((report.path, d.code, d.message), []).append(d.runtime)
    for report in reports:
        seen: Counter = Counter()
        for d in report.diagnostics:
            key = (report.path, d.code, d.message)
            candidates = verdicts.get(key, [])
            if d.runtime is None and seen[key] < len(candidates):
                d.runtime = candidates[seen[key]]
            seen[key] += 1


@contextlib.contextmanager
def _progress(quiet: bool):
    """A progress bar on a terminal; nothing when standard error is not one."""
    stream = sys.stderr
    if quiet or not stream.isatty():
        yield None
        return
    try:
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield None
        return
    columns = (TextColumn("runtime check"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("starting torch", total=None)

        def update(label: str, done: int, total: int) -> None:
            bar.update(task, description=escape(terminal(label)), completed=done, total=total)

        yield update


class FixPlan:
    """What ``check`` was asked to do with fixes, and what came of it per file."""

    def __init__(self, mode: Optional[str], allowed):
        self.mode = mode  # None (report only), "fix" (write) or "diff" (show)
        self.allowed = allowed
        self.outcomes: dict[int, "FixOutcome"] = {}  # id(report) -> outcome
        self.stdin_fixed: Optional[bytes] = None  # with --fix on standard input: what to print

    @property
    def fix_mode(self) -> Optional[batch.FixMode]:
        return batch.FixMode(write=self.mode == "fix", allowed=self.allowed) if self.mode else None

    def fixed_counts(self, reports: list[FileReport]) -> Counter:
        total: Counter = Counter()
        for report in reports:
            if id(report) in self.outcomes:
                total.update(self.outcomes[id(report)].fixed)
        return total


def _finish_diff(reports: list[FileReport], plan: FixPlan, out, quiet: bool) -> int:
    """Print the fixes as a diff; the exit status."""
    changed = 0
    fixes = 0
    for report in reports:
        outcome = plan.outcomes.get(id(report))
        if outcome is not None and outcome.changed:
            if report.filename.lower().endswith(".ipynb"):
                from torchlint.engine.notebook import changed_cells

                # Per cell, as the notebook shows them, not a diff of its JSON.
                # A cell's last line has no line break by convention: no "\ No newline" notes.
                for number, before, after in changed_cells(outcome.source.text, outcome.text):
                    write_diff(f"{report.path}:cell {number}", _ended(before), _ended(after), out)
            else:
                write_diff(report.path, outcome.source.text, outcome.text, out)
            changed += 1
            fixes += sum(outcome.fixed.values())
    if not quiet:
        message = f"Would fix {count(fixes, 'finding')} in {count(changed, 'file')}." if fixes else "No fixes available."
        click.echo(message, err=True)
    errors = any(outcome.error for outcome in plan.outcomes.values()) or any(r.internal_error for r in reports)
    return EXIT_ERROR if errors else EXIT_FINDINGS if changed else EXIT_CLEAN


def _ended(text: str) -> str:
    return text if not text or text.endswith(("\n", "\r")) else text + "\n"


def _cache_folder(given: Optional[Path], resolver: SettingsResolver) -> Path:
    """--cache-dir, else .torchlint_cache beside the configuration that applies to the
    current folder, else in the current folder."""
    if given is not None:
        return given if given.is_absolute() else resolver.cwd / given
    return resolver.for_directory(resolver.cwd).root / DEFAULT_CACHE_FOLDER


def _lint_paths(resolver: SettingsResolver, paths: list[str], force_exclude: Optional[bool],
                show_files: bool, plan: FixPlan, workers: int,
                cache_folder: Optional[Path], keep_source: bool,
                limits: batch.FileLimits, parser: str, skip: frozenset = frozenset(),
                progress: bool = False) -> Optional[list[FileReport]]:
    """``skip``: files (as reports name them) left out of this pass. With ``progress``, a
    run of many files shows how far it got on standard error, when that is a terminal."""
    found = discover(paths, resolver, force_exclude, seconds=limits.seconds)
    if skip:
        found.files = [candidate for candidate in found.files if str(candidate.path) not in skip]
    if show_files:
        for candidate in sorted(found.files, key=lambda c: c.display):
            click.echo(terminal(candidate.display))
        return None
    reports = []
    for problem in found.problems:
        reports.append(FileReport(problem.display, [unlintable(problem.display, problem.reason)],
                                  filename=str(problem.path)))
    jobs = batch.jobs_for(found.files, parser)
    line = _ProgressLine(len(jobs)) if progress and len(jobs) >= _ProgressLine.FILES and _stderr_is_a_terminal() \
        else None
    for report, outcome in batch.run(jobs, workers, plan.fix_mode, cache_folder, keep_source, limits):
        if outcome is not None:
            plan.outcomes[id(report)] = outcome
        reports.append(report)
        if line is not None:
            line.advance()
    if line is not None:
        line.clear()
    return reports


def _stderr_is_a_terminal() -> bool:
    try:
        return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


class _ProgressLine:
    """``torchlint: 1,200 of 5,000 files`` on standard error, redrawn at most ten times a
    second and erased at the end, for a plain check of many files on a terminal."""

    FILES = 200  # fewer files lint in about a second: no line

    def __init__(self, total: int):
        self.total = total
        self.done = 0
        self.shown_at = 0.0

    def advance(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.shown_at >= 0.1 or self.done == self.total:
            self.shown_at = now
            sys.stderr.write(f"\r\x1b[Ktorchlint: {self.done:,} of {self.total:,} files")
            sys.stderr.flush()

    def clear(self) -> None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


_FILE_LIMIT = f"{MAX_FILE_BYTES / 1024 / 1024:g} MiB"


def _lint_stdin(resolver: SettingsResolver, stdin_filename: Optional[str],
                force_exclude: Optional[bool], plan: FixPlan, keep_source: bool,
                limits: batch.FileLimits, parser: str) -> list[FileReport]:
    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)  # never more than a file may have
    too_large = len(data) > MAX_FILE_BYTES
    if too_large and plan.mode == "fix":  # the output would be the source, which was not read whole
        _fail(f"standard input is larger than {_FILE_LIMIT}, the most torchlint lints in a file: it was not read "
              f"whole, so nothing was fixed or printed")
    if stdin_filename is None:
        path, display, settings = None, "-", resolver.for_directory(resolver.cwd)
    else:
        path = Path(stdin_filename)
        if not path.is_absolute():
            path = resolver.cwd / path
        settings = resolver.for_file(path)
        forced = settings.force_exclude if force_exclude is None else force_exclude
        if forced and settings.is_excluded(path, anchor=resolver.cwd):
            if plan.mode == "fix":
                plan.stdin_fixed = data
            return []
        display = display_path(path, resolver.cwd)
    if too_large:
        reason = f"standard input is too large (over {_FILE_LIMIT}; torchlint skips files over {_FILE_LIMIT}): " \
                 f"the rest was not read"
        return [FileReport(display, [unlintable(display, reason)], filename=str(path) if path else display)]
    project = Project(parser=parser)
    job = batch.Job(path, display, settings.codes_for(path), project.roots_for(path) if path else (), parser,
                    settings.target_for(path))
    fix = batch.FixMode(write=False, allowed=plan.allowed) if plan.mode else None
    (report, outcome), _ = batch.guarded_lint_job(job, fix, None, project, limits, data=data, keep_source=keep_source)
    if outcome is not None:
        plan.outcomes[id(report)] = outcome
    if plan.mode == "fix":
        changed = outcome is not None and outcome.changed
        plan.stdin_fixed = outcome.text.encode(outcome.source.encoding) if changed else data
    return [report]


@commands.command(name="clean")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, envvar="TORCHLINT_CACHE_DIR", help=f"The cache to remove (default: {DEFAULT_CACHE_FOLDER} beside the configuration, else in the current folder).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="The configuration file whose folder holds the cache.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files: the cache of the current folder.")
def clean_command(cache_dir: Optional[Path], config_path: Optional[Path], isolated: bool) -> None:
    """Remove the cache `check` keeps (only what torchlint wrote in it)."""
    from torchlint.engine.cache import clean, is_cache

    try:
        resolver = SettingsResolver(Options(), config=config_path, isolated=isolated)
    except ConfigError as error:
        _fail(str(error))
        return
    folder = _cache_folder(cache_dir, resolver)
    if not folder.is_dir():
        click.echo(f"No cache at {terminal(str(folder))}.")
        return
    if not is_cache(folder):
        _fail(f"{folder} is not torchlint's cache (it has no torchlint CACHEDIR.TAG); nothing was removed")
        return
    removed = clean(folder)
    where = "" if not folder.exists() else " (the folder holds other files, which were left)"
    click.echo(f"Removed {count(removed, 'cached result')} from {terminal(str(folder))}{where}.")


@commands.command(name="rule")
@click.argument("rule")
def rule_command(rule: str) -> None:
    """Print the documentation of a rule, by code (TL102) or name (data-inplace)."""
    if rule.upper() == UNLINTABLE_FILE.code or rule == UNLINTABLE_FILE.name:
        click.echo(UNLINTABLE_FILE.documentation())
        return
    from torchlint.rules import rule_by_name_or_code

    found = rule_by_name_or_code(rule)
    if found is None:
        _fail(f"unknown rule {rule!r}; `torchlint rules` lists them")
        return
    click.echo(found.documentation())


@commands.command(name="rules")
@click.option("--output-format", type=click.Choice(("text", "json")), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, fix availability, whether it is on by default."""
    from torchlint.rules import all_rules

    rows = [
        {
            "code": rule.code,
            "name": rule.name,
            "fix": rule.fix.value if rule.fix is not None else None,
            "default": rule.default_enabled,
            "summary": rule.summary,
        }
        for rule in (UNLINTABLE_FILE, *all_rules().values())
    ]
    if output_format == "json":
        import json

        click.echo(json.dumps(rows, indent=2))
        return
    name_width = max(len(row["name"]) for row in rows)
    click.echo(f"{'code':<6} {'name':<{name_width}} {'fix':<12} {'default':<7} summary")
    for row in rows:
        fix = row["fix"] or "-"
        default = "yes" if row["default"] else "no"
        click.echo(f"{row['code']:<6} {row['name']:<{name_width}} {fix:<12} {default:<7} {row['summary']}")


@commands.command(name="server")
@click.option("--stdio", is_flag=True, help="Talk over standard input/output (the only transport; editors may pass it).")
def server_command(stdio: bool) -> None:
    """Run the language server (LSP over standard input/output) for editors."""
    try:
        from torchlint.integrations.lsp import serve
    except ImportError as error:
        _fail(f"the language server needs pygls ({error}); install the `lsp` extra: `pip install -e '.[lsp]'` in a "
              f"checkout of torchlint, or `pip install pygls` (see the README's Installation)")
        return
    serve()
