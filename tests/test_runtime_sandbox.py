"""The runtime check's sandbox: real processes, real torch, hostile jobs.

Each hostile job must be contained AND reported: a status and a detail that say what happened,
and afterwards no process of the job left (checked by scanning /proc, not by trusting the
sandbox). A mechanism this machine lacks (see Sandbox.isolation) skips its test with the reason.
"""

from __future__ import annotations

import json
import os
import socket
import textwrap
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")

from torchlint.runtime.sandbox import Isolation, JobResult, Limits, Sandbox  # noqa: E402

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
LIMITS = Limits(timeout=3, memory=512 << 20, processes=16)


@pytest.fixture(scope="module")
def sandbox():
    os.environ["TORCHLINT_TEST_SECRET"] = "must not reach the job"
    try:
        with Sandbox(LIMITS, jobs=2, sys_path=[str(TESTS), str(REPO)]) as box:
            yield box
    finally:
        del os.environ["TORCHLINT_TEST_SECRET"]


def run(box: Sandbox, code: str, **files: bytes) -> JobResult:
    return box.run("runtime_jobs:run_code", {"code": textwrap.dedent(code)}, files=files)


def processes_with(marker: str) -> list[int]:
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    found, stack = [], list(children.get(pid, ()))
    while stack:
        found.append(stack.pop())
        stack.extend(children.get(found[-1], ()))
    return found


def assert_nothing_left(box: Sandbox) -> None:
    """No job process survives its result: the server has no children left (given a moment)."""
    for _ in range(50):
        if not descendants(box._server.pid):
            return
        time.sleep(0.02)
    assert descendants(box._server.pid) == []


def requires(box: Sandbox, mechanism: str) -> None:
    if not getattr(box.isolation, mechanism):
        pytest.skip(f"no {mechanism} isolation on this machine: {box.isolation.note}")


# --- the ordinary path ---------------------------------------------------------------------

def test_value_stdout_and_stderr_come_back(sandbox):
    result = run(sandbox, """
        import sys
        print("to stdout")
        print("to stderr", file=sys.stderr)
        result = {"numbers": [1, 2.5], "text": "é", "none": None, "flag": True}
    """)
    assert result.status == "ok", result
    assert result.value == {"numbers": [1, 2.5], "text": "é", "none": None, "flag": True}
    assert (result.stdout, result.stderr, result.detail) == ("to stdout\n", "to stderr\n", "")
    assert 0 < result.wall < 3


def test_output_comes_back_as_a_capped_tail(sandbox):
    result = run(sandbox, "for i in range(20000): print(f'line {i}')")
    assert result.status == "ok"
    assert len(result.stdout.encode()) <= 20_000
    assert result.stdout.endswith("line 19999\n")


def test_files_are_written_into_a_fresh_cwd_that_is_removed_afterwards(sandbox):
    result = run(sandbox, """
        import os
        open("made-by-the-job.txt", "w").write("mine")
        result = [os.getcwd(), open("input.txt").read(), open("pkg/data.bin", "rb").read().hex(),
                  sorted(os.listdir("."))]
    """, **{"input.txt": b"hello", "pkg/data.bin": b"\x00\xff"})
    assert result.status == "ok", result
    cwd, text, data, listing = result.value
    assert (text, data, listing) == ("hello", "00ff", ["input.txt", "made-by-the-job.txt", "pkg"])
    assert not os.path.exists(cwd)
    assert run(sandbox, "import os; result = os.getcwd()").value != cwd


def test_a_file_name_may_not_leave_the_job_directory(sandbox):
    result = run(sandbox, "result = 1", **{"../escape.txt": b"x"})
    assert result.status == "error" and "outside the job directory" in result.detail


def test_clean_environment_one_thread_own_session(sandbox):
    result = run(sandbox, """
        import os, torch
        result = [dict(os.environ), os.getcwd(), torch.get_num_threads(), os.getsid(0) == os.getpid(),
                  os.getpgid(0) == os.getpid()]
    """)
    env, cwd, threads, session_leader, group_leader = result.value
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                        "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH"}
    assert env["HOME"] == env["TMPDIR"] == cwd
    assert (env["LANG"], env["OMP_NUM_THREADS"], env["MKL_NUM_THREADS"]) == ("C.UTF-8", "1", "1")
    assert (env["PYTHONHASHSEED"], env["PYTHONDONTWRITEBYTECODE"]) == ("0", "1")
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(TESTS), str(REPO)]
    assert (threads, session_leader, group_leader) == (1, True, True)


