"""The seeds' buggy examples, fixed by `torchlint --fix --unsafe-fixes`, run under real
torch and behave correctly: the silent wrong gradient becomes autograd's error, the
`IndexError` of `loss.data[0]` goes away, intended writes still happen."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_torchlint
from torch_programs import run_program as torch_program

pytest.importorskip("torch")


def run_python(path: Path) -> subprocess.CompletedProcess:
    return torch_program(str(path), timeout=120, cwd=path.parent)


def fixed(relative: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """Run the fixture as it is and as `--fix --unsafe-fixes` with its folder's rule leaves it."""
    source = FIXTURES / relative
    target = tmp_path / source.name
    shutil.copyfile(source, target)
    code = source.parent.name.split("-")[0]
    result = run_torchlint("check", "--isolated", "--select", code, "--fix", "--unsafe-fixes", str(target),
                           cwd=tmp_path)
    assert result.returncode in (0, 1) and "error" not in result.stderr, result.stderr
    assert target.read_text() != source.read_text()
    return run_python(source), run_python(target)


def test_silent_wrong_gradient_becomes_autograds_error(tmp_path: Path) -> None:
    before, after = fixed("TL102-data-inplace/bad_silent_wrong_gradient.py", tmp_path)
    assert before.returncode == 0 and "tensor([20., 40., 60.])" in before.stdout  # silently wrong
    assert after.returncode != 0
    assert "modified by an inplace operation" in after.stderr


def test_seed_data_write_keeps_its_intended_effect(tmp_path: Path) -> None:
    before, after = fixed("TL102-data-inplace/bad_seed_data_mul.py", tmp_path)
    assert before.returncode == 0 and after.returncode == 0
    assert after.stdout.splitlines()[0] == "tensor(3., requires_grad=True)"
    assert before.stdout.splitlines()[1:] == after.stdout.splitlines()[1:]


def test_legacy_training_loop_runs_after_the_fix(tmp_path: Path) -> None:
    before, after = fixed("TL203-data-index-scalar/bad_seed_legacy_training.py", tmp_path)
    assert before.returncode != 0 and "IndexError: invalid index of a 0-dim tensor" in before.stderr
    assert after.returncode == 0, after.stderr
    assert after.stdout.count("step ") == 3
