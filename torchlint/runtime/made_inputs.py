"""Input files the project makes itself: a fresh clone of NRI has no
``data/loc_train_springs5.npy``, and its ``train()`` cannot run without it; its
``data/generate_dataset.py`` writes that file with ``np.save('loc_train' + suffix + '.npy',
...)``. Where a run stopped at a missing file that a script of the project writes, that
script runs once, its own loops cut to a few passes (50000 simulations become 4: the
same shapes, from the project's own code), and what it writes is kept in memory, never
on the user's disk; the runs that stopped at the file run again reading it.

The parent reads the project with ``ast`` (``writers``); the jobs capture the writes
(``captured_writes``) and read what was made (``reading_made``).
"""

from __future__ import annotations

import ast
import base64
import builtins
import contextlib
import io
import os
import re
from typing import Callable, Iterator, Optional

from torchlint.framework.verdicts import MISSING_FILE
from torchlint.runtime.stand_ins import record, writes

# How a run lists a file it read that a script of the project made:
# "made data/generate_dataset.py:data/loc_train_springs5.npy" (the script, then the file).
MADE = "made "
# The passes each loop of the making script's own code makes (`for i in range(num_sims)`).
LOOP_PASSES = 4
# What a making run may keep, all files together; a larger file is left out.
MAX_MADE_BYTES = 4 << 20  # every job that reads them is sent them

_NUMPY_WRITERS = {"save", "savez", "savez_compressed", "savetxt"}


# -- the parent: which script writes a missing file -------------------------------------------

