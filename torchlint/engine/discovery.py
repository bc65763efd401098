"""Which files to lint.

Directories are walked (without following symlinked folders), keeping ``.py``,
``.pyi`` and ``.ipynb`` files and skipping what is excluded (the defaults, ``exclude``,
``extend-exclude``), what ``.gitignore`` files ignore, virtual environments and
Jupyter's ``.ipynb_checkpoints`` (autosaved copies of notebooks).
Files named explicitly are always linted, unless ``--force-exclude`` applies the
exclusions to them too.  Problems on the way (a path that does not exist, a folder
that cannot be read) are returned as ``Problem``s; the walk goes on.

A symbolic link is followed only where it leads inside its project: a file found by a
walk, or named through a link to it or to a folder above it, whose target is elsewhere
is a ``Problem`` naming the link (never its target), and is neither read nor written.
The project of a walk is the folder walked; that of a path named on the command line
is ``enclosing_project``'s.  A link that stays inside is linted as its target (the
candidate's ``path`` is the target's real path; reports name the link).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from torchlint.syntax.source import FILE_NOT_FOUND, SYMLINK_LOOP, UnreadableSource, printable, read_bytes
from torchlint.engine.config import CONFIG_NAMES, Settings, SettingsResolver
from torchlint.engine.patterns import PatternList

LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")
OUTSIDE_LINK = "symbolic link to a file outside the project: not read"
_PROJECT_MARKERS = (".git", *CONFIG_NAMES)
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

    def __init__(self, chain: tuple[tuple[Path, PatternList], ...] = ()):
        self.chain = chain

    @staticmethod
    def _load(folder: Path, name: str = ".gitignore") -> Optional[PatternList]:
        try:
            return PatternList.from_gitignore(read_bytes(str(folder / name), _MAX_IGNORE_FILE_BYTES))
        except UnreadableSource:
            return None

    @classmethod
    def for_folder(cls, folder: Path) -> "_GitIgnore":
        """The chain from the enclosing git repository's root (if any) down to ``folder``.

        A folder named on the command line is linted even if an outer .gitignore
        ignores it (or a folder above it); then only the .gitignore files inside it apply."""
        chain = cls._chain(folder)
        if any(chain.ignores(current, is_dir=True) for current in (*reversed(folder.parents), folder)):
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
        """Whether the deepest .gitignore that has a say on ``path`` ignores it (its
        folders are not looked at: a walk does not go into an ignored folder)."""
        ignored = False
        for base, patterns in self.chain:
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            decided = patterns.decide(relative, is_dir) if relative != "." else None
            if decided is not None:
                ignored = decided
        return ignored


def _is_virtualenv(folder: Path) -> bool:
    # os.path predicates answer False for folders we may not look into (pathlib raises).
    return os.path.isfile(folder / "pyvenv.cfg") or os.path.isdir(folder / "conda-meta")


def discover(paths: list[str], resolver: SettingsResolver, force_exclude: Optional[bool] = None,
             seconds: Optional[float] = None) -> Discovery:
    """The files to lint under ``paths``. The search stops after ``seconds`` (a repository's
    .gitignore files and settings decide its cost), with a problem where it stopped."""
    cwd = resolver.cwd
    found = Discovery()
    deadline = _Deadline(seconds)
    seen: set[Path] = set()

    def add(path: Path, settings: Settings, shown: Optional[Path] = None) -> None:
        """Lint the file at ``path``, found as ``shown`` (a link to it) when that is another name."""
        key = path.resolve() if os.path.exists(path) else path
        if key not in seen:
            seen.add(key)
            found.files.append(Candidate(path, display_path(shown or path, cwd), settings))

    named = _NamedPaths(cwd)
    for raw in paths:
        path = Path(raw)
        if not path.is_absolute():
            path = cwd / path
        path = Path(os.path.normpath(path))
        if not os.path.lexists(path):
            found.problems.append(Problem(path, display_path(path, cwd), "no such file or directory"))
            continue
        try:
            reached = named.resolve(path)
        except _NotFollowed as refused:
            found.problems.append(Problem(path, display_path(path, cwd), refused.reason))
            continue
        if deadline.passed():
            found.problems.append(Problem(path, display_path(path, cwd), deadline.reason()))
            break
        if os.path.isdir(reached):
            _walk(path, resolver, add, found, cwd, force_exclude, deadline)
        else:
            settings = resolver.for_file(path)
            forced = settings.force_exclude if force_exclude is None else force_exclude
            if forced and settings.is_excluded(path, anchor=cwd):
                continue
            add(reached, settings, path)
    return found


def enclosing_project(path: Path, cwd: Path) -> Path:
    """The project of ``path``, named on the command line (``_NamedPaths.project``)."""
    return _NamedPaths(cwd).project(path)


class _NotFollowed(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _NamedPaths:
    """What to lint for each path named on the command line.  What is learnt of a folder
    is kept for the next path: pre-commit names thousands of files."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self._projects: dict[tuple[Path, bool], Path] = {}
        self._links: dict[str, bool] = {}

    def resolve(self, path: Path) -> Path:
        """``path`` itself, or, when it or a folder on its way from its project is a
        symbolic link, the real path it leads to (_NotFollowed when that is outside)."""
        root = self.project(path)
        parts = path.parts
        on_the_way = [os.path.join(*parts[:length]) for length in range(len(root.parts) + 1, len(parts))]
        if not os.path.islink(path) and not any(self._is_link(folder) for folder in on_the_way):
            return path
        return _follow(path, Path(os.path.realpath(root)))

    def project(self, path: Path) -> Path:
        """The nearest folder above ``path`` that holds ``.git`` or a configuration file;
        else the current folder when ``path`` is in it; else the folder holding ``path``.
        A folder reached through a symbolic link (below the current folder, when ``path``
        is in it) is passed over, and all below it: where a link leads is not its project."""
        in_cwd = path == self.cwd or _below(path, self.cwd)
        key = (path.parent, in_cwd)
        if key not in self._projects:
            self._projects[key] = self._marked(path.parent, len(self.cwd.parts) if in_cwd else 1) or \
                (self.cwd if in_cwd else path.parent)
        return self._projects[key]

    def _marked(self, folder: Path, trusted: int) -> Optional[Path]:
        """The nearest of ``folder`` and the folders above it holding a project's marker,
        among those not reached through a link below the first ``trusted`` parts."""
        parts = folder.parts
        candidates = []
        for length in range(1, len(parts) + 1):  # from the root of the file system down
            current = os.path.join(*parts[:length])
            if length > trusted and self._is_link(current):
                break
            candidates.append(current)
        for current in reversed(candidates):
            if any(os.path.exists(os.path.join(current, marker)) for marker in _PROJECT_MARKERS):
                return Path(current)
        return None

    def _is_link(self, folder: str) -> bool:
        if folder not in self._links:
            self._links[folder] = os.path.islink(folder)
        return self._links[folder]


