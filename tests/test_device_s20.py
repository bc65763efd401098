"""Session 20 facts of the device analysis (TL416), each on a bad program and its fixed twin
(shapes of our own, run under torch with the meta device standing in for a GPU):

- a comparison (`probs > cut`, `pred == gold`) gives a mask on the device of its tensor operand;
- a method of a module class that runs the module on its parameter (`self(x)` in
  `tagger.tag(x)`) makes that parameter an input of the module;
- a module's output is on the device its input is moved to (`self(x.to(self.device))`), and
  `self` in a method of a module class is that module (not a parameter some call passes);
- a loss module built with class weights and handed to a `fit(net, batches, criterion)`
  function is the loss called there;
- a method inherited from a base class of the file (`self.init_state(n)` defined in the
  base) is one of the module's methods: a tensor it makes without `device=` for a layer is
  left on the CPU.
"""

from __future__ import annotations

import textwrap

import pytest
from torch_programs import run_program

MASK = """\
import torch
from torch import nn

device = torch.device("meta")


def error_rate(logits, labels, cut=0.5):
    hits = (torch.sigmoid(logits) > cut).long()
    return (hits != labels).float().mean()


def check(net, batches):
    rates = []
    for feats, labels in batches:
        rates.append(error_rate(net(feats.to(device)).squeeze(1), labels))
    return rates


net = nn.Linear(3, 1).to(device)
print(check(net, [(torch.randn(4, 3), torch.randint(0, 2, (4,)))]))
"""

PREDICT = """\
import torch
from torch import nn

device = torch.device("meta")


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 2)

    def forward(self, x):
        return self.fc(x)

    def tag(self, x):
        with torch.no_grad():
            return self(x).argmax(-1)


def show(tagger, n):
    probe = torch.randn(n, 5)
    print(tagger.tag(probe).shape)


tagger = Tagger().to(device)
show(tagger, 3)
"""

SELFMOVE = """\
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.device = device
        self.to(device)

    def forward(self, x):
        return self.fc(x)

    def scores(self, x):
        return self(x.to(self.device))


def hits(pred, gold):
    return (pred.argmax(1) == gold).float().sum()


scorer = Scorer(torch.device("meta"))
gold = torch.randint(0, 3, (6,))
print(hits(scorer.scores(torch.randn(6, 4)), gold))
"""

LOSSPARAM = """\
import torch
from torch import nn

device = torch.device("meta")


def fit(net, batches, criterion):
    for x, y in batches:
        out = net(x.to(device))
        loss = criterion(out, y.to(device))
        loss.backward()


balance = torch.tensor([0.2, 0.8])
net = nn.Linear(4, 2).to(device)
fit(net, [(torch.randn(5, 4), torch.randint(0, 2, (5,)))], nn.CrossEntropyLoss(weight=balance))
"""


INHERITED = """\
import torch
from torch import nn


class Base(nn.Module):
    def init_state(self, n):
        return torch.zeros(1, n, self.hidden)


class Tagger(Base):
    def __init__(self):
        super().__init__()
        self.hidden = 6
        self.rnn = nn.GRU(4, 6, batch_first=True)

    def forward(self, x):
        return self.rnn(x, self.init_state(x.size(0)))[0]


device = torch.device("meta")
model = Tagger().to(device)
print(model(torch.randn(2, 3, 4).to(device)).shape)
"""


CASES = {
    # name: (source, line of the finding, (bad text, fixed text))
    "mask": (MASK, 9, ("rates.append(error_rate(net(feats.to(device)).squeeze(1), labels))",
                       "rates.append(error_rate(net(feats.to(device)).squeeze(1), labels.to(device)))")),
    "predict": (PREDICT, 21, ("probe = torch.randn(n, 5)", "probe = torch.randn(n, 5, device=device)")),
    "selfmove": (SELFMOVE, 20, ("gold = torch.randint(0, 3, (6,))",
                                "gold = torch.randint(0, 3, (6,), device=torch.device(\"meta\"))")),
    "lossparam": (LOSSPARAM, 16, ("balance = torch.tensor([0.2, 0.8])",
                                  "balance = torch.tensor([0.2, 0.8], device=device)")),
    "inherited": (INHERITED, 7, ("torch.zeros(1, n, self.hidden)",
                                 "torch.zeros(1, n, self.hidden, device=self.rnn.weight_hh_l0.device)")),
}


def _write(project, case: str, fixed: bool) -> str:
    source, _row, (bad, good) = CASES[case]
    assert bad in source
    project.write("prog.py", textwrap.dedent(source.replace(bad, good) if fixed else source))
    return "prog.py"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(project, case) -> None:
    where = _write(project, case, fixed=False)
    found = project.findings("--select", "TL416", "--no-cache")
    assert [(f[0], f[1], f[3]) for f in found] == [(where, CASES[case][1], "TL416")], found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    _write(project, case, fixed=True)
    assert project.findings("--select", "TL416", "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    for fixed in (False, True):
        where = _write(project, case, fixed)
        done = run_program(where, cwd=project.root, timeout=120)
        if fixed:
            assert done.returncode == 0, done.stderr[-500:]
        else:
            assert done.returncode != 0 and "device" in done.stderr, done.stderr[-500:]


def test_the_real_spelling_of_the_device_is_found_too(project) -> None:
    source = PREDICT.replace('torch.device("meta")', 'torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    project.write("prog.py", source)
    found = project.findings("--select", "TL416", "--no-cache")
    assert [(f[1], f[3]) for f in found] == [(21, "TL416")], found


def test_a_method_that_reads_only_the_size_of_its_parameter_is_fine(project) -> None:
    source = PREDICT.replace("return self(x).argmax(-1)", "return self(torch.zeros(x.shape[0], 5, device=device))")
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []
