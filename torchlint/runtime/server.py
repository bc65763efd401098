"""The fork server behind ``torchlint.runtime.sandbox`` (``python -m torchlint.runtime.server``).

The server isolates itself once (user + network + mount namespace, every mount read-only),
imports the preload modules, and then serves one JSON request per line on stdin, answering
one JSON result per line. Each job is a tree of forks::

    server ── supervisor ── init (pid 1 of a new pid namespace) ── job

The supervisor owns the job's temporary directory, its output files, its cgroup and its
deadline. ``init`` finishes the per-job mount namespace (only the job's directory writable, a
/proc of its own) and waits for the job: when init dies the kernel kills everything left in the
namespace, setsid escapers and double-forked daemons included, which a process-group kill
cannot promise. The job drops every capability before running user code, so it cannot undo
the read-only mounts (it is "root" inside the user namespace).

Nothing here trusts the job: its result comes back over a pipe as JSON, never pickled.
"""

from __future__ import annotations

import base64
import ctypes
import errno
import importlib
import json
import math
import os
import platform
import re
import resource
import selectors
import shutil
import signal
import sys
import time
import traceback
from typing import Optional

from torchlint.runtime import confine, view

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x20000, 0x8000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 24, 38, 36
# Set (to anything) in the environment of the program that starts a Sandbox: build no view
# of the filesystem, as on a machine without mount namespaces (to test the Landlock way).
NO_MOUNT_NAMESPACE = "TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE"
# The file of the sandbox's folder that names the jobs' cgroup (sandbox.remove_stale reads it).
CGROUP_RECORD = "cgroup"
KEPT_FLAGS = MS_NOEXEC | 1024 | 2048 | 4096  # noexec, noatime, nodiratime, relatime: as they are
DEVICES = ("null", "zero", "full", "random", "urandom")
SHM_BYTES = 256 << 20
# Without a tmpfs of its own (Landlock), how often a job's folder is measured against the disk
# quota: a job is stopped within this long of passing it, having written what it could meanwhile.
DISK_POLL = 0.1
TAIL = 20_000
MAX_RESULT = 64 << 20

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda s: s.encode() if s is not None else None
    _check(_libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)), f"mount {target}")


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _remount(path: str, flags: int) -> None:
    """Change the per-mount flags of the mount at `path` (a bind remount touches only this mount)."""
    kept = os.statvfs(path).f_flag & KEPT_FLAGS  # statvfs's ST_* flags have the MS_* values
    _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_NOSUID | kept | flags)


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            points.append(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), line.split()[4]))  # \040: space
    return points


# ----------------------------------------------------------------------------------------------
# The server's own isolation, done once: what works is what the Isolation report says.

def _pids_cgroup(tag: str) -> str:
    """Create a pids cgroup for this server's jobs (v1 `pids` hierarchy or v2); return its path."""
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    for fields in mounts:
        fstype, options = fields[-3], fields[-1].split(",")
        if fstype == "cgroup" and "pids" in options:
            path = os.path.join(fields[4], tag)
            break
    else:
        for fields in mounts:
            if fields[-3] == "cgroup2":
                own = next(line[3:].strip() for line in open("/proc/self/cgroup") if line.startswith("0::"))
                parent = os.path.join(fields[4], own.lstrip("/"))
                _write(os.path.join(parent, "cgroup.subtree_control"), "+pids")
                path = os.path.join(parent, tag)
                break
        else:
            raise OSError(errno.ENOENT, "no pids cgroup controller is mounted")
    os.mkdir(path)
    try:
        _write(os.path.join(path, "cgroup.subtree_control"), "+pids")  # v2 only
    except OSError:
        pass
    return path


