"""The ``torchlint`` command line.

    torchlint check [PATHS]...   lint files and folders (default: the current folder)
    torchlint rule CODE|NAME     a rule's documentation
    torchlint rules              the rule table

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from torchlint import __version__
from torchlint.config import ConfigError, Options, SettingsResolver
from torchlint.discovery import discover, display_path
from torchlint.linter import FileReport, lint_bytes, lint_path, unlintable
from torchlint.project import Project
from torchlint.report import (
    OUTPUT_FORMATS,
    summary,
    write_concise,
    write_full,
    write_json,
    write_statistics,
)
from torchlint.rule import UNLINTABLE_FILE, all_rules, rule_by_name_or_code

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--select TL1,TL2 --select TL3`` -> ("TL1", "TL2", "TL3")."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _per_file_ignores(values: tuple[str, ...]) -> Optional[tuple[tuple[str, tuple[str, ...]], ...]]:
    if not values:
        return None
    entries = []
    for value in values:
        pattern, separator, codes = value.rpartition(":")
        if not separator or not pattern:
            raise click.BadParameter(f"{value!r} is not PATTERN:CODE[,CODE...]", param_hint="--per-file-ignores")
        entries.append((pattern, _split((codes,))))
    return tuple(entries)


def _fail(message: str) -> None:
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="torchlint")
def main() -> None:
    """A linter for PyTorch autograd and aliasing mistakes."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="RULES", help="Rules to enable (codes, prefixes like TL1, names, or ALL); replaces the configured selection.")
@click.option("--extend-select", multiple=True, metavar="RULES", help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, metavar="RULES", help="Rules to disable.")
@click.option("--per-file-ignores", multiple=True, metavar="PATTERN:RULES", help="Disable rules for files matching a glob, e.g. 'tests/*:TL101'; replaces the configured table.")
@click.option("--exclude", multiple=True, metavar="GLOBS", help="Paths to exclude; replaces the default exclusions.")
@click.option("--extend-exclude", multiple=True, metavar="GLOBS", help="Paths to exclude on top of the defaults.")
@click.option("--force-exclude/--no-force-exclude", default=None, help="Apply exclusions to files named on the command line too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files ignored by .gitignore (default: on).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Use this configuration file instead of the nearest pyproject.toml.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="full", show_default=True, help="How to print findings.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--stdin-filename", metavar="NAME", help="The name to use for source read from standard input ('-').")
@click.option("--show-files", is_flag=True, help="List the files that would be linted, and exit.")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: Optional[bool],
    respect_gitignore: Optional[bool],
    config_path: Optional[Path],
    isolated: bool,
    output_format: str,
    statistics: bool,
    exit_zero: bool,
    quiet: bool,
    stdin_filename: Optional[str],
    show_files: bool,
) -> None:
    """Lint PATHS (files or folders; default: the current folder; '-' for standard input)."""
    cli = Options(
        select=_split(select) if select else None,
        extend_select=_split(extend_select),
        ignore=_split(ignore),
        per_file_ignores=_per_file_ignores(per_file_ignores),
        exclude=_split(exclude) if exclude else None,
        extend_exclude=_split(extend_exclude),
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
    )
    try:
        resolver = SettingsResolver(cli, config=config_path, isolated=isolated)
        use_stdin = paths == ("-",) or (not paths and stdin_filename is not None)
        if "-" in paths and not use_stdin:
            raise click.UsageError("'-' (standard input) cannot be combined with other paths")
        if use_stdin:
            reports = _lint_stdin(resolver, stdin_filename, force_exclude)
        else:
            reports = _lint_paths(resolver, list(paths) or ["."], force_exclude, show_files)
            if reports is None:
                return
    except ConfigError as error:
        _fail(str(error))
        return

    reports.sort(key=lambda report: report.path)
    out = click.get_text_stream("stdout")
    if statistics:
        write_statistics(reports, output_format, out)
    elif output_format == "json":
        write_json(reports, out)
    elif output_format == "concise":
        write_concise(reports, out)
    else:
        write_full(reports, out)
    if not quiet and output_format != "json":
        click.echo(summary(reports))

    internal_errors = [report.internal_error for report in reports if report.internal_error]
    for message in internal_errors:
        click.echo(f"torchlint: {message}", err=True)
    if internal_errors:
        sys.exit(EXIT_ERROR)
    has_findings = any(report.diagnostics for report in reports)
    sys.exit(EXIT_FINDINGS if has_findings and not exit_zero else EXIT_CLEAN)


def _lint_paths(resolver: SettingsResolver, paths: list[str], force_exclude: Optional[bool],
                show_files: bool) -> Optional[list[FileReport]]:
    found = discover(paths, resolver, force_exclude)
    if show_files:
        for candidate in sorted(found.files, key=lambda c: c.display):
            click.echo(candidate.display)
        return None
    project = Project()
    reports = []
    for problem in found.problems:
        reports.append(FileReport(problem.display, [unlintable(problem.display, problem.reason)],
                                  filename=str(problem.path)))
    for candidate in found.files:
        rules = candidate.settings.rules_for(candidate.path)
        report = lint_path(str(candidate.path), candidate.display, rules, project)
        report.filename = str(candidate.path)
        reports.append(report)
    return reports


def _lint_stdin(resolver: SettingsResolver, stdin_filename: Optional[str],
                force_exclude: Optional[bool]) -> list[FileReport]:
    data = click.get_binary_stream("stdin").read()
    if stdin_filename is None:
        return [lint_bytes(data, "-", resolver.for_directory(resolver.cwd).rules_for(None))]
    path = Path(stdin_filename)
    if not path.is_absolute():
        path = resolver.cwd / path
    settings = resolver.for_file(path)
    forced = settings.force_exclude if force_exclude is None else force_exclude
    if forced and settings.is_excluded(path, anchor=resolver.cwd):
        return []
    display = display_path(path, resolver.cwd)
    report = lint_bytes(data, display, settings.rules_for(path), path, Project())
    report.filename = str(path)
    return [report]


@main.command(name="rule")
@click.argument("rule")
def rule_command(rule: str) -> None:
    """Print the documentation of a rule, by code (TL102) or name (data-inplace)."""
    if rule.upper() == UNLINTABLE_FILE.code or rule == UNLINTABLE_FILE.name:
        click.echo(UNLINTABLE_FILE.documentation())
        return
    found = rule_by_name_or_code(rule)
    if found is None:
        _fail(f"unknown rule {rule!r}; `torchlint rules` lists them")
        return
    click.echo(found.documentation())


@main.command(name="rules")
@click.option("--output-format", type=click.Choice(("text", "json")), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, fix availability, whether it is on by default."""
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
