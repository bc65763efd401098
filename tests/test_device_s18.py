"""Device mismatches in the shapes people write them (issue 41, session 18): a cache that
`forward` fills and keeps in a plain attribute, a module that moves itself before it builds
its layers, rows of a tensor on the device, and modules handed to a moved module and kept
in a plain list. Each bad program shows the error under torch 2.13 CPU (the meta device
standing in for the GPU), torchlint reports it on the line to change, and the fixed
program gets nothing. Real files through the real CLI."""

from __future__ import annotations

import subprocess

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")

DEVICE = "is not on the expected device"


def _runs(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=120)


def _check(project, source: str, expected: list, runs_clean: bool = True) -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL416") == expected
    ran = _runs(project, "bad.py")
    if expected:
        assert DEVICE in ran.stderr, ran.stderr
    elif runs_clean:
        assert ran.returncode == 0, ran.stderr


CACHED_POSITIONS = '''
import torch
import torch.nn as nn


class RelativeBias(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.seq_len = 0
        self.positions = None

    def forward(self, x):
        if x.size(1) != self.seq_len:
            steps = torch.arange(x.size(1), dtype=x.dtype, device=x.device)
            self.positions = (steps / x.size(1)).view(1, -1, 1)
            self.seq_len = x.size(1)
        return self.proj(x) + self.positions


device = torch.device("meta")
model = RelativeBias(4)
with torch.no_grad():
    model(torch.randn(2, 5, 4))  # a quick shape check on the CPU
model.to(device)
print(model(torch.randn(2, 5, 4, device=device)).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (CACHED_POSITIONS, [("bad.py", 10, 9, "TL416")]),
    (CACHED_POSITIONS.replace("self.positions = None", 'self.register_buffer("positions", None, persistent=False)'),
     []),
    # remade when the input moves: the cache follows the device
    (CACHED_POSITIONS.replace("if x.size(1) != self.seq_len:",
                              "if x.size(1) != self.seq_len or self.positions.device != x.device:")
     .replace("self.seq_len = 0", "self.seq_len = -1").replace("self.positions = None",
                                                               "self.positions = torch.zeros(1)"), []),
    # never run before the move: the cache is made on the device
    (CACHED_POSITIONS.replace("with torch.no_grad():\n    model(torch.randn(2, 5, 4))  # a quick shape check on "
                              "the CPU\n", ""), []),
    # remade at every call: nothing is kept
    (CACHED_POSITIONS.replace("        if x.size(1) != self.seq_len:\n", "        if True:\n"), []),
], ids=["cache-in-a-plain-attribute", "cache-registered", "cache-remade-on-a-new-device", "moved-before-it-runs",
        "made-at-every-call"])
def test_a_cache_filled_by_forward_before_the_move(project, source: str, expected) -> None:
    # `forward` fills the cache on the CPU at the shape check; the move leaves it there.
    _check(project, source, expected)


MOVED_BEFORE_ITS_LAYERS = '''
import torch
import torch.nn as nn

device = torch.device("meta")


class Autoencoder(nn.Module):
    def __init__(self, use_gpu=False):
        super().__init__()
        if use_gpu:
            self.to(device)
        self.encoder = nn.Sequential(nn.Linear(16, 4), nn.ReLU())
        self.decoder = nn.Linear(4, 16)

    def reconstruction_loss(self, x):
        return ((self.decoder(self.encoder(x)) - x) ** 2).mean()


net = Autoencoder(use_gpu=True)
batch = torch.randn(8, 16).to(device)
print(net.reconstruction_loss(batch).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (MOVED_BEFORE_ITS_LAYERS, [("bad.py", 11, 13, "TL416")]),
    (MOVED_BEFORE_ITS_LAYERS.replace("        if use_gpu:\n            self.to(device)\n", "")
     .replace("        self.decoder = nn.Linear(4, 16)\n",
              "        self.decoder = nn.Linear(4, 16)\n        if use_gpu:\n            self.to(device)\n"), []),
    # moved again once built: the later move takes the layers
    (MOVED_BEFORE_ITS_LAYERS.replace("net = Autoencoder(use_gpu=True)", "net = Autoencoder(use_gpu=True).to(device)"),
     []),
], ids=["moved-before-the-layers", "moved-after-the-layers", "moved-again-by-the-caller"])
def test_a_module_that_moves_itself_before_building_its_layers(project, source: str, expected) -> None:
    _check(project, source, expected)