def _private_dev(staging: str, target: str) -> None:
    """Put at ``target`` a read-only tmpfs holding only the harmless character devices.

    Read-only mounts do not stop writes to device nodes, and the job is root (kuid 0 when the
    caller is root) inside its user namespace: without this it could open /dev/vda."""
    os.makedirs(staging, exist_ok=True)  # the dry run made it already
    _mount("tmpfs", staging, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name in filter(lambda name: os.path.exists(f"/dev/{name}"), DEVICES):
        node = os.path.join(staging, name)
        open(node, "w").close()
        _mount(f"/dev/{name}", node, None, MS_BIND)
        _remount(node, MS_RDONLY)  # read-only, but device nodes stay usable: no MS_NODEV here
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(link, os.path.join(staging, name))
    os.mkdir(os.path.join(staging, "shm"))
    _remount(staging, MS_RDONLY | MS_NODEV)
    os.makedirs(target, exist_ok=True)
    _mount(staging, target, None, MS_MOVE)


def isolate_server(base: str, readable: list[str], home: str, mount_namespace: bool = True,
                   writable: list[str] = ()) -> dict:
    """Enter new user/network/mount namespaces and build the view of the filesystem the
    jobs get: only what they need (``view.py``), read-only but ``base``; each folder of
    ``writable`` that the view exposes whole is writable to each job as a copy-on-write
    layer of its own (see ``_copy_on_write``).

    Returns what worked, why the rest did not, and the jobs' cgroup, for the hello message."""
    state = {"network": False, "filesystem": False, "reads": False, "sockets": False, "view": False,
             "landlock": [], "hidden": [], "seccomp": False, "strict_unix": True, "pidns": False, "cgroup": None,
             "userns": False, "nproc": os.getuid() != 0, "missing": [], "copy_on_write": []}
    uid, gid = os.getuid(), os.getgid()
    plan = view.plan(readable, home)  # read the host's filesystem before anything changes
    try:
        _unshare(CLONE_NEWUSER)
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
        state["userns"] = True
    except OSError as e:
        state["missing"].append(f"no user namespace ({e.strerror})")
    try:
        _unshare(CLONE_NEWNET)  # a new network namespace has only a loopback device, and it is down
        state["network"] = True
    except OSError as e:
        state["missing"].append(f"no network isolation ({e.strerror})")
    try:
        _unshare(CLONE_NEWIPC)  # System V shared memory and queues: permission is by uid alone
    except OSError:
        pass  # best effort: not part of the report
    try:
        state["cgroup"] = _pids_cgroup(f"torchlint-{os.getpid()}")
        _write(os.path.join(base, CGROUP_RECORD), state["cgroup"])  # for the next run, if this one is killed
    except OSError as e:
        if not state["nproc"]:
            state["missing"].append(f"no process-count limit (no writable pids cgroup: {e.strerror}; "
                                    "RLIMIT_NPROC does not bind root)")
    try:
        # A dry run in a child first: failing half-way must not leave the server half isolated.
        if not mount_namespace:
            raise OSError(errno.EPERM, f"{NO_MOUNT_NAMESPACE} is set")
        _in_child(lambda: _isolate_filesystem(base, state["cgroup"], plan))
        _isolate_filesystem(base, state["cgroup"], plan)
        state["view"] = state["filesystem"] = state["reads"] = True
        _plan_copy_on_write(state, base, plan, writable)
    except OSError as e:
        landlock = [path for path, _ in plan.readable()]
        why = _in_child_problem(lambda: confine.restrict_filesystem(landlock, [base], plan.hidden))
        if why is None:  # Landlock gives each job the same limits, without a mount namespace
            state["landlock"] = landlock
            state["hidden"] = plan.hidden
            state["filesystem"] = state["reads"] = True
            state["missing"].append(f"no mount namespace ({e.strerror}): Landlock limits what jobs read and write")
        else:
            state["missing"].append(f"no filesystem isolation (no mount namespace: {e.strerror}; {why}): "
                                    "jobs can read every file you can and write where you can")
    # A unix socket of its own only where the job cannot name one outside: in a view that
    # hides the machine's sockets, and a network namespace of its own for abstract names.
    state["strict_unix"] = not (state["view"] and state["network"] and plan.sockets_checked)
    why = _in_child_problem(lambda: confine.install_filter(state["network"], state["strict_unix"]))
    if why is None:
        state["seccomp"] = state["sockets"] = True  # no socket of a job reaches outside
    else:
        state["missing"].append(f"{why}: jobs may open sockets of any kind"
                                + ("" if state["network"] else ", including to this machine's network"))
    if state["seccomp"] and state["strict_unix"]:
        why = plan.unchecked if state["view"] and state["network"] else \
            "no view of the filesystem of their own" if state["network"] else "no network namespace"
        state["missing"].append(f"jobs get no unix sockets of their own ({why}): DataLoader workers fail")
    try:
        _in_child(_check_pid_namespace)
        state["pidns"] = True
    except OSError as e:
        state["missing"].append(f"no pid namespace ({e.strerror}): processes that leave the job's "
                                "process group and cgroup may outlive it")
    return state


def _isolate_filesystem(base: str, cgroup: str | None, plan: "view.Plan") -> None:
    """Move into a root of our own: a tmpfs holding only what ``plan`` exposes, read-only,
    with ``base`` (and the jobs' cgroup) writable and /dev reduced to harmless devices."""
    _unshare(CLONE_NEWNS)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # our mounts must not propagate back out
    root = os.path.join(base, ".root")
    os.makedirs(root, exist_ok=True)  # the dry run made it already
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    empty = os.path.join(root, ".torchlint-empty")
    open(empty, "w").close()
    for link, target in plan.links:
        _make_parents(root + link)
        if not os.path.lexists(root + link):
            os.symlink(target, root + link)
    for path, recursive in plan.readable():
        _expose(root, path, MS_BIND | (MS_REC if recursive else 0))
    for path in plan.hidden:  # sockets, FIFOs, secrets inside what is exposed
        target = root + path
        if os.path.lexists(target) and not os.path.isdir(target):
            _mount(empty, target, None, MS_BIND)
    os.unlink(empty)  # the mounts keep it
    for path in filter(None, (base, cgroup)):
        _expose(root, path, MS_BIND)
    _expose(root, "/proc", MS_BIND | MS_REC)  # each job mounts a /proc of its own over it
    os.makedirs(root + "/tmp", exist_ok=True)
    _private_dev(os.path.join(base, ".dev"), root + "/dev")
    os.makedirs(root + "/.old-root", exist_ok=True)
    _pivot_root(root, root + "/.old-root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old-root", 2), "umount old root")  # MNT_DETACH
    os.rmdir("/.old-root")
    for point in _mount_points():
        if point in (base, cgroup) or point == "/dev" or point.startswith("/dev/"):
            continue
        try:
            _remount(point, MS_RDONLY | MS_NODEV)
        except OSError as e:
            # A mount hidden under another one cannot be reached (nor written) by path.
            if e.errno != errno.EINVAL or os.path.ismount(point):
                raise
    _remount(base, MS_NODEV)
    if cgroup:
        _remount(cgroup, MS_NODEV | MS_NOEXEC)
    os.chdir(base)


