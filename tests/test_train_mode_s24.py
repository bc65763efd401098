"""Session 24 facts of the train-mode analysis (TL414), each on a bad program and its fixed
twin (shapes of our own, run under torch to show the bug is real):

- a module is in training mode from its construction through any number of calls that only
  hand it back: a function returning what a builder of the file returns is a builder;
- a function of the file that returns, in a tuple, the module it was handed returns that
  module (``net, _ = restore(path, net)``);
- ``torch.jit.trace`` records each layer as it behaves in the module's mode: tracing a model
  holding trained weights in training mode bakes in dropout and batch statistics;
- calling an object of a plain class runs its ``__call__``, and a torch tensor function
  (``torch.zeros(1, net.width)``) switches nothing it is handed;
- a module a plain class builds and hands only to a method of its own that loads weights
  into it keeps its training mode;
- a module-level placeholder (``encoder = None``) bound by a function (``global``) holds the
  module that function builds, and a parameter whose literal default no call overrides
  holds that default (``torch.set_grad_enabled(track)`` with ``track=False``);
- a method of the model whose result is read out (``.tolist()``) after training is a
  prediction, and a switch of one name of a module (``m = model.to("cpu")``) is a switch of
  its other names.

And what stays quiet: the fixed twins, a trace of a model never trained nor loaded, a
parameter default that a call overrides.
"""

from __future__ import annotations

import pytest

from test_eval_s20 import _write
from test_train_mode_s22 import _findings, found_on_its_line_and_twin_quiet, torch_shows_the_bug

NET = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.width = width
        self.body = nn.Sequential(nn.Linear(4, width), nn.BatchNorm1d(width), nn.Dropout(0.5), nn.Linear(width, 3))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
reference = Net()
with torch.no_grad():
    reference.body[1].running_mean.uniform_(-1, 1)
torch.save(reference.state_dict(), "net.pt")
reference.eval()
x = torch.randn(6, 4)
"""

CHECK = """
if not torch.allclose(out, reference(x).detach(), atol=1e-5):
    raise SystemExit("BUG: the predictions were made in training mode")
"""

BUILDER_CHAIN = NET + """

def _make(path):
    net = Net()
    net.load_state_dict(torch.load(path))
    return net


def small_net(path="net.pt"):
    return _make(path)


model = small_net()
out = model(x).detach()
""" + CHECK

TUPLE_HANDBACK = NET + """

def restore(path, net, optimizer=None):
    state = torch.load(path)
    net.load_state_dict(state)
    return net, optimizer


model = Net()
model, _ = restore("net.pt", model)
with torch.no_grad():
    out = model(x)
""" + CHECK

TRACE = NET + """

model = Net()
model.load_state_dict(torch.load("net.pt"))
traced = torch.jit.trace(model, (x,), check_trace=False)
out = traced(x)
""" + CHECK

CALLED_OBJECT = NET + """

class Agent:
    def __init__(self, net):
        self.net = net
        self.hidden = torch.zeros(1, net.width)

    def __call__(self, obs):
        with torch.no_grad():
            return self.net(obs)


model = Net()
model.load_state_dict(torch.load("net.pt"))
agent = Agent(model)
out = agent(x)
""" + CHECK

LINEAGE_LOADER = NET + """

class Base:
    def load_weights(self, module, path):
        module.load_state_dict(torch.load(path))


class Tester(Base):
    def setup(self, path):
        self.net = Net()
        self.load_weights(self.net, path)

    def test(self, batch):
        with torch.no_grad():
            return self.net(batch)


tester = Tester()
tester.setup("net.pt")
out = tester.test(x)
""" + CHECK

GLOBAL_PLACEHOLDER = NET + """
encoder = None


def init_encoder():
    global encoder
    if encoder is not None:
        return
    encoder = Net()
    encoder.load_state_dict(torch.load("net.pt"))


def features(batch, track=False):
    init_encoder()
    with torch.set_grad_enabled(track):
        return encoder(batch)


out = features(x)
""" + CHECK

METHOD_READ_OUT = NET + """

class Sampler(Net):
    def sample(self, batch):
        return self(batch).argmax(-1)


def estimate(net, batch):
    net.eval()
    with torch.no_grad():
        loss = net(batch).pow(2).mean().item()
    net.train()
    return loss


model = Sampler()
model.load_state_dict(torch.load("net.pt"))
m = model.to("cpu")
optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
for step in range(2):
    estimate(model, x)
    optimizer.zero_grad()
    model(x).pow(2).mean().backward()
    optimizer.step()
labels = m.sample(x).tolist()
if model.training:
    raise SystemExit("BUG: the labels were sampled in training mode")
"""

# (source, line of the finding, the fixed twin's replacement)
CASES = {
    "builder_chain": (BUILDER_CHAIN, 35, ("model = small_net()\n", "model = small_net().eval()\n")),
    "tuple_handback": (TUPLE_HANDBACK, 33, ("model, _ = restore(\"net.pt\", model)\n",
                                           "model, _ = restore(\"net.pt\", model)\nmodel.eval()\n")),
    "trace": (TRACE, 26, ("traced = torch.jit", "model.eval()\ntraced = torch.jit")),
    "called_object": (CALLED_OBJECT, 31, ("        self.net = net\n", "        self.net = net.eval()\n")),
    "lineage_loader": (LINEAGE_LOADER, 36, ("        with torch.no_grad():\n",
                                            "        self.net.eval()\n        with torch.no_grad():\n")),
    "global_placeholder": (GLOBAL_PLACEHOLDER, 37, ("    encoder.load_state_dict(torch.load(\"net.pt\"))\n",
                                                    "    encoder.load_state_dict(torch.load(\"net.pt\"))\n"
                                                    "    encoder.eval()\n")),
    "method_read_out": (METHOD_READ_OUT, 46, ("labels = m.sample(x)", "model.eval()\nlabels = m.sample(x)")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found_and_its_twin_is_not(project, case) -> None:
    found_on_its_line_and_twin_quiet(project, *CASES[case])


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_shows_the_bug(project, case) -> None:
    torch_shows_the_bug(project, *CASES[case])


def test_a_trace_of_a_model_never_trained_nor_loaded_is_quiet(project) -> None:
    _write(project, NET + "\nmodel = Net()\ntraced = torch.jit.trace(model, (x,), check_trace=False)\n")
    assert _findings(project) == []


def test_a_default_a_call_overrides_is_not_held(project) -> None:
    _write(project, GLOBAL_PLACEHOLDER.replace("out = features(x)", "out = features(x, True)"))
    assert _findings(project) == []


SET_MODE_HELPER = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)


def set_mode(mode, models):
    for m in models:
        if mode == "train":
            m.train()
        if mode == "eval":
            m.eval()


def check_accuracy(model, x, y):
    set_mode("eval", [model])
    with torch.no_grad():
        correct = (model(x).argmax(1) == y).sum().item()
    set_mode("train", [model])
    return correct


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
for epoch in range(2):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(check_accuracy(model, x, y))
"""


def test_a_train_in_another_arm_than_the_eval_restores_nothing(project) -> None:
    """`set_mode("eval", [model])`, whose `m.train()` and `m.eval()` sit in two arms of a loop's
    body: the function leaves the model's mode unknown, not in training mode (a false report
    of `check_accuracy` evaluating in training mode, found after the merge of session 24)."""
    _write(project, SET_MODE_HELPER)
    assert _findings(project) == []
