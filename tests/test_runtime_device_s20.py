"""Session 20: the runtime check follows a tensor a TL416 finding names (made by a factory
without `device=`, or left behind by `t.to(device)` written as a statement) to the operation
that raises the device error, wherever it runs: deep in a layer, in another function.  The
meta device stands in for a GPU on CPU torch.  Real files, the real CLI, real torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

HIDDEN = """
import torch
from torch import nn

device = torch.device("meta")


class Cell(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.inp = nn.Linear(width, width)
        self.rec = nn.Linear(width, width)

    def initial(self, x):
        return torch.zeros(x.shape[0], self.width)

    def forward(self, x, adj):
        h = self.initial(x)
        z = torch.sigmoid(self.inp(x) + self.rec(adj @ h))
        return z * h + (1 - z) * torch.tanh(self.inp(x))


model = Cell(4).to(device)
adj = torch.rand(3, 3).to(device)
out = model(torch.randn(3, 4).to(device), adj)
print(out.shape)
"""

# On the meta device a matrix product does not check devices: the first use of the CPU state
# runs, and the error comes at a later one (`z * h`), which the finding does not name.
LEFT_BEHIND = """
import torch
from torch import nn

device = torch.device("meta")


def weigh(values, steps):
    return values / (1.0 + steps)


def train_step(model, batch):
    steps = torch.randint(0, 10, (batch.shape[0],))
    steps.to(batch.device)
    out = model(batch)
    return weigh(out, steps[:, None]).mean()


model = nn.Linear(3, 3).to(device)
print(train_step(model, torch.randn(4, 3).to(device)))
"""

FIXES = {
    "hidden": (HIDDEN, "torch.zeros(x.shape[0], self.width)", "torch.zeros(x.shape[0], self.width, device=x.device)"),
    "left_behind": (LEFT_BEHIND, "    steps.to(batch.device)", "    steps = steps.to(batch.device)"),
}


def _verdicts(project) -> dict[int, dict]:
    result = project.run("check", "--runtime", "--select", "TL416", "--no-cache", "--output-format", "json")
    return {f["location"]["row"]: f["runtime"] for f in result.json()}


@pytest.mark.parametrize("case, row", [("hidden", 15), ("left_behind", 13)])
def test_the_device_error_is_told_to_the_line_that_made_or_left_the_tensor(project, case, row) -> None:
    pytest.importorskip("torch")
    source, _bad, _good = FIXES[case]
    project.write("prog.py", textwrap.dedent(source))
    run = subprocess.run([sys.executable, "prog.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "device" in run.stderr, run.stderr[-500:]
    verdicts = _verdicts(project)
    assert verdicts[row]["verdict"] == "CONFIRMED", verdicts
    assert "raised at line" in verdicts[row]["evidence"], verdicts[row]


@pytest.mark.parametrize("case", sorted(FIXES))
def test_the_fixed_twin_runs_and_has_no_finding(project, case) -> None:
    pytest.importorskip("torch")
    source, bad, good = FIXES[case]
    assert bad in source
    project.write("prog.py", textwrap.dedent(source.replace(bad, good)))
    run = subprocess.run([sys.executable, "prog.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    assert project.findings("--select", "TL416", "--no-cache") == []
