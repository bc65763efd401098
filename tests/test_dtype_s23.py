"""TL413 dtype-mismatch, twenty-third session: three facts of the dtype analysis.

- A Python number type given as a torch dtype is read by torch as a dtype of its own:
  `torch.randn(n, dtype=float)` is float64 (not the default float32), `dtype=int` int64.
- An in-place operation writes its result into the tensor it is called on, whose dtype does
  not change: a floating operand (a Python float, a float tensor, a true division) into an
  integer tensor (`gj.clamp_(0, gain[3] - 1)` of a float32 `gain`, `idx += 0.5`) raises
  "result type Float can't be cast to the desired output type Long" (an integer divided in
  place by an integer is TL220's). Unpacking a tensor (`gi, gj = gij.T`) gives rows of its dtype.
- A true division is floating whatever its operands, and arithmetic with a floating value is
  floating: so an in-place update of every `state_dict()` entry by `acc[name] * (eta / n)`
  meets BatchNorm's int64 `num_batches_tracked`; a test in the loop that compares the key with
  a string naming another entry cannot skip that one.

Each bad program raises under torch; its fixed twin runs clean and has no finding. Real
files, the real CLI, real torch."""

from __future__ import annotations

import pytest

from test_dtype_s19 import _check
from torch_programs import run_program as torch_program

pytest.importorskip("torch")


PYTHON_TYPE_DTYPE = '''
import torch
from torch import nn

norm = nn.LayerNorm(5)
batch = torch.randn((2, 5), dtype=float)
print(norm(batch).shape)
'''


def test_a_python_float_type_as_dtype_is_float64(project):
    _check(project, PYTHON_TYPE_DTYPE, [("bad.py", 5, 9, "TL413")], "mixed dtype")
    _check(project, PYTHON_TYPE_DTYPE.replace("dtype=float", "dtype=torch.float"), [])


def test_to_a_python_type_converts_to_its_dtype(project):
    source = '''
import torch
from torch import nn

layer = nn.Linear(3, 2)
x = torch.rand(4, 3).to(float)
print(layer(x).shape)
'''
    _check(project, source, [("bad.py", 5, 5, "TL413")], "must have the same dtype")
    _check(project, source.replace(".to(float)", ".to(torch.float32)"), [])


GRID_CELLS = '''
import torch


def grid_cells(xy, shape):
    gain = torch.ones(4)
    gain[2:4] = torch.tensor(shape)[[1, 0]]
    cells = (xy * gain[2:4]).long()
    gi, gj = cells.T
    return gi.clamp_(0, gain[2] - 1), gj.clamp_(0, gain[3] - 1)


print(grid_cells(torch.rand(5, 2), (8, 6)))
'''


def test_a_float_bound_clamped_into_integer_cells(project):
    # the unpacked rows of an int64 tensor are int64; the bound is a float32 tensor
    _check(project, GRID_CELLS, [("bad.py", 9, 25, "TL413"), ("bad.py", 9, 52, "TL413")],
           "can't be cast to the desired output type")
    _check(project, GRID_CELLS.replace("gain[2] - 1", "gain[2].long() - 1").replace(
        "gain[3] - 1", "gain[3].long() - 1"), [])


AUGMENTED = '''
import torch

positions = torch.arange(6)
positions += 0.5
print(positions)
'''


def test_augmented_float_into_an_integer_tensor(project):
    _check(project, AUGMENTED, [("bad.py", 4, 14, "TL413")], "can't be cast to the desired output type Long")
    # out of place: a new float tensor; and an integer step stays an integer
    _check(project, AUGMENTED.replace("positions += 0.5", "positions = positions + 0.5"), [])
    _check(project, AUGMENTED.replace("positions += 0.5", "positions += 2"), [])


def test_true_division_in_place_of_an_integer_tensor(project):
    source = '''
import torch

counts = torch.tensor([1, 2, 3])
counts.div_(counts.sum())
print(counts)
'''
    # an integer divided in place by an integer: the division is the mistake, TL220's, not a dtype
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL220,TL413") == [("bad.py", 4, 1, "TL220")]
    ran = torch_program("bad.py", cwd=project.root, timeout=120)
    assert ran.returncode != 0 and "can't be cast to the desired output type Long" in ran.stderr, ran.stderr
    _check(project, source.replace("counts.div_(counts.sum())", "counts = counts / counts.sum()"), [])
    # a rounding division stays an integer
    _check(project, source.replace("counts.div_(counts.sum())", "counts.div_(2, rounding_mode='floor')"), [])


FEDAVG = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


def average(global_model, accumulated, params):
    for name, data in global_model.state_dict().items():
        if params.get("tied") and name == "decoder.weight":
            continue
        update = accumulated[name] * (params["eta"] / params["clients"])
        data.add_(update)


model = Net()
model(torch.randn(2, 3, 8, 8))
accumulated = {name: torch.zeros_like(value) for name, value in model.state_dict().items()}
average(model, accumulated, {"eta": 1.0, "clients": 2})
print("averaged")
'''


def test_a_floating_update_of_every_state_dict_entry(project):
    # `eta / clients` is a true division: floating; the entries include num_batches_tracked (int64)
    _check(project, FEDAVG, [("bad.py", 20, 9, "TL413")], "can't be cast to the desired output type Long")
    # a test that reads the entry may skip it: no finding
    _check(project, FEDAVG.replace("        data.add_(update)", "        if update.dtype != data.dtype:\n"
                                   "            update = update.type_as(data)\n        data.add_(update)"), [])


LOCAL_POSITION = '''
import numpy as np
import torch
from torch import nn

points = (np.random.rand(20, 3) * 16).astype(np.float32)
coords = np.floor(points).astype(np.int64)
local = points - coords - 0.5
features = torch.from_numpy(np.hstack((points, local)))
print(nn.Linear(6, 2)(features).shape)
'''


def test_numpy_promotes_a_float32_array_with_an_int64_one_to_float64(project):
    # numpy's promotion: float32 with int64 is float64, and joining float32 with float64 arrays is float64
    _check(project, LOCAL_POSITION, [("bad.py", 8, 12, "TL413")], "must have the same dtype")
    _check(project, LOCAL_POSITION.replace("points - coords - 0.5", "(points - coords - 0.5).astype(np.float32)"), [])
    # an int16 grid stays float32
    _check(project, LOCAL_POSITION.replace("np.int64", "np.int16"), [])