ROWS_OF_A_MASK = '''
import torch

device = torch.device("meta")


def time_gaps(mask):
    n_steps, n_features = mask.shape
    gaps = [torch.zeros(n_features)]
    for row in mask[1:]:
        gaps.append(torch.ones(n_features) + (1 - row) * gaps[-1])
    return torch.stack(gaps)


class Series:
    def __init__(self, values):
        mask = (~torch.isnan(values)).to(torch.float32)
        self.values = torch.nan_to_num(values)
        self.gaps = time_gaps(mask)


values = torch.randn(6, 3)
values[0, 1] = float("nan")
series = Series(values.to(device))
print(series.gaps.shape)
'''


@pytest.mark.parametrize("source, expected", [
    (ROWS_OF_A_MASK, [("bad.py", 10, 21, "TL416")]),
    (ROWS_OF_A_MASK.replace("torch.ones(n_features)", "torch.ones(n_features, device=mask.device)")
     .replace("torch.zeros(n_features)", "torch.zeros(n_features, device=mask.device)"), []),
    (ROWS_OF_A_MASK.replace("Series(values.to(device))", "Series(values)"), []),
], ids=["rows-on-the-device", "made-on-the-mask-device", "all-on-the-cpu"])
def test_rows_of_a_tensor_on_the_device(project, source: str, expected) -> None:
    # A loop over a tensor takes rows on its device; `.to(torch.float32)` keeps the device.
    _check(project, source, expected)


METRICS_IN_A_LIST = '''
import torch
import torch.nn as nn

device = torch.device("meta")


class WeightedError(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.register_buffer("weights", torch.as_tensor(weights, dtype=torch.float32))

    def forward(self, preds, targets):
        return ((preds - targets).abs() * self.weights).mean()


class Regressor(nn.Module):
    def __init__(self, metrics):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        self.metrics = [*metrics]

    def forward(self, x):
        return self.body(x)

    def evaluate(self, x, y):
        preds = self(x)
        return [metric(preds, y) for metric in self.metrics]


model = Regressor(metrics=[WeightedError([1.0, 2.0])])
model.to(device)
print(model.evaluate(torch.randn(4, 8, device=device), torch.randn(4, 2, device=device)))
'''


@pytest.mark.parametrize("source, expected", [
    (METRICS_IN_A_LIST, [("bad.py", 20, 9, "TL416")]),
    (METRICS_IN_A_LIST.replace("self.metrics = [*metrics]", "self.metrics = nn.ModuleList(metrics)"), []),
    (METRICS_IN_A_LIST.replace("* self.weights", "* self.weights.to(preds.device)"), []),
], ids=["plain-list", "module-list", "weights-moved-where-used"])
def test_modules_handed_to_a_moved_module_and_kept_in_a_plain_list(project, source: str, expected) -> None:
    _check(project, source, expected)


DEFAULT_MASK = '''
import torch
import torch.nn as nn

device = torch.device("meta")


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        mask = torch.ones(x.shape[0], x.shape[1]) if mask is None else mask
        scores = self.q(x) @ self.k(x).transpose(1, 2)
        scores = scores.masked_fill(mask[:, None, :] == 0, -1e9)
        return scores.softmax(-1)


model = SelfAttention(8).to(device)
x = torch.randn(2, 5, 8, device=device)
print(model(x).shape)
'''


@pytest.mark.parametrize("source, expected", [
    (DEFAULT_MASK, [("bad.py", 14, 16, "TL416")]),
    (DEFAULT_MASK.replace("torch.ones(x.shape[0], x.shape[1])", "torch.ones(x.shape[0], x.shape[1], device=x.device)"),
     []),
    # every call gives a mask: the default is never made
    (DEFAULT_MASK.replace("print(model(x).shape)", "print(model(x, torch.ones(2, 5, device=device)).shape)"), []),
], ids=["default-on-the-cpu", "default-on-the-input-device", "mask-always-given"])
def test_a_default_made_when_the_caller_gives_none(project, source: str, expected) -> None:
    # `torch.ones(..) if mask is None else mask`: the call without a mask gets a CPU mask.
    _check(project, source, expected)
