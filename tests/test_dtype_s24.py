"""TL413 dtype-mismatch, twenty-fourth session: the dtype of a value followed where the
analysis lost it before.

- A function or method of the file that carries a parameter to a layer with float32 weights
  raises for the call that gives it float64 (or integers), whatever its other calls give: each
  call site is judged (a helper used with `torch.Tensor(x)` and with `torch.from_numpy(x)`).
- An attribute set in `__init__` from a parameter holds, on an instance, what its construction
  passed (through names, a parameter, a function's return); not where the file writes it
  from outside the class.
- An `nn.Sequential` gives each layer the output of the one before: a layer taking indices
  (`nn.Embedding`) after a layer with floating weights gets floats; not a Sequential the file
  iterates (a list of layers).
- A DataFrame of a dict of int64 and float64 columns (and the columns the file adds from them)
  has int64 or float64 values: never float32.
- A float64 item of a Dataset's `__getitem__` is reported once, where `__getitem__` returns it,
  however many layers its batches reach.

Each bad program raises under torch; its fixed twin runs clean and has no finding. Real
files, the real CLI, real torch."""

from __future__ import annotations

import pytest

from test_dtype_s19 import _check

pytest.importorskip("torch")


HELPER_CALLS = '''
import numpy as np
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))

    def codes(self, x):
        return self.body(torch.cat([x, x], dim=1))

    def embed_all(self, features):
        codes = self.codes(features.to("cpu"))
        return codes.detach()


features = np.random.rand(10, 3)
model = Encoder()
print(model.codes(torch.Tensor(features)).shape)
print(model.embed_all(torch.from_numpy(features)).shape)
'''


def test_each_call_of_a_method_that_carries_its_parameter_to_a_layer_is_judged(project):
    _check(project, HELPER_CALLS, [("bad.py", 22, 23, "TL413")], "must have the same dtype")
    _check(project, HELPER_CALLS.replace("torch.from_numpy(features)", "torch.from_numpy(features).float()"), [])


CONSTRUCTED = '''
import numpy as np
import torch
from torch import nn


class Table:
    def __init__(self, values):
        self.values = values


def standardize(table):
    return Table((table.values - table.values.mean(0)) / table.values.std(0))


raw = Table(np.random.poisson(3.0, size=(12, 4)))
scaled = standardize(raw)
layer = nn.Linear(4, 1)
print(layer(torch.tensor(scaled.values)).shape)
'''


def test_an_attribute_holds_what_its_construction_passed(project):
    _check(project, CONSTRUCTED, [("bad.py", 18, 13, "TL413")], "must have the same dtype")
    _check(project, CONSTRUCTED.replace("torch.tensor(scaled.values)", "torch.tensor(scaled.values).float()"), [])


def test_an_attribute_written_from_outside_its_class_is_not_followed(project):
    source = CONSTRUCTED.replace("scaled = standardize(raw)\n",
                                 "scaled = standardize(raw)\nscaled.values = scaled.values.astype(np.float32)\n")
    _check(project, source, [])


CHAINED_EMBEDDINGS = '''
import torch
from torch import nn

tokens = torch.randint(0, 20, (5, 7))
model = nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, 8), nn.Embedding(8, 4))
print(model(tokens).shape)
'''


def test_a_sequential_gives_an_embedding_the_floats_of_the_layer_before(project):
    _check(project, CHAINED_EMBEDDINGS, [("bad.py", 5, 9, "TL413")], "'indices' to have one of the following")
    _check(project, CHAINED_EMBEDDINGS.replace(", nn.Embedding(8, 4))", ")"), [])


def test_a_sequential_the_file_iterates_is_a_list_of_layers(project):
    source = '''
import torch
from torch import nn

columns = torch.randint(0, 4, (5, 2))
tables = nn.Sequential(nn.Embedding(4, 3), nn.Embedding(4, 3))
print(torch.cat([table(columns[:, i]) for i, table in enumerate(tables)], dim=1).shape)
'''
    _check(project, source, [])


FRAME_COLUMNS = '''
import numpy as np
import pandas as pd
import torch
from torch import nn

rng = np.random.default_rng(1)
frame = pd.DataFrame({"rooms": rng.integers(1, 6, 30), "area": rng.integers(20, 200, 30)})
frame["price"] = 1000.0 * frame["rooms"] + rng.normal(0, 10, 30)
inputs = torch.as_tensor(frame[["rooms", "area"]].to_numpy())
net = nn.Linear(2, 1)
print(net(inputs).shape)
'''


def test_a_frame_of_int64_and_float64_columns_is_never_float32(project):
    _check(project, FRAME_COLUMNS, [("bad.py", 9, 10, "TL413")], "must have the same dtype")
    _check(project, FRAME_COLUMNS.replace(".to_numpy())", ".to_numpy(), dtype=torch.float32)"), [])


SCANS = '''
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Scans(Dataset):
    def __init__(self, n):
        self.scans = np.random.randint(0, 4096, size=(n, 1, 8, 8)) / 4095

    def __len__(self):
        return len(self.scans)

    def __getitem__(self, i):
        return self.scans[i], i % 2


conv = nn.Conv2d(1, 2, 3)
head = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU())
for scan, label in DataLoader(Scans(8), batch_size=4):
    print(conv(scan).shape, head(scan).shape)
'''


def test_a_dataset_item_is_reported_once_where_getitem_returns_it(project):
    _check(project, SCANS, [("bad.py", 15, 16, "TL413")], "Input type (double)")
    _check(project, SCANS.replace("return self.scans[i], i % 2", "return self.scans[i].astype(np.float32), i % 2"),
           [])


DICT_ITEMS = '''
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, n):
        self.x = np.random.rand(n, 4)
        self.y = np.random.randint(0, 3, n)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"features": self.x[i], "label": self.y[i]}


net = nn.Linear(4, 3)
for batch in DataLoader(Pairs(8), batch_size=4):
    out = net(batch["features"])
    print(nn.functional.cross_entropy(out, batch["label"]))
'''


def test_the_entries_of_dict_batches_have_the_dtype_of_the_items_entries(project):
    _check(project, DICT_ITEMS, [("bad.py", 16, 29, "TL413")], "must have the same dtype")
    _check(project, DICT_ITEMS.replace('"features": self.x[i],', '"features": self.x[i].astype(np.float32),'), [])