def _plan_copy_on_write(state: dict, base: str, plan: "view.Plan", writable: list[str]) -> None:
    """Which of ``writable`` jobs may write to, each through a layer of its own."""
    # A folder too broad to expose whole (the home folder) is not offered: it stays read-only.
    exposed = [folder for folder in map(os.path.realpath, writable)
               if any(folder == tree or folder.startswith(tree.rstrip("/") + "/") for tree in plan.trees)]
    if not exposed:
        return
    why = _in_child_problem(lambda: _try_copy_on_write(base, exposed[0]))
    if why is None:
        state["copy_on_write"] = exposed
    else:
        state["missing"].append(f"no copy-on-write layer ({why}): the project is read-only to programs")


def _try_copy_on_write(base: str, folder: str) -> None:
    """The jobs' way (an overlay whose upper layer is on a tmpfs), on a folder gone with the trial."""
    _unshare(CLONE_NEWNS)
    trial = os.path.join(base, ".copy-on-write-trial")
    os.makedirs(trial, exist_ok=True)
    _job_folder(trial, 1 << 20)
    _copy_on_write([folder], trial)


def _copy_on_write(folders: list[str], directory: str) -> None:
    """Mount an overlay on each folder: it reads as before and takes writes, which land in
    the job's own ``directory`` and vanish with it; the user's files are never changed.

    An overlay's lower layer is the folder's own filesystem, without what is mounted below
    it, and the view covers sockets and secrets there with empty files (view.py): each
    folder mounted below is put back on top, from a handle taken before the overlay hid it,
    and each file mounted below is covered again."""
    layers = os.path.join(directory, ".torchlint-writes")
    os.makedirs(layers)
    empty = os.path.join(layers, "empty")
    open(empty, "w").close()
    for index, folder in enumerate(folders):
        upper, work = os.path.join(layers, str(index), "upper"), os.path.join(layers, str(index), "work")
        os.makedirs(upper)
        os.makedirs(work)
        below = [point for point in _mount_points() if point.startswith(folder.rstrip("/") + "/")]
        # The covers' own empty file is gone (unlinked once mounted): a handle to it cannot be mounted.
        handles = [os.open(point, os.O_PATH | os.O_CLOEXEC) if os.path.isdir(point) else None for point in below]
        options = f"lowerdir={_escaped(folder)},upperdir={_escaped(upper)},workdir={_escaped(work)}"
        try:
            _mount("overlay", folder, "overlay", MS_NOSUID | MS_NODEV, options)
        except OSError as e:
            if e.errno != errno.EINVAL:
                raise
            _mount("overlay", folder, "overlay", MS_NOSUID | MS_NODEV, options + ",userxattr")
        for point, handle in zip(below, handles):
            if os.path.lexists(point):  # else covered by what was put back before it
                _mount(f"/proc/self/fd/{handle}" if handle is not None else empty, point, None, MS_BIND)
                _remount(point, MS_RDONLY | MS_NODEV)
            if handle is not None:
                os.close(handle)


