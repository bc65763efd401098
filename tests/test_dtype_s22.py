"""TL413 dtype-mismatch, twenty-second session: three facts of the dtype analysis.

- A numpy array whose dtype a call of the file names (`image.astype(float)`,
  `np.array(rows, dtype=np.int32)`) keeps it through `torch.from_numpy`: the finding goes to
  that choice, the line to change, not to the conversion (which may sit in a helper that is
  right for other arrays).
- `torch.tensor` of a list written out infers its dtype from the items: numpy float64 values
  (scalars of a float64 array) make float64, Python floats (`math.cos(angle)`) the default
  float32; and `np.array` of nested lists of Python numbers is one float64 array when one
  number is a float.

Each bad program raises under torch; its fixed twin runs clean and has no finding. Real
files, the real CLI, real torch."""

from __future__ import annotations

import pytest

from test_dtype_s19 import _check

pytest.importorskip("torch")


CHOSEN_IN_NUMPY = '''
import numpy as np
import torch
from torch import nn


def to_tensor(pic):
    img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
    if img.dtype == torch.uint8:
        return img.float().div(255)
    return img


def prepare(image):
    image = image.astype(float)
    return to_tensor(image)


net = nn.Conv2d(3, 4, 3)
crops = np.random.randint(0, 256, (2, 8, 8, 3)).astype(np.uint8)
batch = torch.stack([prepare(crop) for crop in crops])
print(net(batch).shape)
'''


def test_the_finding_goes_to_the_numpy_dtype_choice(project):
    # `image.astype(float)` made the crops float64; `to_tensor` keeps the dtype of any array
    _check(project, CHOSEN_IN_NUMPY, [("bad.py", 14, 13, "TL413")], "should be the same")
    _check(project, CHOSEN_IN_NUMPY.replace("astype(float)", "astype(np.float32)"), [])


INT32_ROWS = '''
import numpy as np
import torch
import torch.nn.functional as F

rows = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]], dtype=np.int32)
head = torch.nn.Linear(2, 3)
loss = F.cross_entropy(head(torch.from_numpy(rows[:, :2]).float()), torch.from_numpy(rows[:, 2]))
loss.backward()
'''


def test_an_integer_dtype_named_by_np_array(project):
    _check(project, INT32_ROWS, [("bad.py", 5, 8, "TL413")], "expected target dtype to be Long")
    _check(project, INT32_ROWS.replace("dtype=np.int32", "dtype=np.int64"), [])


NUMPY_VALUES_LISTED = '''
import math

import numpy as np
import torch


def rotation(degrees):
    angle = math.radians(degrees)
    return torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


intrinsics = np.array([[600.0, 0, 320], [0, 600.0, 240], [0, 0, 1]])


def normalise(pixel):
    x = (pixel[0] - intrinsics[0][2]) / intrinsics[0][0]
    y = (pixel[1] - intrinsics[1][2]) / intrinsics[1][1]
    return torch.tensor([x, y])


turn = rotation(15.0)
for pixel in np.random.uniform(0, 480, size=(2, 2)):
    print(torch.mm(normalise(pixel)[None], turn))
'''


def test_numpy_float64_values_listed_into_a_tensor(project):
    # the point is computed from numpy float64 values, the rotation from Python floats
    _check(project, NUMPY_VALUES_LISTED, [("bad.py", 18, 12, "TL413")], "same dtype")
    _check(project, NUMPY_VALUES_LISTED.replace("torch.tensor([x, y])", "torch.tensor([x, y], dtype=torch.float32)"),
           [])


def test_python_floats_listed_stay_float32(project):
    # both made of Python numbers (the point from `float(..)`): float32 both, no finding
    _check(project, NUMPY_VALUES_LISTED.replace("torch.tensor([x, y])", "torch.tensor([float(x), float(y)])"), [])


AVERAGED_STATE = '''
import torch
from torch import nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.norm = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.norm(self.conv(x)).mean((2, 3))


class Averager:
    def __init__(self, live, shadow, decay=0.99):
        self.pairs = list(zip(live.state_dict().values(), shadow.state_dict().values()))
        self.decay = decay

    def update(self):
        for current, kept in self.pairs:
            kept.mul_(self.decay)
            kept.add_(current, alpha=1 - self.decay)


net = Small()
shadow = Small()
ema = Averager(net, shadow)
net(torch.randn(2, 3, 8, 8)).sum().backward()
ema.update()
'''


def test_a_float_update_of_every_state_dict_entry(project):
    # the state dict holds BatchNorm's int64 `num_batches_tracked`: `mul_` by the float decay
    # cannot write its float result there
    _check(project, AVERAGED_STATE, [("bad.py", 22, 13, "TL413")], "can't be cast to the desired output type Long")
    guarded = AVERAGED_STATE.replace('''            kept.mul_(self.decay)
            kept.add_(current, alpha=1 - self.decay)''', '''            if kept.is_floating_point():
                kept.mul_(self.decay)
                kept.add_(current, alpha=1 - self.decay)''')
    _check(project, guarded, [])
    _check(project, AVERAGED_STATE.replace("nn.BatchNorm2d(4)", "nn.BatchNorm2d(4, track_running_stats=False)"), [])


def test_the_runtime_waits_for_the_entry_that_raises(project):
    # six float entries pass `mul_` before BatchNorm's int64 `num_batches_tracked` raises: a
    # site judged after its first three runs would have missed it
    project.write("bad.py", AVERAGED_STATE)
    result = project.run("check", "--no-cache", "--select", "TL413", "--runtime", "--output-format", "json", "bad.py")
    [finding] = result.json()
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "can't be cast to the desired output type Long" in finding["runtime"]["evidence"]
