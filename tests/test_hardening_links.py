"""A repository must not make torchlint read, print, cache or write anything outside it,
nor lose what the user saves (issue "Hardening, second campaign", items 1, 6 and 9).

Symbolic links whose target leaves the project are reported by name and never followed
(by a walk, on the command line, through a linked folder, by `--fix`); the cache refuses a
folder the repository could redirect and entries it did not sign with the user's secret;
`--fix` keeps an editor's save that lands just before its rename, never reorders a
notebook cell that holds torchlint's own placeholder text and leaves read-only files alone.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import LEGACY, Project
from test_hardening import GOOD, by_file, script

SECRET = "ghp_s3cr3t-t0ken-of-the-reader"
OUTSIDE = "symbolic link to a file outside the project: not read"
AS_USERS = pytest.mark.parametrize("unprivileged", [False, True], ids=["root-or-user", "without-root-file-access"])


@pytest.fixture
def repository(tmp_path: Path) -> Project:
    """A git repository (its project root) next to a folder with a secret and another project."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".git-credentials").write_text(f"https://user:{SECRET}@github.com\n")
    (tmp_path / "home" / ".git-credentials").chmod(0o600)
    (tmp_path / "other_project").mkdir()
    (tmp_path / "other_project" / "model.py").write_text(GOOD)
    repo = Project(tmp_path / "repo")
    repo.write("good.py", GOOD)
    (repo.root / ".git").mkdir()
    return repo


def cache_text(folder: Path) -> str:
    return "".join(path.read_text(errors="replace") for path in folder.rglob("*") if path.is_file())


# --- 1. symbolic links -----------------------------------------------------------------------------

@AS_USERS
@pytest.mark.parametrize("where", ["x.py", "deep/er/x.py"])
@pytest.mark.parametrize("named", [False, True], ids=["walked", "named"])
def test_a_link_to_a_secret_outside_is_reported_by_name_and_never_read(repository, where, named,
                                                                       unprivileged) -> None:
    os.makedirs(repository.root / os.path.dirname(where) or repository.root, exist_ok=True)
    os.symlink(repository.root.parent / "home" / ".git-credentials", repository.root / where)
    cache = repository.root / ".torchlint_cache"
    for output_format in ("full", "json"):
        result = repository.run("check", "--output-format", output_format, where if named else ".",
                                without_root_file_access=unprivileged)
        assert result.returncode == 1, result.stderr
        assert SECRET not in result.stdout + result.stderr and "credentials" not in result.stdout
    assert by_file(result)["x.py"] == [("TL000", f"{where} was not linted: {OUTSIDE}")]
    assert SECRET not in cache_text(cache)


@AS_USERS
def test_fix_never_writes_through_a_link_that_leaves_the_project(repository, unprivileged) -> None:
    os.symlink("../other_project/model.py", repository.root / "innocent.py")
    for paths in (["."], ["innocent.py"]):
        result = repository.run("check", "--fix", "--unsafe-fixes", "--output-format", "json", *paths,
                                without_root_file_access=unprivileged)
        assert result.returncode == 1, result.stderr
        assert by_file(result)["innocent.py"] == [("TL000", f"innocent.py was not linted: {OUTSIDE}")]
    assert (repository.root.parent / "other_project" / "model.py").read_text() == GOOD
    assert os.readlink(repository.root / "innocent.py") == "../other_project/model.py"


def test_an_imported_module_linked_from_outside_is_not_read_by_the_analysis(repository) -> None:
    """The analysis follows imports into other modules: `util.py -> ../elsewhere/util.py` is
    not one of the project's modules, so what it returns is not known (it is not read)."""
    elsewhere = repository.root.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "util.py").write_text("import torch\ndef make():\n    return torch.zeros(3)\n")
    repository.write("main.py", "from util import make\ny = make().data\n")
    os.symlink("../elsewhere/util.py", repository.root / "util.py")
    linked = repository.run("check", "--no-cache", "--output-format", "json", "main.py")
    assert linked.returncode == 0 and linked.json() == [], linked.stdout
    (repository.root / "util.py").unlink()
    (repository.root / "util.py").write_text((elsewhere / "util.py").read_text())
    copied = repository.run("check", "--no-cache", "--output-format", "json", "main.py")
    assert [item["code"] for item in copied.json()] == ["TL101"], copied.stdout


def test_a_named_path_through_a_linked_folder_outside_is_not_followed(repository) -> None:
    (repository.root.parent / "other_project" / ".git").mkdir()  # a project of its own: still not this one
    os.symlink("../other_project", repository.root / "vendored")
    for path in ("vendored/model.py", "vendored"):
        result = repository.run("check", "--fix", "--unsafe-fixes", "--output-format", "json", path)
        assert result.returncode == 1, result.stderr
        [item] = result.json()
        assert item["code"] == "TL000" and item["message"] == f"{path} was not linted: {OUTSIDE}"
    assert (repository.root.parent / "other_project" / "model.py").read_text() == GOOD


