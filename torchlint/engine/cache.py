"""The content-hash cache: a file's findings, reused while nothing they depend on changed.

An entry's key digests torchlint's version (and, for a development install, its own
source), the file's path (absolute and as shown), the rules that run on it, the folders
its imports are looked up from, and the file's bytes.  The entry holds the report and
what the findings depended on besides the file itself (project.py records it): the
digests of the other project files analysed on its behalf, and the paths where a module
was looked for and not found.  It is used only while all of those still hold, so a
change to an imported module is seen even though the file itself did not change.

Each entry is one file, written to a temporary file and renamed into place (atomic.py):
runs that share a cache folder see whole entries or none.  Its first line is an
HMAC-SHA256 of its key and of the JSON that follows, keyed with a secret of the user's
(``secret_path``, made on first use, readable by the user alone), so an entry that does
not read back intact (truncated, edited into other valid JSON, another key's, not a
regular file, too big), or that anyone else wrote (a repository that ships one), is a
miss and gets rewritten.

The repository linted must not choose where torchlint writes: a cache folder that is a
symbolic link, or is reached through one below the current folder, or belongs to another
user, or that other users can write in, is not used; nor is any where the secret cannot
be had.  The run then goes on without a cache, and says so once on standard error.
Nothing here imports the parser or the rules: a run whose files are all cached never
parses anything.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Optional

from torchlint import __version__
from torchlint.syntax.source import UnreadableSource, printable, read_bytes
from torchlint.framework.diagnostics import FileReport, report_from_data, report_to_data
from torchlint.engine.atomic import SUFFIX, replace_file

DEFAULT_FOLDER = ".torchlint_cache"
# 2: reports carry the source lines they show; 3: a digest line checks each entry; 4: keyed (HMAC)
FORMAT = 4
_MAX_ENTRY_BYTES = 64 << 20
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is torchlint's cache; see https://bford.info/cachedir/\n"
_MARKERS = {"CACHEDIR.TAG": _TAG, ".gitignore": "# Created by torchlint\n*\n"}


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """torchlint's version, and for a checkout the size and time of each of its modules,
    so that editing a rule invalidates what the old rule found."""
    import torchlint

    parts = [__version__]
    package = Path(torchlint.__file__).parent
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        parts.append(f"{path.relative_to(package).as_posix()}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def is_cache(folder: Path) -> bool:
    """``folder`` holds torchlint's CACHEDIR.TAG (and is not a symbolic link to one)."""
    if folder.is_symlink():
        return False
    try:
        return (folder / "CACHEDIR.TAG").read_text(errors="replace") == _TAG
    except OSError:
        return False


def clean(folder: Path) -> int:
    """Remove what torchlint wrote in the cache ``folder`` (its ``v<format>-<code>``
    folders, CACHEDIR.TAG and .gitignore), and the folder itself once empty; anything
    else in it is left alone.  Returns how many entries were removed."""
    import re
    import shutil

    removed = 0
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink() and re.fullmatch(r"v\d+-[0-9a-f]+", entry.name):
            removed += sum(1 for item in entry.iterdir() if not item.name.endswith(SUFFIX))
            shutil.rmtree(entry)
        elif entry.name in _MARKERS and entry.is_file() and entry.read_text(errors="replace") == _MARKERS[entry.name]:
            entry.unlink()
    try:
        folder.rmdir()
    except OSError:
        pass  # something else is in it
    return removed


def _check(secret: bytes, key: str, payload: bytes) -> str:
    """The digest an entry's first line holds: of its key and the rest of its content."""
    return hmac.new(secret, key.encode() + b"\n" + payload, hashlib.sha256).hexdigest()


def entry_key(path: Path, display: str, codes: Iterable[str], roots: Iterable[Path], digest: str,
              parser: str = "auto", target: Optional[list] = None) -> str:
    material = json.dumps([str(path), display, list(codes), [str(root) for root in roots], digest, parser,
                           target])
    return hashlib.blake2b(material.encode("utf-8"), digest_size=16).hexdigest()


