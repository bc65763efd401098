"""Run functions in isolated, resource-limited child processes (the runtime check's sandbox).

    with Sandbox(Limits(timeout=10), jobs=2) as sandbox:
        result = sandbox.run("torchlint.runtime.monitor:run", {"code": ...}, files={"x.py": b"..."})
        print(sandbox.isolation.note, result.status, result.value)

A fork server (``torchlint.runtime.server``) imports torch once and forks a child per job, so
a job starts in milliseconds instead of the ~2 s an ``import torch`` costs. The server and its
jobs run without network, with every mount read-only but the job's temporary directory, with
rlimits, a pids cgroup and a pid namespace per job, as far as this machine allows: what it did
not allow is in ``Sandbox.isolation`` and must be shown to the user.

What a job writes is bounded by ``Limits.disk``.  With a view of the filesystem of its own
(a mount namespace), the job's folder, which holds the upper layers of its copy-on-write
overlays too, is a tmpfs of that size: a write past it fails with ENOSPC and nothing reaches
the host's disk (``/dev/shm``, the job's own tmpfs, holds 256 MiB more).  Without one
(Landlock), the folder is on the host's disk: it is measured every 0.1 s and the job is
stopped (status ``disk``) once it holds more; it may have written what it could in that
time, which is removed with it.  In both, RLIMIT_FSIZE caps each file.

A sandbox leaves nothing behind: ``close`` (also on SIGTERM, SIGHUP and SIGINT, after which
the program ends as it would have) kills every job and removes the sandbox's folder and
cgroup.  A run killed by SIGKILL cannot clean up; the next sandbox removes its folder
(``remove_stale``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Iterable, Iterator, Mapping, Optional, Sequence

import torchlint
from torchlint.runtime.server import CGROUP_RECORD, kill_cgroup

STATUSES = ("ok", "timeout", "memory", "processes", "disk", "budget", "crashed", "error")
BUDGET_SPENT = "the run's time budget was spent"
PREFIX = "torchlint-sandbox-"
OWNER = "owner"  # the file of a sandbox's folder naming the process that made it: "pid start-time"
# The signals on which a sandbox cleans up before the program ends as it would have.
CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_CGROUP = re.compile(r"/sys/fs/cgroup/(?:.+/)?torchlint-(\d+)")  # a server's (server.py: _pids_cgroup)


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0  # wall-clock seconds per job; everything the job started is killed after it
    memory: int = 4 << 30  # bytes of address space a job may add to what it starts with (RLIMIT_AS)
    file_size: int = 64 << 20  # RLIMIT_FSIZE
    open_files: int = 256  # RLIMIT_NOFILE
    processes: int = 32  # processes and threads a job may have alive at once
    disk: int = 512 << 20  # bytes a job may write to its folder, its overlays' layers included
    # The CPU-time limit (RLIMIT_CPU) is ceil(timeout) + 1 seconds.


@dataclass
class JobResult:
    status: str  # one of STATUSES
    value: object  # the job function's return value (JSON-decoded) when status == "ok", else None
    detail: str  # why, when not ok: "timed out after 10 s", "killed by SIGSEGV", ...
    stdout: str  # the last 20 kB the job wrote to fd 1
    stderr: str  # ... and to fd 2 (with the traceback of an exception that escaped the job)
    wall: float  # seconds


@dataclass(frozen=True)
class Isolation:
    network: bool  # jobs cannot open network connections
    filesystem: bool  # jobs cannot write outside their temporary directory
    reads: bool  # jobs can read only what they need: the project, the interpreter, system libraries
    sockets: bool  # no socket of any family reaches outside the job (unix, abstract, netlink, vsock...)
    processes: bool  # the process-count limit is enforced
    note: str  # one line: empty when everything is isolated, else what is missing and why
    # The folders of ``writable`` jobs can write to, each job in a copy-on-write layer of its own.
    copy_on_write: tuple[str, ...] = ()


class SandboxError(RuntimeError):
    """The sandbox itself failed (its server died); not something a job did."""


class Sandbox:
    def __init__(self, limits: Limits = Limits(), jobs: int = 1, preload: Sequence[str] = ("torch",),
                 fresh: bool = False, sys_path: Sequence[str] = (), readable: Sequence[str] = (),
                 writable: Sequence[str] = (), budget: Optional[float] = None):
        """``sys_path``: folders put first on the jobs' ``sys.path``; they and ``readable``
        are the project folders jobs may read (see view.py for everything they see).
        ``writable``: project folders jobs may also write to, where the machine allows an
        overlay: each job's writes land in a layer of its own, removed with the job, and
        the files themselves never change (``Isolation.copy_on_write`` says which).
        ``budget``: seconds all jobs together may take, from when the sandbox is ready: a job
        still running then is stopped, and later ones do not start (status ``budget``)."""
        self.limits, self.jobs = limits, max(1, jobs)
        remove_stale(tempfile.gettempdir())
        self._base = tempfile.mkdtemp(prefix=PREFIX)
        _write_owner(self._base)
        self._results: dict[int, dict] = {}
        self._pending = b""
        self._in_flight = 0
        self._next_id = 0
        self._cgroup = None
        self._closed = False
        self._cleaning = False
        self._caught: list[int] = []  # signals that came while cleaning up: acted on after it
        self._handlers: dict[int, object] = {}  # signal -> the handler it had before
        self._cut: set[int] = set()  # jobs whose time limit is what was left of the budget
        self._deadline: Optional[float] = None
        self._server: Optional[subprocess.Popen] = None
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(torchlint.__file__)))
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": os.pathsep.join([*map(os.path.abspath, sys_path), package_root]),
        }
        flags = ["-P"] if sys.version_info >= (3, 11) else []  # no cwd on sys.path
        projects = [*map(os.path.abspath, sys_path), *map(os.path.abspath, readable), *map(os.path.abspath, writable)]
        if not _under_interpreter(package_root):  # a checkout of torchlint, not an installed one
            projects.append(package_root)
        config = {"limits": asdict(limits), "jobs": self.jobs, "preload": list(preload), "fresh": fresh,
                  "base": self._base, "env": env, "python_flags": flags, "readable": projects,
                  "home": os.path.expanduser("~"), "writable": [os.path.abspath(path) for path in writable],
                  "mount_namespace": not os.environ.get("TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE")}
        self._log = open(os.path.join(self._base, "server.log"), "w+b")
        try:
            self._server = subprocess.Popen(
                [sys.executable, *flags, "-m", "torchlint.runtime.server"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=self._base,
                env={**env, "HOME": self._base, "TMPDIR": self._base}, start_new_session=True)
            self._handlers = _catch(CLEANUP_SIGNALS, self._on_signal)
            self._send(config)
            hello = self._receive(deadline=time.monotonic() + 120)["hello"]
        except BaseException:
            self.close()
            raise
        self._cgroup = hello["cgroup"]
        self.isolation = Isolation(network=hello["network"], filesystem=hello["filesystem"],
                                   reads=hello["reads"], sockets=hello["sockets"],
                                   processes=bool(hello["cgroup"] or hello["nproc"]),
                                   note="; ".join(hello["missing"]),
                                   copy_on_write=tuple(hello.get("copy_on_write", ())))
        self.pid_namespaces = hello["pidns"]
        if budget is not None:
            self._deadline = time.monotonic() + budget

    @property
    def budget_spent(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def run(self, function: str, payload: dict, files: Mapping[str, bytes] = {}) -> JobResult:
        """Run `function` ("package.module:callable") on `payload` in a fresh job; wait for it."""
        return next(self._map([(function, payload, files)]))

    def map(self, requests: Iterable[tuple[str, dict]]) -> Iterator[JobResult]:
        """Run up to `jobs` requests at a time; yield their results in request order."""
        return self._map(requests)

    def _map(self, requests) -> Iterator[JobResult]:
        requests = iter(requests)
        waiting: list[int] = []  # ids in request order
        exhausted = False
        while waiting or not exhausted:
            while not exhausted and self._in_flight < self.jobs:
                request = next(requests, None)
                if request is None:
                    exhausted = True
                else:
                    waiting.append(self._submit(*request))
            if not waiting:
                continue
            while waiting[0] not in self._results:
                self._store(self._receive(deadline=time.monotonic() + self.limits.timeout + 60))
            result = self._results.pop(waiting.pop(0))
            yield JobResult(result["status"], result["value"], result["detail"], result["stdout"],
                            result["stderr"], result["wall"])

    def _submit(self, function: str, payload: dict, files: Mapping[str, bytes] = {}) -> int:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        self._next_id += 1
        request = {"id": self._next_id, "function": function, "payload": payload,
                   "files": {name: base64.b64encode(data).decode() for name, data in files.items()}}
        left = None if self._deadline is None else self._deadline - time.monotonic()
        if left is not None and left <= 0:
            self._results[self._next_id] = {"id": self._next_id, "status": "budget", "value": None,
                                            "detail": BUDGET_SPENT, "stdout": "", "stderr": "", "wall": 0.0}
            return self._next_id
        if left is not None and left < self.limits.timeout:
            request["timeout"] = left
            self._cut.add(self._next_id)
        self._send(request)
        self._in_flight += 1
        return self._next_id

    def _store(self, message: dict) -> None:
        self._in_flight -= 1
        if message["id"] in self._cut and message["status"] == "timeout":
            message.update(status="budget", detail=BUDGET_SPENT)
        self._results[message["id"]] = message

    def _send(self, message: dict) -> None:
        try:
            self._server.stdin.write(json.dumps(message).encode() + b"\n")
            self._server.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise self._died() from None

    def _receive(self, deadline: float) -> dict:
        fd = self._server.stdout.fileno()
        while b"\n" not in self._pending:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                if not selector.select(max(0.0, deadline - time.monotonic())):
                    self._kill_server()
                    raise SandboxError("the sandbox server stopped answering")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._died()
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def _died(self) -> SandboxError:
        self._kill_server()
        self._log.seek(0)
        log = self._log.read().decode("utf-8", "replace")[-4000:]
        return SandboxError(f"the sandbox server exited unexpectedly:\n{log}")

    def _kill_server(self) -> None:
        try:
            os.killpg(self._server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._server.wait()

    def close(self) -> None:
        """Kill every job, stop the server, remove the sandbox's folder and cgroup."""
        if self._closed:
            return
        self._closed = self._cleaning = True
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, CLEANUP_SIGNALS)  # no second signal cuts it short
        try:
            self._clean_up()
        finally:
            self._cleaning = False
            _restore(self._handlers, self._on_signal)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for signum in self._caught:
            self._end_as_before(signum)

    def _clean_up(self) -> None:
        if self._server is not None:
            self._stop_server()
        self._log.close()
        # Before the server's hello, only its record names the cgroup.
        cgroup = self._cgroup or _recorded_cgroup(self._base)
        if cgroup:  # a mount point inside the server, so removed from out here
            _remove_cgroup(cgroup)
        _remove_tree(self._base)

    def _stop_server(self) -> None:
        try:
            self._server.stdin.close()  # the server kills what is still running and exits
        except BrokenPipeError:
            pass
        try:
            self._server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._kill_server()  # whatever is left of its process group
        self._server.stdout.close()

    def _on_signal(self, signum: int, frame=None) -> None:
        if self._cleaning:  # close() is running (the signal came before it blocked them): after it
            self._caught.append(signum)
            return
        self.close()
        self._end_as_before(signum, frame)

    def _end_as_before(self, signum: int, frame=None) -> None:
        """What the signal did before the sandbox caught it: its handler, or the default (to end)."""
        previous = self._handlers.get(signum, signal.SIG_DFL)
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()


