"""Lint a file from its path or bytes, whatever kind of file it is: a Python source
(linter.py) or a Jupyter notebook (notebook.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from torchlint.syntax.source import UnreadableSource, decode, read_bytes
from torchlint.analysis.project import Project
from torchlint.framework.diagnostics import FileReport, unlintable
from torchlint.framework.rule import Rule
from torchlint.engine.linter import lint_source
from torchlint.engine.notebook import is_notebook, lint_notebook


def lint_path(path: str, display_path: str, rules: Sequence[type[Rule]],
              project: Optional[Project] = None) -> FileReport:
    """Read, decode and lint the file at ``path``."""
    try:
        data = read_bytes(path, follow_symlinks=False)  # discovery resolved the links
    except UnreadableSource as error:
        return FileReport(display_path, [unlintable(display_path, error.reason, error.row, error.column)])
    return lint_bytes(data, display_path, rules, Path(path), project)


def lint_bytes(data: bytes, display_path: str, rules: Sequence[type[Rule]],
               file_path: Optional[Path] = None, project: Optional[Project] = None) -> FileReport:
    """Decode and lint source bytes (from a file, or standard input named ``file_path``)."""
    if is_notebook(file_path):
        return lint_notebook(data, display_path, rules, file_path, project)
    try:
        source = decode(data)
    except UnreadableSource as error:
        return FileReport(display_path, [unlintable(display_path, error.reason, error.row, error.column)])
    return lint_source(source, display_path, rules, file_path, project)
