"""TL411 (session 23): the line a backward-twice finding goes on, and graphs that are not there.

- a `h.detach()` whose result is thrown away (a statement of its own) leaves the carried state
  in the graph: the finding is on that detach, in the loop or in the state's own method;
- a method of the state's class that assigns its attributes detached values cuts the graph;
- a module whose parameters all have gradients off, kept by a class as `self.<name>`, on inputs
  that do not require grad records no graph; on an input computed from trainable weights above
  the loop, it does;
- a value computed above the loop and reused by every iteration's backward is reported where it
  is computed.

Real files through the real CLI; each bad program raises under torch, each twin runs."""

from __future__ import annotations

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")

DISCARDED_IN_LOOP = '''
import torch
from torch import nn

torch.manual_seed(0)
rnn = nn.GRU(3, 4)
h = torch.zeros(1, 2, 4)
for x in [torch.randn(5, 2, 3) for _ in range(3)]:
    out, h = rnn(x, h)
    out.pow(2).mean().backward()
    h.detach()
'''

STATE_CLASS = '''
import torch
from torch import nn

torch.manual_seed(0)


class State:
    def __init__(self, hidden, feed):
        self.hidden = hidden
        self.feed = feed

    def detach(self):
{body}


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 4)

    def forward(self, xs, state):
        h, feed = state.hidden, state.feed
        for x in xs:
            h = self.cell(x + feed[:, :3], h)
            feed = torch.tanh(h)
        return h.sum(), State(h, feed)


decoder = Decoder()
state = State(torch.zeros(2, 4), torch.zeros(2, 4))
for chunk in torch.randn(3, 4, 2, 3):
    loss, state = decoder(chunk, state)
    loss.backward()
    state.detach()
'''

THROWN_AWAY = '''        for t in (self.hidden, self.feed):
            t.detach()'''
ASSIGNED = '''        self.hidden = self.hidden.detach()
        self.feed = self.feed.detach()'''

FROZEN_KEPT_BY_A_CLASS = '''
import torch
from torch import nn

torch.manual_seed(0)


class Refiner:
    def __init__(self, net, encoder):
        self.net = net
        self.encoder = encoder
        self.context = None

    def prepare(self, ids):
        self.context = self.encoder(ids){detach}

    def refine(self, x, steps=3):
        z = torch.zeros(1, 4, requires_grad=True)
        optimizer = torch.optim.SGD([z], lr=0.1)
        for i, t in enumerate(torch.linspace(1.0, 0.1, 2)):
            guide = self.net(x, t, self.context)
            for _ in range(steps):
                loss = (self.net(x, t, z) - guide).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return z


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(9, 4)

    def forward(self, x, t, c):
        return torch.tanh(self.layer(torch.cat([x, c, t.view(1, 1)], dim=1)))


net = Net()
net.requires_grad_(False)
refiner = Refiner(net, nn.Linear(6, 4))
refiner.prepare(torch.randn(1, 6))
print(refiner.refine(torch.randn(1, 4)))
'''

ABOVE_THE_LOOP = '''
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
penalty = 1e-3 * sum(torch.linalg.norm(p) for p in model.parameters())
for x in torch.randn(3, 8, 4):
    loss = model(x).pow(2).mean() + penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def _check(project, source: str) -> tuple:
    path = project.write("train.py", source)
    return project.findings("--select", "TL411"), path


def _line(source: str, text: str) -> int:
    written = source.lstrip("\n")  # as `project.write` writes it
    return next(number for number, line in enumerate(written.splitlines(), 1) if text in line)


def test_a_detach_thrown_away_in_the_loop(project) -> None:
    found, path = _check(project, DISCARDED_IN_LOOP)
    assert [row for _, row, _, _ in found] == [_line(DISCARDED_IN_LOOP, "h.detach()")], found
    assert "second time" in torch_program(path).stderr
    fixed = DISCARDED_IN_LOOP.replace("    h.detach()", "    h = h.detach()")
    found, path = _check(project, fixed)
    assert found == []
    assert torch_program(path).returncode == 0


def test_a_state_method_that_throws_its_detach_away(project) -> None:
    bad = STATE_CLASS.format(body=THROWN_AWAY)
    found, path = _check(project, bad)
    assert [row for _, row, _, _ in found] == [_line(bad, "t.detach()")], found
    assert "second time" in torch_program(path).stderr
    result = project.run("check", "--select", "TL411", "--runtime", "train.py")
    assert "CONFIRMED" in result.stdout, result.stdout


def test_a_state_method_that_assigns_detached_values(project) -> None:
    found, path = _check(project, STATE_CLASS.format(body=ASSIGNED))
    assert found == []
    assert torch_program(path).returncode == 0


def test_a_frozen_module_kept_by_a_class(project) -> None:
    fixed = FROZEN_KEPT_BY_A_CLASS.format(detach=".detach()")
    found, path = _check(project, fixed)
    assert found == []
    assert torch_program(path).returncode == 0
    bad = FROZEN_KEPT_BY_A_CLASS.format(detach="")
    found, path = _check(project, bad)
    # the context keeps the encoder's graph, freed by the first inner backward: reported where it is made
    assert [row for _, row, _, _ in found] == [_line(bad, "self.context = self.encoder(ids)")], found
    assert "second time" in torch_program(path).stderr


def test_a_value_computed_above_the_loop_is_reported_there(project) -> None:
    found, path = _check(project, ABOVE_THE_LOOP)
    assert [row for _, row, _, _ in found] == [_line(ABOVE_THE_LOOP, "penalty = ")], found
    assert "second time" in torch_program(path).stderr
    result = project.run("check", "--select", "TL411", "--runtime", "train.py")
    assert "CONFIRMED" in result.stdout, result.stdout
    inside = ABOVE_THE_LOOP.replace("penalty = 1e-3", "penalty0 = 1e-3").replace(
        "    loss = model(x)", "    penalty = 1e-3 * sum(torch.linalg.norm(p) for p in model.parameters())\n"
        "    loss = model(x)")
    found, path = _check(project, inside)
    assert found == []
    assert torch_program(path).returncode == 0