def _job_folder(directory: str, size: int) -> None:
    """Make ``directory`` a tmpfs of ``size`` bytes: what the job writes there (its files,
    its overlays' upper layers and work folders) fails with ENOSPC past it, never reaches
    the host's disk, and is gone with the job's mount namespace, whoever runs torchlint."""
    _mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=700")


def _escaped(path: str) -> str:
    """A path as an overlay option: its separators escaped."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def _expose(root: str, path: str, flags: int) -> None:
    target = root + path
    if os.path.isdir(path):
        os.makedirs(target, exist_ok=True)
    else:
        _make_parents(target)
        if not os.path.exists(target):
            open(target, "w").close()
    _mount(path, target, None, flags)


def _make_parents(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)


def _pivot_root(new_root: str, put_old: str) -> None:
    _check(_libc.syscall(_SYS_PIVOT_ROOT, new_root.encode(), put_old.encode()), "pivot_root")


_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}.get(platform.machine().lower(), -1)


def _in_child_problem(function) -> str | None:
    """Run ``function`` (which returns None or why it failed) in a forked child: its answer."""
    try:
        _in_child(lambda: _raise_problem(function()))
    except OSError as e:
        return e.strerror
    return None


def _raise_problem(problem: str | None) -> None:
    if problem is not None:
        raise OSError(errno.EPERM, problem)


def _check_pid_namespace() -> None:
    _unshare(CLONE_NEWPID)
    child = os.fork()
    if child == 0:
        os._exit(0 if os.getpid() == 1 else 1)
    if os.waitpid(child, 0)[1] != 0:
        raise OSError(errno.EINVAL, "the first child is not pid 1")


def _in_child(function) -> None:
    """Run `function` in a forked child; raise its OSError here."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            function()
            os._exit(0)
        except BaseException as e:
            os.write(w, (getattr(e, "strerror", None) or f"{type(e).__name__}: {e}").encode())
            os._exit(1)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        message = f.read().decode()
    if os.waitpid(pid, 0)[1] != 0:
        raise OSError(errno.EPERM, message or "failed")


def preload_modules(names) -> None:
    """Import the modules, then call each one's ``warm_up()`` if it has one: lazily loaded
    code (torch._dynamo on first use: ~3 s) is then loaded once, not in every job."""
    modules = [importlib.import_module(name) for name in names]
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    for module in modules:
        if callable(getattr(module, "warm_up", None)):
            module.warm_up()


