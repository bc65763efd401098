"""Issue 40, item 8: what a `--runtime` run may use of the machine, and what it leaves.

Through the real CLI, with a private TMPDIR (outside the project) so that each test sees only
its own run's folders: a job cannot fill the host's disk (a tmpfs of its own with a mount
namespace; stopped when its folder grows past the quota with Landlock) nor take the user's
inotify instances; a run has a total time budget; SIGTERM, SIGHUP and SIGINT leave no folder,
cgroup or process, a SIGKILLed run's leftovers are removed by the next run (and nothing else
is), and a run as an unprivileged user leaves nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import run_torchlint

pytest.importorskip("torch")

LANDLOCK = {"TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE": "1"}
SLOW = """\
import time

import torch

time.sleep(120)
x = torch.rand(3, requires_grad=True)
y = x.data
"""
QUICK = """\
import torch

x = torch.rand(3, requires_grad=True)
y = x.data
"""


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder and a private temporary folder beside it (not inside: the view
    the jobs get cannot hold the sandbox's own folder)."""
    project, temporary = tmp_path / "project", tmp_path / "tmp"
    project.mkdir()
    temporary.mkdir()
    return project, temporary


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def runtime(project: Path, temporary: Path, *args: str, env: dict | None = None):
    return run_torchlint("check", "--runtime", "--no-cache", "--runtime-jobs", "1", "--output-format", "json",
                         *args, cwd=project, env={"TMPDIR": str(temporary), **(env or {})})


def evidence(result) -> dict[str, list[str]]:
    """File name -> the runtime evidence of each finding in it."""
    assert result.returncode in (0, 1), result.stderr
    found: dict[str, list[str]] = {}
    for item in result.json():
        found.setdefault(Path(item["filename"]).name, []).append(item["runtime"]["evidence"])
    return found


def leftovers(temporary: Path) -> list[str]:
    return sorted(path.name for path in temporary.iterdir() if path.name.startswith("torchlint-sandbox-"))


def processes_of(temporary: Path) -> list[int]:
    """The processes of a run started with TMPDIR=temporary: the CLI, the sandbox server,
    its supervisors and jobs (their TMPDIR is a folder inside it)."""
    marker = f"TMPDIR={temporary}".encode()
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker in Path(f"/proc/{name}/environ").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start_slow_run(project: Path, temporary: Path) -> tuple[subprocess.Popen, Path, str | None]:
    """`torchlint check --runtime` on a file whose job sleeps: the process, once its first
    job runs, with the sandbox's folder and the jobs' cgroup (None where there is none)."""
    write(project, "slow.py", SLOW)
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "check", "--runtime", "--no-cache",
                                "--runtime-jobs", "1", "--runtime-timeout", "100", "slow.py"],
                               cwd=project, env=environment(TMPDIR=str(temporary)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: any((temporary / name / "1").is_dir() for name in leftovers(temporary)), 60), \
        "the run's first job never started"
    time.sleep(1)  # the job is running its sleep
    [name] = leftovers(temporary)
    record = temporary / name / "cgroup"
    return process, temporary / name, record.read_text() if record.exists() else None


def environment(**changes: str) -> dict:
    return {**os.environ, **changes}


def assert_nothing_of_the_run_left(temporary: Path, cgroup: str | None) -> None:
    assert wait_for(lambda: not processes_of(temporary), 15), f"processes of the run survive: {processes_of(temporary)}"
    assert leftovers(temporary) == []
    assert cgroup is None or not os.path.exists(cgroup), f"the jobs' cgroup {cgroup} is left"


# --- disk ------------------------------------------------------------------------------------

