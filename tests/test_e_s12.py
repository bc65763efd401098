"""Issue 41, session 12 (helper e): which forwards TL414 asks about (its trigger), from a census
of every forward of a model with Dropout/BatchNorm in the 38 script repositories and the dev
cases:

- a model pickled whole by ``torch.save(model, path)`` while in training mode and unpickled by
  ``torch.load(path)`` (the same path, or a file object opened on it) comes back in training
  mode, with the layers of the model saved: a prediction with it is reported;
- a forward's output read out as a prediction in a scope that unpacks it or what is computed
  from it into names (``logits, dists = model(x)``, ``values, order = torch.sort(..)``) lets no
  graph out: unpacking into names is no storing on an object or in a container.

Each bad program runs under torch and shows the bug; the finding is on the line to change; its
fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

import pytest
from twin_cases import twin, twin_tests

ROUND_TRIP = """\
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        return self.body(x)


path = os.path.join(tempfile.mkdtemp(), "net.pth")
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(net(x), y).backward()
    optimizer.step()
torch.save(net, path)

model = torch.load(path, weights_only=False)
sample = torch.randn(1, 4).repeat(2, 1)
scores = model(sample)
print("predicted", scores.argmax(1).tolist())
if model.training:
    print("BUG: the reloaded model predicted in training mode")
"""

FILE_OBJECT = """\
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
path = os.path.join(tempfile.mkdtemp(), "model.pt")
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters())
for _ in range(5):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
with open(path, "wb") as f:
    torch.save(model, f)

with open(path, "rb") as f:
    best = torch.load(f, weights_only=False)
test = torch.randn(32, 4)
with torch.no_grad():
    first = best(test).argmax(1)
    second = best(test).argmax(1)
print("accuracy proxy", first.float().mean().item())
if best.training:
    print("BUG: the reloaded model predicted in training mode")
"""

UNPACKED = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        features = self.features(x)
        return self.head(features), features


net = Classifier()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
net.train()
for _ in range(5):
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(net(x)[0], y).backward()
    optimizer.step()

image = torch.randn(1, 4)
logits, features = net(image)
probabilities, order = torch.sort(logits.softmax(1), descending=True)
print("top class", order[0, 0].item(), "score", probabilities[0, 0].item())
if net.training:
    print("BUG: the classifier predicted in training mode")
"""

CASES = {case.why: case for case in [
    twin("a model saved whole in training mode and loaded back by its path", "TL414", ROUND_TRIP,
         ("model = torch.load(path, weights_only=False)\n",
          "model = torch.load(path, weights_only=False)\nmodel.eval()\n"),
         "wrong-value", "BUG: the reloaded model predicted in training mode", ((31, 10, "TL414"),)),
    twin("a model saved whole to a file object and loaded back from one opened on the same path", "TL414",
         FILE_OBJECT, ("    best = torch.load(f, weights_only=False)\n",
                       "    best = torch.load(f, weights_only=False)\nbest.eval()\n"),
         "wrong-value", "BUG: the reloaded model predicted in training mode", ((23, 13, "TL414"), (24, 14, "TL414"))),
    twin("a prediction unpacked into names, and a sort of it unpacked into names", "TL414", UNPACKED,
         ("image = torch.randn(1, 4)\n", "net.eval()\nimage = torch.randn(1, 4)\n"),
         "wrong-value", "BUG: the classifier predicted in training mode", ((28, 20, "TL414"),)),
]}


test_reported_on_the_line_and_twin_clean, test_bad_shows_the_bug_and_twin_does_not = twin_tests(CASES)


def test_the_runtime_check_confirms_the_model_reloaded_from_its_pickle(project):
    """The sandbox runs the program as the module `__main__`, as Python does: pickle finds the
    class the script defines, so `torch.save(model, path)` works there and the evaluation runs."""
    pytest.importorskip("torch")
    project.write("bad.py", ROUND_TRIP)
    result = project.run("check", "--no-cache", "--select", "TL414", "--runtime", "bad.py")
    assert "CONFIRMED" in result.stdout and "PicklingError" not in result.stdout, result.stdout[-2000:]