# ----------------------------------------------------------------------------------------------
# One job: supervisor -> init -> job.

def _kill_descendants(deadline: float) -> None:
    """SIGKILL every process below this one (a child subreaper: orphans come back to it)."""
    me = os.getpid()
    while time.monotonic() < deadline:
        children: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(ppid, []).append(int(name))
        found, stack = [], list(children.get(me, ()))
        while stack:
            found.append(stack.pop())
            stack.extend(children.get(found[-1], ()))
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.005)


def kill_cgroup(path: str, deadline: float) -> None:
    """SIGKILL the cgroup's processes until it is empty (setsid cannot leave it); remove it."""
    while time.monotonic() < deadline:
        try:
            with open(os.path.join(path, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
            if not pids:
                os.rmdir(path)
                return
        except OSError as e:
            if e.errno == errno.ENOENT:
                return
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - TAIL))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _write_files(directory: str, files: dict) -> None:
    for name, data in files.items():
        path = os.path.normpath(os.path.join(directory, name))
        if os.path.isabs(name) or not path.startswith(directory + os.sep):
            raise ValueError(f"file name outside the job directory: {name!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))


def supervise(request: dict, config: dict, state: dict) -> dict:
    """Run one job to completion or to its deadline; clean up; return the result message."""
    limits, base, job_id = config["limits"], config["base"], request["id"]
    start = time.monotonic()
    timeout = request.get("timeout", limits["timeout"])  # shorter where the run's budget ends first
    deadline = start + timeout
    directory = os.path.join(base, str(job_id))
    out_path, err_path = directory + ".stdout", directory + ".stderr"
    cgroup = state["cgroup"] and os.path.join(state["cgroup"], f"job-{job_id}")
    os.mkdir(directory, 0o700)
    if not state["view"]:  # else init writes them into the job's tmpfs
        _write_files(directory, request.get("files", {}))
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if cgroup:
        os.mkdir(cgroup)
        _write(os.path.join(cgroup, "pids.max"), str(limits["processes"] + 1))  # + our init
    if config["fresh"]:
        with open(directory + ".job", "w") as f:
            json.dump({**request, "preload": config["preload"], "memory": limits["memory"]}, f)
    result_r, result_w = os.pipe()
    status_r, status_w = os.pipe()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if state["pidns"]:
        _unshare(CLONE_NEWPID)  # our next child becomes pid 1 of a new pid namespace
    init = os.fork()
    if init == 0:
        os.close(result_r)
        os.close(status_r)
        _init(request, config, state, directory, cgroup, out, err, result_w, status_w)
    os.close(result_w)
    os.close(status_w)

    # Without a view of its own the job's folder is on the host's disk: it is measured instead.
    over_quota = None if state["view"] else lambda: _disk_usage(directory) > limits["disk"]
    data, stopped = _collect(result_r, init, deadline, over_quota)
    hit_process_limit = cgroup and _process_limit_hit(cgroup)
    if stopped:
        os.kill(init, signal.SIGKILL)  # as pid 1 of the namespace, its death kills the whole job
    cleanup_deadline = time.monotonic() + 5
    if not state["pidns"]:  # else nothing of the job can outlive its init, reaped below
        if cgroup:
            kill_cgroup(cgroup, cleanup_deadline)
        _kill_descendants(cleanup_deadline)
    try:
        os.waitpid(init, 0)
    except ChildProcessError:
        pass
    while len(data) <= MAX_RESULT and (chunk := os.read(result_r, 1 << 20)):
        data += chunk
    with os.fdopen(status_r) as f:
        init_report = f.read()
    wall = time.monotonic() - start

    result = _classify(data, init_report, stopped, limits, timeout)
    if hit_process_limit and result["status"] != "ok":
        result = {"status": "processes", "value": None,
                  "detail": f"hit the {limits['processes']}-process limit ({result['detail']})"}
    result.update(id=job_id, stdout=_tail(out_path), stderr=_tail(err_path), wall=wall)
    for path in (out_path, err_path, directory + ".job"):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    shutil.rmtree(directory, ignore_errors=True)
    if cgroup:
        kill_cgroup(cgroup, cleanup_deadline)
    return result


def _collect(result_r: int, init: int, deadline: float, over_quota=None) -> tuple[bytes, Optional[str]]:
    """Read the job's result while waiting for init to exit; with why it must be stopped:
    "timeout" when the deadline passed, "disk" when ``over_quota()`` (asked every
    DISK_POLL seconds) says its folder grew past the quota; None when it ended by itself."""
    pidfd = os.pidfd_open(init)
    selector = selectors.DefaultSelector()
    selector.register(result_r, selectors.EVENT_READ)
    selector.register(pidfd, selectors.EVENT_READ)
    data = b""
    measure = time.monotonic() + DISK_POLL if over_quota else math.inf
    try:
        while (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(max(0.0, min(left, measure - time.monotonic()))):
                if key.fd == pidfd:
                    return data, None
                chunk = os.read(result_r, 1 << 20)
                if not chunk:
                    selector.unregister(result_r)
                elif len(data) <= MAX_RESULT:
                    data += chunk
            if time.monotonic() >= measure:  # never more often: a job's output must not make us walk its folder
                if over_quota():
                    return data, "disk"
                measure = time.monotonic() + DISK_POLL
        return data, "timeout"
    finally:
        selector.close()
        os.close(pidfd)


def _disk_usage(directory: str) -> int:
    """Bytes the files under ``directory`` take on disk (links are not followed)."""
    total, stack = 0, [directory]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
        except OSError:
            pass
    return total


def _process_limit_hit(cgroup: str) -> bool:
    try:
        with open(os.path.join(cgroup, "pids.events")) as f:
            return any(line.split()[0] == "max" and int(line.split()[1]) > 0 for line in f)
    except (OSError, ValueError, IndexError):
        return False


def _classify(data: bytes, init_report: str, stopped: Optional[str], limits: dict, timeout: float) -> dict:
    if stopped == "timeout":
        return {"status": "timeout", "value": None, "detail": f"timed out after {timeout:g} s"}
    if stopped == "disk":
        return {"status": "disk", "value": None, "detail": f"wrote more than {_size(limits['disk'])} to its folder"}
    report = json.loads(init_report) if init_report else {}
    if "setup_error" in report:
        return {"status": "error", "value": None, "detail": f"sandbox setup failed: {report['setup_error']}"}
    if data:
        try:
            result = json.loads(data)
            return {"status": result["status"], "value": result.get("value"), "detail": result.get("detail", "")}
        except (ValueError, KeyError, TypeError):
            return {"status": "error", "value": None, "detail": "the job's result could not be decoded"
                    + (" (larger than 64 MiB)" if len(data) > MAX_RESULT else "")}
    status = report.get("wait_status")
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return {"status": "timeout", "value": None,
                    "detail": f"used more than {math.ceil(limits['timeout']) + 1} s of CPU time"}
        return {"status": "crashed", "value": None, "detail": f"killed by {signal.Signals(sig).name}"}
    code = os.WEXITSTATUS(status) if status is not None else "unknown"
    return {"status": "error", "value": None, "detail": f"the job exited with status {code} without a result"}


def _init(request, config, state, directory, cgroup, out, err, result_w, status_w) -> None:
    """pid 1 of the job's namespace: finish the isolation, run the job, report how it ended."""
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if cgroup:
            _write(os.path.join(cgroup, "cgroup.procs"), "0")  # "0": the writing process itself
        if state["view"]:
            _unshare(CLONE_NEWNS)
            _remount(config["base"], MS_RDONLY | MS_NODEV)
            if state["cgroup"]:
                _remount(state["cgroup"], MS_RDONLY | MS_NODEV | MS_NOEXEC)
            _job_folder(directory, config["limits"]["disk"])
            _write_files(directory, request.get("files", {}))
            if state["copy_on_write"]:
                _copy_on_write(state["copy_on_write"], directory)
            # Shared memory of the job's own (multiprocessing's locks, DataLoader workers' tensors).
            _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={SHM_BYTES},mode=1777")
            if state["pidns"]:  # a /proc that shows only the job's own processes
                _mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        job = os.fork()
    except BaseException as e:
        os.write(status_w, json.dumps({"setup_error": f"{type(e).__name__}: {e}"}).encode())
        os._exit(1)
    if job == 0:
        os.close(status_w)
        _job(request, config, state, directory, out, err, result_w)
    os.close(result_w)
    status = os.waitpid(job, 0)[1]
    os.write(status_w, json.dumps({"wait_status": status}).encode())
    os._exit(0)


def _tasks_counted(userns: bool, jobs: int) -> int:
    """The tasks RLIMIT_NPROC already counts: all of this user's, or in our user namespace
    (counted per namespace since Linux 5.14) the server and each job's supervisor and init."""
    if userns:
        return 1 + 2 * jobs
    count = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{name}").st_uid == os.getuid():
                count += len(os.listdir(f"/proc/{name}/task"))
        except OSError:
            pass
    return count


def _drop_privileges() -> None:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # fails harmlessly when we hold no CAP_SETPCAP
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable (x2): all empty
    _check(_libc.capset(header, data), "capset")


def _job(request, config, state, directory, out, err, result_w) -> None:
    """The job process: its own session, clean environment, limits, no capabilities."""
    try:
        limits = config["limits"]
        os.setsid()
        os.environ.clear()
        os.environ.update(config["env"], HOME=directory, TMPDIR=directory)
        os.chdir(directory)
        null = os.open("/dev/null", os.O_RDONLY)
        for fd, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
        os.closerange(3, result_w)
        os.closerange(result_w + 1, 1 << 20)  # close_range(2): cheap however high
        cpu = math.ceil(limits["timeout"]) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # soft: SIGXCPU, hard: SIGKILL
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], limits["file_size"]))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
        if state["nproc"] and not state["cgroup"]:
            allowed = limits["processes"] + _tasks_counted(state["userns"], config["jobs"])
            resource.setrlimit(resource.RLIMIT_NPROC, (allowed, allowed))
        _drop_privileges()
        _confine(state, config["base"], directory)
        if config["fresh"]:
            os.set_inheritable(result_w, True)
            os.execv(sys.executable, [sys.executable, *config["python_flags"], "-m", "torchlint.runtime.server",
                                      "--job", directory + ".job", str(result_w)])
    except BaseException as e:
        os.write(result_w, json.dumps({"status": "error", "value": None,
                                       "detail": f"sandbox setup failed: {type(e).__name__}: {e}"}).encode())
        os._exit(1)
    run_job(request, limits["memory"], result_w)


def _confine(state: dict, base: str, directory: str) -> None:
    """The job's last limits, which it keeps across exec: Landlock where there is no view of
    the filesystem of its own, and the system call filter (confine.py)."""
    if state["landlock"]:
        problem = confine.restrict_filesystem(
            readable=[*state["landlock"], base, *confine.own_proc(), "/dev/zero", "/dev/urandom", "/dev/random"],
            writable=[directory, "/dev/null"], hidden=state["hidden"])
        if problem:
            raise OSError(errno.EPERM, problem)
    if state["seccomp"]:
        problem = confine.install_filter(state["network"], state["strict_unix"])
        if problem:
            raise OSError(errno.EPERM, problem)


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _memory_error(e: BaseException) -> bool:
    text = str(e)
    return isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and (
        "can't allocate memory" in text or "not enough memory" in text))


def run_job(request: dict, memory: int, result_w: int) -> None:
    """Call the job function and write its JSON result to `result_w`; never returns."""
    # torch alone maps gigabytes of address space it never touches: the limit is what the job
    # may add to the address space it starts with, not the total.
    limit = _vm_size() + memory
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    me = os.getpid()
    try:
        module, _, name = request["function"].partition(":")
        value = getattr(importlib.import_module(module), name)(request["payload"])
        if os.getpid() != me:
            os._exit(0)  # a process the job forked got here: only the job itself reports
        try:
            data = json.dumps({"status": "ok", "value": value})
        except (TypeError, ValueError) as e:
            data = json.dumps({"status": "error", "value": None, "detail":
                               f"the job's return value is not JSON-serializable: {type(e).__name__}: {e}"})
    except BaseException as e:
        if os.getpid() != me:
            os._exit(1)
        message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        message = message.splitlines()[0][:500]
        if isinstance(e, SystemExit):
            message = f"the job called sys.exit({e.code!r})"
        if _memory_error(e):
            result = {"status": "memory", "value": None,
                      "detail": f"exceeded the {_size(memory)} memory limit ({message})"}
        else:
            result = {"status": "error", "value": None, "detail": message}
        data = json.dumps(result)
        try:
            traceback.print_exc(limit=-8)
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    view = memoryview(data.encode())
    try:
        while view:
            view = view[os.write(result_w, view):]
    except OSError:
        pass
    os._exit(0)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} bytes"


