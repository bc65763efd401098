"""What of the machine's filesystem a runtime job may see: the plan the sandbox server
builds its root from (``server._isolate_filesystem``), or Landlock's rules where the
machine has no mount namespace.

A job sees, read-only:

- the system's programs and libraries (``/usr``, ``/lib*``, ``/bin``, ``/sbin``), a few
  files of ``/etc`` that the C library and Python read (no ``shadow``, no ``ssh``, no
  ``ssl`` keys), the CPU description in ``/sys``;
- the Python that runs torchlint: its prefixes and every folder on its ``sys.path``
  (site-packages, torch);
- the project folders the caller names (the linted files' folders, their package roots,
  the folder of ``--entry``).

Nothing else exists for it: no home folder, no ``/tmp`` of the machine, no ``/run`` or
``/var`` (where daemons keep their sockets: Docker, D-Bus, ssh-agent, databases).  Inside
a project folder, sockets and FIFOs (a git fsmonitor socket, say) are covered by an empty
file, and so is every file that can hold the user's credentials rather than the project's
code: each git configuration (``.git/config``, where CI checkouts keep a token, the
submodules' ``.git/modules/**/config``, nested clones' and worktrees'), ``.git`` files,
``.git-credentials``, ``.netrc``, ``.pypirc``, ``.npmrc``, ``.env``, ``.env.*``, ``.envrc``.
Symlinks are never followed: in the view they lead nowhere outside it.
A folder too broad to be a project (``/``, ``/tmp``, the home folder or one above it) is
not exposed whole: only its own ``.py`` files are.  A project folder too big to be
searched for sockets in reasonable time is exposed anyway, and the plan says so:
``sockets_checked`` is then False and jobs get no unix sockets of their own at all
(``confine.install_filter(strict_unix=True)``).
"""

from __future__ import annotations

import collections
import glob
import os
import sys
import time
from dataclasses import dataclass, field

_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd", "group",
        "nsswitch.conf", "host.conf", "hosts", "gai.conf", "protocols", "services", "mime.types",
        "os-release", "debian_version", "alternatives", "fonts", "matplotlibrc")
_SYS = ("/sys/devices/system/cpu", "/sys/devices/system/node")
_BROAD = ("/", "/tmp", "/var/tmp", "/dev/shm", "/home", "/root", "/run", "/var", "/srv", "/mnt",
          "/media", "/opt", "/usr", "/etc")
# Files that hold credentials wherever they are in a project (git configs are found by _secret).
_SECRET_FILES = (".git", ".git-credentials", ".netrc", "_netrc", ".pypirc", ".npmrc", ".env", ".envrc")
_GIT_BULK = ("objects", "lfs")
_SEARCH_ENTRIES = 300_000  # a project folder with more is not searched for sockets
_SEARCH_SECONDS = 5.0


@dataclass
class Plan:
    trees: list[str] = field(default_factory=list)  # folders exposed with what is mounted below them
    files: list[str] = field(default_factory=list)  # single files exposed
    links: list[tuple[str, str]] = field(default_factory=list)  # symlinks on the way: (path, target)
    hidden: list[str] = field(default_factory=list)  # covered by an empty file (Landlock: not readable)
    sockets_checked: bool = True
    unchecked: str = ""  # why not, when not

    def readable(self) -> list[tuple[str, bool]]:
        """(path, recursive) for every tree and file, outermost first."""
        return [(path, True) for path in self.trees] + [(path, False) for path in self.files]


def plan(projects: list[str], home: str) -> Plan:
    """The view for jobs that run the code of ``projects`` (folders) for the user whose
    home folder is ``home``."""
    result = Plan()
    seen: set[str] = set()

    def expose(path: str, tree: bool) -> None:
        real = _follow(path, result.links)
        if real is None or real in seen or covered(real, result.trees):
            return
        seen.add(real)
        if tree:
            result.trees[:] = [other for other in result.trees if not covered(other, [real])]
            result.files[:] = [other for other in result.files if not covered(other, [real])]
            result.trees.append(real)
        else:
            result.files.append(real)

    for path in _SYSTEM:
        if os.path.lexists(path):
            expose(path, True)
    for name in _ETC:
        if os.path.lexists(os.path.join("/etc", name)):
            expose(os.path.join("/etc", name), os.path.isdir(os.path.join("/etc", name)))
    for path in glob.glob(f"/etc/python{sys.version_info[0]}*"):
        expose(path, True)
    for path in _SYS:
        if os.path.isdir(path):
            expose(path, True)
    interpreter = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
                   os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    for path in sorted(interpreter | {entry for entry in sys.path if entry}):
        if os.path.exists(path) and not broad(os.path.realpath(path), home):
            expose(path, os.path.isdir(path))
    searched: set[str] = set()
    for folder in projects:
        real = os.path.realpath(folder)
        if not os.path.isdir(real) or real in searched:
            continue
        searched.add(real)
        if broad(real, home):
            for entry in _python_files(real):
                expose(entry, False)
            continue
        expose(folder, True)
        if not covered(real, [path for path in searched if path != real]):
            _search(real, result)
    result.trees.sort(key=len)
    result.hidden = sorted(set(result.hidden))
    return result


