"""Session 19 facts of the autograd model, each on a bad program and its fixed twin (shapes
of our own, run under torch to show the bug is real):

- a block whose ``forward`` applies a saving activation only when it is set (``if
  self.act is not None: h = self.act(h)``) returns a saved output on that path, also when
  the block is defined in another module of the project;
- views of one tensor share its version counter: an operation that saved one view (or
  the tensor) is broken by an in-place write to another view, also when the views come
  from a helper that returns views of its parameter (``a, b = halves(x)``);
- ``t.requires_grad = True`` / ``t.requires_grad_()`` makes ``t`` require grad where it is
  read afterwards, through the calls of the file;
- a lambda is a function of the file: ``make_critic=lambda: Critic(3)`` then
  ``self.critic = make_critic()`` is a ``Critic``; a static method called through its class
  is a function; an object whose class defines ``__call__`` runs it when called.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

UNIT = """
import torch
from torch import nn


class Unit(nn.Module):
    def __init__(self, cin, cout, gate=False):
        super().__init__()
        self.lin = nn.Linear(cin, cout)
        self.squash = nn.Sigmoid() if gate else None

    def forward(self, h):
        h = self.lin(h)
        if self.squash is not None:
            h = self.squash(h)
        return h
"""

MERGE_ELSEWHERE = """
import torch
from torch import nn

from pkg.blocks import Unit


class Merge(nn.Module):
    def __init__(self, widths, out):
        super().__init__()
        self.units = nn.ModuleList([Unit(w, out, gate=True) for w in widths])

    def forward(self, feats):
        levels = [unit(f) for unit, f in zip(self.units, feats)]
        for k in range(len(levels) - 1, 0, -1):
            levels[k - 1] += levels[k]
        return torch.stack(levels).sum()


merge = Merge([3, 5], 4)
merge([torch.randn(2, 3), torch.randn(2, 5)]).backward()
"""

MERGE_HERE = UNIT + """

class Merge(nn.Module):
    def __init__(self, widths, out):
        super().__init__()
        self.units = nn.ModuleList()
        for w in widths:
            self.units.append(Unit(w, out, gate=True))

    def forward(self, feats):
        levels = [self.units[k](feats[k]) for k in range(len(feats))]
        for k in range(len(levels) - 1, 0, -1):
            levels[k - 1] += levels[k]
        return torch.stack(levels).sum()


merge = Merge([3, 5], 4)
merge([torch.randn(2, 3), torch.randn(2, 5)]).backward()
"""

HALVES = """
import torch
from torch import nn


def halves(t):
    n = t.shape[1] // 2
    return t[:, :n], t[:, n:]


class Coupling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Sequential(nn.Linear(dim // 2, 16), nn.Tanh(), nn.Linear(16, dim // 2))

    def forward(self, x):
        x = x * 1.5
        keep, move = halves(x)
        s = self.scale(keep)
        move *= s.exp()
        return torch.cat([keep, move], 1).sum()


Coupling(4)(torch.randn(3, 4)).backward()
"""

STATIC_HALVES = """
import torch
from torch import nn


class ops:
    @staticmethod
    def split(t):
        return t[:, :2, ...], t[:, 2:, ...]


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 3, padding=1))

    def forward(self, x):
        x = x + 0.5
        a, b = ops.split(x)
        b += self.net(a)
        return torch.cat([a, b], 1).mean()


Coupling()(torch.randn(1, 4, 5, 5)).backward()
"""

PLAIN_VIEWS = """
import torch
from torch import nn


