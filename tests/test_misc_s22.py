"""Session 22 facts of the device and autograd analyses, each on a bad program and a correct
near-twin (programs of our own, run under torch with the meta device standing in for a GPU):

- TL416: a tensor a module registers (`register_buffer("scale", ..)`, an `nn.Parameter`
  attribute) is on the device the module is moved to, so a CPU tensor made without
  `device=` in a method `forward` runs meets it there; and a parameter default
  (`torch.ones(n) if weight is None else weight`) is used when a call of the module leaves
  the argument out, also through a `forward(self, *args, **kwargs)` that passes them on
  to `self.update(*args, **kwargs)`, a method only the subclass defines;
- TL417: the output of a module whose parameters are frozen, on which a forward hook calls
  `output.requires_grad_(True)`, is a leaf that requires grad: an in-place write to it raises;
- TL409: a method that steps an optimizer and then differentiates a result another method
  kept on the instance (`self.fake = self.gen(z)` in `forward`) goes back through a graph
  built before it ran, whose saved parameters the step wrote.
"""

from __future__ import annotations

import textwrap

import pytest

from torch_programs import run_program

METRIC = """\
import torch
from torch import nn

device = torch.device("meta")


class Tracker(nn.Module):
    def forward(self, *args, **kwargs):
        self.update(*args, **kwargs)
        return self.total


class WeightedError(Tracker):
    def __init__(self, n_out):
        super().__init__()
        self.register_buffer("scale", torch.full((1, n_out), 0.5))
        self.total = None

    def update(self, pred, target, weight=None):
        weight = torch.ones(pred.shape[0]) if weight is None else weight
        err = (pred - target).abs() * weight[:, None] * self.scale
        self.total = err.sum()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 3)
        self.metric = WeightedError(3)

    def forward(self, x):
        return self.body(x)


net = Regressor().to(device)
x = torch.randn(5, 6, device=device)
y = torch.randn(5, 3, device=device)
print(net.metric(net(x), y).shape)
"""

HELD = """\
import torch
from torch import nn


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.opt_g = torch.optim.SGD(self.gen.parameters(), lr=0.1)
        self.opt_d = torch.optim.SGD(self.disc.parameters(), lr=0.1)

    def forward(self, z):
        self.fake = self.gen(z)

    def learn(self, real):
        loss_g = -self.disc(self.fake).mean()
        self.opt_g.zero_grad()
        loss_g.backward(retain_graph=True)
        self.opt_g.step()
        self.opt_d.zero_grad()
        loss_d = self.disc(self.fake).mean() - self.disc(real).mean()
        loss_d.backward()
        self.opt_d.step()


pair = Pair()
for _ in range(2):
    pair(torch.randn(3, 4))
    pair.learn(torch.randn(3, 4))
print("ok")
"""

HOOKED = """\
import torch
from torch import nn


def mark_input(module, args, output):
    output.requires_grad_(True)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(30, 8)
        self.words.requires_grad_(False)
        self.words.register_forward_hook(mark_input)
        self.head = nn.Linear(8, 3)

    def forward(self, ids, bias):
        vecs = self.words(ids)
        vecs += bias
        return self.head(vecs)


tagger = Tagger()
out = tagger(torch.randint(0, 30, (2, 5)), torch.randn(8))
out.sum().backward()
print("ok")
"""

# case -> (source, rule, line of the finding, (bad text, fixed text))
CASES = {
    "registered-buffer-met": (METRIC, "TL416", 20, ("torch.ones(pred.shape[0])",
                                                   "torch.ones(pred.shape[0], device=pred.device)")),
    "hooked-frozen-output": (HOOKED, "TL417", 19, ("        vecs += bias\n", "        vecs = vecs + bias\n")),
    "held-graph-stepped": (HELD, "TL409", 20, ("        self.opt_g.step()\n        self.opt_d.zero_grad()\n",
                                               "        self.opt_d.zero_grad()\n")),
}


def _write(project, case: str, fixed: bool) -> str:
    source, _rule, _line, (bad, good) = CASES[case]
    assert bad in source
    if fixed and case == "held-graph-stepped":
        source = source.replace("        self.opt_d.step()\n", "        self.opt_d.step()\n        self.opt_g.step()\n")
    project.write("prog.py", textwrap.dedent(source.replace(bad, good) if fixed else source))
    return "prog.py"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(project, case) -> None:
    where = _write(project, case, fixed=False)
    rule, line = CASES[case][1], CASES[case][2]
    found = project.findings("--select", rule, "--no-cache")
    assert [(f[0], f[1], f[3]) for f in found] == [(where, line, rule)], found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    _write(project, case, fixed=True)
    assert project.findings("--select", CASES[case][1], "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    for fixed in (False, True):
        where = _write(project, case, fixed)
        done = run_program(where, cwd=project.root, timeout=120)
        if fixed:
            assert done.returncode == 0, done.stderr[-500:]
        else:
            assert done.returncode != 0 and any(word in done.stderr for word in ("device", "inplace", "in-place")), \
                done.stderr[-500:]


def test_a_call_that_gives_the_weights_uses_no_default(project) -> None:
    # Every call of the metric passes `weight`: the CPU default is never made.
    source = METRIC.replace("print(net.metric(net(x), y).shape)",
                            "print(net.metric(net(x), y, torch.ones(5, device=device)).shape)")
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []


def test_a_plain_attribute_is_not_a_registered_tensor(project) -> None:
    # `self.scale` set as a plain attribute stays on the CPU with the default weights: both on
    # the CPU, and the module's input never meets them in `update` (only `.abs()` of it does
    # through the product with the CPU weights, which the analysis does not place): no finding.
    source = METRIC.replace('self.register_buffer("scale", torch.full((1, n_out), 0.5))',
                            "self.scale = 0.5")
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []


def test_a_method_that_runs_the_forward_again_is_not_stale(project) -> None:
    # `learn` computes the generator's output again after the step: a fresh graph.
    source = HELD.replace("        loss_d = self.disc(self.fake).mean()",
                          "        self.fake = self.gen(torch.randn(3, 4))\n        loss_d = self.disc(self.fake).mean()")
    project.write("prog.py", source)
    assert project.findings("--select", "TL409", "--no-cache") == []


def test_a_module_that_trains_gives_no_leaf(project) -> None:
    # The embedding's weight requires grad: its output is made by the graph, not a leaf, and
    # the hook's `requires_grad_(True)` changes nothing; writing it in place is allowed.
    source = HOOKED.replace("        self.words.requires_grad_(False)\n", "")
    project.write("prog.py", source)
    assert project.findings("--select", "TL417", "--no-cache") == []


def test_weights_given_by_keyword_through_kwargs_use_no_default(project) -> None:
    # `forward(*args, **kwargs)` passes `weight=` on to `update`: the default is never made.
    source = METRIC.replace("print(net.metric(net(x), y).shape)",
                            "print(net.metric(net(x), y, weight=torch.ones(5, device=device)).shape)")
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []
