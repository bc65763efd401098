"""Run functions in isolated, resource-limited child processes (the runtime check's sandbox).

    with Sandbox(Limits(timeout=10), jobs=2) as sandbox:
        result = sandbox.run("torchlint.runtime.monitor:run", {"code": ...}, files={"x.py": b"..."})
        print(sandbox.isolation.note, result.status, result.value)

A fork server (``torchlint.runtime.server``) imports torch once and forks a child per job, so
a job starts in milliseconds instead of the ~2 s an ``import torch`` costs. The server and its
jobs run without network, with every mount read-only but the job's temporary directory, with
rlimits, a pids cgroup and a pid namespace per job, as far as this machine allows: what it did
not allow is in ``Sandbox.isolation`` and must be shown to the user.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from typing import Iterable, Iterator, Mapping, Sequence

import torchlint

STATUSES = ("ok", "timeout", "memory", "processes", "crashed", "error")


@dataclass(frozen=True)
class Limits:
    timeout: float = 30.0  # wall-clock seconds per job; everything the job started is killed after it
    memory: int = 4 << 30  # bytes of address space a job may add to what it starts with (RLIMIT_AS)
    file_size: int = 64 << 20  # RLIMIT_FSIZE
    open_files: int = 256  # RLIMIT_NOFILE
    processes: int = 32  # processes and threads a job may have alive at once
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
                 writable: Sequence[str] = ()):
        """``sys_path``: folders put first on the jobs' ``sys.path``; they and ``readable``
        are the project folders jobs may read (see view.py for everything they see).
        ``writable``: project folders jobs may also write to, where the machine allows an
        overlay: each job's writes land in a layer of its own, removed with the job, and
        the files themselves never change (``Isolation.copy_on_write`` says which)."""
        self.limits, self.jobs = limits, max(1, jobs)
        self._base = tempfile.mkdtemp(prefix="torchlint-sandbox-")
        self._results: dict[int, dict] = {}
        self._pending = b""
        self._in_flight = 0
        self._next_id = 0
        self._cgroup = None
        self._closed = False
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
        self._log = open(os.path.join(self._base, "server.log"), "w+b")
        self._server = subprocess.Popen(
            [sys.executable, *flags, "-m", "torchlint.runtime.server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=self._base,
            env={**env, "HOME": self._base, "TMPDIR": self._base}, start_new_session=True)
        projects = [*map(os.path.abspath, sys_path), *map(os.path.abspath, readable), *map(os.path.abspath, writable)]
        if not _under_interpreter(package_root):  # a checkout of torchlint, not an installed one
            projects.append(package_root)
        config = {"limits": asdict(limits), "jobs": self.jobs, "preload": list(preload), "fresh": fresh,
                  "base": self._base, "env": env, "python_flags": flags, "readable": projects,
                  "home": os.path.expanduser("~"), "writable": [os.path.abspath(path) for path in writable],
                  "mount_namespace": not os.environ.get("TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE")}
        try:
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
        self._send({"id": self._next_id, "function": function, "payload": payload,
                    "files": {name: base64.b64encode(data).decode() for name, data in files.items()}})
        self._in_flight += 1
        return self._next_id

    def _store(self, message: dict) -> None:
        self._in_flight -= 1
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
        if self._closed:
            return
        self._closed = True
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
        self._log.close()
        if self._cgroup:  # a mount point inside the server, so removed from out here
            for root, dirs, _ in os.walk(self._cgroup, topdown=False):
                for name in dirs:
                    _rmdir(os.path.join(root, name))
            _rmdir(self._cgroup)
        shutil.rmtree(self._base, ignore_errors=True)

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


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass
