"""Bugs in the shapes people write them while they learn (issue 41): each bad program shows
the bug under torch 2.13 CPU, torchlint reports it on the line to change, and the
correct look-alike gets nothing. Real files through the real CLI; `--runtime` where the
verdict is the point."""

from __future__ import annotations

import subprocess

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")

FROZEN_BEFORE_THE_HEAD = '''
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.features(x)))


model = Backbone()
model.fc = nn.Linear(8, 2)
for name, param in model.named_parameters():
    param.requires_grad = False
data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,)))
loader = torch.utils.data.DataLoader(data, batch_size=4)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
'''
# The head replaced after freezing: it trains.
HEAD_AFTER_FREEZING = FROZEN_BEFORE_THE_HEAD.replace(
    "model.fc = nn.Linear(8, 2)\nfor name, param in model.named_parameters():\n    param.requires_grad = False\n",
    "for name, param in model.named_parameters():\n    param.requires_grad = False\nmodel.fc = nn.Linear(8, 2)\n")
# Frozen only when asked: nothing shows it is.
FROZEN_WHEN_ASKED = FROZEN_BEFORE_THE_HEAD.replace(
    "for name, param in model.named_parameters():\n    param.requires_grad = False\n",
    "if len(__import__('sys').argv) > 5:\n    model.requires_grad_(False)\n")
# One parameter turned back on.
ONE_TURNED_ON = FROZEN_BEFORE_THE_HEAD.replace(
    "data = torch.utils", "model.fc.weight.requires_grad = True\ndata = torch.utils")

DROPPED_MOVE = '''
import torch
import torch.nn as nn

device = torch.device("meta")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
criterion = nn.CrossEntropyLoss()
data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
loader = torch.utils.data.DataLoader(data, batch_size=4)
for inputs, labels in loader:
    inputs = inputs.to(device)
    labels.to(device)
    loss = criterion(model(inputs), labels)
    loss.backward()
'''

LOSS_FROM_ITEMS = '''
import torch
import torch.nn as nn


def compute_loss(outputs, labels):
    losses = []
    for output, label in zip(outputs, labels):
        losses.append(((output - label) ** 2).sum().item())
    return torch.tensor(sum(losses) / len(losses))


model = nn.Linear(4, 2)
out = model(torch.randn(3, 4))
loss = compute_loss(out, torch.randn(3, 2))
loss.backward()
'''

EVAL_NOT_CALLED = '''
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for epoch in range(2):
    model.train()
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval
    with torch.no_grad():
        first, second = model(x), model(x)
    if not torch.equal(first, second):
        print("BUG: two evaluations differ")
'''


def _runs(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=120)


def _shown_reported_fixed(project, source: str, error: str, code: str, found: list, fixed: str) -> None:
    """bad.py raises ``error``; ``code`` reports ``found`` there; its unsafe fix writes ``fixed``
    and the program then runs."""
    project.write("bad.py", source)
    assert error in _runs(project, "bad.py").stderr
    assert project.findings("--no-cache", "--select", code) == found
    assert fixed in _fixed(project, code, "--unsafe-fixes")
    assert _runs(project, "bad.py").returncode == 0


def _fixed(project, code: str, *options: str) -> str:
    """bad.py after `check --fix` of ``code`` (with ``options``), which must succeed."""
    result = project.run("check", "--no-cache", "--select", code, "--fix", *options, "bad.py")
    assert result.returncode == 0, result.stdout
    return (project.root / "bad.py").read_text()


@pytest.mark.parametrize("source, expected", [
    (FROZEN_BEFORE_THE_HEAD, [("bad.py", 17, 20, "TL408")]),
    (HEAD_AFTER_FREEZING, []),
    (FROZEN_WHEN_ASKED, []),
    (ONE_TURNED_ON, []),
], ids=["frozen-before-the-head", "head-after-freezing", "frozen-when-asked", "one-turned-on"])
def test_a_model_whose_parameters_are_all_frozen_has_no_graph(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


def test_the_frozen_model_is_confirmed_at_runtime(project) -> None:
    project.write("bad.py", FROZEN_BEFORE_THE_HEAD)
    result = project.run("check", "--no-cache", "--select", "TL408", "--runtime", "bad.py")
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout, result.stdout


def test_a_dropped_move_is_reported_where_it_is_written_and_fixed_there(project) -> None:
    project.write("bad.py", DROPPED_MOVE)
    assert project.findings("--no-cache", "--select", "TL416") == [("bad.py", 11, 5, "TL416")]
    stderr = _runs(project, "bad.py").stderr
    assert "is not on the expected device" in stderr or "same device" in stderr
    assert "    labels = labels.to(device)\n" in _fixed(project, "TL416", "--unsafe-fixes")


def test_the_dropped_move_is_confirmed_at_runtime(project) -> None:
    project.write("bad.py", DROPPED_MOVE)
    result = project.run("check", "--no-cache", "--select", "TL416", "--runtime", "bad.py")
    assert "CONFIRMED" in result.stdout, result.stdout


def test_a_tensor_made_from_a_list_of_items_is_reported_in_the_helper(project) -> None:
    project.write("bad.py", LOSS_FROM_ITEMS)
    assert project.findings("--no-cache", "--select", "TL408") == [("bad.py", 9, 12, "TL408")]
    assert "does not require grad" in _runs(project, "bad.py").stderr
    project.write("good.py", LOSS_FROM_ITEMS.replace(".sum().item())", ".sum())").replace(
        "torch.tensor(sum(losses) / len(losses))", "torch.stack(losses).mean()"))
    assert project.findings("--no-cache", "--select", "TL408", "good.py") == []
    assert _runs(project, "good.py").returncode == 0


def test_eval_written_without_the_call_is_reported_and_fixed(project) -> None:
    project.write("bad.py", EVAL_NOT_CALLED)
    assert "BUG:" in _runs(project, "bad.py").stdout
    assert project.findings("--no-cache", "--select", "TL414") == [("bad.py", 13, 5, "TL414")]
    assert "    model.eval()\n" in _fixed(project, "TL414")
    assert "BUG:" not in _runs(project, "bad.py").stdout


TRAIN_IN_THE_EVALUATION = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]


def eval_one_epoch(model, loader):
    model.train()
    errors = []
    with torch.no_grad():
        for x, y in loader:
            errors.append(((model(x) - y) ** 2).mean().item())
    return sum(errors) / len(errors)


for epoch in range(2):
    model.train()
    for x, y in batches:
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
    first, second = eval_one_epoch(model, batches), eval_one_epoch(model, batches)
    if first != second:
        print("BUG: the same evaluation gives two values")
'''

INFERENCE_SCRIPT = '''
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.dropout(torch.relu(self.fc1(x))))


def main(state, clips):
    model = Classifier()
    model.load_state_dict(state)
    model.train()
    labels = []
    for clip in clips:
        inputs = clip.unsqueeze(0)
        outputs = model.forward(inputs)
        labels.append(torch.max(outputs, 1)[1].detach().item())
    return labels