def path_pattern(node: ast.expr) -> Optional[re.Pattern]:
    """A pattern for the paths an expression that builds a path may give, from its string
    pieces (``'loc_train' + suffix + '.npy'``, f-strings, ``os.path.join``, ``'{}.npy'.format``);
    None where no piece says enough (only an extension, or nothing literal)."""
    pieces: list[Optional[str]] = []  # None: any text

    def walk(part: ast.expr) -> None:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces.append(part.value)
        elif isinstance(part, ast.JoinedStr):
            for value in part.values:
                if isinstance(value, ast.Constant):
                    walk(value)
                else:
                    pieces.append(None)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
            walk(part.left)
            walk(part.right)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.Mod) and isinstance(part.left, ast.Constant) \
                and isinstance(part.left.value, str):
            for index, text in enumerate(re.split(r"%[-+ #0-9.]*[sdifgr]", part.left.value)):
                pieces.extend(([None] if index else []) + [text])
        elif isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute) and part.func.attr == "format" \
                and isinstance(part.func.value, ast.Constant) and isinstance(part.func.value.value, str):
            for index, text in enumerate(re.split(r"\{[^{}]*\}", part.func.value.value)):
                pieces.extend(([None] if index else []) + [text])
        elif isinstance(part, ast.Call) and _dotted(part.func) in ("os.path.join", "path.join", "join") and part.args:
            for index, argument in enumerate(part.args):
                if index:
                    pieces.append("/")
                walk(argument)
        else:
            pieces.append(None)

    walk(node)
    # Letters beyond an extension: `name + '.npy'` could be any array file.
    named = "".join(re.sub(r"\.[A-Za-z0-9]{1,5}$", "", piece) for piece in pieces if piece)
    if sum(character.isalnum() for character in named) < 3:
        return None
    text = "".join(".*" if piece is None else re.escape(piece) for piece in pieces)
    return re.compile(rf"(^|/){text}$")


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def written_paths(tree: ast.AST) -> list[tuple[re.Pattern, bool]]:
    """The paths a file writes: ``np.save(path, ...)``, ``torch.save(obj, path)``,
    ``open(path, "w")`` (and what `pickle.dump` and `json.dump` write through it), each as
    a pattern, with whether the path names a folder too."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        target = None
        if name.rsplit(".", 1)[-1] in _NUMPY_WRITERS and name.split(".")[0] in ("np", "numpy") and node.args:
            target = node.args[0]
        elif name == "torch.save" and len(node.args) >= 2:
            target = node.args[1]
        elif name in ("open", "io.open") and node.args:
            mode = node.args[1] if len(node.args) > 1 else next(
                (keyword.value for keyword in node.keywords if keyword.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and _creates(mode.value):
                target = node.args[0]
        if target is None:
            continue
        pattern = path_pattern(target)
        if pattern is not None:
            names_folder = any(isinstance(piece, ast.Constant) and isinstance(piece.value, str) and "/" in piece.value
                               for piece in ast.walk(target)) or (isinstance(target, ast.Call)
                                                                  and _dotted(target.func).endswith("join"))
            found.append((pattern, names_folder))
    return found


def writers(missing: str, scripts: list[str], read: Callable[[str], Optional[ast.Module]]) -> list[tuple[str, str]]:
    """``(script, folder to run it in)`` for each of the project's ``scripts`` that writes
    the file at the absolute path ``missing``: run where a path without a folder lands
    beside the missing file (a folder the clone has), else from its own folder."""
    found = []
    for script in scripts:
        if os.path.basename(script).startswith(("test_", "conftest", "setup.")):
            continue
        tree = read(script)
        if tree is None:
            continue
        for pattern, names_folder in written_paths(tree):
            if pattern.search(missing) and (names_folder or os.path.isdir(os.path.dirname(missing))):
                found.append((script, os.path.dirname(script) if names_folder else os.path.dirname(missing)))
                break
    return found


def option_naming(missing: str, made: list[str], options: dict[str, str]) -> Optional[tuple[str, str]]:
    """``(flag, value)`` where the missing file's name holds a string option's default and a
    made file beside it has the same name with ``value`` in its place: NRI's
    `lstm_baseline.py` reads `loc_train` + `--suffix` (default `_springs`) + `.npy`, and its
    generator writes `loc_train_springs5.npy`; run with `--suffix _springs5`, as its user
    must. A value holding the default is preferred (`_springs5` over `_charged5`)."""
    folder, name = os.path.split(missing)
    found = []
    for flag, default in options.items():
        if len(default) < 2 or name.count(default) != 1:
            continue
        before, after = name.split(default)
        for path in made:
            other_folder, other = os.path.split(path)
            if other_folder != folder or len(other) <= len(before) + len(after) \
                    or not (other.startswith(before) and other.endswith(after)):
                continue
            value = other[len(before):len(other) - len(after)]
            if value != default and not value.startswith("-"):
                found.append((default not in value, flag, value))
    return min(found)[1:] if found else None


def missing_files(evidence: str) -> list[str]:
    """The files a COULD NOT RUN verdict's run stopped at (or left out a line at), as the program named them."""
    return MISSING_FILE.findall(evidence)


def decoded(written: object, limit: int = MAX_MADE_BYTES) -> dict[str, bytes]:
    """A making job's ``written`` (untrusted): absolute paths to their contents, within ``limit``."""
    files: dict[str, bytes] = {}
    if not isinstance(written, dict):
        return files
    total = 0
    for path, text in written.items():
        if not (isinstance(path, str) and os.path.isabs(path) and isinstance(text, str)):
            continue
        try:
            data = base64.b64decode(text, validate=True)
        except ValueError:
            continue
        total += len(data)
        if total > limit:
            break
        files[os.path.normpath(path)] = data
    return files


def encoded(files: dict[str, bytes]) -> dict[str, str]:
    return {path: base64.b64encode(data).decode("ascii") for path, data in files.items()}


# -- the jobs: capture what the making script writes; read it back ----------------------------

def capped_range(*arguments: int) -> range:
    """``range`` in the making script's own code: its first LOOP_PASSES numbers."""
    return range(*arguments)[:LOOP_PASSES]