# ----------------------------------------------------------------------------------------------
# The main loop.

def serve() -> None:
    protocol = os.dup(1)
    os.dup2(2, 1)  # anything a preloaded module prints must not corrupt the protocol
    stdin = sys.stdin.buffer
    config = json.loads(stdin.readline())
    state = isolate_server(config["base"], config["readable"], config["home"], config["mount_namespace"],
                           config.get("writable", []))
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if not config["fresh"]:
        preload_modules(config["preload"])
    hello = {key: state[key] for key in ("network", "filesystem", "reads", "sockets", "pidns", "cgroup", "nproc",
                                         "missing", "copy_on_write")}
    os.write(protocol, (json.dumps({"hello": hello}) + "\n").encode())

    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    running: dict[int, tuple[int, int, bytearray]] = {}  # pipe fd -> (supervisor pid, job id, data)
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.fd == 0:
                chunk = os.read(0, 1 << 20)
                if not chunk:
                    return _shut_down(running, state)
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    request = json.loads(line)
                    fd, pid = _start_supervisor(request, config, state, protocol, selector)
                    running[fd] = (pid, request["id"], bytearray())
                continue
            pid, job_id, data = running[key.fd]
            chunk = os.read(key.fd, 1 << 20)
            if chunk:
                data += chunk
                continue
            selector.unregister(key.fd)
            os.close(key.fd)
            del running[key.fd]
            status = os.waitpid(pid, 0)[1]
            if not data:
                data = json.dumps({"id": job_id, "status": "error", "value": None, "stdout": "",
                                   "stderr": "", "wall": 0.0,
                                   "detail": f"the sandbox supervisor failed (wait status {status})"}).encode()
            os.write(protocol, bytes(data) + b"\n")