def test_a_forked_job_with_torch_preloaded_starts_fast(sandbox):
    walls = []
    for _ in range(5):
        start = time.monotonic()
        result = run(sandbox, "import torch; result = torch.arange(3.0).mul(2).tolist()")
        walls.append(time.monotonic() - start)
        assert result.value == [0.0, 2.0, 4.0]
    assert sorted(walls)[2] < 0.5, walls  # `import torch` alone takes ~2 s


def test_map_keeps_request_order_and_runs_jobs_in_parallel(sandbox):
    start = time.monotonic()
    results = list(sandbox.map([("runtime_jobs:run_code", {"code": "import time; time.sleep(1); result = 'a'"}),
                                ("runtime_jobs:run_code", {"code": "import time; time.sleep(1); result = 'b'"})]))
    assert [r.value for r in results] == ["a", "b"]
    assert time.monotonic() - start < 1.8  # jobs=2: both sleep at once
    delays = [0.4, 0.0, 0.2, 0.1, 0.0]
    results = sandbox.map(("runtime_jobs:run_code", {"code": f"import time; time.sleep({d}); result = {i}"})
                          for i, d in enumerate(delays))
    assert [r.value for r in results] == list(range(len(delays)))


def test_fresh_interpreters_give_the_same_results():
    codes = ["import torch; print('out'); result = torch.ones(2).sum().item()",
             "raise KeyError('k')",
             "import os; result = sorted(os.listdir('.'))"]
    files = {"a.txt": b"a"}
    with Sandbox(LIMITS, jobs=2, sys_path=[str(TESTS), str(REPO)]) as forked, \
            Sandbox(Limits(timeout=30), jobs=2, fresh=True, sys_path=[str(TESTS), str(REPO)]) as fresh:
        assert fresh.isolation == forked.isolation
        for code in codes:
            a, b = run(forked, code, **files), run(fresh, code, **files)
            assert (a.status, a.value, a.detail, a.stdout) == (b.status, b.value, b.detail, b.stdout)
            assert b.wall > a.wall  # a new interpreter imports torch again


# --- hostile jobs --------------------------------------------------------------------------

def test_an_exception_is_an_error_with_its_traceback(sandbox):
    result = run(sandbox, "def f():\n    raise ValueError('bad value')\nf()")
    assert (result.status, result.value, result.detail) == ("error", None, "ValueError: bad value")
    assert "Traceback" in result.stderr and result.stderr.endswith("ValueError: bad value\n")


def test_a_value_that_is_not_json_is_an_error(sandbox):
    result = run(sandbox, "result = {1, 2}")
    assert result.status == "error" and "not JSON-serializable" in result.detail


@pytest.mark.parametrize("code, signal_name", [
    ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
])
def test_a_crash_is_reported_with_its_signal(sandbox, code, signal_name):
    result = run(sandbox, code)
    assert (result.status, result.detail) == ("crashed", f"killed by {signal_name}")
    assert_nothing_left(sandbox)


def test_an_infinite_loop_times_out_and_its_whole_group_is_killed(sandbox):
    marker = f"torchlint-loop-{uuid.uuid4().hex}"
    start = time.monotonic()
    result = run(sandbox, f"""
        import subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
        while True:
            pass
    """)
    assert (result.status, result.detail) == ("timeout", "timed out after 3 s")
    assert 3 <= time.monotonic() - start < 5
    assert processes_with(marker) == []
    assert_nothing_left(sandbox)


def test_a_daemon_that_leaves_the_session_is_killed_with_the_job(sandbox):
    marker = f"torchlint-daemon-{uuid.uuid4().hex}"
    result = run(sandbox, f"""
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
            os._exit(0)
        time.sleep(0.5)
        result = "daemon started"
    """)
    assert (result.status, result.value) == ("ok", "daemon started")
    assert processes_with(marker) == []
    assert_nothing_left(sandbox)


