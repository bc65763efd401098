"""No graph in the shapes training code takes when it is split into helpers (issue 41, round 20):

- a function of the file called under ``no_grad`` computes everything without a graph, so
  what it returns (a loss, a dict of losses, a part of a tuple) has none when every value in
  it is made during the call;
- a module made by a function of the file that freezes every parameter of what it returns
  (after its last layer, also through a freezing helper under an ``if flag:`` the calls pass
  ``True`` for) computes nothing with a graph, also where a function taking it as a parameter
  calls it on the items of a parameter;
- ``.numpy()`` is a method of tensors only: ``torch.tensor`` of what it gives is a round trip,
  whatever the inference knows of the receiver (a parameter of a method);
- ``torch.tensor(losses)`` of a list the loop appends tensors to copies their values;
- a layer added to the parts of a frozen model (``for block in model.blocks: block.proj =
  Adapter(..)``) trains: the model is not taken as frozen.

Each bad program is found on the line to change and its fixed twin is clean; both run under
torch, the bad one raising "element 0 of tensors does not require grad"."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

UNDER_NO_GRAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner:
    def __init__(self):
        self.net = nn.Linear(6, 2)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def losses(self, batch):
        pred = self.net(batch["x"])
        return {"mse": F.mse_loss(pred, batch["y"]), "l1": F.l1_loss(pred, batch["y"])}

    def run(self, batch):
        pred, parts = self.forward_and_losses(batch)
        return parts["mse"] + parts["l1"]

    def forward_and_losses(self, batch):
        return self.net(batch["x"]), self.losses(batch)

    def refine(self, batch):
        with torch.no_grad():
            _, parts = self.forward_and_losses(batch)
        self.opt.zero_grad()
        parts["mse"].backward()
        self.opt.step()


Learner().refine({"x": torch.randn(4, 6), "y": torch.randn(4, 2)})
"""

BUILT_FROZEN = """
import torch
import torch.nn as nn


def build(n_out):
    body = nn.Sequential(nn.Linear(5, 7), nn.Tanh())
    net = nn.Sequential(body, nn.Linear(7, n_out))
    net.requires_grad_(False)
    return net


def epoch(net, pairs, lr=0.05):
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    for inputs, labels in pairs:
        loss = nn.functional.cross_entropy(net(inputs), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


net = build(3)
epoch(net, [(torch.randn(4, 5), torch.randint(0, 3, (4,)))])
"""

FLAG_FROZEN = """
import torch
import torch.nn as nn


def freeze_all(module, freeze):
    if freeze:
        for weight in module.parameters():
            weight.requires_grad = False


def make(classes, frozen):
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    model.add_module("out", nn.Linear(8, classes))
    freeze_all(model, frozen)
    return model


def fit(model, data):
    opt = torch.optim.Adam(model.parameters())
    for x, y in data:
        opt.zero_grad()
        nn.functional.nll_loss(torch.log_softmax(model(x), 1), y).backward()
        opt.step()


fit(make(4, frozen=True), [(torch.randn(3, 8), torch.randint(0, 4, (3,)))])
"""

NUMPY_METHOD = """
import numpy as np
import torch
import torch.nn as nn


class RelativeError:
    def compute(self, prediction, truth):
        p = prediction.detach().numpy()
        t = truth.numpy()
        return torch.from_numpy(np.abs(p - t) / (np.abs(t) + 1.0)).mean()

    def __call__(self, prediction, truth):
        return self.compute(prediction, truth)


def train_step(model, criterion, opt, x, y):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()


model = nn.Linear(3, 2)
train_step(model, RelativeError(), torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(4, 3), torch.randn(4, 2))
"""

LISTED = """
import torch
import torch.nn as nn

net = nn.Linear(3, 1)
criterion = nn.L1Loss()
chunks = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(3)]
per_chunk = []
for x, y in chunks:
    per_chunk.append(criterion(net(x), y))
total = torch.tensor(per_chunk).sum()
total.backward()
"""

CASES = {
    # name: (source, row of the finding, (text in bad, text in fixed))
    "under_no_grad": (UNDER_NO_GRAD, 23, ("        with torch.no_grad():\n            _, parts",
                                          "        _, parts")),
    "built_frozen": (BUILT_FROZEN, 8, ("    net.requires_grad_(False)", "    body.requires_grad_(False)")),
    "flag_frozen": (FLAG_FROZEN, 14, ('    model.add_module("out", nn.Linear(8, classes))\n    freeze_all(model, frozen)',
                                      '    freeze_all(model, frozen)\n    model.add_module("out", nn.Linear(8, classes))')),
    "numpy_method": (NUMPY_METHOD, 10, ("        p = prediction.detach().numpy()\n        t = truth.numpy()\n"
                                        "        return torch.from_numpy(np.abs(p - t) / (np.abs(t) + 1.0)).mean()",
                                        "        return ((prediction - truth).abs() / (truth.abs() + 1.0)).mean()")),
    "listed": (LISTED, 10, ("torch.tensor(per_chunk)", "torch.stack(per_chunk)")),
}


def _source(case: str, fixed: bool) -> str:
    source, _row, (bad, good) = CASES[case]
    assert bad in source
    return textwrap.dedent(source.replace(bad, good) if fixed else source)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found_on_the_line_to_change(project, case) -> None:
    project.write("train.py", _source(case, fixed=False))
    assert [(f[0], f[1], f[3]) for f in project.findings("--select", "TL408", "--no-cache")] == \
        [("train.py", CASES[case][1], "TL408")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    project.write("train.py", _source(case, fixed=True))
    assert project.findings("--select", "TL408", "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    for fixed in (False, True):
        project.write("train.py", _source(case, fixed))
        run = subprocess.run([sys.executable, "train.py"], cwd=project.root, capture_output=True, text=True,
                             timeout=120)
        if fixed:
            assert run.returncode == 0, run.stderr[-500:]
        else:
            assert "does not require grad and does not have a grad_fn" in run.stderr, run.stderr[-500:]


ADAPTED = """
import torch
import torch.nn as nn


class Adapter(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base
        self.extra = nn.Linear(base.in_features, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.extra(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return x + self.proj(x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


model = Stack()
for p in model.parameters():
    p.requires_grad = False
for block in model.blocks:
    block.proj = Adapter(block.proj)
loss = model(torch.randn(2, 4)).pow(2).mean()
loss.backward()
"""


def test_layers_added_to_the_parts_of_a_frozen_model_train(project) -> None:
    project.write("adapt.py", ADAPTED)
    assert project.findings("--select", "TL408", "--no-cache") == []
    run = subprocess.run([sys.executable, "adapt.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
