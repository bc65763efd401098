"""TL413 dtype-mismatch, nineteenth session: the dtype followed through a method of the file
that returns a tuple (`xb, yb = data.batch(n)`), through a module-level name bound several
times and read in a function that runs after its last binding (a `Dataset` reading the
arrays of the script), and reported where a tensor method converted to the integer dtype the
operation refuses (`labels.long()` into a binary cross entropy, `y.int()` into a cross
entropy). Each bad program raises under torch 2.13; each fixed twin runs and gets nothing.
Real files through the real CLI."""

from __future__ import annotations

import pytest

from torch_programs import run_program as torch_program

pytest.importorskip("torch")


def _check(project, source: str, expected: list, error: str = "") -> None:
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL413") == expected
    ran = torch_program("bad.py", cwd=project.root, timeout=120)
    if expected:
        assert ran.returncode != 0 and error in ran.stderr, ran.stderr
    else:
        assert ran.returncode == 0, ran.stderr


SAMPLER_METHOD = '''
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Pairs:
    def __init__(self, rows):
        rows = np.array(rows, dtype=np.int32)
        self.context, self.centre = rows[:, :2], rows[:, 2]

    def batch(self, n):
        picked = np.random.randint(0, len(self.centre), n)
        return self.context[picked], self.centre[picked]


class Bag(nn.Module):
    def __init__(self, words, dim):
        super().__init__()
        self.table = nn.Embedding(words, dim)
        self.out = nn.Linear(dim, words)

    def forward(self, ids):
        return self.out(self.table(ids).mean(1))


data = Pairs([[k % 7, (k + 1) % 7, (k + 2) % 7] for k in range(20)])
bag = Bag(7, 4)
for step in range(2):
    ids, centre = data.batch(5)
    logits = bag(torch.from_numpy(ids))
    loss = F.cross_entropy(logits, torch.from_numpy(centre))
    loss.backward()
'''


def test_a_tuple_from_a_method_of_the_file(project):
    # the int32 centre words of `data.batch(5)` reach the cross entropy as class indices
    # (session 22: reported at `np.array(rows, dtype=np.int32)`, the choice the twin changes)
    _check(project, SAMPLER_METHOD, [("bad.py", 9, 16, "TL413")], "expected target dtype to be Long")
    _check(project, SAMPLER_METHOD.replace("dtype=np.int32", "dtype=np.int64"), [])


GLOBAL_ARRAYS = '''
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

features = []
targets = []
for k in range(12):
    features.append(np.full(4, k / 12, dtype=np.float32))
    targets.append(k % 3)
features = np.stack(features)
targets = np.array(targets, dtype=np.int32)


class Rows(Dataset):
    def __len__(self):
        return len(targets)

    def __getitem__(self, i):
        return features[i], targets[i]


net = nn.Linear(4, 3)
loss_fn = nn.CrossEntropyLoss()
for xb, yb in DataLoader(Rows(), batch_size=4):
    loss = loss_fn(net(xb), yb)
    loss.backward()
'''


def test_a_module_name_bound_twice_read_by_a_dataset(project):
    # `targets = []` then `targets = np.array(.., dtype=np.int32)`: `Rows()` is made after both,
    # so `__getitem__` reads the int32 array, which the loader stacks into an int32 tensor
    # (session 22: reported at the `np.array(.., dtype=np.int32)` that names the dtype)
    _check(project, GLOBAL_ARRAYS, [("bad.py", 12, 11, "TL413")], "expected target dtype to be Long")
    _check(project, GLOBAL_ARRAYS.replace("dtype=np.int32", "dtype=np.int64"), [])


CALLED_BEFORE_THE_LAST_BINDING = '''
import numpy as np
import torch
import torch.nn.functional as F

labels = np.array([0, 2, 1, 1])


def loss_of(logits):
    return F.cross_entropy(logits, torch.from_numpy(labels))


print(loss_of(torch.randn(4, 3)))
labels = labels.astype(np.int32)
'''


def test_a_function_that_may_run_before_the_last_binding_is_not_judged(project):
    # `loss_of` runs while `labels` is still int64: which binding it reads is not shown
    _check(project, CALLED_BEFORE_THE_LAST_BINDING, [])


LONG_INTO_BCE = '''
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
marks = torch.from_numpy(rng.random((6, 3)) < 0.5).long()
head = nn.Linear(5, 3)
criterion = nn.BCEWithLogitsLoss()
loss = criterion(head(torch.randn(6, 5)), marks)
loss.backward()
'''


def test_an_integer_conversion_is_reported_where_it_is_made(project):
    # the multi-label marks are made int64 by `.long()`: that is the line to change (`.float()`)
    _check(project, LONG_INTO_BCE, [("bad.py", 6, 9, "TL413")], "can't be cast to the desired output type Long")
    _check(project, LONG_INTO_BCE.replace(".long()", ".float()"), [])
    project.write("bad.py", LONG_INTO_BCE)
    fixed = project.run("check", "--no-cache", "--select", "TL413", "--fix", "--unsafe-fixes")
    assert fixed.returncode in (0, 1), fixed.stderr
    assert ".float()" in (project.root / "bad.py").read_text()


INT_INTO_CROSS_ENTROPY = '''
import torch
import torch.nn.functional as F

classes = torch.tensor([2, 0, 1, 1])
compact = classes.int()
logits = torch.randn(4, 3, requires_grad=True)
F.cross_entropy(logits, compact).backward()
'''


def test_int32_class_indices_made_by_int(project):
    _check(project, INT_INTO_CROSS_ENTROPY, [("bad.py", 5, 11, "TL413")], "expected target dtype to be Long")
    _check(project, INT_INTO_CROSS_ENTROPY.replace("classes.int()", "classes.long()"), [])


TRANSFORM_INSTANCE = '''
import numpy as np
import torch
from torch import nn


class AsTensor:
    def __call__(self, frame):
        t = torch.from_numpy(frame.transpose(2, 0, 1).copy())
        if t.dtype == torch.uint8:
            return t.float() / 255
        return t


to_tensor = AsTensor()
frames = [np.random.rand(6, 6, 3) for _ in range(4)]
batch = torch.stack([to_tensor(frame) for frame in frames])
conv = nn.Conv2d(3, 2, 3)
print(conv(batch).shape)
'''


def test_an_instance_call_and_a_branch_on_a_dtype_shown_otherwise(project):
    # `to_tensor(frame)` gives what `AsTensor.__call__` returns; `frame` is float64, so the
    # uint8 branch never runs and the float64 tensor reaches the convolution
    _check(project, TRANSFORM_INSTANCE, [("bad.py", 8, 13, "TL413")], "should be the same")
    _check(project, TRANSFORM_INSTANCE.replace("np.random.rand(6, 6, 3)",
                                               "np.random.rand(6, 6, 3).astype(np.float32)"), [])
    # uint8 frames: the branch runs, and the analysis does not claim which return comes
    _check(project, TRANSFORM_INSTANCE.replace("np.random.rand(6, 6, 3)",
                                               "(np.random.rand(6, 6, 3) * 255).astype(np.uint8)"), [])
