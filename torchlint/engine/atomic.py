"""Replacing a file so that readers, and a process killed half-way, see the old file or
the new one, never a mix, and no temporary file is left behind.

The new bytes go to an unnamed file in the target's folder (``O_TMPFILE``, where the
system has it), which gets a name only once it is complete and is renamed over the
target at once: a kill leaves a temporary file only in the instant between the two.
Such a leftover, named ``.<target name>.<random>.torchlint-tmp``, is removed the next
time the same file is replaced.  Elsewhere a named temporary file is written instead.

``replace_unchanged`` replaces a file only if it is still the one that was read: an
editor's save that lands meanwhile, in place or by a rename, is kept and the new bytes
are not written.  Where Linux swaps two names at once (``renameat2(RENAME_EXCHANGE)``),
the file swapped out is checked once more and swapped back if a save landed just before.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
import tempfile

from torchlint.syntax.source import UnreadableSource, read_descriptor

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
        _remove(temporary)
        raise


class Changed(Exception):
    """The file is not the one that was read any more: it was not replaced."""


def replace_unchanged(temporary: str, target: str, original: int, expected: bytes) -> None:
    """Put ``temporary`` in place of ``target`` if ``target`` is still the file open at
    ``original`` and holds ``expected``; else Changed, ``temporary`` is removed and
    ``target`` is as it was.  OSError if it cannot be done."""
    if not _unchanged(target, original, expected):
        _remove(temporary)
        raise Changed
    if not _exchange(temporary, target):
        install(temporary, target)
        return
    if _unchanged(temporary, original, expected):
        _remove(temporary)  # the file as it was read
        return
    _exchange(temporary, target)  # a save landed in between: it goes back in place
    _remove(temporary)
    raise Changed


def _unchanged(path: str, original: int, expected: bytes) -> bool:
    """``path`` names the file open at ``original``, which holds ``expected``."""
    try:
        named, held = os.lstat(path), os.fstat(original)
        if (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino) or held.st_size != len(expected):
            return False
        return read_descriptor(original, len(expected)) == expected
    except (OSError, UnreadableSource):
        return False


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_NO_EXCHANGE = (errno.EINVAL, errno.ENOSYS, errno.EPERM, getattr(errno, "EOPNOTSUPP", errno.EINVAL))


def _exchange(first: str, second: str) -> bool:
    """Swap the files named ``first`` and ``second`` at once; False where the system or
    the file system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    import ctypes

    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    number = ctypes.get_errno()
    if number in _NO_EXCHANGE:
        return False
    raise OSError(number, os.strerror(number), second)


@functools.lru_cache(maxsize=None)
def _renameat2():
    """The C library's ``renameat2`` (Linux, glibc 2.28 and later), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, ImportError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
        _remove(path)


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