def test_a_memory_bomb_is_stopped_at_the_limit(sandbox):
    result = run(sandbox, """
        chunks = []
        while True:
            chunks.append(bytearray(32 << 20))
    """)
    assert (result.status, result.detail) == ("memory", "exceeded the 512 MiB memory limit (MemoryError)")
    result = run(sandbox, "import torch; torch.empty(1 << 40, dtype=torch.uint8)")
    assert result.status == "memory" and "can't allocate memory" in result.detail
    assert run(sandbox, "result = len(bytearray(128 << 20))").value == 128 << 20  # within the limit
    assert_nothing_left(sandbox)


def test_a_fork_bomb_is_contained_and_killed(sandbox):
    requires(sandbox, "processes")
    start = time.monotonic()
    result = run(sandbox, """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    assert result.status == "processes", result
    assert result.detail == "hit the 16-process limit (timed out after 3 s)"
    assert time.monotonic() - start < 5
    assert_nothing_left(sandbox)
    assert run(sandbox, "result = 'still fine'").value == "still fine"


def test_no_network_connection_leaves_the_job(sandbox):
    requires(sandbox, "network")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        result = run(sandbox, f"""
            import socket
            result = []
            for address in [("127.0.0.1", {port}), ("1.1.1.1", 80)]:
                try:
                    socket.create_connection(address, timeout=1).close()
                    result.append("connected")
                except OSError as e:
                    result.append(type(e).__name__ + ": " + str(e))
        """)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert result.status == "ok"
    assert all(outcome != "connected" for outcome in result.value), result.value


def test_daemon_sockets_under_run_are_hidden(sandbox):
    requires(sandbox, "filesystem")
    path = f"/run/torchlint-test-{uuid.uuid4().hex}.sock"
    with socket.socket(socket.AF_UNIX) as listener:
        try:
            listener.bind(path)
        except OSError as e:
            pytest.skip(f"cannot create a socket under /run here: {e}")
        try:
            listener.listen()
            result = run(sandbox, f"""
                import socket
                try:
                    socket.socket(socket.AF_UNIX).connect({path!r})
                    result = "connected"
                except OSError as e:
                    result = e.strerror
            """)
        finally:
            os.unlink(path)
    assert (result.status, result.value) == ("ok", "No such file or directory")


def test_no_write_outside_the_job_directory(sandbox, tmp_path):
    requires(sandbox, "filesystem")
    token = uuid.uuid4().hex
    existing = tmp_path / "existing.txt"
    existing.write_text("original")
    targets = [f"/tmp/torchlint-escape-{token}", str(REPO / f"torchlint-escape-{token}"),
               str(tmp_path / "new.txt"),
               os.path.join(os.path.dirname(sandbox._base), f"torchlint-escape-{token}")]
    own_shared_memory = f"/dev/shm/torchlint-escape-{token}"  # the job's own tmpfs: gone with it
    result = run(sandbox, f"""
        import ctypes, os
        outcomes = {{}}
        def attempt(name, action):
            try:
                action()
                outcomes[name] = "succeeded"
            except OSError as e:
                outcomes[name] = e.strerror
        for path in {targets!r}:
            attempt(path, lambda: open(path, "w").write("x"))
        attempt("append", lambda: open({str(existing)!r}, "a").write("x"))
        attempt("mkdir", lambda: os.mkdir({str(tmp_path / "dir")!r}))
        attempt("sibling job dir", lambda: open(os.path.join(os.path.dirname(os.getcwd()), "x"), "w"))
        attempt("sysctl", lambda: open("/proc/sys/kernel/domainname", "w").write("x"))
        attempt("block device", lambda: open("/dev/vda", "rb"))
        libc = ctypes.CDLL(None, use_errno=True)
        def remount():  # MS_REMOUNT | MS_BIND: make / writable again
            if libc.mount(None, b"/", None, 32 | 4096, None) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        attempt("remount", remount)
        open("/dev/null", "w").write("/dev/null stays writable")
        open({own_shared_memory!r}, "w").write("shared memory of the job's own")
        open("inside.txt", "w").write("the job's own directory is writable")
        result = outcomes
    """)
    assert result.status == "ok", result
    assert "succeeded" not in result.value.values(), result.value
    assert result.value["remount"] == "Operation not permitted"
    for path in [*targets, own_shared_memory]:
        assert not os.path.exists(path)
    assert existing.read_text() == "original" and not (tmp_path / "dir").exists()


def test_a_job_may_close_or_redirect_its_stdout_and_stderr(sandbox):
    result = run(sandbox, """
        import os, sys
        print("before", flush=True)
        os.close(1)
        os.close(2)
        result = "closed"
    """)
    assert (result.status, result.value, result.stdout) == ("ok", "closed", "before\n")
    result = run(sandbox, """
        import os
        print("before", flush=True)
        os.dup2(os.open("elsewhere.txt", os.O_WRONLY | os.O_CREAT), 1)
        os.dup2(1, 2)
        print("after", flush=True)
        result = open("elsewhere.txt").read()
    """)
    assert (result.status, result.value, result.stdout) == ("ok", "after\n", "before\n")
    result = run(sandbox, "import os; os.closerange(0, 1000); result = 'gone'")
    assert result.status == "error" and "without a result" in result.detail


def test_a_forked_child_returning_from_the_job_does_not_report(sandbox):
    result = run(sandbox, """
        import os
        child = os.fork()
        if child:
            os.waitpid(child, 0)
        result = "parent" if child else "child"
    """)
    assert (result.status, result.value) == ("ok", "parent")


def test_close_leaves_no_process_directory_or_cgroup():
    box = Sandbox(LIMITS, preload=(), sys_path=[str(TESTS), str(REPO)])
    server, base, cgroup = box._server.pid, box._base, box._cgroup
    assert isinstance(box.isolation, Isolation)
    assert run(box, "result = 2").value == 2
    box.close()
    assert not os.path.exists(base)
    assert cgroup is None or not os.path.exists(cgroup)
    assert not os.path.exists(f"/proc/{server}") and descendants(server) == []
    with pytest.raises(RuntimeError):
        run(box, "result = 3")


def test_close_kills_a_running_job():
    marker = f"torchlint-close-{uuid.uuid4().hex}"
    box = Sandbox(Limits(timeout=60), preload=(), sys_path=[str(TESTS), str(REPO)])
    box._submit("runtime_jobs:run_code", {"code": f"""import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
time.sleep(600)"""})
    deadline = time.monotonic() + 10
    while not processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker)
    box.close()
    assert processes_with(marker) == []


def test_isolation_here(sandbox):
    """What this machine allowed (printed with -s); the note names anything missing."""
    print(sandbox.isolation, "pid namespaces:", sandbox.pid_namespaces)
    if sandbox.pid_namespaces and sandbox.isolation.filesystem:  # a /proc of the job's own
        result = run(sandbox, "import os; result = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())")
        assert result.value == [1, 2]  # the sandbox's init and the job
    assert bool(sandbox.isolation.note) != all((sandbox.isolation.network, sandbox.isolation.filesystem,
                                                sandbox.isolation.processes, sandbox.pid_namespaces))


# --- no way out: sockets of every kind, files outside the project, the kernel's secrets -----

_PROBE = """
import ctypes, os, socket
outcomes = {}
def attempt(name, action):
    try:
        outcomes[name] = action()
    except OSError as e:
        outcomes[name] = type(e).__name__ + ": " + str(e.strerror)
def send(family, address, kind=socket.SOCK_STREAM):
    s = socket.socket(family, kind)
    s.settimeout(1)
    s.connect(address)
    s.sendall(SECRET.encode() if SECRET else b"no secret read")
    return "sent"
SECRET = ""
try:
    SECRET = open(SECRET_PATH).read()
    outcomes["secret"] = "read"
except OSError as e:
    outcomes["secret"] = type(e).__name__
attempt("git config", lambda: open(os.path.join(PROJECT, ".git", "config")).read())
attempt("project file", lambda: open(os.path.join(PROJECT, "data.txt")).read())
attempt("unix outside", lambda: send(socket.AF_UNIX, OUTSIDE))
attempt("unix in the project", lambda: send(socket.AF_UNIX, INSIDE))
attempt("abstract", lambda: send(socket.AF_UNIX, "\\0" + ABSTRACT))
attempt("datagram outside", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].sendto(b"x", OUTSIDE))
attempt("tcp", lambda: send(socket.AF_INET, ("127.0.0.1", PORT)))
for name, family, kind, protocol in [("vsock", 40, socket.SOCK_STREAM, 0), ("packet", 17, socket.SOCK_RAW, 0),
                                     ("netlink audit", 16, socket.SOCK_RAW, 9),
                                     ("netlink uevent", 16, socket.SOCK_DGRAM, 15),
                                     ("crypto", 38, socket.SOCK_SEQPACKET, 0)]:
    attempt(name, lambda: socket.socket(family, kind, protocol).close() or "opened")
