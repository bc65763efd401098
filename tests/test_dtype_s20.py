"""Session 20: two general facts of the value analyses, seen on a float64 weight matrix made
from numpy and multiplied with float32 batches (TL413):

- a static method called through its class (`Helpers.train(net, loader)`) gets what the call
  passes, as a plain function does;
- a name bound to what a function of the file returns (`train_iter, test_iter = load(64)`,
  with `return train, test`) is followed into that function's return, to the `DataLoader`
  it builds, also for a static method.

Each bad program raises under torch; its fixed twin (the weight made float32) runs clean and
has no finding.  Real files, the real CLI, real torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAD = """import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

W = torch.tensor(np.random.normal(0, 0.01, (4, 3)))


def net(X):
    return torch.matmul(X, W)

"""

STATIC_TRAIN = HEAD + """
class Helpers:
    @staticmethod
    def train(model, loader):
        for X, y in loader:
            model(X)


data = DataLoader(TensorDataset(torch.rand(8, 4), torch.zeros(8)), batch_size=2)
Helpers.train(net, data)
"""

RETURNED_LOADERS = HEAD + """
def load(n):
    images, labels = torch.rand(8, 4), torch.zeros(8)
    train = DataLoader(TensorDataset(images[:n], labels[:n]), batch_size=2)
    test = DataLoader(TensorDataset(images[n:], labels[n:]), batch_size=2)
    return train, test


train_iter, test_iter = load(4)
for X, y in train_iter:
    net(X)
"""

STATIC_LOADERS = HEAD + """
class Data:
    @staticmethod
    def load(n):
        images, labels = torch.rand(8, 4), torch.zeros(8)
        return DataLoader(TensorDataset(images[:n], labels[:n]), batch_size=2), None


def evaluate(model, loader):
    for X, _ in loader:
        model(X)


train_iter, _unused = Data.load(4)
evaluate(net, train_iter)
"""

CASES = {"static_train": STATIC_TRAIN, "returned_loaders": RETURNED_LOADERS, "static_loaders": STATIC_LOADERS}
BAD = "W = torch.tensor(np.random.normal(0, 0.01, (4, 3)))"
FIXED = "W = torch.tensor(np.random.normal(0, 0.01, (4, 3)), dtype=torch.float32)"


def _run(project) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "prog.py"], cwd=project.root, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_float64_weight_is_found(project, case) -> None:
    project.write("prog.py", CASES[case])
    assert [(f[1], f[3]) for f in project.findings("--select", "TL413", "--no-cache")] == [(5, "TL413")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    project.write("prog.py", CASES[case].replace(BAD, FIXED))
    assert project.findings("--select", "TL413", "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_only(project, case) -> None:
    pytest.importorskip("torch")
    project.write("prog.py", CASES[case])
    bad = _run(project)
    assert bad.returncode != 0 and "dtype" in bad.stderr, bad.stderr[-500:]
    project.write("prog.py", CASES[case].replace(BAD, FIXED))
    good = _run(project)
    assert good.returncode == 0, good.stderr[-500:]