class Coupling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.shift = nn.Linear(dim // 2, dim // 2)

    def forward(self, x):
        x = x * 2
        keep = x[:, :2]
        move = x[:, 2:]
        move += self.shift(keep)
        return x.sum()


Coupling(4)(torch.randn(3, 4)).backward()
"""

SWITCHED = """
import torch


def prepare(raw):
    t = (raw - 0.5) / 0.25
    t.{switch}
    return t


def rescale(batch):
    out = batch * 1.0
    for plane in out[0]:
        plane.mul_(0.25)
    return out


img = prepare(torch.rand(1, 3, 4, 4))
print(rescale(img).shape)
"""

FACTORY = """
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.body(x)


class Learner:
    def __init__(self, make_critic, lr=0.01):
        self.actor = nn.Linear(3, 3)
        self.critic = make_critic()
        self.opt_c = torch.optim.SGD(self.critic.parameters(), lr=lr)
        self.opt_a = torch.optim.SGD(self.actor.parameters(), lr=lr)

    def update(self, obs, target):
        action = self.actor(obs)
        actor_loss = -self.critic(action).mean()
        critic_loss = (self.critic(obs.detach()) - target).pow(2).mean()
        self.opt_c.zero_grad()
        critic_loss.backward()
        self.opt_c.step()
        self.opt_a.zero_grad()
        actor_loss.backward()
        self.opt_a.step()


learner = Learner(make_critic=lambda: Critic(3))
learner.update(torch.randn(5, 3), torch.randn(5, 1))
"""

EARLY_RETURN = """
import torch
from torch import nn


class Unit(nn.Module):
    def __init__(self, cin, cout, act=True):
        super().__init__()
        self.lin = nn.Linear(cin, cout)
        self.act = nn.Tanh() if act else None

    def forward(self, h):
        h = self.lin(h)
        if self.act is None:
            return h
        return self.act(h)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Unit(3, 4)

    def forward(self, x):
        p = self.a(x)
        p += 1
        return p.sum()


Head()(torch.randn(2, 3)).backward()
"""

# The same block choosing its return in one expression.
CONDITIONAL_RETURN = EARLY_RETURN.replace(
    "        if self.act is None:\n            return h\n        return self.act(h)",
    "        return self.act(h) if self.act is not None else h",
).replace("p += 1", "q *= 2").replace("p = self", "q = self").replace("p.sum()", "q.sum()")


CASES = {
    # name: (files, the file and line of the finding, code, how the fixed twin reads)
    "merge_elsewhere": ({"pkg/__init__.py": "", "pkg/blocks.py": UNIT, "pkg/pyramid.py": MERGE_ELSEWHERE},
                        ("pkg/pyramid.py", 15, "TL409"),
                        ("levels[k - 1] += levels[k]", "levels[k - 1] = levels[k - 1] + levels[k]")),
    "merge_here": ({"merge.py": MERGE_HERE}, ("merge.py", 28, "TL409"),
                   ("levels[k - 1] += levels[k]", "levels[k - 1] = levels[k - 1] + levels[k]")),
    "halves": ({"flow.py": HALVES}, ("flow.py", 19, "TL409"), ("move *= s.exp()", "move = move * s.exp()")),
    "static_halves": ({"flow.py": STATIC_HALVES}, ("flow.py", 19, "TL409"),
                      ("b += self.net(a)", "b = b + self.net(a)")),
    "plain_views": ({"flow.py": PLAIN_VIEWS}, ("flow.py", 14, "TL409"),
                    ("move += self.shift(keep)\n        return x.sum()",
                     "move = move + self.shift(keep)\n        return torch.cat([keep, move], 1).sum()")),
    "switched_attribute": ({"plot.py": SWITCHED.replace("{switch}", "requires_grad = True")}, ("plot.py", 13, "TL303"),
                           ("for plane in out[0]:\n        plane.mul_(0.25)",
                            "for k in range(out.shape[1]):\n        out[0, k] = out[0, k] * 0.25")),
    "switched_method": ({"plot.py": SWITCHED.replace("{switch}", "requires_grad_()")}, ("plot.py", 13, "TL303"),
                        ("for plane in out[0]:\n        plane.mul_(0.25)",
                         "for k in range(out.shape[1]):\n        out[0, k] = out[0, k] * 0.25")),
    "early_return": ({"head.py": EARLY_RETURN}, ("head.py", 25, "TL409"), ("p += 1", "p = p + 1")),
    "conditional_return": ({"head.py": CONDITIONAL_RETURN}, ("head.py", 23, "TL409"), ("q *= 2", "q = q * 2")),
    "factory": ({"learn.py": FACTORY}, ("learn.py", 27, "TL409"),
                ("        self.opt_c.step()\n        self.opt_a.zero_grad()\n        actor_loss.backward()\n",
                 "        self.opt_a.zero_grad()\n        actor_loss.backward()\n        self.opt_c.step()\n")),
}


def _run(project, where: str) -> subprocess.CompletedProcess:
    """Run ``where`` under torch as a module of the project (``pkg/pyramid.py`` imports ``pkg``)."""
    module = where[:-3].replace("/", ".")
    env = dict(os.environ, PYTHONPATH=str(project.root))
    return subprocess.run([sys.executable, "-m", module], cwd=project.root, capture_output=True, text=True,
                          timeout=120, env=env)


def _write(project, files: dict[str, str], fixed: tuple[str, str] | None = None) -> None:
    for name, source in files.items():
        if fixed is not None and fixed[0] in source:
            source = source.replace(*fixed)
        project.write(name, textwrap.dedent(source))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(project, case) -> None:
    files, (where, row, code), _fixed = CASES[case]
    _write(project, files)
    found = [f for f in project.findings("--select", "TL409,TL303", "--no-cache") if f[0] == where]
    assert [(f[0], f[1], f[3]) for f in found] == [(where, row, code)], found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    files, _where, fixed = CASES[case]
    _write(project, files, fixed)
    assert all(fixed[1] in source or fixed[0] not in files[name] for name, source in
               ((name, (project.root / name).read_text()) for name in files))
    assert project.findings("--select", "TL409,TL303", "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    files, (where, _row, _code), fixed = CASES[case]
    _write(project, files)
    bad = _run(project, where)
    assert bad.returncode != 0 and ("modified by an inplace operation" in bad.stderr
                                    or "is a view and is being modified inplace" in bad.stderr), bad.stderr[-500:]
    _write(project, files, fixed)
    good = _run(project, where)
    assert good.returncode == 0, good.stderr[-500:]


def test_the_condition_and_the_module_file_are_named(project) -> None:
    files, _where, _fixed = CASES["merge_elsewhere"]
    _write(project, files)
    result = project.run("check", "--select", "TL409", "--no-cache", "--output-format", "json")
    [finding] = result.json()
    related = " ".join(item["message"] for item in finding["related"])
    assert "when `self.squash is not None` holds" in related and "blocks.py" in related, related


def test_the_shared_storage_is_named(project) -> None:
    _write(project, {"flow.py": HALVES})
    result = project.run("check", "--select", "TL409", "--no-cache", "--output-format", "json")
    [finding] = result.json()
    assert "a view of `x`" in finding["message"] and "`keep`" in finding["message"], finding["message"]


def test_a_block_without_the_activation_set_saves_nothing_it_returns(project) -> None:
    # Built with gate=False everywhere, the output is the linear layer's, which it does not save;
    # still, the block's forward may return a saved output, so the write is only safe because
    # the branch never runs: the finding names the condition for a reader to judge.
    source = UNIT + """

def merge(units, feats):
    levels = [unit(f) for unit, f in zip(units, feats)]
    levels[0] += levels[1]
    return levels[0].sum()
"""
    _write(project, {"free.py": source})
    # No backward and no module forward reads the result here: nothing to report.
    assert project.findings("--select", "TL409", "--no-cache") == []


def test_an_in_place_activation_after_an_optional_norm_is_fine(project) -> None:
    # The norm keeps its input (the convolution's output); the in-place ReLU writes the
    # norm's output, a new tensor: torch runs it, and nothing is reported.
    source = """
import torch
from torch import nn


class ConvUnit(nn.Module):
    def __init__(self, cin, cout, norm=True, act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.BatchNorm2d(cout) if norm else None
        self.act = nn.ReLU(inplace=True) if act else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.act is not None:
            x = self.act(x)
        return x


ConvUnit(3, 4)(torch.randn(2, 3, 5, 5)).sum().backward()
"""
    _write(project, {"unit.py": source})
    assert project.findings("--select", "TL409,TL303", "--no-cache") == []
    assert _run(project, "unit.py").returncode == 0