class _Kept(io.BytesIO):
    """A file the making script writes: its bytes land in ``files`` as it is closed."""

    def __init__(self, path: str, files: dict[str, bytes], room: list[int]):
        super().__init__()
        self._path, self._files, self._room = path, files, room

    def close(self) -> None:
        if not self.closed:
            data = self.getvalue()
            if len(data) <= self._room[0]:
                self._room[0] -= len(data)
                self._files[self._path] = data
        super().close()


def _creates(mode: object) -> bool:
    """An ``open`` mode that makes or extends a file (not ``"r+"``, which reads what is there)."""
    return isinstance(mode, str) and bool(set(mode) & set("wax"))


@contextlib.contextmanager
def captured_writes(files: dict[str, bytes], under: list[str]) -> Iterator[None]:
    """While the block runs, a file written under one of the folders ``under`` (with
    ``open``, ``np.save``, ``torch.save``) is kept in ``files`` by absolute path instead of
    being written to disk; the program sees its writes succeed."""
    import torch

    original_open, original_io_open, original_save = builtins.open, io.open, torch.save
    folders = [os.path.realpath(folder).rstrip(os.sep) + os.sep for folder in under]
    room = [MAX_MADE_BYTES]

    def kept_path(file: object) -> Optional[str]:
        if not isinstance(file, (str, os.PathLike)):
            return None
        path = os.path.realpath(os.fspath(file))
        return path if any(path.startswith(folder) for folder in folders) else None

    def opened(file, mode="r", *args, **kwargs):
        path = kept_path(file) if _creates(mode) else None
        if path is None:
            return original_open(file, mode, *args, **kwargs)
        kept = _Kept(path, files, room)
        if "b" in mode:
            return kept
        return io.TextIOWrapper(kept, encoding=kwargs.get("encoding") or "utf-8", newline=kwargs.get("newline"))

    def save(obj, f, *args, **kwargs):
        path = kept_path(f)
        if path is None:
            return original_save(obj, f, *args, **kwargs)
        with _Kept(path, files, room) as kept:
            original_save(obj, kept, *args, **kwargs)

    builtins.open = io.open = opened
    torch.save = save
    try:
        yield
    finally:
        builtins.open, io.open, torch.save = original_open, original_io_open, original_save


@contextlib.contextmanager
def reading_made(used: list[str], files: dict[str, bytes], makers: dict[str, str]) -> Iterator[None]:
    """While the block runs, the files ``files`` (absolute path -> contents) exist for the
    program: ``open``, ``np.load``, ``torch.load``, ``os.path.exists`` find them. ``used``
    records each one read, as ``makers`` names it ("made data/generate_dataset.py:data/x.npy")."""
    import torch

    original_open, original_io_open, original_load = builtins.open, io.open, torch.load
    original_exists, original_isfile = os.path.exists, os.path.isfile

    def made(file: object) -> Optional[str]:
        if not isinstance(file, (str, os.PathLike)):
            return None
        path = os.path.normpath(os.path.abspath(os.fspath(file)))
        if path not in files:
            return None
        record(used, f"{MADE}{makers.get(path, path)}")
        return path

    def opened(file, mode="r", *args, **kwargs):
        path = made(file) if isinstance(mode, str) and not writes(mode) else None
        if path is None:
            return original_open(file, mode, *args, **kwargs)
        data = io.BytesIO(files[path])
        if "b" in mode:
            return data
        return io.TextIOWrapper(data, encoding=kwargs.get("encoding") or "utf-8", newline=kwargs.get("newline"))

    def load(f, *args, **kwargs):
        path = made(f)
        return original_load(io.BytesIO(files[path]) if path else f, *args, **kwargs)

    def exists(path) -> bool:
        return made(path) is not None or original_exists(path)

    def isfile(path) -> bool:
        return made(path) is not None or original_isfile(path)

    builtins.open = io.open = opened
    torch.load = load
    os.path.exists, os.path.isfile = exists, isfile
    try:
        yield
    finally:
        builtins.open, io.open, torch.load = original_open, original_io_open, original_load
        os.path.exists, os.path.isfile = original_exists, original_isfile
