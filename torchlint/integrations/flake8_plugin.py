"""flake8 plugin: torchlint's findings as flake8 violations with the ``TL`` prefix.

Registered under ``flake8.extension`` as ``TL`` (pyproject.toml).  Each file is linted
once, from the lines flake8 already read, by the same engine as ``torchlint check``:
the rules are those torchlint's own configuration selects for the file (its defaults,
or ``[tool.torchlint]`` of the nearest pyproject.toml), and flake8's ``--select`` /
``--ignore`` / ``# noqa`` filter them further.  torch is never imported.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Optional

from torchlint import __version__
from torchlint.syntax.source import SourceText
from torchlint.analysis.project import Project
from torchlint.engine.config import Options, SettingsResolver
from torchlint.engine.linter import lint_source
from torchlint.output.escape import terminal

# flake8 may check many files in one process: share the configuration lookups and the
# analysed modules that cross-file evidence needs, as one `torchlint check` run does.
_resolver: Optional[SettingsResolver] = None
_project = Project()

# What flake8 calls a file it read from standard input without --stdin-display-name.
_STDIN_NAMES = ("stdin", "-")


def _settings_resolver() -> SettingsResolver:
    global _resolver
    if _resolver is None:
        _resolver = SettingsResolver(Options())
    return _resolver


class TorchlintChecker:
    name = "torchlint"
    version = __version__

    # flake8 passes arguments by these names; asking for `tree` makes this an AST plugin,
    # the kind that runs once per file (the engine parses the file itself).
    def __init__(self, tree, lines: list[str], filename: str):
        self.lines = lines
        self.filename = filename
        # Resolved here, not in run(): flake8 reports an exception raised while it builds
        # the plugin (a bad [tool.torchlint]) as a clean error, one raised in run() as a traceback.
        resolver = _settings_resolver()
        if filename in _STDIN_NAMES:
            self.path = None
            settings = resolver.for_directory(resolver.cwd)
        else:
            self.path = Path(os.path.abspath(filename))
            settings = resolver.for_file(self.path)
        self.rules = settings.rules_for(self.path)
        self.target = settings.target_for(self.path)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        source = SourceText(text, "utf-8", text.encode("utf-8", errors="surrogatepass"))
        project = _project if self.path is not None else None
        report = self.target.apply(lint_source(source, self.filename, self.rules, self.path, project))
        for diagnostic in report.diagnostics:
            # torchlint's columns are 1-based characters; flake8 wants 0-based ones (it adds 1).
            yield diagnostic.row, diagnostic.column - 1, f"{diagnostic.code} {terminal(diagnostic.message)}", type(self)
