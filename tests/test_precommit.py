"""The hooks in .pre-commit-hooks.yaml, run by real pre-commit in throwaway git repositories.

pre-commit installs a hook repository by cloning it at a revision and `pip install`ing it
into a fresh virtualenv.  The tests give it a snapshot of this checkout as it is on disk
(committed or not), so they test the working tree, also on a clean clone in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

BAD = '''\
import torch

x = torch.rand(3, requires_grad=True)
y = x.data
print(y)
'''
FIXABLE = BAD.replace("x.data", "x.clone().detach()")  # TL402, with a safe fix
FIXED = BAD.replace("x.data", "x.detach().clone()")
CLEAN = '''\
import torch

x = torch.rand(3, requires_grad=True)
print(x.detach())
'''


def test_the_manifest_is_valid(tmp_path):
    result = run([sys.executable, "-m", "pre_commit", "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")],
                 tmp_path, dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="session")
def git_env(tmp_path_factory) -> dict[str, str]:
    """An environment for git and pre-commit that ignores the user's git configuration
    and pre-commit cache (a global core.hooksPath would stop `pre-commit install`)."""
    home = tmp_path_factory.mktemp("precommit-home")
    gitconfig = home / "gitconfig"
    gitconfig.write_text("[user]\n\tname = torchlint tests\n\temail = tests@torchlint.invalid\n"
                         "[init]\n\tdefaultBranch = main\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1", PRE_COMMIT_HOME=str(home / "cache"))
    return env


def run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    result = run(["git", *args], cwd, env)
    assert result.returncode == 0, result.stderr
    return result


def pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "pre_commit", *args], cwd, env)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory, git_env) -> tuple[Path, str]:
    """A git repository holding this checkout's files (tracked or new, not ignored) as
    they are on disk, and its commit."""
    snapshot = tmp_path_factory.mktemp("torchlint-hook-repo")
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO, git_env)
    assert listed.returncode == 0, f"the tests need this checkout to be a git repository: {listed.stderr}"
    for relative in filter(None, listed.stdout.split("\0")):
        source = REPO / relative
        if source.is_file():  # a tracked file deleted in the working tree is not there
            (snapshot / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / relative)
    git(snapshot, git_env, "init", "-q")
    git(snapshot, git_env, "add", "-A")
    git(snapshot, git_env, "commit", "-q", "-m", "snapshot")
    return snapshot, git(snapshot, git_env, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def user_repo(tmp_path, git_env):
    """Make a user's git repository with pre-commit installed for the given hooks."""

    def make(*hook_ids: str, hook_repo: tuple[Path, str], args: tuple[str, ...] = ()) -> Path:
        root = tmp_path / "user"
        root.mkdir()
        git(root, git_env, "init", "-q")
        hooks = "".join(f"      - id: {hook_id}\n        args: {json.dumps(list(args))}\n" for hook_id in hook_ids)
        (root / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {hook_repo[0]}\n    rev: {hook_repo[1]}\n    hooks:\n{hooks}"
        )
        git(root, git_env, "add", ".pre-commit-config.yaml")
        installed = pre_commit(root, git_env, "install")
        assert installed.returncode == 0, installed.stdout + installed.stderr
        return root

    return make


def write(root: Path, relative: str, content: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(content))
    return path


def commit(root: Path, env: dict[str, str], *paths: str) -> subprocess.CompletedProcess:
    git(root, env, "add", *paths)
    return run(["git", "commit", "-m", "change"], root, env)


def has_commits(root: Path, env: dict[str, str]) -> bool:
    return run(["git", "rev-parse", "--verify", "-q", "HEAD"], root, env).returncode == 0


def test_try_repo(tmp_path, git_env, hook_repo):
    # try-repo installs the hook into a fresh cache each time (slow): one call, two files.
    git(tmp_path, git_env, "init", "-q")
    write(tmp_path, "train.py", BAD)
    write(tmp_path, "clean.py", CLEAN)
    git(tmp_path, git_env, "add", ".")
    result = pre_commit(tmp_path, git_env, "try-repo", str(hook_repo[0]), "torchlint",
                        "--files", "train.py", "clean.py")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "torchlint" in output and "Failed" in output
    assert "train.py:4:5: TL101" in output and "clean.py:" not in output
    assert "Found 1 finding in 1 file." in output


