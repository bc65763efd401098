"""Session 20 facts of the requires-grad analysis (TL415), each on a bad program and its fixed
twin (shapes of our own, run under torch to show the bug is real):

- a dict of lists filled by ``history["loss"].append(loss)`` holds what is appended under
  that key (``plt.plot(history["loss"])`` converts each loss);
- ``preds.extend(out)`` and ``preds += [out]`` add to the list (the rows of a tensor, the
  items of a list);
- the builtin ``sum`` of a list of tensors is a tensor of their graph (``sum(losses) / n``);
- ``scipy.stats`` correlations convert their arguments with numpy;
- ``nn.DataParallel(model)`` runs ``model``: its output requires grad when ``model`` has
  parameters;
- a model loaded whole (``model = torch.load(path)``) is a module: its output requires grad;
- ``nn.Parameter(t)`` requires grad;
- ``scores, labels = trainer.evaluate()`` holds the items of the tuple the function returns:
  ``labels`` requires grad only when what ``evaluate`` returns there does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

HISTORY = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
history = {"train_loss": [], "epoch": []}
for epoch in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history["train_loss"].append(loss)
    history["epoch"].append(epoch)
plt.plot(history["epoch"], history["train_loss"])
"""

EXTEND = """
import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
preds = []
for _ in range(3):
    out = model(torch.randn(5, 4))
    preds.extend(out)
print(np.array(preds).shape)
"""

PLUS_EQUAL = """
import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
preds = []
for _ in range(3):
    out = model(torch.randn(5, 4))
    preds += [out]
print(np.concatenate(preds).shape)
"""

EPOCH_SUM = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
epoch_losses = []
for epoch in range(2):
    batch_losses = []
    for _ in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_losses.append(loss)
    epoch_losses.append(sum(batch_losses) / len(batch_losses))
fig, axs = plt.subplots(1, 2)
axs[0].plot(range(2), epoch_losses)
"""

PEARSON = """
import torch
import torch.nn as nn
from scipy.stats import pearsonr

model = nn.Linear(3, 1)
x, y = torch.randn(10, 3), torch.randn(10)
pred = model(x).squeeze(1)
print(pearsonr(pred, y))
"""

DATA_PARALLEL = """
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model = nn.DataParallel(net)
out = model(torch.randn(2, 3))
print(out.numpy())
"""

LOADED = """
import os
import tempfile

import torch
import torch.nn as nn

path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(nn.Linear(3, 1), path)
model = torch.load(path, weights_only=False)
model.eval()
scores = model(torch.randn(4, 3))
print(scores.numpy())
"""

PARAMETER = """
import torch
import torch.nn as nn

scale = nn.Parameter(torch.ones(3))
optimizer = torch.optim.SGD([scale], lr=0.1)
loss = (scale * torch.randn(3)).pow(2).sum()
loss.backward()
optimizer.step()
print(scale.numpy())
"""

EVALUATE = """
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader

    def evaluate(self):
        self.model.eval()
        all_scores, all_labels = [], []
        for x, y in self.loader:
            all_scores.append(torch.sigmoid(self.model(x)).squeeze(1))
            all_labels.append(y)
        return torch.cat(all_scores), torch.cat(all_labels)


