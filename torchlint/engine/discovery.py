"""Which files to lint.

Directories are walked (without following symlinked folders), keeping ``.py``,
``.pyi`` and ``.ipynb`` files and skipping what is excluded (the defaults, ``exclude``,
``extend-exclude``), what ``.gitignore`` files ignore, virtual environments and
Jupyter's ``.ipynb_checkpoints`` (autosaved copies of notebooks).
Files named explicitly are always linted, unless ``--force-exclude`` applies the
exclusions to them too.  Problems on the way (a path that does not exist, a folder
that cannot be read) are returned as ``Problem``s; the walk goes on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pathspec

from torchlint.syntax.source import UnreadableSource, printable, read_bytes
from torchlint.engine.config import Settings, SettingsResolver

LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")
_MAX_IGNORE_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Candidate:
    path: Path  # absolute
    display: str  # what reports call it
    settings: Settings


@dataclass(frozen=True)
class Problem:
    path: Path
    display: str
    reason: str


@dataclass
class Discovery:
    files: list[Candidate] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def display_path(path: Path, cwd: Path) -> str:
    """How reports name ``path``: relative to ``cwd`` when below it, printable even when
    the name is not valid UTF-8."""
    try:
        return printable(path.relative_to(cwd).as_posix())
    except ValueError:
        return printable(str(path))


class _GitIgnore:
    """The .gitignore files that apply to a folder, outermost first."""

    def __init__(self, chain: tuple[tuple[Path, pathspec.PathSpec], ...] = ()):
        self.chain = chain

    @staticmethod
    def _load(folder: Path, name: str = ".gitignore") -> Optional[pathspec.PathSpec]:
        try:
            lines = read_bytes(str(folder / name), _MAX_IGNORE_FILE_BYTES).decode("utf-8", "replace").splitlines()
        except UnreadableSource:
            return None
        return pathspec.GitIgnoreSpec.from_lines(lines)

    @classmethod
    def for_folder(cls, folder: Path) -> "_GitIgnore":
        """The chain from the enclosing git repository's root (if any) down to ``folder``.

        A folder named on the command line is linted even if an outer .gitignore
        ignores it; then only the .gitignore files inside it apply."""
        chain = cls._chain(folder)
        if chain.ignores(folder, is_dir=True):
            return cls(tuple(entry for entry in chain.chain if entry[0] == folder))
        return chain

    @classmethod
    def _chain(cls, folder: Path) -> "_GitIgnore":
        folders = [folder]
        root = None
        for parent in (folder, *folder.parents):
            if os.path.exists(parent / ".git"):
                root = parent
                break
        if root is not None:
            folders = [folder] + [p for p in folder.parents if p == root or root in p.parents]
        chain = []
        for current in reversed(folders):
            if current == root:
                spec = cls._load(current / ".git" / "info", "exclude")
                if spec is not None:
                    chain.append((current, spec))
            spec = cls._load(current)
            if spec is not None:
                chain.append((current, spec))
        return cls(tuple(chain))

    def descend(self, folder: Path) -> "_GitIgnore":
        spec = self._load(folder)
        return _GitIgnore(self.chain + ((folder, spec),)) if spec is not None else self

    def ignores(self, path: Path, is_dir: bool) -> bool:
        ignored = False
        for base, spec in self.chain:
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            result = spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                ignored = result.include
        return ignored


def _is_virtualenv(folder: Path) -> bool:
    # os.path predicates answer False for folders we may not look into (pathlib raises).
    return os.path.isfile(folder / "pyvenv.cfg") or os.path.isdir(folder / "conda-meta")


def discover(paths: list[str], resolver: SettingsResolver, force_exclude: Optional[bool] = None) -> Discovery:
    cwd = resolver.cwd
    found = Discovery()
    seen: set[Path] = set()

    def add(path: Path, settings: Settings) -> None:
        key = path.resolve() if os.path.exists(path) else path
        if key not in seen:
            seen.add(key)
            found.files.append(Candidate(path, display_path(path, cwd), settings))

    for raw in paths:
        path = Path(raw)
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        if os.path.isdir(path):
            _walk(path, resolver, add, found, cwd, force_exclude)
        elif os.path.lexists(path):
            settings = resolver.for_file(path)
            forced = settings.force_exclude if force_exclude is None else force_exclude
            if forced and settings.is_excluded(path, anchor=cwd):
                continue
            add(path, settings)
        else:
            found.problems.append(Problem(path, display_path(path, cwd), "no such file or directory"))
    return found


def _walk(start: Path, resolver: SettingsResolver, add, found: Discovery, cwd: Path,
          force_exclude: Optional[bool]) -> None:
    settings = resolver.for_directory(start)
    forced = settings.force_exclude if force_exclude is None else force_exclude
    # A folder named on the command line is walked even if it is excluded (unless
    # forced); the patterns are then matched below it only.
    start_excluded = settings.is_excluded(start, is_dir=True, anchor=cwd)
    if start_excluded and forced:
        return
    below_start = start if start_excluded else None
    stack = [(start, _GitIgnore.for_folder(start))]
    while stack:
        folder, gitignore = stack.pop()
        settings = resolver.for_directory(folder)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            found.problems.append(
                Problem(folder, display_path(folder, cwd), f"cannot list the folder: {error.strerror or error}")
            )
            continue
        subfolders = []
        for entry in entries:
            path = folder / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if settings.is_excluded(path, is_dir=is_dir, anchor=start, only_below=below_start):
                continue
            if settings.respect_gitignore and gitignore.ignores(path, is_dir):
                continue
            if is_dir:
                if entry.name != ".ipynb_checkpoints" and not _is_virtualenv(path):
                    subfolders.append(path)
            elif entry.name.endswith(LINTED_SUFFIXES):
                add(path, settings)
        for subfolder in reversed(subfolders):
            stack.append((subfolder, gitignore.descend(subfolder)))
