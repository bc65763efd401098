"""Replacing a file so that readers, and a process killed half-way, see the old file or
the new one, never a mix, and no temporary file is left behind.

The new bytes go to an unnamed file in the target's folder (``O_TMPFILE``, where the
system has it), which gets a name only once it is complete and is renamed over the
target at once: a kill leaves a temporary file only in the instant between the two.
Such a leftover, named ``.<target name>.<random>.torchlint-tmp``, is removed the next
time the same file is replaced.  Elsewhere a named temporary file is written instead.
"""

from __future__ import annotations

import errno
import os
import tempfile

SUFFIX = ".torchlint-tmp"


def replace_file(target: str, data: bytes, mode: int) -> None:
    """Replace ``target`` with ``data`` (permissions ``mode``); OSError if it cannot be done,
    and then ``target`` is as it was."""
    install(write_temporary(target, data, mode), target)


def write_temporary(target: str, data: bytes, mode: int) -> str:
    """A complete file holding ``data``, next to ``target``, to ``install`` over it."""
    folder, name = os.path.split(target)
    folder = folder or "."
    remove_leftovers(folder, name)
    return _write_temporary(folder, name, data, mode)


def install(temporary: str, target: str) -> None:
    """Rename ``temporary`` over ``target``; on failure, remove it (OSError)."""
    try:
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def remove_leftovers(folder: str, name: str) -> None:
    """Remove the temporary files an earlier, killed, replacement of ``name`` left."""
    prefix = f".{name}."
    try:
        with os.scandir(folder) as entries:
            leftovers = [entry.path for entry in entries
                         if entry.name.startswith(prefix) and entry.name.endswith(SUFFIX)
                         and entry.is_file(follow_symlinks=False)]
    except OSError:
        return
    for path in leftovers:
        try:
            os.unlink(path)
        except OSError:
            pass


def _write_temporary(folder: str, name: str, data: bytes, mode: int) -> str:
    if hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd"):
        try:
            descriptor = os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode)
        except OSError:
            descriptor = None  # a filesystem without it: the portable way below
        if descriptor is not None:
            try:
                _write_all(descriptor, data, mode)
                return _name(descriptor, folder, name)
            except OSError:
                pass  # e.g. linking from /proc refused: the portable way below
            finally:
                os.close(descriptor)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=SUFFIX, dir=folder)
    try:
        _write_all(descriptor, data, mode)
    except BaseException:
        os.close(descriptor)
        os.unlink(temporary)
        raise
    os.close(descriptor)
    return temporary


def _name(descriptor: int, folder: str, name: str) -> str:
    """Give the unnamed file open at ``descriptor`` a temporary name in ``folder``."""
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for _attempt in range(100):
            temporary = f".{name}.{os.urandom(6).hex()}{SUFFIX}"
            try:
                # With a directory descriptor os.link calls linkat(AT_SYMLINK_FOLLOW), which
                # follows /proc's link to the open file (plain link() would not).
                os.link(f"/proc/self/fd/{descriptor}", temporary, dst_dir_fd=directory, follow_symlinks=True)
                return os.path.join(folder, temporary)
            except FileExistsError:
                continue
        raise OSError(errno.EEXIST, "no free temporary file name")
    finally:
        os.close(directory)


def _write_all(descriptor: int, data: bytes, mode: int) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, mode)
    os.fsync(descriptor)
