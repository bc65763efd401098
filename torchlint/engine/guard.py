"""Per-file limits: no file may take longer than N seconds or grow the process by more
than M bytes, whatever is in it.

    with FileGuard(seconds=60, memory=2 << 30):
        lint(...)                 # raises LimitExceeded("took longer than 60 s ...")
        with uninterrupted():
            write_fixed(...)      # never cut short: a write is finished or not started

A timer (``SIGALRM``, every quarter of a second) checks the time and the resident size,
and raises ``LimitExceeded`` in the main thread, between two Python instructions.  That
stops any loop of torchlint's own; a call stuck inside C code is stopped only when it
returns, which is why worker processes also get a hard deadline from their parent
(batch.py), and why, linting in this process, a watchdog thread ends the whole run with
an error past ``hard_deadline(seconds)``.  ``LimitExceeded`` is a ``BaseException`` so
that the linter's handlers for a rule's bugs (``except Exception``) do not take it for one.

Where the timer is not available (not the main thread, no ``setitimer``) the guard does
nothing.  What the interrupted work left behind (a half-analysed module in the project's
cache) must be thrown away by the caller.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Iterator, Optional

TICK = 0.25  # seconds between two checks

_active: Optional["FileGuard"] = None


class LimitExceeded(BaseException):
    """The file being linted went over a limit; ``reason`` says which, for its TL000."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class FileGuard:
    def __init__(self, seconds: float, memory: int, name: str = "", watchdog: bool = False):
        """``watchdog``: end the process if the file is still not done at ``hard_deadline``
        (for linting in this process; a worker's parent does that itself)."""
        self.seconds = seconds
        self.memory = memory
        self.name = name
        self.watchdog = watchdog
        self._armed = False
        self._deferred = 0

    def __enter__(self) -> "FileGuard":
        global _active
        if not _can_arm():
            return self
        self._start = time.monotonic()
        self._base = resident_bytes()
        self._previous = signal.signal(signal.SIGALRM, self._tick)
        signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
        self._armed = True
        _active = self
        if self.watchdog:
            _start_watchdog()
        return self

    def __exit__(self, *exc) -> None:
        global _active
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, self._previous)
            self._armed = False
            _active = None

    def exceeded(self) -> Optional[str]:
        """Why the file must stop now, or None."""
        elapsed = time.monotonic() - self._start
        if elapsed > self.seconds:
            return time_limit_reason(self.seconds)
        grown = resident_bytes() - self._base
        if grown > self.memory:
            return memory_limit_reason(self.memory)
        return None

    def _tick(self, signum, frame) -> None:
        if self._deferred:
            return
        reason = self.exceeded()
        if reason is not None:
            self._deferred += 1  # raise once: the handlers that unwind must not be cut again
            raise LimitExceeded(reason)


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """No limit cuts what runs inside (writing a file, a cache entry); it is checked again after."""
    guard = _active
    if guard is None:
        yield
        return
    guard._deferred += 1
    try:
        yield
    finally:
        guard._deferred -= 1


def hard_deadline(seconds: float) -> float:
    """How long a file may run before whatever lints it is killed, since the guard could
    not stop it (it is stuck inside C code)."""
    return seconds * 1.5 + 2.0


def _start_watchdog() -> None:
    global _watchdog
    if _watchdog is None:
        _watchdog = threading.Thread(target=_watch, name="torchlint-watchdog", daemon=True)
        _watchdog.start()


_watchdog: Optional[threading.Thread] = None


def _watch() -> None:
    while True:
        time.sleep(TICK)
        guard = _active
        if guard is not None and guard.watchdog and time.monotonic() - guard._start > hard_deadline(guard.seconds):
            message = (f"torchlint: error: linting {guard.name or 'a file'} did not stop within "
                       f"{hard_deadline(guard.seconds):g} s, stuck where it cannot be interrupted; the run "
                       f"is stopped (with --jobs 2 or more, only that file would be)\n")
            try:
                os.write(2, message.encode("utf-8", "backslashreplace"))
            finally:
                os._exit(2)


def time_limit_reason(seconds: float) -> str:
    return (f"took longer than {seconds:g} s to lint, so it was stopped (raise the limit with "
            f"--file-timeout)")


def memory_limit_reason(memory: int) -> str:
    return (f"needed more than {memory / (1 << 20):g} MiB of memory to lint, so it was stopped (raise "
            f"the limit with --file-memory)")


def resident_bytes() -> int:
    """This process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # Windows: no measure, no memory limit
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def resident_bytes_of(pid: int) -> Optional[int]:
    """Another process's resident memory (Linux only; None elsewhere or when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _can_arm() -> bool:
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and _active is None)
