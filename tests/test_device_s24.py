"""Session 24 facts of the device analysis (TL416), each on a bad program and its fixed twin
(programs of our own, run under torch with the meta device standing in for a GPU). A device is
a property of a value, followed through names, helpers' returns, containers and batches:

- a dict of CPU tensors kept as a plain attribute of a module stays on the CPU when the module
  is moved (registering the same tensors as buffers moves copies, not the dict's entries);
  it is reported where `forward` reads an entry;
- a helper that makes a tensor without `device=` and returns it gives a CPU tensor to its
  caller, also through arithmetic with Python numbers (parameters annotated `float`,
  `high - low`, `high += 0.001`); met with a tensor made with `device=` (a name bound to
  `torch.device(..)` is a device), the operation mixes devices;
- a `DataLoader` built inside a `train(model, dataset)` function batches the dataset every
  call site gives (a `Dataset` class whose `__getitem__` moves nothing: CPU batches), also
  with `collate_fn=` a parameter no call site gives (the default collation);
- a module instance handed to the constructor of a moved module and kept in an attribute as it
  is (`self.prep = prep`) is a registered submodule, moved with it; its plain tensor attributes
  (also made from a tensor handed to its own constructor, `self.mean = stats[0]`) stay, and a
  base class's `forward` calling `self.apply_to(x)` runs the subclass's method;
- a dict batch unpacked into a moved module (`model(**batch)`) gives it every entry, and an
  entry taken from a dict batch (`batch["x"]`) is a CPU tensor whose dropped `.to(device)`
  leaves it there.
"""

from __future__ import annotations

from twin_cases import twin, twin_tests

DICT_OF_CONSTANTS = """\
import torch
from torch import nn

device = torch.device("meta")


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.stats = {"shift": torch.zeros(4), "scale": torch.ones(4)}
        for key, value in self.stats.items():
            self.register_buffer(key, value)
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head((x - self.stats["shift"]) / self.stats["scale"])


net = Scaler().to(device)
print(net(torch.randn(2, 4, device=device)).shape)
"""

HELPER_RETURN = """\
import torch

GPU = torch.device("meta")


def ramp(lo: float, hi: float, n: int):
    if lo == hi:
        hi += 0.5
    steps = (torch.arange(n, dtype=torch.float32) - lo) / (hi - lo)
    return torch.clamp(steps, 0, 1)


def blend(n):
    base = torch.linspace(0, 1, n, device=GPU)
    weight = ramp(1.0, 3.0, n)
    return base * weight + (1 - weight)


print(blend(6).shape)
"""

DICT_BATCHES = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("meta")


class Pairs(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 3)
        self.y = torch.randn(n, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"inputs": self.x[i], "target": self.y[i]}


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, inputs, target):
        return ((self.fc(inputs) - target) ** 2).mean()


def evaluate(model, dataset, collate=None):
    loader = DataLoader(dataset, batch_size=4, collate_fn=collate)
    with torch.no_grad():
        for batch in loader:
            print(model(**batch).shape)


model = Regressor().to(device)
evaluate(model, Pairs(8))
"""

DROPPED_ENTRY = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

ACCEL = torch.device("meta")


class Frames(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return {"frame": torch.randn(3), "label": i % 2}


def fit(net, data, epochs=1):
    net.to(ACCEL)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(epochs):
        for sample in DataLoader(data, batch_size=4):
            frame = sample["frame"]
            frame.to(ACCEL)
            loss = net(frame).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()


fit(nn.Linear(3, 2), Frames())
"""

HANDED_SUBMODULE = """\
import torch
from torch import nn

device = torch.device("meta")


class Preprocess(nn.Module):
    def forward(self, x):
        return self.apply_to(x)


class Standardize(Preprocess):
    def __init__(self, stats):
        super().__init__()
        self.mean = stats[0]
        self.std = stats[1]

    def apply_to(self, x):
        return (x - self.mean) / self.std


class Net(nn.Module):
    def __init__(self, prep):
        super().__init__()
        self.prep = prep
        self.body = nn.Linear(5, 1)

    def forward(self, x):
        return self.body(self.prep(x))


stats = torch.stack([torch.zeros(5), torch.ones(5)])
net = Net(Standardize(stats)).to(device)
print(net(torch.randn(3, 5, device=device)).shape)
"""

CASES = {
    "dict-of-constants": twin(
        "a dict of CPU tensors kept as a plain attribute, read in forward", "TL416", DICT_OF_CONSTANTS,
        ('return self.head((x - self.stats["shift"]) / self.stats["scale"])',
         "return self.head((x - self.shift) / self.scale)"),
        "raises", "is not on the expected device", ((16, 31, "TL416"),)),
    "helper-return": twin(
        "a helper's CPU tensor met with a tensor made with device=", "TL416", HELPER_RETURN,
        ("torch.arange(n, dtype=torch.float32)", "torch.arange(n, dtype=torch.float32, device=GPU)"),
        "raises", "is not on the expected device", ((16, 29, "TL416"),)),
    "dict-batches": twin(
        "a DataLoader of a dataset parameter, dict batches unpacked into a moved module", "TL416", DICT_BATCHES,
        ("print(model(**batch).shape)",
         "print(model(**{k: v.to(device) for k, v in batch.items()}).shape)"),
        "raises", "is not on the expected device", ((33, 27, "TL416"),)),
    "dropped-entry": twin(
        "a dropped .to() of an entry of a dict batch", "TL416", DROPPED_ENTRY,
        ("            frame.to(ACCEL)\n", "            frame = frame.to(ACCEL)\n"),
        "raises", "is not on the expected device", ((22, 13, "TL416"),)),
    "handed-submodule": twin(
        "a module handed to a moved module's constructor keeps plain tensor attributes", "TL416",
        HANDED_SUBMODULE, ("        self.mean = stats[0]\n        self.std = stats[1]\n",
                           '        self.register_buffer("mean", stats[0])\n        self.register_buffer("std", stats[1])\n'),
        "raises", "is not on the expected device", ((15, 9, "TL416"), (16, 9, "TL416"))),
}

test_reported_on_the_line_and_twin_clean, test_bad_shows_the_bug_under_torch_and_twin_does_not = \
    twin_tests(CASES)
