"""Issue 41, session 14: the functions and classes of a project's utils.py, called by the
training script beside it. Rewriting the caught dev cases of the thread corpus so that every
class and function they define lives in utils.py (the script keeps its statements and imports
them) lost 28 of 74 findings: a function of utils.py was read without its callers. The calls in
the scripts that import a module are now its call sites too (``ModuleAnalysis.callers_elsewhere``):

- a parameter takes what the script passes (``Trainer(UNet(), ..)``: ``self.model`` is a UNet
  with BatchNorm, evaluated in training mode: TL414, reported in utils.py);
- a parameter requires grad when the script passes a model output for it (TL415 on
  ``pred.cpu().numpy()`` in a metric of utils.py);
- a method of an imported class returns what requires grad (``estimator.predict_proba(x)
  .numpy()`` in the script: TL415);
- a loss of utils.py computes only from its inputs: given inputs without a graph, its result
  has none (TL408 in the script);
- a training step of utils.py that the script's loop calls without clearing the gradients
  (TL407 on the step in utils.py); a function of utils.py evaluates the model the script
  hands it (TL414 at the call); a tester class of utils.py that the script builds and keeps
  (TL414 in utils.py); a helper of utils.py converts what it is handed with numpy (TL415 at
  the script's append);

and in one file: the ``forward`` method of a plain class (a ``Trainer``, no module) is called by
its name, not as a module; a regularizer summed over a forward's steps into ``self.attention_sum``
and added to the loss is no graph-keeping total (a new dev case's fixed twin showed the TL401).

Each bad project runs under torch and shows the bug; its fixed twin runs and has no finding.
Real files through the real CLI."""

from __future__ import annotations

import subprocess

import pytest

from torch_programs import run_program as torch_program

TRAINER = '''\
import torch
import torch.nn as nn


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 2, 1))

    def forward(self, x):
        return self.body(x)


class Trainer:
    def __init__(self, model, optimizer, loaders):
        self.model, self.optimizer, self.loaders = model, optimizer, loaders
        self.last_val_output = None

    def fit(self, epochs):
        for _ in range(epochs):
            self.train(self.loaders["train"])
            self.validate(self.loaders["val"])

    def train(self, loader):
        self.model.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self, loader):
        outputs = []
        with torch.no_grad():
            for x, _ in loader:
                outputs.append(self.model(x))
        self.last_val_output = torch.cat(outputs)
'''

TRAIN_SCRIPT = '''\
import copy

import torch

from utils import Trainer, UNet

torch.manual_seed(0)


def batches(n):
    return [(torch.randn(4, 1, 8, 8), torch.randint(0, 2, (4, 8, 8))) for _ in range(n)]


model = UNet()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), {"train": batches(2), "val": batches(2)})
trainer.fit(1)

# -- check --
reference = copy.deepcopy(model).eval()
with torch.no_grad():
    expected = torch.cat([reference(x) for x, _ in trainer.loaders["val"]])
if not torch.allclose(trainer.last_val_output, expected, atol=1e-5):
    print("BUG: validation ran in training mode")
'''

METRIC = '''\
import numpy as np
import torch


def auc_like(scores, labels):
    order = np.argsort(-scores.cpu().numpy())
    return float(np.mean(labels.numpy()[order][: len(order) // 2]))


class Meter:
    def __init__(self):
        self.scores, self.labels = [], []

    def update(self, scores, labels):
        self.scores.append(scores)
        self.labels.append(labels)

    def compute(self):
        return auc_like(torch.cat(self.scores), torch.cat(self.labels))
'''

METRIC_SCRIPT = '''\
import torch
import torch.nn as nn

from utils import Meter

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
meter = Meter()
for _ in range(3):
    x, y = torch.randn(16, 6), (torch.rand(16) > 0.5).float()
    scores = model(x).squeeze(1)
    loss = nn.functional.binary_cross_entropy(scores, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    meter.update(scores, y)
print(meter.compute())
'''

ESTIMATOR = '''\
import torch
import torch.nn.functional as F


class Estimator:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def fit(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return self

    def predict_proba(self, x):
        return F.softmax(self.model(x), dim=1)
'''

ESTIMATOR_SCRIPT = '''\
import torch
import torch.nn as nn

from utils import Estimator

torch.manual_seed(0)

model = nn.Linear(5, 3)
estimator = Estimator(model, torch.optim.SGD(model.parameters(), lr=0.1))
x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
estimator.fit(x, y)
probabilities = estimator.predict_proba(x).numpy()
print(probabilities.sum(axis=1))
'''

