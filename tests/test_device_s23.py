"""Session 23 facts of the device analysis (TL416), each on a bad program and its fixed twin
(programs of our own, run under torch with the meta device standing in for a GPU). A tensor is
on the device of what it was made from or moved to; a factory without `device=` makes it on
the CPU; a module's registered parameters and buffers move with it, and nothing else does:

- an `nn.Sequential` holding a layer with weights is one of the module's layers: a tensor
  made in `forward` without `device=` and given to it stays on the CPU;
- a method of a moved module that the file calls on the instance after the move (not only
  `forward` and what it calls) runs with the module's parameters on the device; a value a
  method of the module returns (also one item of the tuple it returns) is where what it
  returns is, and a list or tuple joined with one tensor on the device needs it there;
- a tensor made on the CPU keeps its device through a name it is bound to, and `torch.cat`
  of CPU tensors is on the CPU;
- the call of an instance of a plain class of the file gives what its `__call__` returns
  (a tokenizer's dict of CPU tensors), and a loss module held as an attribute
  (`self.criterion`) is a loss like a loss named by a plain name;
- a tensor converted from numpy data (`torch.from_numpy`, `torch.tensor` of a list) in a
  method of the module is on the CPU, like a factory's (moved with `.to()`: `from_numpy`
  takes no `device=`);
- `pad_sequence` of CPU tensors is on the CPU, and a helper of the file returning a list
  gives Python data to `torch.tensor`;
- a module rebuilt for evaluation by a builder function of the file and `model.eval()`
  (the module itself) is never moved when nothing moves it.
"""

from __future__ import annotations

from twin_cases import twin, twin_tests

SEQUENTIAL = """\
import torch
from torch import nn

device = torch.device("meta")


class Codebook(nn.Module):
    def __init__(self, n=6, dim=4):
        super().__init__()
        self.n = n
        self.embed = nn.Sequential(nn.Linear(n, dim), nn.Tanh())

    def forward(self, x):
        codes = self.embed(torch.eye(self.n))
        return x @ codes.t()


book = Codebook().to(device)
print(book(torch.randn(3, 4, device=device)).shape)
"""

AFTER_MOVE = """\
import torch
from torch import nn

device = torch.device("meta")


class Triangular(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.n = n
        self.diag = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n))

    def factors(self):
        low = self.diag.new_zeros(self.n, self.n)
        return low, torch.diag(self.diag)

    def forward(self, x):
        return x * self.diag + self.bias

    def undo(self, y):
        low, up = self.factors()
        scale = torch.ones(self.n, self.n)
        return (y - self.bias) @ (up + low * scale)


layer = Triangular()
layer.to(device)
print(layer.undo(torch.randn(2, 3, device=device)).shape)
"""

JOINED = """\
import torch
from torch import nn

device = torch.device("meta")


class Slots(nn.Module):
    def __init__(self, k=3, extra=2):
        super().__init__()
        self.extra = extra
        self.logit = nn.Parameter(torch.zeros(k))

    def weights(self):
        return torch.sigmoid(self.logit)

    def labels(self):
        values = torch.cat([torch.zeros(self.extra), torch.ones(3)])
        return values * torch.cat([torch.ones(self.extra, device=self.logit.device), self.weights()])


slots = Slots().to(device)
print(slots.labels().shape)
"""

TOKENIZED = """\
import torch
from torch import nn

WORDS = "pad one two three four".split()


class Tokens:
    def __call__(self, texts):
        ids = [[WORDS.index(w) for w in text.split()] for text in texts]
        return {"ids": torch.tensor(ids), "mask": torch.tensor(ids) != 0}


class Scorer:
    def __init__(self):
        self.device = torch.device("meta")
        self.tokens = Tokens()
        self.net = nn.Embedding(len(WORDS), len(WORDS))
        self.net.to(self.device)
        self.criterion = nn.CrossEntropyLoss()

    def score(self, inputs, targets):
        logits = self.net(self.tokens(inputs)["ids"].to(self.device))
        gold = self.tokens(targets)["ids"]
        return self.criterion(logits.view(-1, len(WORDS)), gold.view(-1))


print(Scorer().score(["one two", "three four"], ["two one", "four three"]).shape)
"""