libc = ctypes.CDLL(None, use_errno=True)
def syscall(number, *args):
    return "allowed" if libc.syscall(number, *args) >= 0 else os.strerror(ctypes.get_errno())
if os.uname().machine == "x86_64":
    outcomes["keyctl"] = syscall(250, 0, -3)  # the session keyring's id
    outcomes["ptrace"] = syscall(101, 0, 0, 0, 0)  # PTRACE_TRACEME
    outcomes["io_uring"] = syscall(425, 8, None)
    outcomes["unshare"] = syscall(272, 0x10000000)
    outcomes["bpf"] = syscall(321, 0, None, 0)
outcomes["socketpair"] = len(socket.socketpair())
result = outcomes
"""


@pytest.fixture()
def hostile_world(tmp_path):
    """Listeners outside the job (a unix socket outside the project, one inside it, an
    abstract one, TCP) that record what reaches them, a secret file outside the project,
    and a project folder with a token in .git/config."""
    import threading

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n")
    (project / "data.txt").write_text("data of the project")
    secret = tmp_path / "secret.txt"
    secret.write_text(f"secret-{uuid.uuid4().hex}")
    received: list = []
    listeners = []

    def serve(listener):
        listener.settimeout(0.2)
        while listener.fileno() != -1:
            try:
                connection, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with connection:
                received.append(connection.recv(1000))

    addresses = {"OUTSIDE": str(tmp_path / "daemon.sock"), "INSIDE": str(project / "fsmonitor.sock"),
                 "ABSTRACT": f"torchlint-test-{uuid.uuid4().hex}"}
    for address in (addresses["OUTSIDE"], addresses["INSIDE"], "\0" + addresses["ABSTRACT"]):
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(address)
        listener.listen()
        listeners.append(listener)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    listeners.append(tcp)
    threads = [threading.Thread(target=serve, args=(listener,), daemon=True) for listener in listeners]
    for thread in threads:
        thread.start()
    constants = {**addresses, "PORT": tcp.getsockname()[1], "SECRET_PATH": str(secret), "PROJECT": str(project)}
    yield constants, received, secret.read_text()
    for listener in listeners:
        listener.close()


def _probe(constants: dict) -> str:
    return "".join(f"{name} = {value!r}\n" for name, value in constants.items()) + textwrap.dedent(_PROBE)


@pytest.mark.parametrize("mount_namespace, writable", [(True, False), (False, False), (True, True)],
                         ids=["namespaces", "landlock", "copy-on-write"])
def test_no_socket_file_or_secret_of_the_machine_reaches_a_job(hostile_world, monkeypatch, mount_namespace,
                                                               writable):
    """The same with the project writable: the overlay must not uncover what the view covers."""
    constants, received, secret = hostile_world
    if not mount_namespace:
        from torchlint.runtime import confine

        if confine.landlock_abi() < 1:
            pytest.skip("no Landlock in this kernel")
        monkeypatch.setenv("TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE", "1")
    with Sandbox(LIMITS, preload=(), sys_path=[str(TESTS)], readable=[constants["PROJECT"]],
                 writable=[constants["PROJECT"]] if writable else ()) as box:
        requires(box, "sockets")
        requires(box, "reads")
        if writable and not box.isolation.copy_on_write:
            pytest.skip(f"no copy-on-write layer on this machine: {box.isolation.note}")
        outcome = run(box, _probe(constants))
    assert outcome.status == "ok", outcome
    seen = outcome.value
    assert received == [], received
    assert seen["secret"] in ("FileNotFoundError", "PermissionError")
    assert secret not in json.dumps(seen) and "c2VjcmV0" not in json.dumps(seen)
    assert seen["project file"] == "data of the project"
    for name in ("unix outside", "unix in the project", "abstract", "datagram outside", "tcp", "vsock", "packet",
                 "netlink audit", "netlink uevent", "crypto"):
        assert seen[name] != "sent" and seen[name] != "opened", (name, seen[name])
    for name in ("keyctl", "ptrace", "io_uring", "unshare", "bpf"):
        assert seen.get(name, "Operation not permitted") == "Operation not permitted", (name, seen)
    assert seen["socketpair"] == 2  # multiprocessing's pipes still work
    if mount_namespace:
        assert seen["git config"] == ""  # covered by an empty file
        assert seen["unix in the project"] == "ConnectionRefusedError: Connection refused"
        assert seen["unix outside"] == "FileNotFoundError: No such file or directory"
    else:
        assert seen["git config"] == "PermissionError: Permission denied"


def test_a_writable_project_takes_each_jobs_writes_in_a_layer_of_its_own(tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "train.txt").write_text("1 2 3")
    with Sandbox(LIMITS, jobs=2, preload=(), sys_path=[str(TESTS)], writable=[str(project)]) as box:
        if not box.isolation.copy_on_write:
            pytest.skip(f"no copy-on-write layer on this machine: {box.isolation.note}")
        assert box.isolation.copy_on_write == (str(project.resolve()),)
        writes = f"""
            import os
            os.chdir({str(project)!r})
            os.makedirs("logs/run")
            with open("logs/run/loss.txt", "w") as f:
                f.write("0.5")
            with open("data/train.txt", "a") as f:
                f.write(" 4")
            result = [open("data/train.txt").read(), open("logs/run/loss.txt").read(), sorted(os.listdir("."))]
        """
        first, second = box.map([("runtime_jobs:run_code", {"code": textwrap.dedent(writes)})] * 2)
        after = run(box, f"import os; result = sorted(os.listdir({str(project)!r}))")
    # Each job saw its own writes, and not the other's (both could create logs/run).
    assert first.value == second.value == ["1 2 3 4", "0.5", ["data", "logs"]], (first, second)
    assert after.value == ["data"]
    assert (project / "data" / "train.txt").read_text() == "1 2 3"
    assert sorted(p.name for p in project.iterdir()) == ["data"]


def test_a_folder_too_broad_to_expose_is_not_made_writable(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with Sandbox(LIMITS, preload=(), sys_path=[str(TESTS)], writable=[str(home)]) as box:
        requires(box, "reads")
        assert box.isolation.copy_on_write == ()
        outcome = run(box, f"""
            try:
                open({str(home / "notes.txt")!r}, "w").write("x")
                result = "written"
            except OSError as e:
                result = type(e).__name__
        """)
    assert outcome.value in ("OSError", "PermissionError", "FileNotFoundError"), outcome
    assert not (home / "notes.txt").exists()


def test_a_project_too_broad_to_expose_shows_only_its_python_files(tmp_path, monkeypatch):
    """A script in the home folder: the job may read the script's folder's .py files, not
    the home folder's other files (~/.ssh, ~/.aws...)."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    (home / "helper.py").write_text("VALUE = 42\n")
    monkeypatch.setenv("HOME", str(home))
    with Sandbox(LIMITS, preload=(), sys_path=[str(TESTS)], readable=[str(home)]) as box:
        requires(box, "reads")
        outcome = run(box, f"""
            import os, sys
            sys.path.insert(0, {str(home)!r})
            import helper
            try:
                key = open({str(home / ".ssh" / "id_rsa")!r}).read()
            except OSError as e:
                key = type(e).__name__
            result = [helper.VALUE, key]
        """)
    assert outcome.value == [42, "FileNotFoundError"] or outcome.value == [42, "PermissionError"], outcome
