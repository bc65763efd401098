"""Issue 41, session 11 (helper g): facts measured by a resolution census over the script
corpus and the dev cases, raised where they were unresolved in the most repositories.

- the batches of a `DataLoader` have no graph wherever the loader comes from: built here and
  passed to the training function (`train(model, loader, ..)`), kept by a trainer object
  (`self.train_loader = train_loader`, the object built with one), iterated through
  `enumerate(..)`, and moved (`x.to(device)`): a loss computed only from them and from a
  detached output has no graph (TL408).
- an in-place write in a function of the file whose result reaches, through the calls of
  the file (one or two levels), a backward or what a module's `forward` returns: a helper
  `forward` calls, a method of the module, a function the loss function calls (TL409).
- a part of a `DataLoader`'s batch moved (`w.to(device)`, `x.cuda()`) is a tensor that
  requires no grad, where the loader collates as torch does: `out * w` saves `w` (TL409).
- an `nn.Sequential` with a layer the analysis cannot read (`getattr(nn, name)()`) still
  saves what its last layer saves and takes what its first layer takes (TL409).

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests


LOADER_PARAMETER = twin(
    "a loader passed to the training function: its batches have no graph", "TL408", '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def train(model, train_loader, criterion, optimizer, device):
    model.train()
    for i, (x, y) in enumerate(train_loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = criterion(out.detach(), y)
        loss.backward()
        optimizer.step()


model = nn.Linear(4, 3)
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 3, (8,))), batch_size=4)
train(model, loader, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), "cpu")
''', ("criterion(out.detach(), y)", "criterion(out, y)"), "raises", "does not require grad",
    ((15, 9, "TL408"),))

TRAINER_LOADER = twin(
    "a trainer object keeps the loader it is built with", "TL408", '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, train_loader):
        self.model = model
        self.train_loader = train_loader
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_epoch(self):
        for data, target in self.train_loader:
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.criterion(output.detach(), target)
            loss.backward()
            self.optimizer.step()


dataset = TensorDataset(torch.randn(8, 4), torch.randn(8, 1))
trainer = Trainer(nn.Linear(4, 1), DataLoader(dataset, batch_size=4))
trainer.train_epoch()
''', ("self.criterion(output.detach(), target)", "self.criterion(output, target)"), "raises",
    "does not require grad", ((20, 13, "TL408"),))

HELPER_OF_FORWARD = twin(
    "a helper that forward calls writes what sigmoid saved; forward returns its result", "TL409", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


def gate(h):
    s = torch.sigmoid(h)
    s.mul_(2)
    return h * s


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc(x)
        h = gate(h)
        return self.head(h)


model = Net()
model(torch.randn(2, 4)).sum().backward()
''', ("s.mul_(2)", "s = s.mul(2)"), "raises", "modified by an inplace operation", ((9, 5, "TL409"),))

METHOD_OF_FORWARD = twin(
    "a method of the module, its result taken on by forward to what it returns", "TL409", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def attend(self, h):
        w = torch.softmax(h, dim=-1)
        w[:, 0] = 0
        return w * h

    def forward(self, x):
        a = self.attend(self.fc(x))
        out = self.head(a)
        return out


model = Net()
model(torch.randn(2, 4)).sum().backward()
''', ("w[:, 0] = 0", "w = w.clone()\n        w[:, 0] = 0"), "raises", "modified by an inplace operation",
    ((15, 9, "TL409"),))

TWO_LEVELS = twin(
    "a helper of the loss function, whose result is back-propagated: two calls away", "TL409", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


def log_probs(logits):
    p = logits.exp()
    p /= p.sum(dim=1, keepdim=True)
    return p.log()


def nll(logits, y):
    lp = log_probs(logits)
    return -lp.gather(1, y[:, None]).mean()


def train(model, x, y, optimizer):
    optimizer.zero_grad()
    loss = nll(model(x), y)
    loss.backward()
    optimizer.step()


model = nn.Linear(4, 3)
train(model, torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.optim.SGD(model.parameters(), lr=0.1))
''', ("p /= p.sum(dim=1, keepdim=True)", "p = p / p.sum(dim=1, keepdim=True)"), "raises",
    "modified by an inplace operation", ((9, 5, "TL409"),))

MOVED_BATCH = twin(
    "a weight of the batch, moved to the device: a tensor, which `out * w` saves", "TL409", '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def train(model, loader, optimizer, device):
    for x, w in loader:
        x, w = x.to(device), w.to(device)
        optimizer.zero_grad()
        out = model(x)
        loss = (out * w).sum()
        w /= w.sum()
        loss.backward()
        optimizer.step()


model = nn.Linear(4, 1)
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.rand(8, 1)), batch_size=4)
train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), "cpu")
''', ("w /= w.sum()", "w = w / w.sum()"), "raises", "modified by an inplace operation", ((14, 9, "TL409"),))

SEQUENTIAL_WITH_UNKNOWN_LAYER = twin(
    "a Sequential ending in a sigmoid, with a layer in between the analysis cannot read", "TL409", '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, act="Tanh"):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), getattr(nn, act)(), nn.Linear(4, 4), nn.Sigmoid())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        g = self.body(x)
        g.mul_(2)
        return self.head(g)


model = Net()
model(torch.randn(2, 4)).sum().backward()
''', ("g.mul_(2)", "g = g.mul(2)"), "raises", "modified by an inplace operation", ((15, 9, "TL409"),))

CASES = {
    "sequential_with_unknown_layer": SEQUENTIAL_WITH_UNKNOWN_LAYER,
    "moved_batch": MOVED_BATCH,
    "helper_of_forward": HELPER_OF_FORWARD,
    "method_of_forward": METHOD_OF_FORWARD,
    "two_levels": TWO_LEVELS,
    "loader_parameter": LOADER_PARAMETER,
    "trainer_loader": TRAINER_LOADER,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_loader_parameter_of_a_function_never_called_here_proves_nothing(project) -> None:
    """What `train` is given is not known: the batches may be anything."""
    case = LOADER_PARAMETER
    project.write("lib.py", case.bad[:case.bad.index("\n\nmodel = nn.Linear")] + "\n")
    assert project.findings("--no-cache", "--select", "TL408", "lib.py") == []


def test_a_helper_whose_result_forward_drops_is_not_reported(project) -> None:
    """`gate(h)` computed and thrown away (a debug print of it): nothing of it is differentiated."""
    case = HELPER_OF_FORWARD
    project.write("dropped.py", case.bad.replace("        h = gate(h)\n", "        print(gate(h).shape)\n"))
    assert project.findings("--no-cache", "--select", "TL409", "dropped.py") == []


def test_the_finding_names_the_call_chain(project) -> None:
    case = TWO_LEVELS
    project.write("bad.py", case.bad)
    result = project.run("check", "--no-cache", "--select", "TL409", "--output-format", "concise", "bad.py")
    assert "through `log_probs(logits)` (line 14), then `nll(model(x), y)` (line 20)" in result.stdout
    assert "`loss.backward()`, line 21" in result.stdout


def test_a_batch_of_a_loader_with_its_own_collate_fn_is_not_known(project) -> None:
    """`collate_fn` may make anything of the items (an object with its own `.to()`)."""
    case = MOVED_BATCH
    project.write("collate.py", case.bad.replace("batch_size=4)", "batch_size=4, collate_fn=collate)").replace(
        "\n\nmodel = nn.Linear", "\n\ndef collate(items):\n    return items\n\n\nmodel = nn.Linear"))
    assert project.findings("--no-cache", "--select", "TL409", "collate.py") == []


def test_a_batch_of_a_loader_given_a_kwargs_dict_without_collate_fn_is_known(project) -> None:
    case = MOVED_BATCH
    project.write("kwargs.py", case.bad.replace("batch_size=4)", "**kwargs)").replace(
        "\nloader = ", "\nkwargs = {'batch_size': 4, 'num_workers': 0}\nloader = "))
    assert project.findings("--no-cache", "--select", "TL409", "kwargs.py") == [("kwargs.py", 14, 9, "TL409")]


def test_a_sequential_whose_last_layer_is_appended_under_an_if_is_not_known_to_save(project) -> None:
    """`if act: layers.append(nn.Sigmoid())`: the last layer may be the linear one."""
    project.write("cond.py", """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self, act):
                super().__init__()
                layers = [nn.Linear(4, 4)]
                if act:
                    layers.append(nn.Sigmoid())
                self.body = nn.Sequential(*layers)
                self.head = nn.Linear(4, 1)

            def forward(self, x):
                g = self.body(x)
                g.mul_(2)
                return self.head(g)
        """)
    assert project.findings("--no-cache", "--select", "TL409", "cond.py") == []