FILL = """\
import os
import tempfile
import time

import torch


def fill(folder):
    written = 0
    try:
        for i in range(40):  # 40 files of 64 MiB (RLIMIT_FSIZE): 2.5 GiB
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                HOW
            written += 64
    except OSError as error:
        raise RuntimeError(f"stopped after {written} MiB: {error.strerror}")
    time.sleep(30)
    raise RuntimeError(f"wrote {written} MiB")


fill(FOLDER)
x = torch.rand(3, requires_grad=True)
y = x.data
"""
FALLOCATE = "os.posix_fallocate(f.fileno(), 0, 64 << 20)"
WRITE = "f.write(bytes(64 << 20))"


def fill(how: str, folder: str) -> str:
    """A file whose job writes 2.5 GiB (``how`` each 64 MiB file) into ``folder``."""
    return FILL.replace("HOW", how).replace("FOLDER", folder)


class LowestFreeSpace:
    """The least free space of a filesystem while the block runs, sampled every 20 ms."""

    def __init__(self, path: Path):
        self.path, self.lowest, self._done = path, shutil.disk_usage(path).free, threading.Event()

    def __enter__(self) -> LowestFreeSpace:
        self.before = self.lowest
        self._thread = threading.Thread(target=self._sample)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.02):
            self.lowest = min(self.lowest, shutil.disk_usage(self.path).free)

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    @property
    def dropped(self) -> int:
        return self.before - self.lowest


def test_a_job_that_fills_its_folder_and_the_project_gets_no_space_and_the_disk_keeps_its_space(place) -> None:
    project, temporary = place
    (project / ".git").mkdir()  # the project's root: its folder is writable to jobs, in a layer of their own
    write(project, "fill_temporary.py", fill(FALLOCATE, "tempfile.gettempdir()"))
    write(project, "fill_project.py", fill(WRITE, "os.getcwd()"))
    with LowestFreeSpace(temporary) as disk:
        result = runtime(project, temporary, "--runtime-timeout", "60")
    found = evidence(result)
    if "no mount namespace" in result.stderr:
        pytest.skip(f"no mount namespace here: {result.stderr}")
    for name in ("fill_temporary.py", "fill_project.py"):
        [text] = found[name]
        assert "stopped after 512 MiB: No space left on device" in text, (name, text)
    assert disk.dropped < 1 << 30, f"the host's disk lost {disk.dropped >> 20} MiB while the jobs ran"
    assert leftovers(temporary) == []


def test_without_a_mount_namespace_a_job_whose_folder_grows_past_the_quota_is_stopped(place) -> None:
    project, temporary = place
    write(project, "fill.py", fill(WRITE, "tempfile.gettempdir()"))
    free = shutil.disk_usage(temporary).free
    result = runtime(project, temporary, "--runtime-timeout", "60", env=LANDLOCK)
    if "Landlock limits" not in result.stderr:
        pytest.skip(f"no Landlock here: {result.stderr}")
    [text] = evidence(result)["fill.py"]
    assert text == "disk limit: wrote more than 512 MiB to its folder"
    assert leftovers(temporary) == []
    assert shutil.disk_usage(temporary).free > free - (256 << 20)  # what it wrote is gone with it


# --- inotify ---------------------------------------------------------------------------------

INOTIFY = """\
import ctypes
import os

import torch

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.rand(8, 4)).pow(2).sum()
loss.backward()
optimizer.step()
libc = ctypes.CDLL(None, use_errno=True)
made = 0
while made < 1000 and libc.inotify_init1(0) >= 0:
    made += 1
why = os.strerror(ctypes.get_errno())
raise RuntimeError(f"trained: {loss.item() >= 0}; made {made} inotify instances: {why}")
x = torch.rand(3, requires_grad=True)
y = x.data
"""


@pytest.mark.parametrize("mode", ["namespaces", "landlock"])
def test_a_job_cannot_take_the_users_inotify_instances_and_still_trains(place, mode) -> None:
    project, temporary = place
    write(project, "watch.py", INOTIFY)
    result = runtime(project, temporary, env=LANDLOCK if mode == "landlock" else None)
    [text] = evidence(result)["watch.py"]
    assert "trained: True; made 0 inotify instances: Operation not permitted" in text, text