def _start_supervisor(request, config, state, protocol, selector) -> tuple[int, int]:
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            selector.close()
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)  # keeps fds 0-2 taken, so no pipe of ours lands on them
            for fd in (null, protocol, r):
                os.close(fd)
            try:
                result = supervise(request, config, state)
            except Exception as e:
                result = {"id": request["id"], "status": "error", "value": None, "stdout": "", "stderr": "",
                          "wall": 0.0, "detail": f"the sandbox could not run the job: {type(e).__name__}: {e}"}
                shutil.rmtree(os.path.join(config["base"], str(request["id"])), ignore_errors=True)
            message = json.dumps(result).encode()
            while message:
                message = message[os.write(w, message):]
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    os.close(w)
    selector.register(r, selectors.EVENT_READ)
    return r, pid


def _shut_down(running: dict, state: dict) -> None:
    for pid, _, _ in running.values():
        os.kill(pid, signal.SIGKILL)  # their inits die with them (PDEATHSIG), and so do the jobs
    _kill_descendants(time.monotonic() + 5)
    if state["cgroup"]:  # the Sandbox removes the (bind-mounted, so busy here) cgroup itself
        for name in os.listdir(state["cgroup"]):
            if name.startswith("job-"):
                kill_cgroup(os.path.join(state["cgroup"], name), time.monotonic() + 2)


def _run_fresh_job(spec_path: str, result_w: int) -> None:
    with open(spec_path) as f:
        request = json.load(f)
    preload_modules(request["preload"])
    run_job(request, request["memory"], result_w)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--job"]:
        _run_fresh_job(sys.argv[2], int(sys.argv[3]))
    else:
        serve()
