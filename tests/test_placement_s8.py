"""Device and dtype mismatches in the shapes people write them (issue 41, eighth session):
each bad program shows the error under torch 2.13 CPU (the meta device standing in for the
GPU), torchlint reports it on the line to change, and the fixed program gets nothing. Real
files through the real CLI."""

from __future__ import annotations

import subprocess

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")


def _runs(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=120)


def _check(project, source: str, code: str, expected: list, error: str) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", code) == expected
    ran = _runs(project, "bad.py")
    assert (error in ran.stderr) == bool(expected), ran.stderr


CPU = "is not on the expected device meta"
DTYPE = "RuntimeError"

NORMALIZE_IN_A_MOVED_SEQUENTIAL = '''
import torch
import torch.nn as nn


class Normalize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(1, -1, 1, 1)
        self.std = torch.tensor(std).view(1, -1, 1, 1)

    def forward(self, x):
        return (x - self.mean) / self.std


def build_model(device):
    net = nn.Sequential(Normalize([0.5, 0.5, 0.5], [0.2, 0.2, 0.2]), nn.Conv2d(3, 4, 3))
    return net.to(device)


device = torch.device("meta")
model = build_model(device)
print(model(torch.rand(2, 3, 8, 8, device=device)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (NORMALIZE_IN_A_MOVED_SEQUENTIAL, [("bad.py", 8, 9, "TL416"), ("bad.py", 9, 9, "TL416")]),
    (NORMALIZE_IN_A_MOVED_SEQUENTIAL.replace("self.mean = torch.tensor(mean)",
                                             "self.register_buffer('mean', torch.tensor(mean)")
     .replace("self.std = torch.tensor(std)", "self.register_buffer('std', torch.tensor(std)")
     .replace(".view(1, -1, 1, 1)\n", ".view(1, -1, 1, 1))\n"), []),
], ids=["plain-attributes", "buffers"])
def test_a_module_moved_as_a_layer_of_a_container(project, source: str, expected) -> None:
    # `net.to(device)` moves the layers `nn.Sequential(..)` is built from, and leaves their
    # plain tensor attributes behind.
    _check(project, source, "TL416", expected, CPU)


PRIOR_BUILT_WITH_THE_MODULE = '''
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(10, 4)
        self.dec = nn.Linear(2, 10)
        self.prior = torch.distributions.Normal(torch.zeros(2), torch.ones(2))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, -1)
        z = mu + torch.exp(0.5 * logvar) * self.prior.sample(mu.shape[:1])
        return self.dec(z)


device = torch.device("meta")
vae = VAE().to(device)
print(vae(torch.randn(3, 10, device=device)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (PRIOR_BUILT_WITH_THE_MODULE, [("bad.py", 10, 9, "TL416")]),
    (PRIOR_BUILT_WITH_THE_MODULE.replace("torch.distributions.Normal(torch.zeros(2), torch.ones(2))",
                                         "torch.distributions.Normal(0.0, 1.0)").replace("mu.shape[:1]", "mu.shape"),
     [("bad.py", 10, 9, "TL416")]),
    (PRIOR_BUILT_WITH_THE_MODULE.replace("self.prior.sample(mu.shape[:1])", "torch.randn_like(mu)"), []),
], ids=["tensors", "numbers", "noise-made-in-forward"])
def test_a_distribution_built_with_the_module(project, source: str, expected) -> None:
    # A distribution's tensors are plain attributes of it: moving the module leaves them, and
    # its samples, on the CPU.
    _check(project, source, "TL416", expected, CPU)


COLUMN_OF_ONES = '''
import torch
import torch.nn as nn


class WithBias(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n + 1, 1)

    def forward(self, x):
        ones = torch.ones(x.size(0), 1)
        x = torch.cat([x, ones], dim=1)
        return self.fc(x)


device = "meta"
net = WithBias(3)
net.to(device)
print(net(torch.randn(4, 3).to(device)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (COLUMN_OF_ONES, [("bad.py", 11, 16, "TL416")]),
    (COLUMN_OF_ONES.replace("torch.ones(x.size(0), 1)", "torch.ones(x.size(0), 1, device=x.device)"), []),
    (COLUMN_OF_ONES.replace('device = "meta"', 'device = "cpu"'), []),
], ids=["made-on-the-cpu", "made-on-the-input-device", "all-on-the-cpu"])
def test_a_tensor_made_in_forward_meets_an_input_moved_by_the_caller(project, source: str, expected) -> None:
    # Every call of the module gives `forward` a tensor moved to the device.
    _check(project, source, "TL416", expected, CPU)


ORTHOGONALITY_PENALTY = '''
import torch
import torch.nn as nn


def orthogonality(weight):
    n = weight.size(0)
    return ((weight @ weight.t()) - torch.eye(n)).pow(2).sum()


device = torch.device("meta")
model = nn.Linear(6, 4).to(device)
x = torch.randn(3, 6, device=device)
loss = model(x).pow(2).mean() + 0.1 * orthogonality(model.weight)
print(loss.shape)
'''


@pytest.mark.parametrize("source, expected", [
    (ORTHOGONALITY_PENALTY, [("bad.py", 7, 37, "TL416")]),
    (ORTHOGONALITY_PENALTY.replace("torch.eye(n)", "torch.eye(n, device=weight.device)"), []),
], ids=["identity-on-the-cpu", "identity-on-the-weight-device"])
def test_a_penalty_on_a_moved_layer_weight(project, source: str, expected) -> None:
    # `model.weight` is a parameter of a layer moved to the device.
    _check(project, source, "TL416", expected, CPU)


FLOAT_TOKENS = '''
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, 2)

    def forward(self, tokens):
        return self.fc(self.emb(tokens).mean(1))


batch = torch.tensor([[1, 4, 2], [3, 3, 0]], dtype=torch.float32)
print(Classifier(5, 4)(batch))
'''


@pytest.mark.parametrize("source, expected", [
    (FLOAT_TOKENS, [("bad.py", 15, 9, "TL413")]),
    (FLOAT_TOKENS.replace("dtype=torch.float32", "dtype=torch.long"), []),
], ids=["float-indices", "integer-indices"])
def test_indices_of_the_first_layer_of_a_model_class(project, source: str, expected) -> None:
    # The model's input meets its `nn.Embedding` first.
    _check(project, source, "TL413", expected, "'indices'")


FLOATED_LABELS = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
data = torch.utils.data.TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,)))
loader = torch.utils.data.DataLoader(data, batch_size=4)
for x, y in loader:
    loss = criterion(model(x), y.float())
    loss.backward()
'''


def test_class_indices_made_floating_for_cross_entropy(project) -> None:
    _check(project, FLOATED_LABELS, "TL413", [("bad.py", 9, 32, "TL413")], "expected target dtype")
    result = project.run("check", "--no-cache", "--select", "TL413", "--fix", "bad.py")
    assert result.returncode == 0, result.stdout
    assert "criterion(model(x), y)" in (project.root / "bad.py").read_text()
    assert _runs(project, "bad.py").returncode == 0
    # Per-class probabilities of the input's shape are floating on purpose.
    _check(project, FLOATED_LABELS.replace("y.float()", "nn.functional.one_hot(y, 3).float()"), "TL413", [],
           "expected target dtype")


CONVERTED_MODEL = '''
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


model = Net().half()
inputs = torch.randn(3, 4)
print(model(inputs))
'''


@pytest.mark.parametrize("source, expected", [
    (CONVERTED_MODEL, [("bad.py", 18, 13, "TL413")]),
    (CONVERTED_MODEL.replace("Net().half()", "nn.Sequential(nn.Linear(4, 4), nn.Tanh()).double()"),
     [("bad.py", 18, 13, "TL413")]),
    (CONVERTED_MODEL.replace("model = Net().half()", "model = Net()\nmodel.double()"), [("bad.py", 19, 13, "TL413")]),
    (CONVERTED_MODEL.replace("torch.randn(3, 4)", "torch.randn(3, 4).half()"), []),
    (CONVERTED_MODEL.replace("model = Net().half()", "model = Net()\nif len(sys.argv) > 3:\n    model.double()"), []),
], ids=["half", "double-sequential", "converted-by-a-statement", "input-converted", "converted-on-one-path"])
def test_a_float32_input_to_a_converted_model(project, source: str, expected) -> None:
    _check(project, source, "TL413", expected, "must have the same dtype")


WEIGHTS_MADE_IN_THE_LOSS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightedLoss(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.weights = weights

    def forward(self, logits, target):
        w = torch.tensor(self.weights)
        return F.cross_entropy(logits, target, weight=w)


device = torch.device("meta")
model = nn.Linear(4, 3).to(device)
criterion = WeightedLoss([1.0, 2.0, 3.0])
x = torch.randn(5, 4).to(device)
y = torch.randint(0, 3, (5,)).to(device)
print(criterion(model(x), y).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (WEIGHTS_MADE_IN_THE_LOSS, [("bad.py", 13, 55, "TL416")]),
    (WEIGHTS_MADE_IN_THE_LOSS.replace("torch.tensor(self.weights)", "torch.tensor(self.weights, device=logits.device)"),
     []),
], ids=["weights-on-the-cpu", "weights-on-the-logits-device"])
def test_class_weights_made_in_a_loss_module_given_a_moved_output(project, source: str, expected) -> None:
    # `self.weights` is the list the loss was built with; `logits`, at every call, a moved model's output.
    _check(project, source, "TL416", expected, CPU)


TARGETS_MADE_IN_FORWARD = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class SimCLR(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.encoder = nn.Linear(8, dim)

    def forward(self, a, b):
        za = F.normalize(self.encoder(a), dim=1)
        zb = F.normalize(self.encoder(b), dim=1)
        targets = torch.arange(za.shape[0])
        return F.cross_entropy(za @ zb.t() / 0.5, targets)


device = torch.device("meta")
model = SimCLR(4).to(device)
print(model(torch.randn(5, 8, device=device), torch.randn(5, 8, device=device)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (TARGETS_MADE_IN_FORWARD, [("bad.py", 14, 19, "TL416")]),
    (TARGETS_MADE_IN_FORWARD.replace("torch.arange(za.shape[0])", "torch.arange(za.shape[0], device=za.device)"), []),
], ids=["made-on-the-cpu", "made-on-the-device"])
def test_a_target_made_in_forward_is_reported_once_where_it_is_made(project, source: str, expected) -> None:
    _check(project, source, "TL416", expected, "is not on the expected device")
