"""Issue 41, session 12 (helper v): where TL416 asks whether two tensors are on one device.

A census of every operation that meets a tensor made without ``device=`` with another tensor
(corpus/scripts and the dev cases) found the rule's trigger narrower than how people write:

- ``torch.cat``/``torch.stack`` of a list written out is a meeting like ``a + b``
  (``self.losses = torch.cat([self.losses, loss])``);
- a plain attribute reset by a method (``self.losses = torch.tensor([])`` in ``reset()``) and
  grown from itself elsewhere is on the CPU: every assignment that does not compute it from
  itself makes it there; reported where it is made, as a module's plain tensor attribute is;
- a loss module of torch held anywhere (``self.loss_fn = nn.CrossEntropyLoss(reduction="none")``
  passed to ``__init__``) computes on the device of its input;
- ``.to(x.dtype)`` converts, it does not move: nothing it returns is shown on a device.

Each bad program runs under torch (the meta device stands in for a GPU) and shows the bug; the
finding is on the line to change; its fixed twin runs and has no finding. Real files through
the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests


RESET_STATE = twin(
    "a plain object resets its running per-sample losses to an empty tensor without device= and "
    "concatenates the losses of each batch, computed by a loss module on the model's output",
    "TL416",
    '''\
import torch
from torch import nn


class LossTracker:
    def __init__(self, loss_fn):
        self.loss_fn = loss_fn
        self.losses = torch.tensor([])

    def reset(self):
        self.losses = torch.tensor([])

    def update(self, output, target):
        loss = self.loss_fn(output, target).detach()
        self.losses = torch.cat([self.losses, loss])


device = torch.device("meta")  # "cuda"
model = nn.Linear(8, 3).to(device)
tracker = LossTracker(nn.CrossEntropyLoss(reduction="none"))
tracker.reset()
for _ in range(2):
    x, y = torch.randn(4, 8).to(device), torch.randint(0, 3, (4,)).to(device)
    tracker.update(model(x), y)
print("tracked", tracker.losses.shape)
''',
    ("    def reset(self):\n        self.losses = torch.tensor([])\n",
     "    def reset(self):\n        self.losses = torch.tensor([], device=device)\n"),
    "raises", "is not on the expected device",
    ((11, 23, "TL416"),),
)

CAT_PADDING = twin(
    "a helper pads the model's output with a column of zeros made without device= and "
    "concatenates them",
    "TL416",
    '''\
import torch
from torch import nn


def with_bias_column(features):
    ones = torch.ones(features.shape[0], 1)
    return torch.cat([features, ones], dim=1)


device = torch.device("meta")  # "cuda"
encoder = nn.Linear(8, 4).to(device)
x = torch.randn(5, 8).to(device)
padded = with_bias_column(encoder(x))
print(padded.shape)
''',
    ("    return torch.cat([features, ones], dim=1)\n",
     "    return torch.cat([features, ones.to(features.device)], dim=1)\n"),
    "raises", "is not on the expected device",
    ((7, 33, "TL416"),),
)

HELPER_MASK = twin(
    "a model's helper makes a layer mask with torch.eye and no device, another helper "
    "concatenates it with the attention mask of the batch, which the training loop gets from "
    "a list of batches built by moving each tensor",
    "TL416",
    '''\
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def make_layer_mask(self, attention_mask):
        return (torch.eye(attention_mask.size(1)) < 1).unsqueeze(0).expand_as(attention_mask)

    def combine(self, attention_mask, layer_mask):
        return torch.cat([attention_mask, layer_mask], dim=-1)

    def forward(self, x, attention_mask):
        mask = self.combine(attention_mask, self.make_layer_mask(attention_mask))
        return self.proj(x).masked_fill(mask[..., :8], 0.0)

    def loss(self, batch):
        x, attention_mask = batch
        return self.forward(x, attention_mask).pow(2).mean()


device = torch.device("meta")  # "cuda"
model = Encoder().to(device)


def make_batch():
    return [t.to(device) for t in (torch.randn(2, 4, 8), torch.ones(2, 4, 4, dtype=torch.bool))]


batches = [make_batch() for _ in range(2)]
for batch in batches:
    print(model.loss(batch).shape)
''',
    ("        return (torch.eye(attention_mask.size(1)) < 1).unsqueeze(0).expand_as(attention_mask)\n",
     "        return (torch.eye(attention_mask.size(1), device=attention_mask.device) < 1).unsqueeze(0)"
     ".expand_as(attention_mask)\n"),
    "raises", "is not on the expected device",
    ((11, 17, "TL416"),),
)

CASES = {"reset_state": RESET_STATE, "cat_padding": CAT_PADDING, "helper_mask": HELPER_MASK}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_conversion_to_a_dtype_is_not_a_move(project) -> None:
    """`.to(base.dtype)` keeps the device: two tensors made on the CPU meet on the CPU."""
    project.write("dtype.py", '''\
import torch

base = torch.zeros(4, 2)
other = torch.randn(4, 2, dtype=torch.float64).to(base.dtype)
total = base * other
print(total.sum())
''')
    assert project.findings("--no-cache", "--select", "TL416", "dtype.py") == []


def test_an_attribute_moved_where_it_grows_is_not_on_the_cpu(project) -> None:
    """`self.losses = torch.cat([self.losses, loss]).to(device)` moves what it keeps: nothing
    shows where `self.losses` is at the next batch."""
    project.write("moved.py", '''\
import torch
from torch import nn


class LossTracker:
    def __init__(self, loss_fn, device):
        self.loss_fn = loss_fn
        self.device = device
        self.losses = torch.tensor([])

    def update(self, output, target):
        loss = self.loss_fn(output, target).detach()
        self.losses = torch.cat([self.losses.to(self.device), loss]).to(self.device)


device = torch.device("meta")
model = nn.Linear(8, 3).to(device)
tracker = LossTracker(nn.CrossEntropyLoss(reduction="none"), device)
x, y = torch.randn(4, 8).to(device), torch.randint(0, 3, (4,)).to(device)
tracker.update(model(x), y)
''')
    assert project.findings("--no-cache", "--select", "TL416", "moved.py") == []


def test_a_move_to_the_device_of_a_cpu_tensor_is_not_on_a_device(project) -> None:
    """`device = labels.device` then `.to(device)`: the tensor goes where `labels` is (here the
    CPU), not to an accelerator."""
    project.write("sampler.py", '''\
import torch


def sample(labels, n):
    device = labels.device
    negatives = torch.randint(0, 100, (n,)).to(device)
    return negatives


labels = torch.randint(0, 100, (3, 4))
ids = torch.cat([labels.view(-1), sample(labels, 5)])
print(ids.shape)
''')
    assert project.findings("--no-cache", "--select", "TL416", "sampler.py") == []