torch.manual_seed(0)
state = Classifier().state_dict()
clips = [torch.randn(4) for _ in range(20)]
if main(state, clips) != main(state, clips):
    print("BUG: two runs over the same clips label them differently")
'''
# Monte Carlo dropout: `train()` on purpose, one input run again and again.
MONTE_CARLO = INFERENCE_SCRIPT.replace(
    "    for clip in clips:\n        inputs = clip.unsqueeze(0)\n        outputs = model.forward(inputs)\n"
    "        labels.append(torch.max(outputs, 1)[1].detach().item())\n",
    "    inputs = torch.stack(clips)\n    for _ in range(10):\n        outputs = model.forward(inputs)\n"
    "        labels.append(torch.max(outputs, 1)[1].detach().tolist())\n")
# Batch-norm statistics refreshed: the outputs are dropped.
REFRESHED = INFERENCE_SCRIPT.replace(
    "        labels.append(torch.max(outputs, 1)[1].detach().item())\n", "")


@pytest.mark.parametrize("source, expected, bug", [
    (TRAIN_IN_THE_EVALUATION, [("bad.py", 11, 5, "TL414")], True),
    (INFERENCE_SCRIPT, [("bad.py", 19, 5, "TL414")], True),
    (MONTE_CARLO, [], None),
    (REFRESHED, [], None),
], ids=["train-in-the-evaluation", "inference-script", "monte-carlo-dropout", "statistics-refreshed"])
def test_train_called_where_the_model_is_evaluated(project, source: str, expected, bug) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL414") == expected
    ran = _runs(project, "bad.py")
    assert ran.returncode == 0, ran.stderr
    if bug is not None:  # (Monte Carlo samples differ on purpose)
        assert ("BUG:" in ran.stdout) == bug
    if expected:
        assert ".eval()" in _fixed(project, "TL414", "--unsafe-fixes")
        assert "BUG:" not in _runs(project, "bad.py").stdout


MOVED_WHEN_BUILT = '''
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 8, num_layers=2, batch_first=True)

    def forward(self, x, hidden):
        return self.gru(x, hidden)


class Model:
    def __init__(self, device):
        self.device = device
        self.set_encoder()

    def set_encoder(self):
        self.encoder = Encoder()
        self.encoder.to(self.device)

    def fit(self, batches):
        for batch in batches:
            batch = batch.to(self.device)
            hidden = torch.zeros(2, batch.shape[0], 8)
            self.encoder(batch, hidden)


Model(torch.device("meta")).fit([torch.randn(3, 5, 4)])
'''

DROPPED_ON_A_HELPERS_TENSOR = '''
import numpy as np
import torch


def sample(batch_size):
    indices = np.random.choice(10, size=(batch_size,))
    return torch.from_numpy(indices).long()


def step(batch):
    t = sample(batch.shape[0])
    t.to(batch.device)
    return batch * t[:, None]


def rescale(table, orig_dtype):
    resized = table.float() * 2
    resized.to(orig_dtype)
    return resized


step(torch.randn(4, 3, device="meta"))
'''


def test_a_module_the_object_moves_as_it_is_built(project) -> None:
    project.write("bad.py", MOVED_WHEN_BUILT)
    stderr = _runs(project, "bad.py").stderr
    assert "same device" in stderr or "expected device" in stderr
    assert project.findings("--no-cache", "--select", "TL416") == [("bad.py", 26, 22, "TL416")]
    project.write("bad.py", MOVED_WHEN_BUILT.replace("torch.zeros(2, batch.shape[0], 8)",
                                                     "torch.zeros(2, batch.shape[0], 8, device=batch.device)"))
    assert project.findings("--no-cache", "--select", "TL416") == []
    assert _runs(project, "bad.py").returncode == 0


def test_a_dropped_move_of_a_tensor_is_reported_alone(project) -> None:
    # `.to(orig_dtype)` may be a dtype: another bug, not a move.
    _shown_reported_fixed(project, DROPPED_ON_A_HELPERS_TENSOR, "expected device", "TL416",
                          [("bad.py", 12, 5, "TL416")], "    t = t.to(batch.device)\n")


MODES_SET_BY_A_HELPER = '''
import torch
import torch.nn as nn


def set_mode(mode, models):
    for m in models:
        if mode == "train":
            m.train()
        else:
            m.eval()


def check_accuracy(encoder, head, x, y):
    set_mode("eval", [encoder, head])
    with torch.no_grad():
        accuracy = (head(encoder(x)).argmax(1) == y).float().mean().item()
    set_mode("train", [encoder, head])
    return accuracy


encoder = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
head = nn.Sequential(nn.Dropout(0.5), nn.Linear(8, 3))
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
for step in range(3):
    set_mode("train", [encoder, head])
    optimizer.zero_grad()
    nn.functional.cross_entropy(head(encoder(x)), y).backward()
    optimizer.step()
    print(check_accuracy(encoder, head, x, y))
'''


def test_models_whose_mode_a_helper_sets_through_a_list_are_not_reported(project) -> None:
    project.write("good.py", MODES_SET_BY_A_HELPER)
    assert project.findings("--no-cache", "--select", "TL414") == []
    assert _runs(project, "good.py").returncode == 0


PREDICT_UNDER_NO_GRAD = '''
import torch
import torch.nn as nn


class SegModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(x)

    def predict_mask(self, images):
        with torch.no_grad():
            logits = self.forward(images)
        return logits.softmax(1)


model = SegModel()
image = torch.rand(1, 3, 8, 8, requires_grad=True)
score = model.predict_mask(image)[0, 1].sum()
score.backward()
print(image.grad.shape)
'''


def test_a_forward_run_by_a_predict_method_under_no_grad(project) -> None:
    project.write("bad.py", PREDICT_UNDER_NO_GRAD)
    assert "does not require grad" in _runs(project, "bad.py").stderr
    assert project.findings("--no-cache", "--select", "TL408") == [("bad.py", 14, 14, "TL408")]
    project.write("bad.py", PREDICT_UNDER_NO_GRAD.replace("model.predict_mask(image)", "model(image).softmax(1)"))
    assert project.findings("--no-cache", "--select", "TL408") == []
    assert _runs(project, "bad.py").returncode == 0


FLOAT_INDICES = '''
import numpy as np
import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, token_ids):
        return self.fc(self.embedding(token_ids).mean(1))


model = TextClassifier(50, 8, 2)
sentences = np.random.randint(0, 50, (4, 6)).astype(np.float32)
batch = torch.from_numpy(sentences)
print(model(batch).shape)
'''


def test_floating_indices_reach_an_embedding(project) -> None:
    # reported at the `.astype(np.float32)` that chose the dtype (session 22), fixed there
    _shown_reported_fixed(project, FLOAT_INDICES, "'indices'", "TL413", [("bad.py", 17, 13, "TL413")],
                          "np.random.randint(0, 50, (4, 6)).astype(np.int64)")


DEVICE_DEFAULTS_TO_THE_CPU = '''
import torch
import torch.nn as nn


def reconstruction_loss(model, batch, scale, device):
    batch = batch.to(device)
    return ((model(batch) - batch) / scale).pow(2).mean()


def fit(model, batches, optimizer, scale, device=torch.device("cpu")):
    for batch in batches:
        optimizer.zero_grad()
        reconstruction_loss(model, batch, scale, device).backward()
        optimizer.step()


model = nn.Linear(4, 4)
fit(model, [torch.randn(8, 4)], torch.optim.SGD(model.parameters(), lr=0.1), torch.rand(4) + 0.5)
'''


def test_a_device_every_caller_leaves_on_the_cpu_moves_nothing(project) -> None:
    project.write("good.py", DEVICE_DEFAULTS_TO_THE_CPU)
    assert project.findings("--no-cache", "--select", "TL416") == []
    assert _runs(project, "good.py").returncode == 0


TOTAL_WITH_A_HELPERS_BACKWARD = '''
import torch
import torch.nn as nn


class Runner:
    def backward(self, loss):
        loss.backward()


def train(model, batches, optimizer, runner):
    for epoch in range(2):
        loss_sum = torch.tensor(0.0)
        for step, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(model(x), y)
            loss_sum += loss
            runner.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        print(epoch, loss_sum.item() / (step + 1))
    return loss_sum


model = nn.Linear(4, 1)
total = train(model, [(torch.randn(8, 4), torch.randn(8, 1))] * 3, torch.optim.SGD(model.parameters(), lr=0.1),
              Runner())
# -- corpus check --
if total.grad_fn is not None:
    print("BUG: the epoch total holds the graph of every step")
'''


def test_a_total_whose_losses_a_helper_back_propagates(project) -> None:
    project.write("bad.py", TOTAL_WITH_A_HELPERS_BACKWARD)
    assert "BUG:" in _runs(project, "bad.py").stdout
    assert project.findings("--no-cache", "--select", "TL401") == [("bad.py", 15, 13, "TL401")]


METER = '''
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses, accuracies = AverageMeter(), AverageMeter()
for step in range(4):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    out = model(x)
    loss = nn.functional.mse_loss(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.update(loss, x.size(0))
    accuracies.update(((out - y).abs() < 0.5).float().mean().item(), x.size(0))
print(losses.avg)
'''


@pytest.mark.parametrize("source, expected", [
    (METER, [("bad.py", 11, 9, "TL401")]),
    (METER.replace("losses.update(loss, x.size(0))", "losses.update(loss.item(), x.size(0))"), []),
    (METER.replace("        self.sum += val * n", "        if torch.is_tensor(val):\n            val = val.item()\n"
                                                   "        self.sum += val * n"), []),
    (METER.replace("        self.sum += val * n", "        self.sum += float(val) * n"), []),
], ids=["meter-given-the-loss", "given-its-value", "update-takes-the-value", "update-adds-the-value"])
def test_a_meter_given_a_loss_that_holds_its_graph(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL401") == expected
    assert _runs(project, "bad.py").returncode == 0


def test_the_meter_is_confirmed_at_runtime(project) -> None:
    # Two meters share the statement; the runtime follows the one that holds a graph.
    project.write("bad.py", METER)
    result = project.run("check", "--no-cache", "--select", "TL401", "--runtime", "bad.py")
    assert "CONFIRMED" in result.stdout, result.stdout


@pytest.mark.parametrize("sizes, verdict", [
    ([7, 0, 12, 0, 17, 0], "CONFIRMED"),  # two meters: the one given losses grows
    ([7, 0, 7, 0, 7, 0], "NOT REPRODUCED"),  # reset between iterations
    ([0, 7, 12, 17], "CONFIRMED"),
    ([7, 12], "NOT REPRODUCED"),
])
def test_the_total_judge_compares_the_runs_that_held_a_graph(sizes, verdict: str) -> None:
    from torchlint.framework.verdicts import Observation
    from torchlint.rules.loss_accumulation import LossAccumulation

    assert LossAccumulation.judge(Observation(probe="self.sum", graph_sizes=sizes)).verdict == verdict


ACCELERATE_LOOP = '''
import torch
import torch.nn as nn
from accelerate import Accelerator

accelerator = Accelerator()
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = accelerator.prepare(model, optimizer)
total = 0
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    total += loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
print(total / 3)
'''


def test_accelerators_backward_back_propagates_its_argument(project) -> None:
    # accelerate is not installed here: the linter reads it, nothing runs.
    project.write("bad.py", ACCELERATE_LOOP)
    assert project.findings("--no-cache", "--select", "TL401,TL408,TL411") == [("bad.py", 13, 5, "TL401")]
    project.write("bad.py", ACCELERATE_LOOP.replace("total += loss", "total += loss.item()"))
    assert project.findings("--no-cache", "--select", "TL401,TL408,TL411") == []


NORMALIZED_IN_A_HELPER = '''
import torch
import torch.nn as nn


def normalize(t):
    t -= t.mean()
    t /= t.std()
    return t


encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
z = encoder(torch.randn(6, 4))
z = normalize(z)
z.sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    # `t.std()` keeps `t`, which `/=` then writes: the caller's backward reaches it through `z`.
    (NORMALIZED_IN_A_HELPER, [("bad.py", 7, 5, "TL409"), ("bad.py", 13, 5, "TL409")]),
    (NORMALIZED_IN_A_HELPER.replace("    t -= t.mean()\n    t /= t.std()\n", "    t = (t - t.mean()) / t.std()\n"),
     []),
    (NORMALIZED_IN_A_HELPER.replace("    t -= t.mean()\n    t /= t.std()\n", "    t = t.clone()\n    t -= t.mean()\n"),
     []),
    (NORMALIZED_IN_A_HELPER.replace("    t -= t.mean()\n    t /= t.std()\n",
                                    "    if not t.requires_grad:\n        t -= t.mean()\n"), []),
], ids=["writes-its-parameter", "computes-anew", "clones-first", "writes-only-without-grad"])
def test_a_helper_that_writes_its_parameter_in_place(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


# --- shapes of library code: values through modules, helpers, attributes and tuples ----------

FLOAT64_INTO_A_BLOCK = '''
import numpy as np
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.pool = nn.MaxPool1d(3, stride=1, padding=1)
        self.conv = nn.Conv1d(channels, 4, 1)

    def forward(self, X):
        return self.conv(self.pool(X)) + self.conv(X)


series = np.random.normal(size=(8, 3, 16))
model = nn.Sequential(Block(3), nn.Flatten(), nn.Linear(64, 2))
print(model(torch.tensor(series)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (FLOAT64_INTO_A_BLOCK, [("bad.py", 18, 13, "TL413")]),
    (FLOAT64_INTO_A_BLOCK.replace("    def forward(self, X):\n",
                                  "    def forward(self, X):\n        X = X.float()\n"), []),
], ids=["as-it-is", "converted-in-forward"])
def test_a_float64_input_reaches_the_weights_of_a_block(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL413") == expected
    ran = _runs(project, "bad.py")
    assert ("(double)" in ran.stderr) == bool(expected), ran.stderr


DEVICE_SHAPES = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("meta")


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)

    def init_hidden(self, n):
        return (torch.zeros(1, n, 6), torch.zeros(1, n, 6))

    def forward(self, x):
        hidden = self.init_hidden(x.size(0))
        return self.lstm(x, hidden)[0]


class Contrastive(nn.Module):
    def forward(self, z1, z2):
        logits = F.normalize(z1, dim=1) @ F.normalize(z2, dim=1).t()
        labels = torch.arange(z1.size(0))
        return F.cross_entropy(logits, labels)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(6, 18)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        n = x.size(1)
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        return (q @ k.transpose(-2, -1)).masked_fill(causal, float("-inf")).softmax(-1) @ v


class Anchors(nn.Module):
    def __init__(self, anchors):
        super().__init__()
        self.anchors = torch.tensor(anchors, dtype=torch.float32)
        self.conv = nn.Linear(6, 2)

    def forward(self, x):
        return self.conv(x) * self.anchors


def run(which):
    x = torch.randn(2, 5, 4, device=device)
    if which == "hidden":
        Tagger().to(device)(x)
    elif which == "labels":
        encoder = nn.Linear(4, 6).to(device)
        criterion = Contrastive()
        criterion(encoder(x[:, 0]), encoder(x[:, 1]))
    elif which == "mask":
        Attention().to(device)(torch.randn(2, 5, 6, device=device))
    elif which == "anchors":
        Anchors([(1, 2), (3, 4)]).to(device)(torch.randn(2, 6, device=device))


run(__import__("sys").argv[1])
'''


@pytest.mark.parametrize("which, line, fixed", [
    ("hidden", 14, ("torch.zeros(1, n, 6), torch.zeros(1, n, 6)",
                    "torch.zeros(1, n, 6, device=device), torch.zeros(1, n, 6, device=device)")),
    ("labels", 25, ("torch.arange(z1.size(0))", "torch.arange(z1.size(0), device=z1.device)")),
    ("mask", 36, ("torch.ones(n, n, dtype=torch.bool)", "torch.ones(n, n, dtype=torch.bool, device=x.device)")),
    ("anchors", 43, ("self.anchors = torch.tensor(anchors, dtype=torch.float32)",
                     "self.register_buffer('anchors', torch.tensor(anchors, dtype=torch.float32))")),
], ids=["hidden-state-from-a-helper", "labels-of-a-loss-module", "mask-of-chunked-heads", "anchors-from-a-list"])
def test_tensors_left_on_the_cpu_in_library_shapes(project, which: str, line: int, fixed) -> None:
    project.write("bad.py", DEVICE_SHAPES)
    ran = torch_program("bad.py", which, cwd=project.root, timeout=120)
    assert "device" in ran.stderr, ran.stderr
    assert line in [row[1] for row in project.findings("--no-cache", "--select", "TL416")]
    project.write("bad.py", DEVICE_SHAPES.replace(*fixed))
    assert line not in [row[1] for row in project.findings("--no-cache", "--select", "TL416")]
    ran = torch_program("bad.py", which, cwd=project.root, timeout=120)
    assert ran.returncode == 0, ran.stderr


LABELS_LEFT_BEHIND = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Evaluator:
    def __init__(self, model, loader, device):
        self.model = model.to(device)
        self.loader = loader
        self.device = device

    def accuracy(self):
        correct = 0
        with torch.no_grad():
            for images, labels in self.loader:
                _, predicted = torch.max(self.model(images.to(self.device)), 1)
                correct += (predicted == labels).sum().item()
        return correct


loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,))), batch_size=4)
print(Evaluator(nn.Linear(4, 3), loader, torch.device("meta")).accuracy())
'''


def test_labels_left_on_the_cpu_meet_the_predictions(project) -> None:
    project.write("bad.py", LABELS_LEFT_BEHIND)
    assert "device" in _runs(project, "bad.py").stderr
    assert project.findings("--no-cache", "--select", "TL416") == [("bad.py", 17, 42, "TL416")]
    project.write("bad.py", LABELS_LEFT_BEHIND.replace("(predicted == labels)",
                                                       "(predicted == labels.to(self.device))"))
    assert project.findings("--no-cache", "--select", "TL416") == []


IMAGE_FROM_A_TRANSFORM = '''
import torch
import torch.nn as nn
import torchvision.transforms as T
from PIL import Image


def predict(model, path):
    transform = T.Compose([T.Resize(32), T.ToTensor()])
    image = transform(Image.open(path).convert("RGB")).unsqueeze(0)
    with torch.no_grad():
        return model(image).argmax(1).item()


model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten())
model.cuda()
print(predict(model, "cat.jpg"))
'''


def test_an_image_from_a_transform_is_on_the_cpu(project) -> None:
    # torchvision is not installed here: the linter reads it, nothing runs.
    project.write("bad.py", IMAGE_FROM_A_TRANSFORM)
    assert project.findings("--no-cache", "--select", "TL416") == [("bad.py", 11, 22, "TL416")]
    project.write("bad.py", IMAGE_FROM_A_TRANSFORM.replace("T.ToTensor()]", "T.ToTensor(), lambda t: t.cuda()]"))
    assert project.findings("--no-cache", "--select", "TL416") == []


FROZEN_BY_A_HELPER = '''
import torch
import torch.nn as nn


def freeze(model):
    for p in model.parameters():
        p.requires_grad = False


model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
freeze(model)
optimizer = torch.optim.SGD(model[2].parameters(), lr=0.1)
loss = nn.functional.cross_entropy(model(torch.randn(4, 8)), torch.randint(0, 2, (4,)))
loss.backward()
optimizer.step()
'''


@pytest.mark.parametrize("source, expected", [
    (FROZEN_BY_A_HELPER, [("bad.py", 11, 1, "TL408")]),
    (FROZEN_BY_A_HELPER.replace("    for p in",
                                "    if len(__import__('sys').argv) < 5:\n        return\n    for p in"),
     []),
    (FROZEN_BY_A_HELPER.replace("freeze(model)\n", "freeze(model[0])\n"), []),
], ids=["freezes-everything", "freezes-when-asked", "freezes-the-first-layer"])
def test_a_helper_that_freezes_the_model(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


LOADED_BY_A_HELPER = '''
import torch
import torch.nn as nn
import tempfile, os


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 64)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(64, 2)

    def forward(self, x):
        return self.out(self.drop(torch.relu(self.fc(x))))


def load_model(path):
    model = Net()
    model.load_state_dict(torch.load(path, weights_only=True))
    return model


torch.manual_seed(0)
folder = tempfile.mkdtemp()
torch.save(Net().state_dict(), os.path.join(folder, "net.pt"))
model = load_model(os.path.join(folder, "net.pt"))
sample = torch.randn(1, 4)
with torch.no_grad():
    first, second = model(sample), model(sample)
# -- corpus check --
if not torch.equal(first, second):
    print("BUG: two predictions of one sample differ")
'''


@pytest.mark.parametrize("source, expected", [
    (LOADED_BY_A_HELPER, [("bad.py", 29, 21, "TL414")]),
    (LOADED_BY_A_HELPER.replace("    return model\n", "    model.eval()\n    return model\n"), []),
    (LOADED_BY_A_HELPER.replace("    model = Net()\n", "    model = Net().to(torch.device('cpu'))\n"),
     [("bad.py", 29, 21, "TL414")]),
], ids=["returned-in-training-mode", "returned-in-eval-mode", "built-and-moved"])
def test_a_model_loaded_by_a_helper_is_in_training_mode(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert [row for row in project.findings("--no-cache", "--select", "TL414") if row[1] == 29][:1] == expected
    assert ("BUG:" in _runs(project, "bad.py").stdout) == bool(expected)


PENALTY_WITH_ITS_GRAPH = '''
import torch
import torch.nn as nn
from torch import autograd

net = nn.Linear(3, 2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
total, grads = 0, []
for x, y in [(torch.randn(4, 3), torch.randint(0, 2, (4,))) for _ in range(2)]:
    loss = nn.functional.cross_entropy(net(x), y)
    total += loss
    grads.append(autograd.grad(loss, net.parameters(), create_graph=True))
mean = total / 2
mean_grads = autograd.grad(mean, net.parameters(), create_graph=True)
penalty = sum((g - m).pow(2).sum() for grad in grads for g, m in zip(grad, mean_grads))
optimizer.zero_grad()
(mean + penalty).backward()
optimizer.step()
'''


def test_a_total_differentiated_after_backwards_that_keep_the_graph(project) -> None:
    project.write("bad.py", PENALTY_WITH_ITS_GRAPH)
    assert _runs(project, "bad.py").returncode == 0
    assert project.findings("--no-cache", "--select", "TL401") == []
    project.write("bad.py", PENALTY_WITH_ITS_GRAPH.replace(", create_graph=True))\nmean", "))\nmean"))
    assert project.findings("--no-cache", "--select", "TL401") == [("bad.py", 10, 5, "TL401")]


ROUTER_NORMALIZED_IN_PLACE = '''
import torch
import torch.nn as nn


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def _top_k(self, scores):
        return torch.topk(scores, 2, dim=-1)

    def forward(self, x):
        scores = self.layer(x).softmax(dim=-1)
        weights, indices = self._top_k(scores)
        weights /= torch.norm(weights, p=2, dim=-1, keepdim=True)
        return weights


Router()(torch.randn(2, 4)).sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    (ROUTER_NORMALIZED_IN_PLACE, [("bad.py", 16, 9, "TL409")]),
    (ROUTER_NORMALIZED_IN_PLACE.replace("weights /= torch.norm(", "weights = weights / torch.norm("), []),
    (ROUTER_NORMALIZED_IN_PLACE.replace("return torch.topk(scores, 2, dim=-1)",
                                        "return torch.topk(scores.detach(), 2, dim=-1)"), []),
], ids=["in-place", "out-of-place", "helper-detaches"])
def test_a_helpers_result_is_in_the_graph_of_what_it_is_given(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


LOSSES_PLOTTED_BY_A_HELPER = '''
import numpy as np
import torch


class Plotter:
    def plot(self, x, y):
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def linear_regression(X, w, b):
    return X * w + b


def squared_error(y_hat, y):
    return (y_hat - y) ** 2 / 2


net = linear_regression
loss = squared_error
X, y = torch.rand(10), torch.rand(10)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
losses = []
for epoch in range(3):
    l = loss(net(X, w, b), y).mean()
    l.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    losses.append(l)
Plotter().plot(range(3), losses)
'''


@pytest.mark.parametrize("source, expected", [
    (LOSSES_PLOTTED_BY_A_HELPER, [("bad.py", 30, 5, "TL415")]),
    (LOSSES_PLOTTED_BY_A_HELPER.replace("losses.append(l)", "losses.append(l.item())"), []),
], ids=["appends-the-loss", "appends-its-value"])
def test_a_list_of_losses_converted_by_a_helper(project, source: str, expected) -> None:
    # The model and the loss are called through other names; the list is converted in a
    # method it is passed to: reported where the loss is appended, the line to change.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL415") == expected
    ran = _runs(project, "bad.py")
    assert ("Can't call numpy() on Tensor that requires grad" in ran.stderr) == bool(expected), ran.stderr


SCORES_THROUGH_ARGMAX = '''
import torch
import torch.nn as nn


class DiceLoss(nn.Module):
    def forward(self, logits, target):
        pred = logits.argmax(dim=1)
        inter = (pred == target).float().sum()
        return 1 - 2 * inter / (pred.numel() + target.numel())


model = nn.Linear(6, 2)
criterion = DiceLoss()
loss = criterion(model(torch.randn(4, 6)), torch.randint(0, 2, (4,)))
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (SCORES_THROUGH_ARGMAX, [("bad.py", 8, 18, "TL408")]),
    (SCORES_THROUGH_ARGMAX.replace("pred = logits.argmax(dim=1)", "pred = logits.softmax(dim=1)[:, 1]")
     .replace("(pred == target).float()", "(pred * target)"), []),
], ids=["argmax", "soft"])
def test_a_loss_module_that_cuts_its_input(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


PREDICTOR_BUILT_BY_ITS_BASE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.fc(x))


class BaseRunner:
    def __init__(self, device):
        self.model = Net().to(device)


class Predictor(BaseRunner):
    @torch.no_grad()
    def predict(self, x):
        return self.model(x)


torch.manual_seed(0)
runner = Predictor(torch.device("cpu"))
sample = torch.randn(1, 4)
if not torch.equal(runner.predict(sample), runner.predict(sample)):
    print("BUG: two predictions of one sample differ")
'''


@pytest.mark.parametrize("source, expected", [
    (PREDICTOR_BUILT_BY_ITS_BASE, [("bad.py", 23, 16, "TL414")]),
    (PREDICTOR_BUILT_BY_ITS_BASE.replace("        return self.model(x)", "        self.model.eval()\n"
                                                                           "        return self.model(x)"), []),
], ids=["built-by-the-base-class", "evaluated-in-eval-mode"])
def test_a_model_built_by_a_base_class(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL414") == expected
    assert ("BUG:" in _runs(project, "bad.py").stdout) == bool(expected)


EVALUATION_LEAVES_GRADIENTS_OFF = '''
import torch
import torch.nn as nn


def evaluate(model, data, target):
    torch.set_grad_enabled(False)
    model.eval()
    out = model(data)
    return nn.functional.mse_loss(out, target).item()


def train(model, data, target, optimizer):
    model.train()
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    optimizer.step()
    return loss.item()


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for epoch in range(2):
    print(evaluate(model, x, y))
    print(train(model, x, y, optimizer))
'''


@pytest.mark.parametrize("source, expected", [
    (EVALUATION_LEAVES_GRADIENTS_OFF, [("bad.py", 6, 5, "TL408")]),
    (EVALUATION_LEAVES_GRADIENTS_OFF.replace("    model.train()\n", "    torch.set_grad_enabled(True)\n"), []),
    (EVALUATION_LEAVES_GRADIENTS_OFF.replace(
        "    torch.set_grad_enabled(False)\n    model.eval()\n    out = model(data)\n",
        "    model.eval()\n    with torch.set_grad_enabled(False):\n        out = model(data)\n"), []),
], ids=["left-off", "turned-on-by-the-training", "scoped-by-with"])
def test_an_evaluation_that_leaves_gradients_off(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


LOSS_FROM_NUMPY_VALUES = '''
import numpy as np
import torch
import torch.nn as nn


def custom_loss(pred, target):
    pred_np = pred.detach().numpy()
    target_np = target.numpy()
    return torch.from_numpy(np.abs(pred_np - target_np)).mean()


net = nn.Linear(3, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = custom_loss(net(x), y)
optimizer.zero_grad()
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (LOSS_FROM_NUMPY_VALUES, [("bad.py", 9, 12, "TL408")]),
    (LOSS_FROM_NUMPY_VALUES.replace("torch.from_numpy(np.abs(pred_np - target_np)).mean()",
                                    "(pred - target).abs().mean()"), []),
], ids=["numpy-round-trip", "torch-ops"])
def test_a_loss_computed_from_numpy_values_of_the_output(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


TOTAL_OF_PLAIN_VALUES = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(3, 4), torch.randint(0, 2, (3,))) for _ in range(4)]
optimizer.zero_grad()
total = torch.tensor(0.0)
for x, y in batches:
    total += criterion(model(x), y).item()
total.backward()
optimizer.step()
'''


@pytest.mark.parametrize("source, expected", [
    (TOTAL_OF_PLAIN_VALUES, [("bad.py", 11, 14, "TL408")]),
    (TOTAL_OF_PLAIN_VALUES.replace("total = torch.tensor(0.0)", "total = 0").replace(".item()", ""), []),
], ids=["adds-item", "adds-the-loss"])
def test_a_total_of_plain_values_back_propagated(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


CLAMPED_PROBABILITIES = '''
import torch
import torch.nn as nn


def nll(logits, target):
    probs = logits.softmax(dim=-1)
    probs[probs < 1e-8] = 1e-8
    return -probs.gather(1, target.unsqueeze(1)).log().mean()


model = nn.Linear(5, 3)
loss = nll(model(torch.randn(4, 5)), torch.tensor([0, 1, 2, 0]))
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (CLAMPED_PROBABILITIES, [("bad.py", 7, 5, "TL409")]),
    (CLAMPED_PROBABILITIES.replace("    probs[probs < 1e-8] = 1e-8\n", "    probs = probs.clamp(min=1e-8)\n"), []),
    (CLAMPED_PROBABILITIES.replace("loss.backward()", "print(loss.item())"), []),
], ids=["written-in-place", "clamped", "not-back-propagated"])
def test_a_helper_writes_into_what_it_saved_and_its_caller_back_propagates(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


DECODER_WRITES_ITS_OUTPUT_BUFFER = '''
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.cell = nn.GRUCell(hidden, hidden)
        self.hidden = hidden

    def forward(self, x):
        batch, steps, _ = x.shape
        outputs = torch.zeros(batch, steps, self.hidden)
        h = torch.zeros(batch, self.hidden)
        for t in range(steps):
            outputs[:, t] = self.cell(x[:, t], h)
            h = outputs[:, t]
        return outputs


Decoder(4)(torch.randn(2, 3, 4)).sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    (DECODER_WRITES_ITS_OUTPUT_BUFFER, [("bad.py", 16, 13, "TL409")]),
    (DECODER_WRITES_ITS_OUTPUT_BUFFER.replace("h = outputs[:, t]\n", "h = outputs[:, t].clone()\n"), []),
], ids=["hidden-state-is-a-view", "hidden-state-is-a-copy"])
def test_a_buffer_written_while_a_view_of_it_is_saved(project, source: str, expected) -> None:
    # A view shares its base's version counter: writing the next step's slice changes
    # what the cell saved of the previous one.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


VALIDATION_FREEZES_THE_MODEL = '''
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def validate(model, loader):
    for p in model.parameters():
        p.requires_grad = False
    total = 0.0
    for x, y in loader:
        total += nn.functional.mse_loss(model(x), y).item()
    return total


model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=8)
for epoch in range(2):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    validate(model, loader)
'''


@pytest.mark.parametrize("source, expected", [
    (VALIDATION_FREEZES_THE_MODEL, [("bad.py", 24, 5, "TL408")]),
    (VALIDATION_FREEZES_THE_MODEL.replace("    for p in model.parameters():\n        p.requires_grad = False\n",
                                          "").replace("    for x, y in loader:\n        total",
                                                      "    for x, y in loader:\n      with torch.no_grad():\n"
                                                      "        total"), []),
    (VALIDATION_FREEZES_THE_MODEL.replace("    return total\n", "    for p in model.parameters():\n"
                                                               "        p.requires_grad = True\n    return total\n"),
     []),
], ids=["frozen-for-the-next-epoch", "no-grad-instead", "unfrozen-after"])
def test_a_validation_that_leaves_the_model_frozen(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL408") == expected
    ran = _runs(project, "bad.py")
    assert ran.returncode == (1 if expected else 0), ran.stderr
    assert ("does not require grad" in ran.stderr) == bool(expected), ran.stderr


TWO_HEADS_ON_THE_INPUT = '''
import torch
import torch.nn as nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor = nn.Linear(4, 2)
        self.critic = nn.Linear(4, 1)

    def forward(self, state):
        return torch.softmax(self.actor(state), -1), self.critic(state)


model = ActorCritic()
actor_opt = torch.optim.Adam(model.actor.parameters())
critic_opt = torch.optim.Adam(model.critic.parameters())
state, returns = torch.randn(6, 4), torch.randn(6, 1)
probs, value = model(state)
advantage = returns - value
critic_loss = advantage.pow(2).mean()
critic_opt.zero_grad()
critic_loss.backward(retain_graph=True)
critic_opt.step()
actor_loss = -(torch.log(probs[:, :1]) * advantage).mean()
actor_opt.zero_grad()
actor_loss.backward()
actor_opt.step()
'''


@pytest.mark.parametrize("source, expected", [
    (TWO_HEADS_ON_THE_INPUT, []),
    (TWO_HEADS_ON_THE_INPUT.replace("        self.actor = nn.Linear(4, 2)\n",
                                    "        self.body = nn.Linear(4, 4)\n        self.actor = nn.Linear(4, 2)\n")
     .replace("        return torch.softmax(self.actor(state), -1), self.critic(state)",
              "        h = torch.relu(self.body(state))\n        return torch.softmax(self.actor(h), -1), self.critic(h)"),
     [("bad.py", 26, 1, "TL409")]),
], ids=["heads-on-the-input-save-no-weights", "heads-on-a-shared-body"])
def test_a_step_between_backwards_through_heads_of_the_input(project, source: str, expected) -> None:
    # A layer given the forward's own input (which requires no grad) saves its input, not
    # its weights: stepping it before the second backward changes nothing saved.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


STEP_IN_A_TRAIN_STEP_FUNCTION = '''
import torch
import torch.nn as nn


def train_step(model, optimizer, x, y1, y2):
    out1, out2 = model(x).chunk(2, dim=1)
    loss1 = nn.functional.mse_loss(out1, y1)
    loss2 = nn.functional.mse_loss(out2, y2)
    optimizer.zero_grad()
    loss1.backward(retain_graph=True)
    optimizer.step()
    optimizer.zero_grad()
    loss2.backward()
    optimizer.step()


model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_step(model, optimizer, torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 1))
'''


@pytest.mark.parametrize("source, expected", [
    (STEP_IN_A_TRAIN_STEP_FUNCTION, [("bad.py", 11, 5, "TL409")]),
    (STEP_IN_A_TRAIN_STEP_FUNCTION.replace(
        "    loss1.backward(retain_graph=True)\n    optimizer.step()\n    optimizer.zero_grad()\n    loss2.backward()\n",
        "    (loss1 + loss2).backward()\n"), []),
], ids=["step-between-the-backwards", "one-backward"])
def test_a_step_between_backwards_in_a_function_given_the_optimizer(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


REQUIRES_GRAD_TO_SILENCE_THE_ERROR = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
probs = torch.softmax(model(x), dim=1)
preds = torch.Tensor([p[1] for p in probs])
loss = nn.functional.binary_cross_entropy(preds, y.float())
loss.requires_grad = True
optimizer.zero_grad()
loss.backward()
optimizer.step()
if model.weight.grad is None:
    print("BUG: the model gets no gradient")
'''


@pytest.mark.parametrize("source, expected", [
    (REQUIRES_GRAD_TO_SILENCE_THE_ERROR, [("bad.py", 8, 9, "TL410")]),
    (REQUIRES_GRAD_TO_SILENCE_THE_ERROR.replace("torch.Tensor([p[1] for p in probs])", "probs[:, 1]")
     .replace("loss.requires_grad = True\n", ""), []),
], ids=["values-copied-then-requires-grad", "the-probabilities-themselves"])
def test_a_loss_given_requires_grad_to_silence_the_error(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL410,TL408") == expected
    assert ("BUG:" in _runs(project, "bad.py").stdout) == bool(expected)


HAND_WRITTEN_SOFTMAX = '''
import torch


def my_softmax(logits):
    e = logits.exp()
    e /= e.sum(dim=1, keepdim=True)
    return e


w = torch.randn(4, 3, requires_grad=True)
x = torch.randn(10, 4)
y = torch.randint(0, 3, (10,))
probs = my_softmax(x @ w)
loss = -probs[torch.arange(10), y].log().mean()
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (HAND_WRITTEN_SOFTMAX, [("bad.py", 6, 5, "TL409")]),
    (HAND_WRITTEN_SOFTMAX.replace("e /= e.sum", "e = e / e.sum"), []),
], ids=["normalized-in-place", "normalized-out-of-place"])
def test_a_helper_result_back_propagated_through_names(project, source: str, expected) -> None:
    # The caller's backward differentiates `loss`, computed from `probs`, bound to the call.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


MANUAL_SGD_THEN_EXP = '''
import torch

w = torch.randn(3, requires_grad=True)
xs = torch.randn(10, 3)
ys = torch.randn(10)
for epoch in range(2):
    loss = ((xs @ w - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    rates = torch.exp(xs @ w)
    rates -= 1
    rates.sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    (MANUAL_SGD_THEN_EXP, [("bad.py", 12, 5, "TL409")]),
    (MANUAL_SGD_THEN_EXP.replace("rates -= 1", "rates = rates - 1"), []),
], ids=["in-place", "out-of-place"])
def test_a_leaf_updated_under_no_grad_still_requires_grad(project, source: str, expected) -> None:
    # `w -= ..` under no_grad writes the leaf in place: `w` still requires grad afterwards.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


PRE_ACTIVATION_IN_PLACE = '''
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.conv2(self.conv1(x))
        x = self.relu(x)
        return out + x


PreActBlock(3)(torch.randn(2, 3, 8, 8, requires_grad=True) * 1.0).sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    (PRE_ACTIVATION_IN_PLACE, [("bad.py", 14, 13, "TL409")]),
    (PRE_ACTIVATION_IN_PLACE.replace("x = self.relu(x)", "x = torch.relu_(x)"), [("bad.py", 14, 13, "TL409")]),
    (PRE_ACTIVATION_IN_PLACE.replace("x = self.relu(x)", "x = nn.functional.relu(x, inplace=True)"),
     [("bad.py", 14, 13, "TL409")]),
    (PRE_ACTIVATION_IN_PLACE.replace("nn.ReLU(inplace=True)", "nn.ReLU()"), []),
    (PRE_ACTIVATION_IN_PLACE.replace("        out = self.conv2(self.conv1(x))\n        x = self.relu(x)\n",
                                     "        x = self.relu(x)\n        out = self.conv2(self.conv1(x))\n"), []),
], ids=["layer", "function", "functional", "not-in-place", "before-the-convolution"])
def test_an_in_place_activation_on_an_input_a_layer_saved(project, source: str, expected) -> None:
    # A convolution keeps its input for its weight's gradient; `x = relu_(x)` rebinds `x`,
    # but only after writing the tensor the convolution kept.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


FED_BACK_PREDICTION = '''
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.cell = nn.GRUCell(n, n)
        self.out = nn.Linear(n, n)

    def forward(self, h, steps):
        preds = []
        x = torch.zeros_like(h)
        for _ in range(steps):
            h = self.cell(x, h)
            y = torch.softmax(self.out(h), dim=-1)
            preds.append(y)
            x = y
            x[:, 0] = 0
        return torch.stack(preds)


Decoder(4)(torch.randn(2, 4), 3).sum().backward()
'''


@pytest.mark.parametrize("source, expected", [
    (FED_BACK_PREDICTION, [("bad.py", 19, 13, "TL409")]),
    (FED_BACK_PREDICTION.replace("x = y\n", "x = y.clone()\n"), []),
], ids=["same-tensor", "copy"])
def test_a_saved_result_written_under_another_name(project, source: str, expected) -> None:
    # `x = y` names the softmax's output again; `preds` holds it, and the returned stack of
    # `preds` is differentiated.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr


ROW_SCALED_OUTSIDE_NO_GRAD = '''
import torch
import torch.nn as nn

emb = nn.Embedding(10, 4)
with torch.no_grad():
    first = emb.weight[0]
first.mul_(0.5)
loss = emb(torch.tensor([0, 1])).sum()
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (ROW_SCALED_OUTSIDE_NO_GRAD, [("bad.py", 7, 1, "TL303")]),
    (ROW_SCALED_OUTSIDE_NO_GRAD.replace("    first = emb.weight[0]\nfirst.mul_(0.5)\n",
                                        "    first = emb.weight[0]\n    first.mul_(0.5)\n"), []),
    (ROW_SCALED_OUTSIDE_NO_GRAD.replace("emb.weight[0]", "emb.weight[0].clone()"), []),
], ids=["written-with-grad-on", "written-under-no-grad", "a-copy"])
def test_a_view_made_under_no_grad_written_with_grad_on(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL303") == expected
    ran = _runs(project, "bad.py")
    assert ("view was created in no_grad mode" in ran.stderr) == bool(expected), ran.stderr


LOSSES_KEPT_IN_A_HISTORY = '''
from collections import defaultdict

