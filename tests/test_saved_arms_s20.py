"""Session 20: a write to a saved tensor in each arm of an ``if`` is reported in each arm (only
one arm runs, so each is the first write on its path), and the runtime check confirms a write
to one view of a tensor that broke an operation which saved another view of it (views share
their base's version counter, though their bytes do not overlap).  Real files, the real CLI,
real torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PYRAMID = """
import torch
from torch import nn
import torch.nn.functional as F


class Pyramid(nn.Module):
    def __init__(self, widths, out, mode="size"):
        super().__init__()
        self.mode = mode
        self.lateral = nn.ModuleList(nn.Conv2d(w, out, 1) for w in widths)

    def forward(self, feats):
        levels = [torch.sigmoid(conv(f)) for conv, f in zip(self.lateral, feats)]
        for i in range(len(levels) - 1, 0, -1):
            if self.mode == "scale":
                levels[i - 1] += F.interpolate(levels[i], scale_factor=2.0)
            else:
                levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[2:])
                levels[i - 1] *= 0.5
        return sum(level.mean() for level in levels)


net = Pyramid([3, 5], 4)
net([torch.randn(1, 3, 8, 8), torch.randn(1, 5, 4, 4)]).backward()
"""

FIXED_PYRAMID = PYRAMID.replace(
    "levels[i - 1] += F.interpolate(levels[i], scale_factor=2.0)",
    "levels[i - 1] = levels[i - 1] + F.interpolate(levels[i], scale_factor=2.0)",
).replace(
    "levels[i - 1] += F.interpolate(levels[i], size=levels[i - 1].shape[2:])\n                levels[i - 1] *= 0.5",
    "levels[i - 1] = (levels[i - 1] + F.interpolate(levels[i], size=levels[i - 1].shape[2:])) * 0.5",
)

VIEWS = """
import torch
from torch import nn

mix = nn.Conv2d(2, 2, 3, padding=1)
stem = nn.Conv2d(4, 4, 1)
z = stem(torch.randn(1, 4, 8, 8))
keep = z[:, :2]  # channels 0-1 and 2-3 of one sample: bytes that do not overlap
move = z[:, 2:]
h = mix(keep)
move += h
torch.cat([keep, move], 1).sum().backward()
"""


def test_each_arm_that_writes_the_saved_tensor_is_reported(project) -> None:
    project.write("pyramid.py", textwrap.dedent(PYRAMID))
    found = project.findings("--select", "TL409", "--no-cache")
    # Lines 16 and 18: one per arm; the `*=` on line 19 follows line 18 on its path.
    assert [(f[1], f[3]) for f in found] == [(16, "TL409"), (18, "TL409")], found


def test_the_fixed_pyramid_has_no_finding_and_runs(project) -> None:
    pytest.importorskip("torch")
    project.write("pyramid.py", textwrap.dedent(FIXED_PYRAMID))
    assert project.findings("--select", "TL409", "--no-cache") == []
    run = subprocess.run([sys.executable, "pyramid.py"], cwd=project.root, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-500:]


def test_the_arm_that_runs_is_confirmed_and_the_other_could_not_run(project) -> None:
    pytest.importorskip("torch")
    project.write("pyramid.py", textwrap.dedent(PYRAMID))
    bad = subprocess.run([sys.executable, "pyramid.py"], cwd=project.root, capture_output=True, text=True,
                         timeout=120)
    assert "modified by an inplace operation" in bad.stderr, bad.stderr[-500:]
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    verdicts = {f["location"]["row"]: f["runtime"]["verdict"] for f in result.json()}
    assert verdicts.get(18) == "CONFIRMED", verdicts
    assert verdicts.get(16) != "CONFIRMED", verdicts


def test_a_write_to_one_view_breaking_a_save_of_another_is_confirmed(project) -> None:
    pytest.importorskip("torch")
    project.write("views.py", textwrap.dedent(VIEWS))
    result = project.run("check", "--runtime", "--select", "TL409", "--no-cache", "--output-format", "json")
    [finding] = result.json()
    assert finding["location"]["row"] == 10, finding
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "modified by an inplace operation" in finding["runtime"]["evidence"]
