"""The content-hash cache: a file's findings, reused while nothing they depend on changed.

An entry's key digests torchlint's version (and, for a development install, its own
source), the file's path (absolute and as shown), the rules that run on it, the folders
its imports are looked up from, and the file's bytes.  The entry holds the report and
what the findings depended on besides the file itself (project.py records it): the
digests of the other project files analysed on its behalf, and the paths where a module
was looked for and not found.  It is used only while all of those still hold, so a
change to an imported module is seen even though the file itself did not change.

Each entry is one file, written to a temporary file and renamed into place (atomic.py):
runs that share a cache folder see whole entries or none.  Its first line is a digest
of its key and of the JSON that follows, so an entry that does not read back intact
(truncated, edited into other valid JSON, another key's, not a regular file, too big)
is a miss and gets rewritten.  Nothing
here imports the parser or the rules: a run whose files are all cached never parses anything.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Iterable, Optional

from torchlint import __version__
from torchlint.framework.diagnostics import FileReport, report_from_data, report_to_data
from torchlint.engine.atomic import SUFFIX, replace_file

DEFAULT_FOLDER = ".torchlint_cache"
FORMAT = 3  # 2: reports carry the source lines they show; 3: a digest line checks each entry
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
    """``folder`` holds torchlint's CACHEDIR.TAG."""
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


def _check(key: str, payload: bytes) -> str:
    """The digest an entry's first line holds: of its key and the rest of its content."""
    return hashlib.blake2b(key.encode() + b"\n" + payload, digest_size=16).hexdigest()


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

    def load(self, key: str, filename: str) -> Optional[FileReport]:
        """The cached report for ``key`` (without its source) if it is there, is intact
        and is not stale."""
        from torchlint.syntax.source import UnreadableSource, read_bytes

        try:
            content = read_bytes(str(self.folder / key), _MAX_ENTRY_BYTES)  # never blocks, bounded
        except UnreadableSource:
            return None
        check, _, payload = content.partition(b"\n")
        if check.decode("ascii", "replace") != _check(key, payload):
            return None  # damaged, edited, or another key's entry
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
        entry = {"format": FORMAT, "report": report_to_data(report),
                 "dependencies": dependencies, "absent": sorted(absent)}
        payload = json.dumps(entry, separators=(",", ":")).encode("utf-8")
        try:
            self._prepare()
            replace_file(str(self.folder / key), _check(key, payload).encode() + b"\n" + payload, 0o644)
        except OSError:
            pass

    def _prepare(self) -> None:
        if self.folder.is_dir():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, content in _MARKERS.items():
            marker = self.root / name
            if not marker.exists():
                try:
                    marker.write_text(content, encoding="utf-8")
                except OSError:
                    pass

    def _still_valid(self, dependencies: dict, absent: list) -> bool:
        from torchlint.syntax.source import UnreadableSource, read_bytes
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
