"""Issue 41, session 11 (helper p): where a module is and where a tensor is, resolved on the
shapes a census of the script corpus and the dev threads found unresolved in many repositories
(not on probes):

- ``Variable(x)`` is ``x`` (since PyTorch 0.4): its device and dtype are those of ``x``
  (``inputs, targets = Variable(inputs), Variable(targets)``, in 16 script repositories);
- a module name bound in several branches (``if arch == ..: model = A() else: model = B()``)
  and moved by a statement after them (``model.to(device)``), or a data-parallel wrapper of a
  moved module;
- a module handed down two functions (``main`` -> ``train(model, ..)`` -> ``validate(model, ..)``);
- ``self.G`` of a trainer object, assigned in several branches of a setup method that moves it
  (``self.G.to(self.device)``), or ``self.model = model`` of a model every construction passes
  moved (``Trainer(net.to(device), ..)``).

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import pytest

from torch_programs import run_program as torch_program


@dataclass(frozen=True)
class Case:
    why: str
    bad: str
    fixed: str
    found: tuple[tuple[int, int, str], ...]


def _case(why: str, bad: str, edit: tuple[str, str], found: tuple[tuple[int, int, str], ...]) -> Case:
    """A case whose twin is the bad program with one edit (the fix)."""
    old, new = edit
    assert bad.count(old) == 1, old
    return Case(why, bad, bad.replace(old, new), found)


VARIABLE = '''\
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")  # stands for "cuda"
model = nn.Linear(4, 2).to(device)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
for i, (inputs, targets) in enumerate(loader):
    inputs, targets = Variable(inputs), Variable(targets)
    outputs = model(inputs)
    loss = criterion(outputs, targets)
'''


BRANCHES = '''\
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Big(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        return self.body(x)


def train(model, loader, device):
    for x, y in loader:
        out = model(x)
        loss = nn.functional.cross_entropy(out, y.to(device))


def main(arch):
    device = torch.device("meta")  # stands for "cuda"
    if arch == "small":
        model = Small()
    else:
        model = Big()
    model.to(device)
    loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
    train(model, loader, device)


main(sys.argv[1] if len(sys.argv) > 1 else "small")
'''


SOLVER = '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Solver:
    def __init__(self, width, device):
        self.width = width
        self.device = device
        self.build_model()

    def build_model(self):
        if self.width > 8:
            self.G = nn.Sequential(nn.Linear(4, self.width), nn.ReLU(), nn.Linear(self.width, 4))
        else:
            self.G = nn.Linear(4, 4)
        self.G.to(self.device)

    def train(self, loader):
        for (x,) in loader:
            out = self.G(x)
            loss = out.pow(2).mean()


device = torch.device("meta")  # stands for "cuda"
solver = Solver(16, device)
loader = DataLoader(TensorDataset(torch.randn(8, 4)), batch_size=4)
solver.train(loader)
'''


TRAINER = '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    def fit(self):
        for x, y in self.loader:
            loss = nn.functional.cross_entropy(self.model(x), y)


device = torch.device("meta")  # stands for "cuda"
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)
Trainer(nn.Linear(4, 2).to(device), loader).fit()
'''


CASES = {
    "variable": _case("Variable(x) keeps the device of x", VARIABLE,
                      ("Variable(inputs), Variable(targets)", "Variable(inputs.to(device)), Variable(targets.to(device))"),
                      ((13, 21, "TL416"), (14, 31, "TL416"))),
    "branches": _case("a model bound in two branches, moved after them, handed down a function", BRANCHES,
                      ("out = model(x)", "out = model(x.to(device))"), ((30, 21, "TL416"),)),
    "solver": _case("self.G built in two branches of a setup method that moves it", SOLVER,
                    ("out = self.G(x)", "out = self.G(x.to(self.device))"), ((23, 26, "TL416"),)),
    "trainer": _case("self.model = model of a model passed moved", TRAINER,
                     ("for x, y in self.loader:\n", "for x, y in self.loader:\n            x, y = x.to(device), y.to(device)\n"),
                     ((15, 59, "TL416"), (15, 63, "TL416"))),
}


def _runs(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=180)


def _write(project, case: Case) -> None:
    project.write("bad.py", case.bad)
    project.write("fixed.py", case.fixed)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean(project, name: str) -> None:
    case = CASES[name]
    _write(project, case)
    assert project.findings("--no-cache", "--select", "TL416,TL413", "bad.py") == \
        [("bad.py", *found) for found in case.found]
    assert project.findings("--no-cache", "--select", "TL416,TL413", "fixed.py") == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not(project, name: str) -> None:
    pytest.importorskip("torch")
    case = CASES[name]
    _write(project, case)
    bad = _runs(project, "bad.py")
    assert bad.returncode != 0 and "is not on the expected device" in bad.stderr, case.why
    fixed = _runs(project, "fixed.py")
    assert fixed.returncode == 0, fixed.stderr[-500:]


def test_a_model_moved_on_one_branch_only_says_nothing(project) -> None:
    """`model.to(device)` under one branch and not after the other: where the model is is not known."""
    project.write("one.py", BRANCHES.replace("        model = Big()\n    model.to(device)\n",
                                             "        model = Big()\n        model.to(device)\n"))
    assert project.findings("--no-cache", "--select", "TL416", "one.py") == []
