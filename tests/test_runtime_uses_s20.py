"""Session 20: for a finding whose error comes where its value is used (TL415 here), a run
of the use's line before the flagged line ever ran is another value's use: the runtime check
no longer takes it as the use and stops the run early (it judged "the conversion ran" while
the flagged list had not been converted yet).  Real file, the real CLI, real torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

SOURCE = """import numpy as np
import torch


def show(*data):
    return [np.asarray(d, dtype=float) for d in data]


w = torch.randn(4, requires_grad=True)
target = torch.ones(4)
show(target.numpy())
history = []
for step in range(12):
    err = ((w - target) ** 2).sum()
    history.append(err)
    err.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
show(history)
"""


def test_the_conversion_after_the_loop_is_confirmed(project) -> None:
    pytest.importorskip("torch")
    project.write("fit.py", SOURCE)
    run = subprocess.run([sys.executable, "fit.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert "Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr[-500:]
    result = project.run("check", "--runtime", "--select", "TL415", "--no-cache", "--output-format", "json")
    [finding] = result.json()
    assert finding["location"]["row"] == 15, finding
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]


def test_the_fixed_twin_runs_and_has_no_finding(project) -> None:
    pytest.importorskip("torch")
    project.write("fit.py", SOURCE.replace("history.append(err)", "history.append(err.item())"))
    run = subprocess.run([sys.executable, "fit.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert project.findings("--select", "TL415", "--no-cache") == []