PADDED = """\
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence


def encode(text):
    return [len(word) for word in text.split()]


class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1, 2)

    def forward(self, lengths):
        return self.fc(lengths.unsqueeze(-1).float() * (lengths != 0).unsqueeze(-1))


device = torch.device("meta")
reader = Reader().to(device)
rows = [torch.tensor(encode(text)) for text in ["a bb ccc", "dddd e"]]
print(reader(pad_sequence(rows, batch_first=True)).shape)
"""

REBUILT = """\
import torch
from torch import nn

device = torch.device("meta")


def build(classes=3):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, classes))


state = build().state_dict()
model = build()
model.load_state_dict(state)
model = model.eval()
for batch in [torch.randn(2, 4), torch.randn(3, 4)]:
    batch = batch.to(device)
    with torch.no_grad():
        print(model(batch).shape)
"""

NUMPY = """\
import numpy as np
import torch
from torch import nn

device = torch.device("meta")


class Positional(nn.Module):
    def __init__(self, n=16, dim=8):
        super().__init__()
        self.table = np.cos(np.arange(n)[:, None] * np.arange(dim)[None, :] / n).astype(np.float32)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        pe = torch.from_numpy(self.table[: x.shape[1]])
        return self.fc(x) + pe


model = Positional().to(device)
print(model(torch.randn(2, 5, 8, device=device)).shape)
"""

CASES = {
    "sequential": twin("a tensor made in forward for an nn.Sequential with weights", "TL416", SEQUENTIAL,
                       ("torch.eye(self.n)", "torch.eye(self.n, device=x.device)"),
                       "raises", "is not on the expected device", ((14, 28, "TL416"),)),
    "after-move": twin("a method run on the moved module, with its own method's tuple", "TL416", AFTER_MOVE,
                       ("torch.ones(self.n, self.n)", "torch.ones(self.n, self.n, device=y.device)"),
                       "raises", "is not on the expected device", ((23, 17, "TL416"),)),
    "joined": twin("torch.cat of CPU tensors bound to a name", "TL416", JOINED,
                   ("torch.cat([torch.zeros(self.extra), torch.ones(3)])",
                    "torch.cat([torch.zeros(self.extra), torch.ones(3)]).to(self.logit.device)"),
                   "raises", "is not on the expected device", ((17, 29, "TL416"), (17, 54, "TL416"))),
    "tokenized": twin("a tokenizer's CPU ids as the target of a held loss", "TL416", TOKENIZED,
                      ('gold = self.tokens(targets)["ids"]', 'gold = self.tokens(targets)["ids"].to(self.device)'),
                      "raises", "is not on the expected device", ((24, 60, "TL416"),)),
    "padded": twin("pad_sequence of CPU rows given to a moved module", "TL416", PADDED,
                   ("reader(pad_sequence(rows, batch_first=True))",
                    "reader(pad_sequence(rows, batch_first=True).to(device))"),
                   "raises", "is not on the expected device", ((22, 14, "TL416"),)),
    "numpy": twin("a tensor converted from numpy in forward", "TL416", NUMPY,
                  ("torch.from_numpy(self.table[: x.shape[1]])", "torch.from_numpy(self.table[: x.shape[1]]).to(x.device)"),
                  "raises", "is not on the expected device", ((15, 14, "TL416"),)),
    "rebuilt": twin("a module rebuilt by a builder and .eval(), never moved", "TL416", REBUILT,
                    ("model = model.eval()", "model = model.to(device).eval()"),
                    "raises", "is not on the expected device", ((18, 15, "TL416"),)),
}

test_reported_on_the_line_and_twin_clean, test_bad_shows_the_bug_under_torch_and_twin_does_not = \
    twin_tests(CASES)


def test_a_method_run_only_before_the_move_is_fine(project) -> None:
    source = AFTER_MOVE.replace("layer.to(device)\nprint(layer.undo(torch.randn(2, 3, device=device)).shape)",
                                "print(layer.undo(torch.randn(2, 3)).shape)\nlayer.to(device)")
    assert source != AFTER_MOVE
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []


def test_a_rebuilt_module_moved_under_its_first_name_is_fine(project) -> None:
    source = REBUILT.replace("model = build()\nmodel.load_state_dict(state)\nmodel = model.eval()\n",
                             "net = build()\nnet.load_state_dict(state)\nmodel = net.eval()\nnet.to(device)\n")
    assert source != REBUILT
    project.write("prog.py", source)
    assert project.findings("--select", "TL416", "--no-cache") == []
