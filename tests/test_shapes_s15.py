"""Issue 41, session 15: shapes of everyday training code that the rules had not met.

- Fine-tuning replaces the head of a model (``model.fc = nn.Linear(512, 10)``, as the transfer
  learning tutorial does): the new head is a module in training mode, like the model it is put
  in, so the model stays in training mode; it was forgotten, and an evaluation without
  ``model.eval()`` after fine-tuning went unreported (TL414).
- A feature pyramid's blocks are kept in an ``nn.ModuleList`` and called in a comprehension
  over it (``lateral_conv(x) for i, lateral_conv in enumerate(self.lateral_convs)``) or by index
  (``self.fpn_convs[i](x)``): what each block does to autograd (its forward ends in a ReLU,
  which saves its output) was known for ``self.block`` but not for the items of a container,
  so ``laterals[i - 1] += ..`` went unreported (TL409).
- Class labels made floating where they become a tensor (``torch.Tensor(labels)``, the most
  common way to "expected target dtype to be Long"): only ``labels.float()`` was known (TL413).
- ``use_gpu = False`` then ``if use_gpu: model.cuda()``: the move never runs, and the CPU
  inputs a new dev case's fixed twin gives the model are no device mismatch (TL416 was wrong).

Each bad program runs under torch and shows the bug; its fixed twin runs and has no finding.
Real files through the real CLI."""

from __future__ import annotations

import subprocess

from torch_programs import run_program as torch_program


def _run(project, name: str) -> subprocess.CompletedProcess:
    """The program ``name`` of the project, run under torch."""
    return torch_program(name, cwd=project.root, timeout=180)


FINE_TUNED = '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32), nn.ReLU())
        self.fc = nn.Linear(32, 1000)

    def forward(self, x):
        return self.fc(self.features(x))


model = Backbone()
model.fc = nn.Linear(32, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(16, 12), torch.randint(0, 3, (16,))) for _ in range(4)]
for epoch in range(3):
    for inputs, labels in data:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()

test_inputs = data[0][0]
outputs = model(test_inputs)
_, predicted = torch.max(outputs.data, 1)
print(predicted.tolist())
if not torch.allclose(outputs.data[:2], model(test_inputs[:2]).data):
    print("BUG: the predictions depend on the batch: BatchNorm in training mode")
'''


def test_a_model_whose_head_was_replaced_stays_in_training_mode(project) -> None:
    project.write("bad.py", FINE_TUNED)
    assert project.findings("--no-cache", "--select", "TL414", "bad.py") == [
        ("bad.py", 28, 11, "TL414"), ("bad.py", 31, 41, "TL414")]
    fixed = FINE_TUNED.replace("test_inputs = data", "model.eval()\ntest_inputs = data")
    project.write("fixed.py", fixed)
    assert project.findings("--no-cache", "--select", "TL414", "fixed.py") == []
    bad = _run(project, "bad.py")
    assert "BUG" in bad.stdout, bad.stderr
    good = _run(project, "fixed.py")
    assert good.returncode == 0 and "BUG" not in good.stdout, good.stderr


def test_a_head_put_into_a_model_in_eval_mode_is_not_reported(project) -> None:
    evaluated = FINE_TUNED.replace("model.fc = nn.Linear(32, 3)\n", "model.eval()\nmodel.fc = nn.Linear(32, 3)\n") \
        .replace("for epoch in range(3):", "for epoch in range(0):")
    project.write("eval_first.py", evaluated)
    assert project.findings("--no-cache", "--select", "TL414", "eval_first.py") == []


NECK = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return F.relu(self.conv(x))


class Neck(nn.Module):
    def __init__(self, levels=3):
        super().__init__()
        self.lateral_convs = nn.ModuleList([ConvBlock(4) for _ in range(levels)])
        self.fpn_convs = nn.ModuleList()
        for _ in range(levels):
            self.fpn_convs.append(ConvBlock(4))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] += laterals[i]
        outs = [self.fpn_convs[i](laterals[i]) for i in range(len(laterals))]
        for i in range(len(outs) - 1):
            outs[i + 1] += outs[i]
        return outs


neck = Neck()
optimizer = torch.optim.SGD(neck.parameters(), lr=0.1)
features = [torch.randn(2, 4, 8, 8) for _ in range(3)]
loss = sum(out.pow(2).mean() for out in neck(features))
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(loss.item())
'''


