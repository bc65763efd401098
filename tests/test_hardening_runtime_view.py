"""Issue 40, items 1 (its runtime part), 3 and 4: a job reads the project it runs, never what
a link in it points at, a git configuration anywhere in it (submodules', nested clones'), a
clone beside it, the folder a download lies in, or another process's command line; with
namespaces and with Landlock alone (where user namespaces are refused), as root and as an
unprivileged user.  A hostile file tries to print each of them into its verdict, through
the real command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parent.parent
NOBODY = 65534

# Reads every path it is given and raises with what it could read (its end: where the tokens
# are), so that the verdict shows it; a verdict quotes 300 characters of a message.
PROBE = """\
import torch

got = []
for label, path in {probes!r}.items():
    try:
        with open(path) as handle:
            text = " ".join(handle.read().split())
    except OSError:
        continue
    if text:
        got.append(label + "=" + text[-24:])
got.append("torch=%s" % float(torch.ones(3).sum()))
raise RuntimeError("stolen: " + "; ".join(got))
x = torch.rand(3, requires_grad=True)
y = x.data
print(y)
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _world(place: Path, cmdline_pid: int, cmdline_secret: str) -> tuple[Path, dict[str, str]]:
    """A folder of clones holding the hostile repository `evil`, a sibling and a tarball's
    tree; a download without a marker (its package's root has an `__init__.py`) beside
    them; and secrets around: {secret: where}.  Returns the folder of clones and the secrets."""
    secrets: dict[str, str] = {}

    def secret(path: Path, template: str = "{}") -> Path:
        token = f"tok{uuid.uuid4().hex[:12]}"
        secrets[token] = str(path)
        return _write(path, template.format(token) + "\n")

    clones = place / "clones"
    evil, sibling = clones / "evil", clones / "sibling"
    secret(evil / ".git" / "config", "[http]\n\textraheader = AUTHORIZATION: basic {}")
    secret(evil / ".git" / "modules" / "sub" / "config", "[http]\n\textraheader = AUTHORIZATION: basic {}")
    secret(evil / "sub" / ".git", "gitdir: ../.git/modules/sub-{}")  # a submodule's pointer
    secret(evil / "nested" / ".git" / "config", "[credential]\n\thelper = store {}")  # a clone inside
    secret(evil / ".git-credentials", "https://user:{}@example.invalid")
    secret(evil / ".env", "API_KEY={}")
    other_git = place / "other" / ".git"
    secret(other_git / "config", "[http]\n\textraheader = AUTHORIZATION: basic {}")
    secret(other_git / "description", "{}")
    (evil / "linked").mkdir()
    (evil / "linked" / ".git").symlink_to(other_git, target_is_directory=True)  # a .git that is a link
    secret(place / "home" / ".ssh" / "id_rsa", "-----BEGIN KEY----- {}")
    (evil / "home_link").symlink_to(place / "home", target_is_directory=True)  # a top-level link
    secret(sibling / ".git" / "config", "[http]\n\textraheader = AUTHORIZATION: basic {}")
    secret(sibling / ".env", "API_KEY={}")
    secret(sibling / "notes.txt", "{}")
    downloads = place / "downloads"
    secret(downloads / "notes.txt", "{}")
    _write(downloads / "pkg" / "__init__.py", "")
    _write(evil / "data.txt", "data of the project\n")
    secrets[cmdline_secret] = f"/proc/{cmdline_pid}/cmdline"
    probes = {"project": str(evil / "data.txt"), "own": "/proc/self/comm",
              "link": str(evil / "home_link" / ".ssh" / "id_rsa"), "gitlink": str(evil / "linked" / ".git" / "config"),
              **{f"s{index}": where for index, where in enumerate(secrets.values())}}
    _write(evil / "x.py", PROBE.format(probes=probes))
    _write(downloads / "pkg" / "y.py", PROBE.format(probes={"download": str(downloads / "notes.txt")}))
    # Not a clone (no .git): the folder of clones around it is still no project.
    _write(clones / "tarball" / "z.py", PROBE.format(probes={"sibling": str(sibling / "notes.txt")}))
    return clones, secrets


AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]


def _as_nobody(place: Path) -> list[str]:
    """The command's prefix that runs it as nobody, who is given ``place``."""
    started = subprocess.run([*AS_NOBODY, sys.executable, "-c", "import subprocess, sys; "
                              "subprocess.run([sys.executable, '-c', ''], check=True)"], capture_output=True)
    if started.returncode != 0:  # the sandbox starts its server with the same interpreter
        pytest.skip(f"another user cannot run {sys.executable} here")
    for folder, folders, files in os.walk(place):
        for name in [".", *folders, *files]:
            os.lchown(os.path.join(folder, name), NOBODY, NOBODY)
    return AS_NOBODY


@pytest.mark.parametrize("mode, user", [("namespaces", "root"), ("landlock", "root"), ("landlock", "unprivileged")])
def test_a_hostile_file_prints_nothing_of_what_lies_around_its_project(mode, user):
    from torchlint.runtime import confine

    if mode == "landlock" and confine.landlock_abi() < 1:
        pytest.skip("no Landlock in this kernel")
    if user == "unprivileged" and os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("setpriv is needed to run as another user")
    if user == "root" and os.geteuid() != 0:
        pytest.skip("runs as root only")
    place = Path(tempfile.mkdtemp(prefix="torchlint-view-"))  # not under root's private pytest folder
    cmdline_secret = f"tok{uuid.uuid4().hex[:12]}"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", f"--token={cmdline_secret}"])
    try:
        clones, secrets = _world(place, holder.pid, cmdline_secret)
        home = _write(place / "torchlint-home" / ".keep", "").parent
        as_user = _as_nobody(place) if user == "unprivileged" and os.geteuid() == 0 else []
        environment = {**os.environ, "HOME": str(home), "TMPDIR": str(home), "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))}
        if mode == "landlock":
            environment["TORCHLINT_SANDBOX_NO_MOUNT_NAMESPACE"] = "1"
        completed = subprocess.run(
            [*as_user, sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--runtime",
             "--no-runtime-scripts", "--runtime-timeout", "30", "--output-format", "full",
             "evil/x.py", "tarball/z.py", "../downloads/pkg/y.py"],
            cwd=clones, capture_output=True, text=True, timeout=300, env=environment)
    finally:
        holder.kill()
        holder.wait()
        subprocess.run(["chmod", "-R", "u+rwx", str(place)], check=False)
        shutil.rmtree(place, ignore_errors=True)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    if mode == "landlock":
        assert "no mount namespace" in completed.stdout and "Landlock limits" in completed.stdout, output
    leaked = {token: where for token, where in secrets.items() if token in output}
    assert leaked == {}, output
    verdicts = [line for line in completed.stdout.splitlines() if "= runtime: " in line and "stolen: " in line]
    assert len(verdicts) == 3, output  # each file ran, and said what it read
    assert "stolen: project=data of the project; own=python" in output  # the project and its own /proc: yes
    assert output.count("stolen: torch=3.0") == 2  # the download's folder, the clone beside: no