def notebook(source: str) -> str:
    cell = {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_a_commit_with_a_finding_is_rejected(user_repo, hook_repo, git_env):
    root = user_repo("torchlint", hook_repo=hook_repo)
    write(root, "src/train.py", BAD)
    write(root, "analysis.ipynb", notebook(BAD))
    result = commit(root, git_env, "src/train.py", "analysis.ipynb")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "torchlint" in output and "Failed" in output
    assert "src/train.py:4:5: TL101" in output
    assert "analysis.ipynb:cell 1:4:5: TL101" in output
    assert not has_commits(root, git_env)


def test_a_clean_commit_passes(user_repo, hook_repo, git_env):
    root = user_repo("torchlint", hook_repo=hook_repo)
    write(root, "src/train.py", CLEAN)
    write(root, "src/types.pyi", "import torch\ndef f(x: torch.Tensor) -> torch.Tensor: ...\n")
    result = commit(root, git_env, "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stderr  # git shows what its hooks print on standard error
    assert has_commits(root, git_env)


def test_the_fix_hook_rewrites_the_file_and_stops_the_commit(user_repo, hook_repo, git_env):
    root = user_repo("torchlint-fix", hook_repo=hook_repo)
    path = write(root, "train.py", FIXABLE)
    first = commit(root, git_env, "train.py")
    output = first.stdout + first.stderr
    assert first.returncode != 0, output
    assert "files were modified by this hook" in output
    assert path.read_text() == FIXED
    assert not has_commits(root, git_env)
    # The user looks at the fix, stages it, and commits again.
    second = commit(root, git_env, "train.py")
    assert second.returncode == 0, second.stdout + second.stderr
    assert has_commits(root, git_env)


def test_the_fix_hook_takes_unsafe_fixes_as_an_argument(user_repo, hook_repo, git_env):
    root = user_repo("torchlint-fix", hook_repo=hook_repo, args=("--unsafe-fixes",))
    path = write(root, "train.py", BAD)  # TL101's fix is unsafe here: `y` is kept
    result = commit(root, git_env, "train.py")
    assert result.returncode != 0
    assert path.read_text() == BAD.replace("x.data", "x.detach()")


def test_zero_files(user_repo, hook_repo, git_env):
    root = user_repo("torchlint", "torchlint-fix", hook_repo=hook_repo)
    write(root, "notes.txt", "x.data\n")
    write(root, "vendor/legacy.py", BAD)
    write(root, "pyproject.toml", '[tool.torchlint]\nextend-exclude = ["vendor/"]\n')
    nothing = pre_commit(root, git_env, "run", "torchlint", "--files")  # none given, none staged
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert "(no files to check)Skipped" in nothing.stdout
    text_only = pre_commit(root, git_env, "run", "--files", "notes.txt")
    assert text_only.returncode == 0, text_only.stdout + text_only.stderr
    assert text_only.stdout.count("(no files to check)Skipped") == 2
    # A Python file that [tool.torchlint] excludes reaches the hook, which lints nothing.
    excluded = commit(root, git_env, "notes.txt", "vendor/legacy.py", "pyproject.toml")
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr
    assert "TL101" not in excluded.stderr
    assert (root / "vendor/legacy.py").read_text() == BAD


def test_the_hook_environment_has_torchlint_and_no_torch(user_repo, hook_repo, git_env):
    root = user_repo("torchlint", hook_repo=hook_repo)
    installed = pre_commit(root, git_env, "install-hooks")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    pythons = list(Path(git_env["PRE_COMMIT_HOME"]).glob("repo*/py_env-*/bin/python"))
    assert pythons
    for python in pythons:
        probe = run([str(python), "-c", "import torchlint.integrations.cli, importlib.util; "
                     "print(importlib.util.find_spec('torch'))"], root, git_env)
        assert probe.returncode == 0, probe.stderr
        assert probe.stdout.strip() == "None"