TRIPLET = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class TripletLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        gap = F.pairwise_distance(anchor, positive) - F.pairwise_distance(anchor, negative)
        return torch.clamp(gap + self.margin, min=0.0).mean()
'''

TRIPLET_SCRIPT = '''\
import numpy as np
import torch
import torch.nn as nn

from utils import TripletLoss

torch.manual_seed(0)

model = nn.Linear(10, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = TripletLoss(0.5)
a, p, n = (model(torch.randn(8, 10)) for _ in range(3))
hard = np.arange(4)


def select(out):
    return torch.from_numpy(out.detach().numpy()[hard])


loss = criterion(select(a), select(p), select(n))
loss.backward()
'''

STEP = '''\
import torch.nn.functional as F


def train_step(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
'''

STEP_SCRIPT = '''\
import torch
import torch.nn as nn

from utils import train_step

torch.manual_seed(0)

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
x, y = torch.randn(8, 4), torch.randn(8, 2)
history = []
for epoch in range(3):
    train_step(model, optimizer, x, y)
    history.append(model.weight.grad.norm().item())
# (a learning rate of 0 keeps the weights: each step's gradient is the first one's)
if history[-1] > 2.5 * history[0]:
    print("BUG: the gradient grew with every step: it was never zeroed")
'''

HEATMAP = '''\
import numpy as np
import torch
import torch.nn as nn


def small_net():
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, 4))


def heatmap(model, image, target, patch=4):
    patches = [image[:, :, i:i + patch, j:j + patch] for i in range(0, 8, patch) for j in range(0, 8, patch)]
    with torch.no_grad():
        logits = model(torch.cat(patches))
    return logits[:, target].numpy()
'''

HEATMAP_SCRIPT = '''\
import copy

import numpy as np
import torch

from utils import heatmap, small_net

torch.manual_seed(0)

net = small_net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = net(torch.rand(8, 3, 4, 4) * 2 + 1).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
image = torch.rand(1, 3, 8, 8)
found = heatmap(net, image, target=1)
if not np.allclose(found, heatmap(copy.deepcopy(net).eval(), image, target=1), atol=1e-5):
    print("BUG: the heatmap was computed with BatchNorm in training mode")
'''

TESTER = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))

    def forward(self, x):
        return self.body(x)


class Tester:
    def __init__(self, weights):
        self.model = Net()
        self.model.load_state_dict(weights)
        self.outputs = []

    def run(self, frames):
        for frame in frames:
            with torch.no_grad():
                self.outputs.append(self.model(frame))
        return self.outputs
'''

TESTER_SCRIPT = '''\
import torch

from utils import Net, Tester

torch.manual_seed(0)

weights = Net().state_dict()
frames = [torch.randn(1, 6) for _ in range(4)]
tester = Tester(weights)
first = [out.clone() for out in tester.run(frames)]
again = tester.run(frames)[len(frames):]
if not all(torch.allclose(a, b) for a, b in zip(first, again)):
    print("BUG: the tester's predictions change from run to run: dropout is active")
'''

CURVES = '''\
import numpy as np


def save_curve(path, values):
    np.save(path, np.asarray(values, dtype=float))
'''

CURVES_SCRIPT = '''\
import os
import tempfile

import torch
import torch.nn as nn

from utils import save_curve

torch.manual_seed(0)

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    loss = model(torch.randn(8, 3)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss)
with tempfile.TemporaryDirectory() as folder:
    save_curve(os.path.join(folder, "loss.npy"), losses)
'''

PROJECTS = {
    # name: (utils.py, the script, its fix (old, new) in the script or utils.py, where the finding is,
    #        how the bug shows, what it shows)
    "a trainer of utils.py validates the script's model in training mode": (
        TRAINER, TRAIN_SCRIPT, ("utils.py", "        outputs = []\n", "        self.model.eval()\n        outputs = []\n"),
        [("utils.py", 36, 32, "TL414")], "wrong-value", "BUG:"),
    "a meter of utils.py converts the script's model outputs with numpy": (
        METRIC, METRIC_SCRIPT, ("train.py", "meter.update(scores, y)", "meter.update(scores.detach(), y)"),
        [("utils.py", 6, 25, "TL415")], "raises", "Can't call numpy() on Tensor that requires grad"),
    "a method of an imported class returns a model output": (
        ESTIMATOR, ESTIMATOR_SCRIPT, ("train.py", ".predict_proba(x).numpy()", ".predict_proba(x).detach().numpy()"),
        [("train.py", 12, 17, "TL415")], "raises", "Can't call numpy() on Tensor that requires grad"),
    "a training step of utils.py called in the script's loop without clearing": (
        STEP, STEP_SCRIPT, ("train.py", "    train_step(model, optimizer, x, y)",
                            "    optimizer.zero_grad()\n    train_step(model, optimizer, x, y)"),
        [("utils.py", 7, 5, "TL407")], "wrong-value", "BUG:"),
    "a function of utils.py evaluates the script's trained model in training mode": (
        HEATMAP, HEATMAP_SCRIPT, ("train.py", "found = heatmap(net, image, target=1)",
                                  "net.eval()\nfound = heatmap(net, image, target=1)"),
        [("train.py", 18, 9, "TL414")], "wrong-value", "BUG:"),
    "a tester of utils.py that the script builds runs its model in training mode": (
        TESTER, TESTER_SCRIPT, ("utils.py", "        self.outputs = []\n", "        self.model.eval()\n        self.outputs = []\n"),
        [("utils.py", 23, 37, "TL414")], "wrong-value", "BUG:"),
    "a helper of utils.py converts the script's list of losses with numpy": (
        CURVES, CURVES_SCRIPT, ("train.py", "losses.append(loss)", "losses.append(loss.detach())"),
        [("train.py", 19, 5, "TL415")], "raises", "Can't call numpy() on Tensor that requires grad"),
    "a loss of utils.py given tensors made from numpy": (
        TRIPLET, TRIPLET_SCRIPT, ("train.py", "torch.from_numpy(out.detach().numpy()[hard])", "out[hard]"),
        [("train.py", 17, 12, "TL408")], "raises", "does not require grad"),
}


def _write(project, name: str, fixed: bool) -> None:
    utils, script, (where, old, new), _found, _shows, _expect = PROJECTS[name]
    files = {"utils.py": utils, "train.py": script}
    if fixed:
        assert files[where].count(old) == 1, old
        files[where] = files[where].replace(old, new)
    for file, text in files.items():
        project.write(f"{'fixed' if fixed else 'bad'}/{file}", text)


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_the_finding_is_on_the_line_to_change_and_the_fixed_project_is_clean(project, name: str) -> None:
    _write(project, name, fixed=False)
    _write(project, name, fixed=True)
    codes = ",".join(sorted({code for *_, code in PROJECTS[name][3]}))
    assert project.findings("--no-cache", "--select", codes, "bad") == \
        [(f"bad/{file}", row, column, code) for file, row, column, code in PROJECTS[name][3]]
    assert project.findings("--no-cache", "--select", codes, "fixed") == []


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_the_bad_project_shows_the_bug_under_torch_and_the_fixed_one_does_not(project, name: str) -> None:
    pytest.importorskip("torch")
    _write(project, name, fixed=False)
    _write(project, name, fixed=True)
    shows, expect = PROJECTS[name][4:]

    def run(folder: str) -> subprocess.CompletedProcess:
        return torch_program("train.py", cwd=project.root / folder, timeout=180)

    bad, fixed = run("bad"), run("fixed")
    if shows == "raises":
        assert bad.returncode != 0 and expect in bad.stderr, bad.stderr[-500:]
    else:
        assert bad.returncode == 0 and expect in bad.stdout, bad.stderr[-500:]
    assert fixed.returncode == 0 and expect not in fixed.stdout + fixed.stderr, fixed.stderr[-500:]


def test_a_module_of_a_package_takes_values_from_scripts_not_from_its_package(project) -> None:
    """The modules of a package are no entry points: what one of them passes to another
    module of its package is not all that module is called with (the package's users call it
    too), so it makes nothing of its parameters."""
    project.write("lib/setup.py", "from setuptools import setup\n\nsetup(name='pkg')\n")
    project.write("lib/pkg/__init__.py", "")
    project.write("lib/pkg/utils.py", METRIC)
    project.write("lib/pkg/train.py", METRIC_SCRIPT.replace("from utils import", "from pkg.utils import"))
    assert project.findings("--no-cache", "--select", "TL415", "lib") == []
    project.write("lib/train.py", METRIC_SCRIPT.replace("from utils import", "from pkg.utils import"))
    assert project.findings("--no-cache", "--select", "TL415", "lib") == [("lib/pkg/utils.py", 6, 25, "TL415")]


def test_the_forward_method_of_a_plain_class_is_called_by_its_name(project) -> None:
    """`Trainer.forward()` is no module's forward: its callers are the calls of
    `trainer.forward(x, y)`, whose arguments make what it computes under no_grad a loss
    without a graph (TL408 where `self.loss.backward()` runs)."""
    project.write("train.py", '''\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def forward(self, x, y):
        with torch.no_grad():
            self.output = self.model(x)
        self.loss = nn.functional.mse_loss(self.output, y)

    def optimize(self):
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()


trainer = Trainer(nn.Linear(4, 1))
trainer.forward(torch.randn(8, 4), torch.randn(8, 1))
trainer.optimize()
''')
    assert project.findings("--no-cache", "--select", "TL408", "train.py") == [("train.py", 11, 14, "TL408")]


def test_the_cache_follows_the_script_that_calls_the_module(project) -> None:
    """utils.py's finding rests on train.py: when train.py stops passing a model output,
    the cached answer for the unchanged utils.py is not reused."""
    project.write("utils.py", METRIC)
    project.write("train.py", METRIC_SCRIPT)
    cache = ("--cache-dir", str(project.root / ".cache"), "--select", "TL415", ".")
    assert project.findings(*cache) == [("utils.py", 6, 25, "TL415")]
    project.write("train.py", METRIC_SCRIPT.replace("meter.update(scores, y)", "meter.update(scores.detach(), y)"))
    assert project.findings(*cache) == []


def test_a_function_of_utils_that_evaluates_a_model_it_builds_is_read_without_error(project) -> None:
    """The summary of an imported function is that module's walk: one that builds its own
    model and evaluates it in training mode reports there, not in the script, and the run
    goes on (it stopped with an internal error in TL414)."""
    project.write("utils.py", '''\
import torch
import torch.nn as nn


def demo_prediction(x):
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    with torch.no_grad():
        return net(x)
''')
    project.write("train.py", '''\
import torch

from utils import demo_prediction

print(demo_prediction(torch.randn(2, 4)))
''')
    result = project.run("check", "--no-cache", "--select", "TL414", "--output-format", "concise", ".")
    assert result.returncode == 1 and "internal error" not in result.stdout + result.stderr, result.stdout
    assert project.findings("--no-cache", "--select", "TL414", ".") == [("utils.py", 8, 16, "TL414")]


def test_a_regularizer_summed_in_forward_and_added_to_the_loss_is_no_graph_total(project) -> None:
    """`self.attention_sum += attention.sum()` over the steps of a forward, added to the loss
    (`loss += net.attention_sum * 1e-4`): summed to be differentiated, not a leak (TL401 said
    so, with a fix that detached the regularizer). A total nothing differentiates still is."""
    program = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.attention_sum = 0

    def forward(self, x):
        self.attention_sum = 0
        for step in self.steps:
            attention = torch.sigmoid(step(x))
            self.attention_sum += attention.sum()
            x = x * attention
        return x.sum(1)


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    loss = net(torch.randn(8, 4)).pow(2).mean()
    loss += net.attention_sum * 1e-4
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''
    project.write("net.py", program)
    assert project.findings("--no-cache", "--select", "TL401", "net.py") == []
    project.write("trainer.py", '''\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.epoch_loss = 0

    def train_epoch(self, batches):
        self.epoch_loss = 0
        for x, y in batches:
            loss = nn.functional.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.epoch_loss += loss
        return self.epoch_loss.item() / len(batches)


trainer = Trainer(nn.Linear(4, 1))
print(trainer.train_epoch([(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]))
''')
    assert project.findings("--no-cache", "--select", "TL401", "trainer.py") == [("trainer.py", 18, 13, "TL401")]


LEFT_OFF = '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]


def evaluate(batches):
    torch.set_grad_enabled(False)
    return sum((model(x).argmax(1) == y).sum().item() for x, y in batches)


def train_one_epoch():
    for x, y in data:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("correct", evaluate(data[:1]))


for epoch in range(2):
    train_one_epoch()
'''


def test_gradients_left_off_by_a_validation_helper_reach_the_next_epoch(project) -> None:
    """`torch.set_grad_enabled(False)` in `evaluate`, called at the end of an epoch's
    function, is still in force when the next epoch's backward runs (the first epoch runs;
    the second raises): TL408 on the switch, the backward named. Switching inside
    `with torch.no_grad():` instead leaves nothing to report."""
    pytest.importorskip("torch")
    project.write("train.py", LEFT_OFF)
    project.write("fixed.py", LEFT_OFF.replace(
        "    torch.set_grad_enabled(False)\n    return sum(",
        "    with torch.no_grad():\n        return sum("))
    assert project.findings("--no-cache", "--select", "TL408", "train.py") == [("train.py", 11, 5, "TL408")]
    assert project.findings("--no-cache", "--select", "TL408", "fixed.py") == []
    bad = torch_program("train.py", cwd=project.root, timeout=180)
    assert bad.returncode != 0 and "does not require grad" in bad.stderr, bad.stderr[-500:]
    fixed = torch_program("fixed.py", cwd=project.root, timeout=180)
    assert fixed.returncode == 0, fixed.stderr[-500:]


def test_a_constant_wrapped_in_variable_is_a_plain_attribute_the_move_leaves(project) -> None:
    """`self.constant = Variable(torch.zeros(1), requires_grad=False)`: `Variable(x)` is `x`,
    made on the CPU; `model.to(device)` moves parameters and buffers only (TL416, with
    `register_buffer` as the fix). The buffer leaves nothing to report."""
    program = '''\
import torch
import torch.nn as nn
from torch.autograd import Variable


class Clamp(nn.Module):
    def __init__(self):
        super().__init__()
        self.floor = Variable(torch.zeros(1), requires_grad=False)

    def forward(self, x):
        return torch.max(x, self.floor.expand_as(x))


model = nn.Sequential(nn.Linear(4, 4), Clamp()).to(torch.device("meta"))
print(model(torch.randn(2, 4, device="meta")).shape)
'''
    project.write("net.py", program)
    assert project.findings("--no-cache", "--select", "TL416", "net.py") == [("net.py", 9, 9, "TL416")]
    project.write("net.py", program.replace("self.floor = Variable(torch.zeros(1), requires_grad=False)",
                                            "self.register_buffer(\"floor\", torch.zeros(1))"))
    assert project.findings("--no-cache", "--select", "TL416", "net.py") == []
    pytest.importorskip("torch")
    project.write("bad.py", program)
    bad = torch_program("bad.py", cwd=project.root, timeout=180)
    assert bad.returncode != 0 and "device" in bad.stderr, bad.stderr[-500:]


FROZEN_BY_THE_TRAINER = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.model.requires_grad_(False)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)

    def step(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


trainer = Trainer(Classifier(), 0.1)
print(trainer.step(torch.randn(8, 4), torch.randint(0, 2, (8,))))
'''


def test_a_model_a_trainer_freezes_whole_has_no_graph(project) -> None:
    """The trainer meant to freeze the backbone and froze `self.model` whole: the loss has no
    graph and backward raises (TL408 on the freezing line). Freezing the backbone only
    trains the head and leaves nothing to report."""
    project.write("bad.py", FROZEN_BY_THE_TRAINER)
    project.write("fixed.py", FROZEN_BY_THE_TRAINER.replace("self.model.requires_grad_(False)",
                                                            "self.model.backbone.requires_grad_(False)"))
    assert project.findings("--no-cache", "--select", "TL408", "bad.py") == [("bad.py", 19, 9, "TL408")]
    assert project.findings("--no-cache", "--select", "TL408", "fixed.py") == []
    pytest.importorskip("torch")
    bad = torch_program("bad.py", cwd=project.root, timeout=180)
    assert bad.returncode != 0 and "does not require grad" in bad.stderr, bad.stderr[-500:]
    fixed = torch_program("fixed.py", cwd=project.root, timeout=180)
    assert fixed.returncode == 0, fixed.stderr[-500:]


def test_a_branch_written_for_variable_never_runs(project) -> None:
    """`if type(src) == Variable: x = src.data` was written for PyTorch 0.3: since 0.4 no
    tensor's type is `Variable`, so `x = src` is what runs and `x.numpy()` raises on a loss
    that requires grad (TL415). Detaching in the branch that runs leaves nothing to report."""
    program = '''\
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def to_numpy(src):
    if type(src) == Variable:
        x = src.data
    else:
        x = src
    return x.cpu().numpy()


model = nn.Linear(3, 1)
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
print(to_numpy(loss))
'''
    project.write("bad.py", program)
    project.write("fixed.py", program.replace("        x = src\n", "        x = src.detach()\n"))
    assert project.findings("--no-cache", "--select", "TL415", "bad.py") == [("bad.py", 12, 12, "TL415")]
    assert project.findings("--no-cache", "--select", "TL415", "fixed.py") == []
    pytest.importorskip("torch")
    bad = torch_program("bad.py", cwd=project.root, timeout=180)
    assert bad.returncode != 0 and "Can't call numpy() on Tensor that requires grad" in bad.stderr, bad.stderr[-500:]
    fixed = torch_program("fixed.py", cwd=project.root, timeout=180)
    assert fixed.returncode == 0, fixed.stderr[-500:]