class Cache:
    def __init__(self, folder: Path):
        self.root = Path(folder)
        self.folder = self.root / f"v{FORMAT}-{code_fingerprint()}"
        self._digests: dict[str, Optional[str]] = {}  # this run's reading of dependencies
        self._absent: dict[str, bool] = {}
        # Once per process, before any worker is forked: they inherit the answer.
        self._secret = _usable(self.root, self.folder)

    def load(self, key: str, filename: str) -> Optional[FileReport]:
        """The cached report for ``key`` (without its source) if it is there, is intact
        and is not stale."""
        if self._secret is None:
            return None
        try:
            content = read_bytes(str(self.folder / key), _MAX_ENTRY_BYTES, follow_symlinks=False)  # bounded
        except UnreadableSource:
            return None
        check, _, payload = content.partition(b"\n")
        if not hmac.compare_digest(check, _check(self._secret, key, payload).encode()):
            return None  # damaged, edited, another key's entry, or not written by this user
        try:
            entry = json.loads(payload)
            if entry.get("format") != FORMAT:
                return None
            if not self._still_valid(entry["dependencies"], entry["absent"]):
                return None
            report = report_from_data(entry["report"], filename)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            return None
        return report

    def store(self, key: str, report: FileReport, dependencies: dict[str, Optional[str]],
              absent: Iterable[str]) -> None:
        """Write the entry; a cache that cannot be written is skipped silently (the run's
        results do not depend on it)."""
        if self._secret is None:
            return
        entry = {"format": FORMAT, "report": report_to_data(report),
                 "dependencies": dependencies, "absent": sorted(absent)}
        payload = json.dumps(entry, separators=(",", ":")).encode("utf-8")
        try:
            self._prepare()
            replace_file(str(self.folder / key), _check(self._secret, key, payload).encode() + b"\n" + payload,
                         0o644)
        except OSError:
            pass

    def _prepare(self) -> None:
        if os.path.isdir(self.folder) and not os.path.islink(self.folder):
            return
        self.root.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.makedirs(self.folder, mode=0o755, exist_ok=True)
        for name, content in _MARKERS.items():
            try:
                _create(self.root / name, content.encode("utf-8"), 0o644)
            except OSError:
                pass  # there already (only ever as torchlint wrote it, or the user's own)

    def _still_valid(self, dependencies: dict, absent: list) -> bool:
        from torchlint.analysis.project import content_digest, listing_digest

        for path, digest in dependencies.items():
            if path not in self._digests:
                if path.endswith(("/", os.sep)):  # a folder: the listing of its modules (project.listing_key)
                    self._digests[path] = listing_digest(path)
                else:
                    try:
                        self._digests[path] = content_digest(read_bytes(path))
                    except UnreadableSource:
                        self._digests[path] = None
            if self._digests[path] != digest:
                return False
        for path in absent:
            if path not in self._absent:
                self._absent[path] = not os.path.isfile(path)
            if not self._absent[path]:
                return False
        return True


# --- whether a cache folder may be used, and the user's secret --------------------------------


@functools.lru_cache(maxsize=None)
def _usable(root: Path, folder: Path) -> Optional[bytes]:
    """The secret that signs entries when the cache folder ``root`` (entries in
    ``folder``) may be used; else None, said once on standard error."""
    reason = _unsafe_folder(root, folder)
    secret = None
    if reason is None:
        try:
            secret = _secret(secret_path())
        except OSError as error:
            reason = f"no private key to sign its entries can be kept in {printable(str(secret_path()))} " \
                     f"({error.strerror or error})"
    if reason is not None:
        sys.stderr.write(f"torchlint: note: running without the cache {printable(str(root))}: {reason}\n")
    return secret


def _unsafe_folder(root: Path, folder: Path) -> Optional[str]:
    """Why the cache folder ``root`` must not be used, or None."""
    cwd = Path(os.getcwd())
    on_the_way = [part for part in reversed(root.parents) if cwd in part.parents]
    for part in on_the_way:
        if os.path.islink(part):
            return "a folder on its path is a symbolic link"
    for part in (root, folder):
        try:
            info = os.lstat(part)
        except FileNotFoundError:
            continue
        except OSError as error:
            return f"it cannot be examined ({error.strerror or error})"
        if stat.S_ISLNK(info.st_mode):
            return "it is a symbolic link" if part == root else f"{part.name} in it is a symbolic link"
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            return "it belongs to another user"
        # Group write is the norm under a umask of 002 (each user's own group): refused
        # only for a group other than the user's, and writing by everyone always.
        shared_group = hasattr(os, "getegid") and info.st_gid != os.getegid()
        if info.st_mode & 0o002 or info.st_mode & 0o020 and shared_group:
            return f"other users can write in it (`chmod go-w {printable(str(part))}` to use it)"
    return None


_SECRET_BYTES = 32


def secret_path() -> Path:
    """Where the user's secret for signing cache entries is kept: ``torchlint/key`` in
    ``$XDG_CACHE_HOME``, else in ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    folder = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return folder / "torchlint" / "key"


def _secret(path: Path) -> bytes:
    """The secret kept at ``path``, made now if there is none (OSError when it cannot be
    made, or what is there is not the user's alone)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    try:
        _create(path, os.urandom(_SECRET_BYTES), 0o600)
    except FileExistsError:
        pass  # another run made it first
    return _read_secret(path)


def _read_secret(path: Path) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or \
                (hasattr(os, "geteuid") and info.st_uid != os.geteuid()):
            raise OSError(f"{printable(str(path))} is not a file only its owner, this user, can read")
        secret = os.read(descriptor, _SECRET_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(secret) != _SECRET_BYTES:
        raise OSError(f"{printable(str(path))} does not hold a key of {_SECRET_BYTES} bytes")
    return secret


def _create(path: Path, data: bytes, mode: int) -> None:
    """Make the file ``path`` holding ``data``, whole or not at all: FileExistsError when
    anything, a symbolic link included, is there already."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=SUFFIX, dir=path.parent)
    try:
        try:
            os.write(descriptor, data)
            if hasattr(os, "fchmod"):
                os.fchmod(descriptor, mode)
        finally:
            os.close(descriptor)
        os.link(temporary, path)  # never follows, never replaces
    finally:
        os.unlink(temporary)