def test_a_link_inside_the_project_is_linted_and_fixed_as_its_target_once(repository) -> None:
    target = repository.write("src/model.py", LEGACY)
    os.symlink("src/model.py", repository.root / "a_link.py")
    os.symlink("src", repository.root / "src_link")
    shown = repository.run("check", "--output-format", "concise", ".").stdout.splitlines()
    assert {line.split(":")[0] for line in shown if ": TL" in line} == {"a_link.py", "good.py"}  # once, as found
    assert repository.findings("src_link/model.py") == repository.findings("src/model.py")
    result = repository.run("check", "--fix", "--unsafe-fixes", "a_link.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert os.path.islink(repository.root / "a_link.py") and target.read_text() != LEGACY
    assert repository.run("check", "src_link").returncode == 0  # a linked folder inside is walked


def test_loops_and_dangling_links_are_reported_as_before(repository) -> None:
    os.symlink("loop.py", repository.root / "loop.py")
    os.symlink("missing.py", repository.root / "gone.py")
    found = by_file(repository.run("check", "--output-format", "json", "."))
    assert "symlink loop" in found["loop.py"][0][1] and "file not found" in found["gone.py"][0][1]


def test_a_file_swapped_for_a_link_after_discovery_is_not_followed(repository) -> None:
    swapped = repository.write("swapped.py", GOOD)
    secret = repository.root.parent / "home" / ".git-credentials"
    completed = script(repository, f"""
        import os
        import torchlint.integrations.cli, torchlint.engine.discovery
        found = torchlint.engine.discovery.discover
        def discover_then_swap(*args, **kwargs):
            result = found(*args, **kwargs)
            os.unlink({str(swapped)!r})
            os.symlink({str(secret)!r}, {str(swapped)!r})
            return result
        torchlint.integrations.cli.discover = discover_then_swap
    """, "--no-cache", "--jobs", "1", ".")
    assert SECRET not in completed.stdout + completed.stderr
    assert "swapped.py:1:1: TL000 swapped.py was not linted: a symbolic link" in completed.stdout


# --- 6. the cache -----------------------------------------------------------------------------------

def three_findings(project: Project) -> Path:
    return project.write("legacy.py", LEGACY)


@pytest.fixture
def secret_home(tmp_path: Path) -> dict:
    return {"XDG_CACHE_HOME": str(tmp_path / "xdg")}


def test_a_symlinked_cache_folder_is_not_written_to(repository, secret_home) -> None:
    for number in range(3):
        repository.write(f"m{number}.py", GOOD)
    elsewhere = repository.root.parent / "home"
    os.symlink("../home", repository.root / ".torchlint_cache")
    reference = repository.run("check", "--no-cache", "--output-format", "json", ".")
    result = repository.run("check", "--jobs", "2", "--output-format", "json", ".", env=secret_home)
    assert (result.returncode, result.stdout) == (reference.returncode, reference.stdout)
    assert sorted(path.name for path in elsewhere.iterdir()) == [".git-credentials"]
    assert result.stderr.count("running without the cache") == 1 and "it is a symbolic link" in result.stderr
    repository.run("check", "--cache-dir", str(elsewhere), ".", env=secret_home)  # a real cache there
    filled = sorted(elsewhere.rglob("*"))
    assert repository.run("clean").returncode == 2  # not cleaned through the link either
    assert sorted(elsewhere.rglob("*")) == filled and len(filled) > 4


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user takes root")
def test_a_cache_folder_of_another_user_or_writable_by_others_is_not_used(repository, secret_home) -> None:
    cache = repository.root / ".torchlint_cache"
    cache.mkdir()
    for change, reason in ((lambda: os.chmod(cache, 0o777), "other users can write in it"),
                           (lambda: os.chown(cache, 65534, 65534), "it belongs to another user")):
        change()
        result = repository.run("check", "--output-format", "json", ".", env=secret_home)
        assert result.returncode == 1 and reason in result.stderr, result.stderr
        assert list(cache.iterdir()) == []
        os.chmod(cache, 0o755)


def test_a_cache_folder_writable_by_the_users_own_group_is_used(repository, secret_home) -> None:
    """Under a umask of 002 (each user's own group) every folder is group-writable: entries
    are signed, so only a group other than the user's, or everyone, is refused."""
    cache = repository.root / ".torchlint_cache"
    cache.mkdir()
    os.chmod(cache, 0o775)
    os.chown(cache, -1, os.getegid())
    result = repository.run("check", "--output-format", "json", ".", env=secret_home)
    assert result.returncode == 1 and "without the cache" not in result.stderr, result.stderr
    assert any(path.is_file() for path in cache.rglob("*"))


def test_a_forged_cache_entry_is_a_miss(repository, secret_home) -> None:
    import hashlib

    three_findings(repository)
    cache = repository.root / ".torchlint_cache"
    assert repository.run("check", ".", env=secret_home).returncode == 1
    entries = [path for path in cache.rglob("*") if path.is_file() and path.parent != cache]
    for entry in entries:  # what a repository could ship: the digest as anyone can compute it
        payload = json.loads(entry.read_bytes().partition(b"\n")[2])
        payload["report"]["diagnostics"] = []
        data = json.dumps(payload, separators=(",", ":")).encode()
        check = hashlib.blake2b(entry.name.encode() + b"\n" + data, digest_size=16).hexdigest()
        entry.write_bytes(check.encode() + b"\n" + data)
    result = repository.run("check", "--output-format", "json", ".", env=secret_home)
    assert result.returncode == 1 and len(by_file(result)["legacy.py"]) == 3
    key = Path(secret_home["XDG_CACHE_HOME"]) / "torchlint" / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32


def test_without_a_place_for_the_secret_the_run_goes_on_without_the_cache(repository, tmp_path) -> None:
    three_findings(repository)
    (tmp_path / "not_a_folder").write_text("")
    result = repository.run("check", "--output-format", "json", ".",
                            env={"XDG_CACHE_HOME": str(tmp_path / "not_a_folder")})
    assert result.returncode == 1 and len(by_file(result)["legacy.py"]) == 3
    assert result.stderr.count("running without the cache") == 1
    assert not (repository.root / ".torchlint_cache").exists()


# --- 9. --fix keeps the user's save and read-only files ----------------------------------------

EDITOR_SAVE = "import torch\nx = torch.zeros(3)\ny = x.data  # saved by the editor\n"


def editor_saves(path: Path, how: str) -> str:
    """Code defining ``save()``: an editor saving ``path`` the first time it is called,
    writing into the file (``in-place``) or renaming a new file over it (``rename``)."""
    written = str(path) if how == "in-place" else f"{path}.swp"
    return f"""
        import os
        def save():
            if os.environ.get("SAVED"):
                return
            os.environ["SAVED"] = "1"
            with open({written!r}, "w") as handle:
                handle.write({EDITOR_SAVE!r})
            if {written!r} != {str(path)!r}:
                os.replace({written!r}, {str(path)!r})
    """


@pytest.mark.parametrize("how", ["in-place", "rename"])
def test_an_editor_save_during_the_fix_is_kept(project, how) -> None:
    path = project.write("train.py", LEGACY)
    completed = script(project, editor_saves(path, how) + """
        real_fsync = os.fsync
        def save_then_fsync(descriptor):  # the temporary file holding the fix is being written
            save()
            real_fsync(descriptor)
        os.fsync = save_then_fsync
    """, "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "train.py")
    assert path.read_text() == EDITOR_SAVE
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "train.py: the file changed on disk while torchlint was running; not written" in completed.stderr
    assert sorted(p.name for p in project.root.iterdir()) == ["train.py"]


@pytest.mark.parametrize("how", ["in-place", "rename"])
def test_a_save_landing_just_before_the_swap_is_put_back(project, how) -> None:
    from torchlint.engine import atomic

    if atomic._renameat2() is None:
        pytest.skip("no renameat2 here: only the check before the rename applies")
    path = project.write("train.py", LEGACY)
    completed = script(project, editor_saves(path, how) + """
        from torchlint.engine import atomic
        real_exchange = atomic._exchange
        def save_then_exchange(first, second):  # the pre-check has passed: the swap is next
            save()
            return real_exchange(first, second)
        atomic._exchange = save_then_exchange
    """, "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "train.py")
    assert path.read_text() == EDITOR_SAVE
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "the file changed on disk while torchlint was running; not written" in completed.stderr
    assert sorted(p.name for p in project.root.iterdir()) == ["train.py"]


@AS_USERS
def test_fix_leaves_a_read_only_file_alone(project, unprivileged) -> None:
    path = project.write("train.py", LEGACY)
    path.chmod(0o444)
    result = project.run("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "train.py",
                         without_root_file_access=unprivileged)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "train.py: the file is read-only" in result.stderr
    assert path.read_text() == LEGACY and stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_a_file_the_user_cannot_write_is_not_replaced(project) -> None:
    path = project.write("train.py", LEGACY)
    os.chown(path, 65534, 65534)  # 0644: its owner's to write; the folder lets root rename in it
    result = project.run("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "train.py",
                         without_root_file_access=True)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "train.py: the file is read-only" in result.stderr
    assert path.read_text() == LEGACY and path.stat().st_uid == 65534


def test_a_notebook_cell_holding_the_placeholder_text_is_never_reordered(project) -> None:
    source = ["pass  # <torchlint magic 0>\n", "%matplotlib inline\n", "import torch\n",
              "loss = torch.ones(2).sum()\n", "print(loss.data[0])"]
    content = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c", "metadata": {}, "outputs": [],
                          "source": source}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = project.write("nb.ipynb", json.dumps(content, sort_keys=True, indent=1) + "\n")
    result = project.run("check", "--isolated", "--no-cache", "--fix", "nb.ipynb")
    kept = json.loads(path.read_text())["cells"][0]["source"]
    assert kept[:2] == source[:2], kept
    assert result.returncode == 2 and "cell 1 holds the text torchlint marks IPython magics" in result.stderr
