"""TL411 on state carried from one iteration to the next through a model: reported when its
class keeps the graph in what it returns, not when it detaches its state itself
(Transformer-XL's memories) or is out of sight (a class of another package)."""

from __future__ import annotations

import pytest

from torch_programs import run_program as torch_program

MODEL = '''
import torch
from torch import nn


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x, state):
        state = self.cell(x, state)
        return self.head(state), {returned}
'''

TRAIN = '''
import torch
from {module} import Recurrent

model = Recurrent()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = torch.zeros(2, 4)
for step in range(3):
    out, state = model(torch.randn(2, 3), state)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


@pytest.mark.parametrize("returned, imported, reported", [
    ("state", False, True),  # the state keeps the graph: the second backward raises
    ("state.detach()", False, False),  # the model detaches what it carries
    ("state", True, False),  # a class out of sight
])
def test_state_carried_through_a_model(project, returned, imported, reported) -> None:
    train = TRAIN.format(module="somewhere_else")
    if not imported:
        train = MODEL.format(returned=returned) + train.replace("from somewhere_else import Recurrent\n", "")
    project.write("train.py", train)
    found = project.findings("--select", "TL411")
    assert bool(found) is reported, found
    if reported:
        result = project.run("check", "--select", "TL411", "--runtime", "train.py")
        assert "CONFIRMED" in result.stdout and "second time" in result.stdout


TOTAL = '''
import torch
from torch import nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0
for step in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    {accumulate}
    optimizer.zero_grad()
    {backward}
    optimizer.step()
'''


@pytest.mark.parametrize("accumulate, backward, reported", [
    ("total = total + loss", "total.backward()", True),
    ("total += loss", "(total / (step + 1)).backward()", True),
    ("total += loss.item()", "loss.backward()", False),
    ("total = loss", "total.backward()", False),  # bound afresh on every iteration
    ("total = total + loss", "total.backward(retain_graph=True)", False),  # slow, but no error
])
def test_a_total_back_propagated_on_every_iteration(project, accumulate, backward, reported) -> None:
    pytest.importorskip("torch")
    project.write("train.py", TOTAL.format(accumulate=accumulate, backward=backward))
    result = project.run("check", "--runtime", "--select", "TL411", "--no-cache", "--output-format", "json")
    found = result.json()
    assert [finding["location"]["row"] for finding in found] == ([11] if reported else [])
    assert all(finding["runtime"]["verdict"] == "CONFIRMED" for finding in found), found


KEPT_BY_THE_MODULE = '''
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.rnn = nn.GRU(8, 8, batch_first=True)
        self.out = nn.Linear(8, 20)
        self.hidden = None

    def forward(self, tokens):
        output, self.hidden = self.rnn(self.emb(tokens), self.hidden)
        return self.out(output)


model = LanguageModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    tokens = torch.randint(0, 20, (2, 5))
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


@pytest.mark.parametrize("source, reported", [
    (KEPT_BY_THE_MODULE, True),
    (KEPT_BY_THE_MODULE.replace("        output, self.hidden = self.rnn(self.emb(tokens), self.hidden)\n",
                                "        output, hidden = self.rnn(self.emb(tokens), self.hidden)\n"
                                "        self.hidden = hidden.detach()\n"), False),
    (KEPT_BY_THE_MODULE.replace("    logits = model(tokens)\n", "    model.hidden = None\n    logits = model(tokens)\n"),
     False),
], ids=["kept-with-its-graph", "kept-detached", "reset-every-batch"])
def test_state_the_module_keeps_on_itself(project, source, reported) -> None:
    pytest.importorskip("torch")
    project.write("train.py", source)
    found = project.findings("--no-cache", "--select", "TL411")
    assert found == ([("train.py", 25, 5, "TL411")] if reported else [])
    ran = torch_program("train.py", cwd=project.root)
    assert ("backward through the graph a second time" in ran.stderr) == reported, ran.stderr