# --- the run's time budget -------------------------------------------------------------------

def test_the_run_stops_when_its_time_budget_is_spent(place) -> None:
    project, temporary = place
    write(project, "slow.py", SLOW)
    write(project, "later.py", SLOW)
    start = time.monotonic()
    result = runtime(project, temporary, "--runtime-timeout", "60", "--runtime-budget", "2")
    took = time.monotonic() - start
    spent = "the run's time budget was spent (--runtime-budget 2 s)"
    assert evidence(result) == {"later.py": [spent], "slow.py": [spent]}
    assert took < 40, f"the run took {took:.0f} s: its budget did not stop the jobs"
    assert leftovers(temporary) == []


# --- cleanup ---------------------------------------------------------------------------------

@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_during_the_runtime_check_leaves_no_folder_cgroup_or_process(place, signum) -> None:
    project, temporary = place
    process, _folder, cgroup = start_slow_run(project, temporary)
    process.send_signal(signum)
    try:
        code = process.wait(timeout=30)
    finally:
        process.kill()
    assert code == (130 if signum == signal.SIGINT else -signum)  # Ctrl-C: the CLI exits 130
    assert_nothing_of_the_run_left(temporary, cgroup)


def test_the_next_run_removes_what_a_killed_run_left(place) -> None:
    project, temporary = place
    process, folder, cgroup = start_slow_run(project, temporary)
    process.kill()  # SIGKILL: nothing can be caught
    process.wait()
    assert wait_for(lambda: not processes_of(temporary), 15), "processes of the killed run survive"
    assert folder.exists()
    write(project, "quick.py", QUICK)
    evidence(runtime(project, temporary, "quick.py"))
    assert_nothing_of_the_run_left(temporary, cgroup)


def test_the_next_run_removes_only_dead_runs_folders_of_this_user_and_follows_no_link(place) -> None:
    project, temporary = place
    outside = temporary.parent / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = temporary / "torchlint-sandbox-dead"
    (dead / "work" / "work").mkdir(parents=True)
    (dead / "owner").write_text(f"{gone.pid} 1")
    (dead / "link").symlink_to(outside, target_is_directory=True)
    (dead / "work" / "work").chmod(0)  # as overlayfs leaves it
    live = temporary / "torchlint-sandbox-live"
    live.mkdir()
    start = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()[19]
    (live / "owner").write_text(f"{os.getpid()} {start}")
    unknown = temporary / "torchlint-sandbox-unknown"
    unknown.mkdir()
    kept = ["torchlint-sandbox-live", "torchlint-sandbox-unknown"]
    if os.geteuid() == 0:
        foreign = temporary / "torchlint-sandbox-foreign"
        foreign.mkdir()
        (foreign / "owner").write_text(f"{gone.pid} 1")
        os.chown(foreign, 65534, 65534)
        kept.append("torchlint-sandbox-foreign")
    write(project, "quick.py", QUICK)
    evidence(runtime(project, temporary, "quick.py"))
    assert leftovers(temporary) == sorted(kept)
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_run_that_file_permissions_bind_leaves_nothing(place) -> None:
    """As a user other than root, or as root without its power over file permissions
    (the overlay's work/work is mode 000, so only that power could remove it)."""
    project, temporary = place
    (project / ".git").mkdir()  # its folder is writable to jobs: an overlay of their own
    write(project, "train.py", QUICK + "open('out.txt', 'w').write('x')\n")
    result = run_torchlint("check", "--runtime", "--no-cache", "--output-format", "json", "train.py", cwd=project,
                           env={"TMPDIR": str(temporary)}, without_root_file_access=True)
    evidence(result)
    assert "copy-on-write" not in result.stderr, result.stderr  # the overlay was made
    assert leftovers(temporary) == []
    assert not (project / "out.txt").exists()