def _under_interpreter(path: str) -> bool:
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    real = os.path.realpath(path)
    return any(real == prefix or real.startswith(prefix + os.sep) for prefix in prefixes)


def _catch(signals: Iterable[int], handler) -> dict[int, object]:
    """Install ``handler`` for each of ``signals`` that is not ignored (``nohup``); return
    the handlers they had.  Only the main thread may: elsewhere nothing is caught."""
    previous = {}
    for signum in signals:
        try:
            current = signal.getsignal(signum)
            if current not in (signal.SIG_IGN, None):
                signal.signal(signum, handler)
                previous[signum] = current
        except ValueError:  # not the main thread
            break
    return previous


def _restore(previous: dict[int, object], handler) -> None:
    for signum, old in previous.items():
        try:
            if signal.getsignal(signum) == handler:
                signal.signal(signum, old)
        except ValueError:  # not the main thread
            return


def _write_owner(folder: str) -> None:
    with open(os.path.join(folder, OWNER), "w") as f:
        f.write(f"{os.getpid()} {_start_time(os.getpid())}")


def _start_time(pid: int) -> Optional[str]:
    """When the process started (clock ticks after boot): a pid used again differs in it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def remove_stale(folder: str) -> None:
    """Remove what sandboxes killed by SIGKILL left in ``folder`` (the temporary folder):
    each sandbox folder of this user whose owner process is gone, with its jobs' cgroup.
    A folder whose owner lives, or cannot be told, is left alone; links are never followed."""
    try:
        names = [name for name in os.listdir(folder) if name.startswith(PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or _owner_alive(path):
            continue
        cgroup = _recorded_cgroup(path)
        if cgroup is not None and _server_running(cgroup):
            continue  # still stopping its jobs: the next run removes it
        if cgroup is None or _remove_cgroup(cgroup):  # else the next run tries again
            _remove_tree(path)


def _read_small(folder: str, name: str) -> Optional[str]:
    try:
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(4096).decode("ascii", "replace") if stat.S_ISREG(os.fstat(fd).st_mode) else None


def _owner_alive(folder: str) -> bool:
    owner = (_read_small(folder, OWNER) or "").split()
    if len(owner) != 2 or not owner[0].isdigit():
        return True  # not told, or still being written: not ours to judge
    started = _start_time(int(owner[0]))
    if started is None:  # gone, or no /proc to tell: then any process of that pid is taken for it
        try:
            os.kill(int(owner[0]), 0)
        except ProcessLookupError:
            return False
        except OSError:
            pass
        return True
    return started == owner[1]


def _recorded_cgroup(folder: str) -> Optional[str]:
    """The jobs' cgroup the folder's server recorded, if it is one (a job without a view of
    its own could have written another path there) of this user."""
    path = (_read_small(folder, CGROUP_RECORD) or "").strip()
    if not _CGROUP.fullmatch(path) or os.path.normpath(path) != path:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return path if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() else None


def _server_running(cgroup: str) -> bool:
    """Whether the server that made ``torchlint-PID`` runs (a zombie, or a pid used again, does not)."""
    try:
        with open(f"/proc/{_CGROUP.fullmatch(cgroup)[1]}/cmdline", "rb") as f:
            return b"torchlint.runtime.server" in f.read()
    except OSError:
        return False


def _remove_cgroup(path: str) -> bool:
    """Kill what is left in the cgroup and its jobs' cgroups and remove them; True when gone."""
    deadline = time.monotonic() + 2
    try:
        children = [entry.path for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        children = []
    for child in children:
        kill_cgroup(child, deadline)
    kill_cgroup(path, deadline)
    return not os.path.lexists(path)


def _remove_tree(path: str) -> None:
    """Remove ``path`` and what it holds, links as links (never followed).  A folder of ours
    that we may not enter (overlayfs makes its ``work/work`` mode 000) is opened up first."""
    shutil.rmtree(path, ignore_errors=True)
    if not os.path.lexists(path):
        return
    for root, dirs, _files in os.walk(path):  # opened up before the walk goes in
        for name in dirs:
            _make_enterable(os.path.join(root, name))
    shutil.rmtree(path, ignore_errors=True)


def _make_enterable(path: str) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.chmod(f"/proc/self/fd/{fd}", 0o700)  # the folder the handle holds, whatever its name is now
    except OSError:
        pass
    finally:
        os.close(fd)
