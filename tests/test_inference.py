"""The tensor-ness inference: a `.data` read is reported exactly when there is evidence
that its object is a tensor.  Each case is a small program; `# <-` marks the lines
that must be reported (as TL101, TL102, TL103 or TL203), and no other line may be."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.linter import lint_text
from torchlint.rule import all_rules

RULES = list(all_rules().values())


def reported_lines(source: str) -> tuple[list[int], list[int]]:
    source = textwrap.dedent(source).lstrip("\n")
    report = lint_text(source, rules=RULES)
    assert report.internal_error is None, report.internal_error
    marked = [i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith("# <-")]
    found = sorted({d.row for d in report.diagnostics if d.code in ("TL101", "TL102", "TL103", "TL203")})
    return found, marked


POSITIVE = {
    "torch factory": """
        import torch
        x = torch.randn(3)
        x.data  # <-
    """,
    "alias import": """
        import torch as T
        x = T.zeros(2)
        x.data  # <-
    """,
    "from import of a function": """
        from torch import ones
        x = ones(2)
        x.data  # <-
    """,
    "nn.Parameter": """
        import torch
        from torch import nn
        w = nn.Parameter(torch.empty(3))
        w.data.normal_()  # <-
    """,
    "requires_grad=True on an unknown call": """
        import torch
        w = make_weight(3, requires_grad=True)
        w.data  # <-
    """,
    "parameters loop": """
        import torch
        def step(model: torch.nn.Module):
            for p in model.parameters():
                p.data.zero_()  # <-
            for name, q in model.named_parameters():
                q.data  # <-
    """,
    "filtered parameters": """
        import torch
        def clip(model: torch.nn.Module):
            params = list(filter(lambda p: p.requires_grad, model.parameters()))
            for p in params:
                p.data.clamp_(-1, 1)  # <-
    """,
    "module output and loss criterion": """
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(2, 2))
        criterion = nn.MSELoss()
        out = net(x)
        loss = criterion(out, y)
        out.data  # <-
        loss.data[0]  # <-
    """,
    "annotated parameter and return": """
        import torch
        from typing import Optional
        def f(x: torch.Tensor, y: Optional[torch.Tensor]) -> torch.Tensor:
            y.data  # <-
            return x.data  # <-
        def g():
            return f(a, b).data  # <-
    """,
    "local function returning a tensor": """
        import torch
        def make():
            return torch.zeros(3)
        make().data  # <-
    """,
    "self attributes of a module, across methods": """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return x * self.scale.data  # <-
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.ones(1))
                self.register_buffer("mask", torch.ones(3))
                self.fc = nn.Linear(3, 3)
            def reset(self):
                self.mask.data.fill_(1)  # <-
                self.fc.weight.data.zero_()  # <-
                self.fc(self.mask).data  # <-
    """,
    "subclass of a local module": """
        import torch.nn as nn
        class Base(nn.Module):
            pass
        class Child(Base):
            def init(self):
                for m in self.modules():
                    if isinstance(m, nn.Linear):
                        m.weight.data.normal_()  # <-
    """,
    "optimizer param_groups": """
        import torch
        class MySGD(torch.optim.Optimizer):
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.data.add_(p.grad.data, alpha=-group["lr"])  # <-
    """,
    "function given to .apply()": """
        import torch.nn as nn
        def init(m):
            m.weight.data.fill_(0.0)  # <-
        net = nn.Linear(2, 2)
        net.apply(init)
    """,
    "usage: backward() on it": """
        import torch
        def train(model, batch):
            loss = model(batch)
            loss.backward()
            return loss.data[0]  # <-
    """,
    "usage: module methods on it": """
        import torch
        def evaluate(model, batch):
            model.eval()
            for p in model.parameters():
                pass
            return model(batch).data  # <-
    """,
    "tuple unpacking of an LSTM": """
        import torch.nn as nn
        lstm = nn.LSTM(3, 4)
        output, (h, c) = lstm(x)
        h.data  # <-
        output.data  # <-
    """,
    "augmented accumulation": """
        import torch
        total = 0
        for _ in range(3):
            total += torch.ones(1)
        total.data  # <-
    """,
    "chains and arithmetic": """
        import torch
        x = torch.ones(2, 2, requires_grad=True)
        (x * 2 + 1).t().data  # <-
        x[0].view(-1).data  # <-
        torch.cat([x, x]).sum().data[0]  # <-
    """,
    "star import of Variable": """
        import torch
        from torch.autograd import *
        v = Variable(torch.ones(1))
        v.data  # <-
    """,
    "global used inside a function": """
        import torch
        def show():
            print(weights.data)  # <-
        weights = torch.ones(3)
    """,
    "comprehension over parameters": """
        import torch
        def norms(model: torch.nn.Module):
            return [p.grad.data.norm() for p in model.parameters()]  # <-
    """,
    "walrus": """
        import torch
        if (w := torch.ones(1)) is not None:
            w.data  # <-
    """,
}

NEGATIVE = {
    "unknown parameter": """
        import torch
        def f(x):
            return x.data
    """,
    "numpy array": """
        import numpy as np
        a = np.zeros(3)
        a.data
    """,
    "rebound to something else": """
        import torch
        import numpy as np
        x = torch.zeros(3)
        x = np.asarray(x)
        x.data
    """,
    "dataset attribute": """
        import torch
        class Frames(torch.utils.data.Dataset):
            def __init__(self, data):
                self.data = data
            def get(self, i):
                return self.data[i], self.data[0]
    """,
    "PackedSequence field": """
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence
        lstm = nn.LSTM(3, 4)
        packed = pack_padded_sequence(x, lengths)
        out, _ = lstm(packed)
        packed.data, out.data
    """,
    "module attribute chain": """
        import torch.utils.data
        import allennlp.data
        torch.utils.data.DataLoader
        allennlp.data.Vocabulary
    """,
    "shadowed torch": """
        import torch
        def f(torch):
            x = torch.zeros(3)
            return x.data
    """,
    "Variable from elsewhere": """
        from tensorflow import Variable
        v = Variable(1.0)
        v.data
    """,
    "class scope names are not visible in methods": """
        import torch
        class C:
            x = torch.zeros(1)
            def f(self, x):
                return x.data
    """,
    "no torch import: usage evidence does not count": """
        def train(model, batch):
            loss = model(batch)
            loss.backward()
            return loss.data
    """,
    "criterion name without torch": """
        def f(criterion, a, b):
            return criterion(a, b).data
    """,
    "string annotations are not evaluated": """
        import torch
        def f(x: "torch.Tensor"):
            return x.data
    """,
    "tuple results are not tensors": """
        import torch
        x = torch.randn(3, 4)
        torch.max(x, 1).data
        x.sort().data
    """,
    "data of a tuple element with unknown type": """
        import torch
        batch = next(iter(loader))
        batch[0].data
    """,
}


@pytest.mark.parametrize("source", POSITIVE.values(), ids=POSITIVE.keys())
def test_evidence_is_found(source) -> None:
    found, marked = reported_lines(source)
    assert found == marked


@pytest.mark.parametrize("source", NEGATIVE.values(), ids=NEGATIVE.keys())
def test_no_evidence_no_finding(source) -> None:
    found, marked = reported_lines(source)
    assert marked == [] and found == []


def test_evidence_chain_names_every_hop() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        def step(model: nn.Module, x, y):
            loss = criterion(model(x), y)
            return loss.data[0]
    """).lstrip()
    report = lint_text(source, rules=RULES)
    (finding,) = report.diagnostics
    assert finding.code == "TL203"
    messages = [note.message for note in finding.evidence]
    assert messages[0] == "`loss` = `criterion(model(x), y)`, which is the result of a loss criterion"
    assert "`criterion` = `nn.CrossEntropyLoss()`, which is a torch.nn.CrossEntropyLoss module" in messages
    assert [note.row for note in finding.evidence][:2] == [4, 2]


def test_a_caller_passing_a_non_tensor_overrides_the_parameter_annotation() -> None:
    source = textwrap.dedent("""
        import torch

        class M(torch.nn.Module):
            def _pad(self, x: torch.Tensor, n: torch.Tensor):
                return torch.tensor(n)

            def forward(self, x: torch.Tensor):
                return self._pad(x, n=x.size()[-1])

        def loose(t: torch.Tensor):
            return torch.tensor(t)

        def strict(t: torch.Tensor):
            return torch.tensor(t)

        loose([1, 2])
        strict(torch.ones(2))
    """).lstrip()
    report = lint_text(source, rules=RULES)
    assert [(d.row, d.code) for d in report.diagnostics] == [(14, "TL403")]