import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = defaultdict(list)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history["loss"].append(loss)
print("graph kept:", history["loss"][0].grad_fn is not None)
'''


@pytest.mark.parametrize("source, expected", [
    (LOSSES_KEPT_IN_A_HISTORY, [("bad.py", 15, 5, "TL401")]),
    (LOSSES_KEPT_IN_A_HISTORY.replace("history = defaultdict(list)", 'history = {"loss": []}'),
     [("bad.py", 15, 5, "TL401")]),
    (LOSSES_KEPT_IN_A_HISTORY.replace('history["loss"].append(loss)', 'history["loss"].append(loss.item())')
     .replace("history[\"loss\"][0].grad_fn is not None", "False"), []),
], ids=["defaultdict", "dict-of-lists", "numbers"])
def test_losses_appended_to_the_lists_of_a_dict(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL401") == expected
    ran = _runs(project, "bad.py")
    assert ("graph kept: True" in ran.stdout) == bool(expected), ran.stdout + ran.stderr


TEACHER_OUTPUT_FROZEN = '''
import torch
import torch.nn as nn

student = nn.Linear(4, 2)
teacher = nn.Linear(4, 2)
x = torch.randn(3, 4)
target = teacher(x)
target.requires_grad = False
loss = ((student(x) - target) ** 2).mean()
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (TEACHER_OUTPUT_FROZEN, [("bad.py", 8, 1, "TL406")]),
    (TEACHER_OUTPUT_FROZEN.replace("target = teacher(x)\n", "target = teacher(x).detach()\n"), []),
    (TEACHER_OUTPUT_FROZEN.replace(
        "target = teacher(x)\n", "for p in teacher.parameters():\n    p.requires_grad = False\ntarget = teacher(x)\n"),
     []),
], ids=["layer-output", "detached", "teacher-frozen"])
def test_the_flag_of_a_layer_output_is_not_a_freeze(project, source: str, expected) -> None:
    # The flag being questioned freezes no layer: the teacher's parameters still require grad.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL406") == expected
    ran = _runs(project, "bad.py")
    assert ("leaf variables" in ran.stderr) == bool(expected), ran.stderr


DETACHED_AND_NORMALIZED = '''
import torch
import torch.nn as nn


def normalize_(t):
    t -= t.mean()
    t /= t.std()


model = nn.Linear(4, 4)
features = model(torch.randn(5, 4))
normalize_(features.detach())
print("changed:", abs(features.mean().item()) < 1e-6)
'''


@pytest.mark.parametrize("source, expected", [
    (DETACHED_AND_NORMALIZED, [("bad.py", 6, 5, "TL301")]),
    (DETACHED_AND_NORMALIZED.replace("normalize_(features.detach())", "normalize_(features.detach().clone())"), []),
    (DETACHED_AND_NORMALIZED.replace("features = model(torch.randn(5, 4))",
                                     "features = torch.randn(5, 4, requires_grad=True)"), []),
], ids=["computed-tensor", "a-copy", "a-leaf-initialized"])
def test_a_detached_tensor_given_to_a_helper_that_writes_it(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL301") == expected
    if expected:
        assert "changed: True" in _runs(project, "bad.py").stdout


TOP_DOWN_SUMS_INTO_LIST_ITEMS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class TopDown(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.laterals = nn.ModuleList([nn.Conv2d(c, 4, 1) for c in channels])

    def forward(self, inputs):
        feats = [F.relu(conv(x)) for conv, x in zip(self.laterals, inputs)]
        for i in range(len(feats) - 1, 0, -1):
            feats[i - 1] += F.interpolate(feats[i], size=feats[i - 1].shape[2:])
        return feats


outs = TopDown([3, 5])([torch.randn(1, 3, 8, 8), torch.randn(1, 5, 4, 4)])
sum(o.sum() for o in outs).backward()
'''


@pytest.mark.parametrize("source, expected", [
    (TOP_DOWN_SUMS_INTO_LIST_ITEMS, [("bad.py", 14, 13, "TL409")]),
    (TOP_DOWN_SUMS_INTO_LIST_ITEMS.replace("F.relu(conv(x))", "conv(x)"), []),
], ids=["relu-outputs", "convolution-outputs"])
def test_items_of_a_list_of_saved_results_summed_in_place(project, source: str, expected) -> None:
    # ReLU keeps its output for backward, a convolution does not.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL409") == expected
    ran = _runs(project, "bad.py")
    assert ("modified by an inplace operation" in ran.stderr) == bool(expected), ran.stderr
    if expected:
        _fixed(project, "TL409", "--unsafe-fixes")
        assert _runs(project, "bad.py").returncode == 0


WEIGHTS_BY_HAND_NEVER_FILLED = '''
import torch

W = torch.empty(3, 2, requires_grad=True)
x = torch.ones(4, 3)
out = x @ W
print("finite:", bool(torch.isfinite(out).all()))
'''


@pytest.mark.parametrize("source, expected", [
    (WEIGHTS_BY_HAND_NEVER_FILLED, [("bad.py", 3, 5, "TL412")]),
    (WEIGHTS_BY_HAND_NEVER_FILLED.replace("x = torch.ones", "torch.nn.init.xavier_uniform_(W)\nx = torch.ones"), []),
    (WEIGHTS_BY_HAND_NEVER_FILLED.replace("torch.empty(", "torch.randn("), []),
], ids=["never-filled", "initialized", "random"])
def test_a_weight_made_by_hand_with_torch_empty(project, source: str, expected) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL412") == expected
    result = project.run("check", "--no-cache", "--select", "TL412", "--runtime", "bad.py")
    assert ("CONFIRMED" in result.stdout) == bool(expected), result.stdout
