"""Issue 41, session 12 (helper n): what a census of every `backward()` on real code (the 38
script repositories of corpus/scripts and the dev cases) found the no-graph analysis unable to
read in the losses people back-propagate, in several repositories each:

- plain values in a loss that cannot carry a graph: a hyperparameter of the command line
  (`args.weight`, `args` being what `parser.parse_args()` returns, also handed to the training
  function), a `math` call (`math.log(2)`), a numpy value (`np.log(2 * np.pi * var)`);
- the entries of a dict of losses written out (`losses = {"ce": .., "l2": ..}`, returned by a
  function of the file) read by their key (`losses["ce"]`);
- the builtin `sum` of losses (`sum(losses.values())`, `sum([..])`, `sum(l for l in ..)`).

A loss computed from a detached output, or under `no_grad`, through these is shown to have no
graph (TL408). Each bad program runs under torch and shows the bug; the finding is on the line
to change; its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests

EXPECT = "does not require grad and does not have a grad_fn"

PLAIN_VALUES = twin(
    "a detached output weighted by a command-line hyperparameter, a math and a numpy value", "TL408", '''\
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--smooth-weight", type=float, default=0.5)
args = parser.parse_args([])

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(batch, opts):
    x, y = batch
    logits = model(x)
    probs = F.softmax(logits, dim=1).detach()
    smooth = -(probs * torch.log(probs + 1e-8)).sum(1).mean()
    loss = F.nll_loss(torch.log(probs + 1e-8), y) + opts.smooth_weight * smooth / math.log(3) + np.log(1.0)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


for step in range(3):
    print(step, train_step((torch.randn(8, 4), torch.randint(0, 3, (8,))), args))
''', ("F.softmax(logits, dim=1).detach()", "F.softmax(logits, dim=1)"), "raises", EXPECT,
    ((25, 5, "TL408"),))

DICT_ENTRIES = twin(
    "a dict of losses computed under no_grad, read by key", "TL408", '''\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.body(x)


def compute_losses(model, x, y):
    with torch.no_grad():
        logits = model(x)
    return {"ce": F.cross_entropy(logits, y), "l2": logits.pow(2).mean()}


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    losses = compute_losses(model, x, y)
    loss = losses["ce"] + 0.01 * losses["l2"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, {name: round(value.item(), 4) for name, value in losses.items()})
''', ("    with torch.no_grad():\n        logits = model(x)", "    logits = model(x)"), "raises", EXPECT,
    ((18, 10, "TL408"),))

SUM_OF_VALUES = twin(
    "the builtin sum of a dict's losses computed under no_grad", "TL408",
    DICT_ENTRIES.bad.replace('    loss = losses["ce"] + 0.01 * losses["l2"]', "    loss = sum(losses.values())"),
    ("    with torch.no_grad():\n        logits = model(x)", "    logits = model(x)"), "raises", EXPECT,
    ((18, 10, "TL408"),))

CASES = {"plain_values": PLAIN_VALUES, "dict_entries": DICT_ENTRIES, "sum_of_values": SUM_OF_VALUES}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_an_attribute_of_an_unknown_object_proves_nothing(project) -> None:
    """`opts.weight` of an `opts` that is not the command line's namespace may be a tensor."""
    project.write("bad.py", PLAIN_VALUES.bad.replace("train_step((torch.randn(8, 4), torch.randint(0, 3, (8,))), args)",
                                                     "train_step((torch.randn(8, 4), torch.randint(0, 3, (8,))), "
                                                     "model)"))
    assert project.findings("--no-cache", "--select", "TL408", "bad.py") == []


def test_a_dict_written_into_proves_nothing(project) -> None:
    """An entry stored after the dict is written out may be anything."""
    project.write("bad.py", DICT_ENTRIES.bad.replace(
        "    losses = compute_losses(model, x, y)\n",
        "    losses = compute_losses(model, x, y)\n    losses[\"ce\"] = F.cross_entropy(model(x), y)\n"))
    assert project.findings("--no-cache", "--select", "TL408", "bad.py") == []


def test_a_sum_with_an_item_that_has_a_graph_is_not_reported(project) -> None:
    project.write("bad.py", SUM_OF_VALUES.bad.replace("sum(losses.values())",
                                                      "sum([losses[\"ce\"], model(x).pow(2).mean()])"))
    assert project.findings("--no-cache", "--select", "TL408", "bad.py") == []