loader = [(torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 1, 0])) for _ in range(2)]
trainer = Trainer(nn.Linear(4, 1), loader)
scores, labels = trainer.evaluate()
print(roc_auc_score(labels.numpy(), scores.numpy()))
"""

CASES = {
    # name: (source, line of the finding, how the fixed twin reads)
    "history": (HISTORY, 15, ('history["train_loss"].append(loss)', 'history["train_loss"].append(loss.item())')),
    "extend": (EXTEND, 9, ("preds.extend(out)", "preds.extend(out.detach())")),
    "plus_equal": (PLUS_EQUAL, 10, ("print(np.concatenate(preds).shape)",
                                    "print(np.concatenate([p.detach() for p in preds]).shape)")),
    "epoch_sum": (EPOCH_SUM, 18, ("epoch_losses.append(sum(batch_losses) / len(batch_losses))",
                                  "epoch_losses.append(sum(batch_losses).item() / len(batch_losses))")),
    "pearson": (PEARSON, 8, ("print(pearsonr(pred, y))", "print(pearsonr(pred.detach(), y))")),
    "data_parallel": (DATA_PARALLEL, 7, ("print(out.numpy())", "print(out.detach().numpy())")),
    "loaded": (LOADED, 12, ("print(scores.numpy())", "print(scores.detach().numpy())")),
    "parameter": (PARAMETER, 9, ("print(scale.numpy())", "print(scale.detach().numpy())")),
    # only the scores: the labels, the other item of what `evaluate` returns, have no graph
    "evaluate": (EVALUATE, 23, ("scores.numpy()))", "scores.detach().numpy()))")),
}


def _run(project) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(project.root), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "prog.py"], cwd=project.root, capture_output=True, text=True,
                          timeout=120, env=env)


def _write(project, source: str, fixed: tuple[str, str] | None = None) -> None:
    source = textwrap.dedent(source)
    if fixed is not None:
        assert fixed[0] in source
        source = source.replace(*fixed)
    project.write("prog.py", source)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(project, case) -> None:
    source, row, _fixed = CASES[case]
    _write(project, source)
    found = project.findings("--select", "TL415,TL410", "--no-cache")
    assert [(f[0], f[1], f[3]) for f in found] == [("prog.py", row, "TL415")], found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    source, _row, fixed = CASES[case]
    _write(project, source, fixed)
    assert project.findings("--select", "TL415,TL410", "--no-cache") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    if case == "pearson":
        pytest.importorskip("scipy")
    if case == "evaluate":
        pytest.importorskip("sklearn")
    if case in ("history", "epoch_sum"):
        pytest.importorskip("matplotlib")
    source, _row, fixed = CASES[case]
    _write(project, source)
    bad = _run(project)
    assert bad.returncode != 0 and "Can't call numpy() on Tensor that requires grad" in bad.stderr, bad.stderr[-500:]
    _write(project, source, fixed)
    good = _run(project)
    assert good.returncode == 0, good.stderr[-500:]


CLEAN = {
    # values taken out of the graph before they reach numpy
    "history_items": HISTORY.replace('history["train_loss"].append(loss)', 'history["train_loss"].append(loss.item())'),
    "extend_lists": EXTEND.replace("preds.extend(out)", "preds.extend(out.tolist())"),
    "extend_labels": EXTEND.replace("preds.extend(out)", "preds.extend(out.argmax(1))"),
    "sum_without_grad": EPOCH_SUM.replace("    epoch_losses.append(sum(batch_losses) / len(batch_losses))",
                                          "    with torch.no_grad():\n"
                                          "        epoch_losses.append(sum(batch_losses) / len(batch_losses))"),
    "parallel_without_grad": DATA_PARALLEL.replace("out = model(torch.randn(2, 3))",
                                                   "with torch.no_grad():\n    out = model(torch.randn(2, 3))"),
    # another key of the dict holds only numbers
    "other_key": HISTORY.replace('plt.plot(history["epoch"], history["train_loss"])', 'plt.plot(history["epoch"])'),
}


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_values_out_of_the_graph_are_not_reported(project, case) -> None:
    _write(project, CLEAN[case])
    assert project.findings("--select", "TL415,TL410", "--no-cache") == []


def test_the_evidence_names_the_list_and_the_loaded_model(project) -> None:
    _write(project, HISTORY)
    out = project.run("check", "--select", "TL415", "--no-cache").stdout
    assert 'appended to `history["train_loss"]`' in out, out
    _write(project, LOADED)
    out = project.run("check", "--select", "TL415", "--no-cache").stdout
    assert "a model loaded whole with `torch.load`" in out, out