def broad(path: str, home: str) -> bool:
    """A folder that holds far more than a project: exposing it would expose the machine."""
    home = os.path.realpath(home)
    return path in _BROAD or path == home or (home + os.sep).startswith(path + os.sep)


def _python_files(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.path for entry in entries
                    if entry.name.endswith(".py") and entry.is_file(follow_symlinks=False)]
    except OSError:
        return []


def covered(path: str, trees: list[str]) -> bool:
    """Whether ``path`` is one of ``trees`` or inside one."""
    return any(path == tree or path.startswith(tree.rstrip(os.sep) + os.sep) for tree in trees)


def _follow(path: str, links: list[tuple[str, str]]) -> str | None:
    """The real path of ``path``, recording each symlink met on the way (the view must have
    them too, or the path would not resolve inside it); None when it does not exist."""
    parts = [part for part in os.path.abspath(path).split(os.sep) if part]
    current = os.sep
    for _hop in range(64):
        while parts:
            candidate = os.path.join(current, parts[0])
            if os.path.islink(candidate):
                target = os.readlink(candidate)
                if (candidate, target) not in links:
                    links.append((candidate, target))
                rest = parts[1:]
                resolved = os.path.normpath(os.path.join(current, target))
                parts = [part for part in resolved.split(os.sep) if part] + rest
                current = os.sep
                break
            current = candidate
            parts = parts[1:]
        else:
            return current if os.path.lexists(current) else None
    return None


def _search(folder: str, result: Plan) -> None:
    """Add to ``result.hidden`` what in ``folder`` must not reach the job: sockets and FIFOs
    (an outside process may be listening) and secrets (``_secret``).  Links are not followed:
    inside the view they lead nowhere outside it.  ``.git`` folders are searched first, for
    a folder too big to be searched whole still has its tokens covered."""
    deadline = time.monotonic() + _SEARCH_SECONDS
    budget = _SEARCH_ENTRIES
    gits: list[str] = []
    others = collections.deque([folder])
    while gits or others:
        current = gits.pop() if gits else others.popleft()
        in_git = _in_git(current, folder)
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    budget -= 1
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name == ".git" or in_git:
                            if not _git_bulk(entry):
                                gits.append(entry.path)
                        else:
                            others.append(entry.path)
                    elif not entry.is_file(follow_symlinks=False) or _secret(entry.name, in_git):
                        result.hidden.append(entry.path)
        except OSError as error:
            _give_up(result, f"{current} cannot be searched for sockets ({error.strerror or error})")
            return
        if budget < 0 or time.monotonic() > deadline:
            _give_up(result, f"{folder} is too big to be searched for sockets")
            return


def _in_git(path: str, top: str) -> bool:
    return ".git" in path[len(top):].split(os.sep)


def _git_bulk(entry: os.DirEntry) -> bool:
    """A git folder's contents (its objects), which hold no configuration; not a submodule's
    folder of that name (``.git/modules/objects``: the folder around has no ``HEAD``)."""
    return entry.name in _GIT_BULK and os.path.isfile(os.path.join(os.path.dirname(entry.path), "HEAD"))


def _secret(name: str, in_git: bool) -> bool:
    """Whether a file of this name holds the user's credentials rather than the project's
    code or data: in a ``.git`` folder (the repository's, a submodule's under
    ``.git/modules``, a nested clone's), its ``config`` (CI checkouts keep a token there);
    elsewhere, a ``.git`` file (a submodule's or worktree's, naming a folder outside),
    stored passwords and environment files."""
    if in_git:
        return name in ("config", "config.worktree")
    return name in _SECRET_FILES or name.startswith(".env.")


def _give_up(result: Plan, why: str) -> None:
    result.sockets_checked = False
    result.unchecked = why
