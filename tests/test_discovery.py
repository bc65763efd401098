"""Which files get linted: folders, .gitignore, virtualenvs, excludes, explicit files, stdin."""

from __future__ import annotations

import os
import subprocess

from conftest import LEGACY

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.data)\n"


def listed(project, *args: str) -> list[str]:
    result = project.run("check", "--show-files", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_finds_py_and_pyi_only(project) -> None:
    project.write("a.py", BAD)
    project.write("stubs/b.pyi", "import torch\ndef f(x: torch.Tensor) -> torch.Tensor: ...\n")
    project.write("notes.txt", BAD)
    project.write("script", BAD)
    project.write("pkg/__init__.py", "")
    assert listed(project) == ["a.py", "pkg/__init__.py", "stubs/b.pyi"]


def test_skips_virtualenvs_build_and_cache_folders(project) -> None:
    project.write("src/model.py", BAD)
    for folder in (".venv/lib", "venv/lib", "build/lib", "dist", ".tox/py", "__pycache__",
                   "node_modules/x", ".git/hooks", ".mypy_cache", "site-packages/pkg"):
        project.write(f"{folder}/x.py", BAD)
    # A virtualenv under any name is recognised by its pyvenv.cfg.
    project.write("my-env/pyvenv.cfg", "home = /usr/bin\n")
    project.write("my-env/lib/python3.11/site.py", BAD)
    assert listed(project) == ["src/model.py"]


def test_respects_gitignore(project) -> None:
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    project.write(".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n")
    project.write("src/.gitignore", "scratch.py\n")
    project.write("src/model.py", BAD)
    project.write("src/scratch.py", BAD)
    project.write("generated/model.py", BAD)
    project.write("proto/api_pb2.py", BAD)
    project.write("proto/keep_pb2.py", BAD)
    assert listed(project) == ["proto/keep_pb2.py", "src/model.py"]
    # .gitignore files above the linted folder apply too.
    result = project.run("check", "--show-files", "src")
    assert result.stdout.split() == ["src/model.py"]
    assert listed(project, "--no-respect-gitignore") == [
        "generated/model.py", "proto/api_pb2.py", "proto/keep_pb2.py", "src/model.py", "src/scratch.py",
    ]


def test_exclude_and_extend_exclude(project) -> None:
    project.write("src/model.py", BAD)
    project.write("src/legacy/old.py", BAD)
    project.write("build/gen.py", BAD)
    assert listed(project, "--extend-exclude", "legacy") == ["src/model.py"]
    # --exclude replaces the defaults: build/ is linted again.
    assert listed(project, "--exclude", "src/legacy/*") == ["build/gen.py", "src/model.py"]
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["src/legacy"]\n')
    assert listed(project) == ["src/model.py"]


def test_explicit_files_are_linted_even_if_excluded_unless_forced(project) -> None:
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["legacy/"]\n')
    project.write("legacy/old.py", BAD)
    project.write("tool", BAD)  # no .py suffix: linted because it was named
    assert listed(project) == []
    assert listed(project, "legacy/old.py", "tool") == ["legacy/old.py", "tool"]
    assert listed(project, "--force-exclude", "legacy/old.py", "tool") == ["tool"]
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["legacy/"]\nforce-exclude = true\n')
    assert listed(project, "legacy/old.py") == []
    result = project.run("check", "--force-exclude", "legacy/old.py")
    assert result.returncode == 0 and "All checks passed!" in result.stdout


def test_symlinked_folders_are_not_followed(project) -> None:
    project.write("src/model.py", BAD)
    os.symlink(project.root / "src", project.root / "loop")
    assert listed(project) == ["src/model.py"]


def test_missing_path_is_reported_and_others_still_linted(project) -> None:
    project.write("model.py", BAD)
    found = project.findings("nope.py", "model.py")
    assert found == [("model.py", 3, 7, "TL101"), ("nope.py", 1, 1, "TL000")]
    result = project.run("check", "nope.py", "--output-format", "concise")
    assert result.returncode == 1
    assert "nope.py:1:1: TL000 nope.py was not linted: no such file or directory" in result.stdout


def test_stdin_with_filename(project) -> None:
    project.write("pyproject.toml", '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TL201"]\n')
    result = project.run("check", "-", "--stdin-filename", "src/train.py", "--output-format", "concise",
                         stdin=LEGACY.encode())
    assert result.returncode == 1
    assert [line.replace(" [*] ", " ") for line in result.stdout.splitlines()[:3]] == [
        "src/train.py:2:28: TL201 `torch.autograd.Variable` is deprecated: tensors track gradients themselves since PyTorch 0.4; use `torch.Tensor`",
        "src/train.py:5:5: TL101 `x.data` is an alias autograd does not track; use `x.detach()`",
        "src/train.py:8:7: TL203 `loss.data[0]` raises IndexError on a 0-dim tensor since PyTorch 0.5; use `loss.item()`",
    ]
    # The per-file-ignores of the config apply to the name given to standard input.
    ignored = project.run("check", "-", "--stdin-filename", "tests/test_train.py", "--output-format", "json",
                          stdin=LEGACY.encode())
    assert sorted(item["code"] for item in ignored.json()) == ["TL101", "TL203"]


def test_stdin_without_filename_and_force_exclude(project) -> None:
    result = project.run("check", "-", "--output-format", "concise", "-q", stdin=LEGACY.encode())
    assert result.stdout.startswith("-:2:28: TL201")
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["gen/"]\n')
    forced = project.run("check", "-", "--stdin-filename", "gen/x.py", "--force-exclude", stdin=LEGACY.encode())
    assert forced.returncode == 0
    mixed = project.run("check", "-", "a.py", stdin=b"")
    assert mixed.returncode == 2


def test_same_file_twice_is_linted_once(project) -> None:
    project.write("model.py", BAD)
    assert project.findings("model.py", ".", "./model.py") == [("model.py", 3, 7, "TL101")]


def test_named_folder_is_linted_even_if_ignored_or_excluded(project) -> None:
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    project.write(".gitignore", "/vendor/\n")
    project.write("pyproject.toml", '[tool.torchlint]\nextend-exclude = ["third_party"]\n')
    project.write("vendor/lib/model.py", BAD)
    project.write("vendor/lib/.gitignore", "scratch.py\n")
    project.write("vendor/lib/scratch.py", BAD)
    project.write("third_party/pkg/model.py", BAD)
    project.write("third_party/pkg/build/gen.py", BAD)
    assert listed(project) == []
    assert listed(project, "vendor") == ["vendor/lib/model.py"]
    # Exclusions still apply below the named folder (build/ is a default exclusion).
    assert listed(project, "third_party") == ["third_party/pkg/model.py"]
    assert listed(project, "--force-exclude", "third_party") == []