def test_items_of_a_module_list_of_blocks_ending_in_relu_are_saved(project) -> None:
    """The blocks of an ``nn.ModuleList`` (built from a comprehension, or appended one by one)
    are reached through the loop over it and through an index: their forward ends in a ReLU,
    which saves its output, and ``+=`` on the list items overwrites it (TL409)."""
    project.write("bad.py", NECK)
    assert project.findings("--no-cache", "--select", "TL409", "bad.py") == [
        ("bad.py", 26, 13, "TL409"), ("bad.py", 29, 13, "TL409")]
    fixed = NECK.replace("laterals[i - 1] += laterals[i]", "laterals[i - 1] = laterals[i - 1] + laterals[i]") \
        .replace("outs[i + 1] += outs[i]", "outs[i + 1] = outs[i + 1] + outs[i]")
    project.write("fixed.py", fixed)
    assert project.findings("--no-cache", "--select", "TL409", "fixed.py") == []
    bad = _run(project, "bad.py")
    assert "modified by an inplace operation" in bad.stderr
    good = _run(project, "fixed.py")
    assert good.returncode == 0, good.stderr


def test_a_module_list_of_layers_that_keep_their_input_is_not_reported(project) -> None:
    """Blocks ending in a convolution keep their input, not their output: ``+=`` on the items
    writes nothing saved, runs, and is not reported."""
    plain = NECK.replace("return F.relu(self.conv(x))", "return self.conv(F.relu(x))")
    project.write("plain.py", plain)
    assert project.findings("--no-cache", "--select", "TL409", "plain.py") == []
    ran = _run(project, "plain.py")
    assert ran.returncode == 0, ran.stderr


LABELS_AS_FLOATS = '''\
import numpy as np
import torch
import torch.nn as nn

np.random.seed(0)
torch.manual_seed(0)

features = np.random.randn(32, 4).astype(np.float32)
classes = np.random.randint(0, 3, 32)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

x_train = torch.from_numpy(features)
y_train = torch.Tensor(classes)
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(x_train), y_train)
    loss.backward()
    optimizer.step()
'''


def test_integer_labels_made_floating_are_no_class_indices(project) -> None:
    """``torch.Tensor(labels)`` (and ``torch.tensor(.., dtype=torch.float32)``, a float numpy
    array of int literals) makes one-dimensional class labels float32: the loss takes them as
    class indices and raises "expected target dtype to be Long" (TL413, where it is made)."""
    project.write("bad.py", LABELS_AS_FLOATS)
    assert project.findings("--no-cache", "--select", "TL413", "bad.py") == [("bad.py", 15, 11, "TL413")]
    bad = _run(project, "bad.py")
    assert "expected target dtype to be Long" in bad.stderr
    # (a numpy call that names the dtype is where it is reported: column 28, session 22)
    for made, column in (("torch.tensor(classes, dtype=torch.float32)", 11),
                         ("torch.from_numpy(classes.astype(np.float32))", 28),
                         ("torch.from_numpy(np.array(classes, dtype=np.float32))", 28)):
        project.write("other.py", LABELS_AS_FLOATS.replace("torch.Tensor(classes)", made))
        assert project.findings("--no-cache", "--select", "TL413", "other.py") == [("other.py", 15, column, "TL413")]
    project.write("fixed.py", LABELS_AS_FLOATS.replace("torch.Tensor(classes)", "torch.from_numpy(classes)"))
    assert project.findings("--no-cache", "--select", "TL413", "fixed.py") == []
    fixed = _run(project, "fixed.py")
    assert fixed.returncode == 0, fixed.stderr


def test_floating_targets_in_the_input_shape_are_class_probabilities(project) -> None:
    """Rows of one-hot or soft labels made floating are probabilities in the input's shape,
    which the loss takes: not reported."""
    soft = LABELS_AS_FLOATS.replace("torch.Tensor(classes)",
                                    "torch.Tensor(np.eye(3, dtype=np.int64)[classes])")
    project.write("soft.py", soft)
    assert project.findings("--no-cache", "--select", "TL413", "soft.py") == []
    ran = _run(project, "soft.py")
    assert ran.returncode == 0, ran.stderr


SWITCHED_OFF_GPU = '''\
import torch
import torch.nn as nn

use_gpu = False

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
if use_gpu:
    model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def test_a_move_under_a_flag_the_script_sets_false_never_runs(project) -> None:
    """``use_gpu = False`` then ``if use_gpu: model.cuda()``: the model stays on the CPU with
    its inputs (the program runs); a flag that may be true keeps the finding (TL416)."""
    project.write("off.py", SWITCHED_OFF_GPU)
    assert project.findings("--no-cache", "--select", "TL416", "off.py") == []
    ran = _run(project, "off.py")
    assert ran.returncode == 0, ran.stderr
    maybe = SWITCHED_OFF_GPU.replace("use_gpu = False", "use_gpu = torch.cuda.is_available()")
    project.write("maybe.py", maybe)
    assert [found[3] for found in project.findings("--no-cache", "--select", "TL416", "maybe.py")] == ["TL416"] * 2
    rebound = SWITCHED_OFF_GPU.replace("if use_gpu:", "use_gpu = True\nif use_gpu:")
    project.write("rebound.py", rebound)
    assert [found[3] for found in project.findings("--no-cache", "--select", "TL416", "rebound.py")] == ["TL416"] * 2