def _below(path: Path, folder: Path) -> bool:
    """``path`` is inside ``folder`` (both absolute and normalized): cheaper than ``.parents``."""
    return len(path.parts) > len(folder.parts) and path.parts[:len(folder.parts)] == folder.parts


def _follow(link: Path, project: Path) -> Path:
    """The real path ``link`` leads to, when that is inside ``project`` (a real path) and
    is there; else _NotFollowed, without a word of the target."""
    real = Path(os.path.realpath(link))
    if real != project and not _below(real, project):
        raise _NotFollowed(OUTSIDE_LINK)
    if os.path.islink(real):  # realpath stops at a link it cannot resolve
        raise _NotFollowed(SYMLINK_LOOP)
    if not os.path.lexists(real):
        raise _NotFollowed(FILE_NOT_FOUND)
    return real


class _Deadline:
    def __init__(self, seconds: Optional[float]):
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() > self.at

    def reason(self) -> str:
        return (f"the search for files to lint stopped here after {self.seconds:g} s (--file-timeout), so what "
                "lies further was not searched; a costly .gitignore or exclude pattern may be the cause")


def _walk(start: Path, resolver: SettingsResolver, add, found: Discovery, cwd: Path,
          force_exclude: Optional[bool], deadline: _Deadline = _Deadline(None)) -> None:
    settings = resolver.for_directory(start)
    forced = settings.force_exclude if force_exclude is None else force_exclude
    # A folder named on the command line is walked even if it is excluded (unless
    # forced); the patterns are then matched below it only.
    start_excluded = settings.is_excluded(start, is_dir=True, anchor=cwd)
    if start_excluded and forced:
        return
    below_start = start if start_excluded else None
    project = Path(os.path.realpath(start))
    stack = [(start, _GitIgnore.for_folder(start))]
    while stack:
        folder, gitignore = stack.pop()
        if deadline.passed():
            found.problems.append(Problem(folder, display_path(folder, cwd), deadline.reason()))
            return
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
            if deadline.passed():
                found.problems.append(Problem(folder, display_path(folder, cwd), deadline.reason()))
                return
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
                _add_entry(entry, path, project, settings, add, found, cwd)
        for subfolder in reversed(subfolders):
            stack.append((subfolder, gitignore.descend(subfolder)))


def _add_entry(entry: os.DirEntry, path: Path, project: Path, settings: Settings, add, found: Discovery,
               cwd: Path) -> None:
    """A file the walk keeps; a symbolic link to one only when it leads inside ``project``."""
    if not entry.is_symlink():
        add(path, settings)
        return
    try:
        add(_follow(path, project), settings, path)
    except _NotFollowed as refused:
        found.problems.append(Problem(path, display_path(path, cwd), refused.reason))
