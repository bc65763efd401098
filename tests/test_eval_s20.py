"""Session 20 facts of the train-mode analysis (TL414), each on a bad program and its fixed
twin (shapes of our own, run under torch to show the bug is real):

- grad mode is the caller's: a method of the model (``model.encode(x)``, one that runs its
  blocks in a loop, ``for block in self.blocks``) called under ``no_grad`` evaluates the
  submodules it runs, and the finding is on the call;
- a plain class that sets its model up in a method other than ``__init__``
  (``initialize(opt)``, ``_load()``), the only assignment of the attribute, keeps it in
  training mode in the methods that run it;
- a classmethod that builds ``cls(..)``, loads weights and returns it
  (``Net.from_checkpoint(path)``) builds a model, as a builder function of the file does;
- a function named for classifying (``classify_text``) evaluates.

And what stays quiet: a method of the model that runs no layer that behaves differently,
one whose forward output is dropped (a refresh of batch-norm statistics), one that runs no
forward at all (``init_weights()`` under ``no_grad``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

TWO_RUNS = """

first, second = {call}, {call}
if not torch.equal(first, second):
    raise SystemExit("BUG: two runs of one input differ (the model is in training mode)")
"""

METHOD_UNDER_NO_GRAD = """
import torch
from torch import nn


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = nn.Linear(6, 4)
        self.text = nn.Sequential(nn.Linear(5, 4), nn.Dropout(0.3))

    def encode_text(self, tokens):
        h = self.text(tokens)
        return nn.functional.normalize(h, dim=-1)

    def encode_image(self, pixels):
        h = self.image(pixels)
        return nn.functional.normalize(h, dim=-1)


def scores(model, pixels, tokens):
    with torch.no_grad():
        text = model.encode_text(tokens)
        image = model.encode_image(pixels)
    return image @ text.T


model = TwoTower()
pixels, tokens = torch.randn(3, 6), torch.randn(3, 5)
""" + TWO_RUNS.format(call="scores(model, pixels, tokens)")

BLOCKS_IN_A_LOOP = """
import torch
from torch import nn


class Tower(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.2)) for _ in range(depth))

    def features(self, x, keep=2):
        x = self.stem(x)
        kept = []
        for block in self.blocks:
            x = block(x)
            kept.append(x)
        return kept[-keep:]


tower = Tower()
x = torch.randn(2, 4)


def run():
    with torch.inference_mode():
        return tower.features(x)[-1]
""" + TWO_RUNS.format(call="run()")

SETUP_METHOD = """
import torch
from torch import nn


def define_net(width):
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                         nn.Conv2d(width, 3, 3, padding=1))


class Restorer:
    def initialize(self, width, state):
        self.net = define_net(width)
        self.net.load_state_dict(state)

    def restore(self, image):
        with torch.no_grad():
            self.output = self.net(image)
        return self.output


trained = define_net(4)
with torch.no_grad():
    for _ in range(10):
        trained(torch.randn(4, 3, 8, 8) * 2 + 1)  # running statistics of a training set
restorer = Restorer()
restorer.initialize(4, trained.state_dict())
image = torch.randn(1, 3, 8, 8) * 2 + 1
trained.eval()
if not torch.allclose(restorer.restore(image), trained(image).detach(), atol=1e-5):
    raise SystemExit("BUG: the image was restored with BatchNorm in training mode")
"""

CLASS_BUILDER = """
import os
import tempfile

import torch
from torch import nn


class Embedder(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, dim), nn.ReLU(), nn.Dropout(0.25), nn.Linear(dim, dim))

    def forward(self, x):
        return self.layers(x)

    @classmethod
    def from_checkpoint(cls, path, dim=8):
        model = cls(dim)
        model.load_state_dict(torch.load(path))
        return model.to("cpu")


path = os.path.join(tempfile.mkdtemp(), "embedder.pt")
torch.save(Embedder().state_dict(), path)
embedder = Embedder.from_checkpoint(path)
x = torch.randn(2, 4)
""" + TWO_RUNS.format(call="embedder(x)")

CLASSIFY_FUNCTION = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.train()
for _ in range(5):
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(torch.randn(8, 4)), torch.randint(0, 3, (8,))).backward()
    optimizer.step()


def classify_text(features):
    logits = model(features)
    return logits.argmax(-1), logits.softmax(-1)


sample = torch.randn(1, 4)
""" + TWO_RUNS.format(call="classify_text(sample)[1]")

CASES = {
    # name: (source, line of the finding, how the fixed twin reads)
    "method_under_no_grad": (METHOD_UNDER_NO_GRAD, 31,
                             ("    with torch.no_grad():\n        text", "    model.eval()\n    with torch.no_grad():\n"
                                                                        "        text")),
    "blocks_in_a_loop": (BLOCKS_IN_A_LOOP, 26, ("tower = Tower()\n", "tower = Tower()\ntower.eval()\n")),
    "setup_method": (SETUP_METHOD, 17, ("        self.net.load_state_dict(state)\n",
                                        "        self.net.load_state_dict(state)\n        self.net.eval()\n")),
    "class_builder": (CLASS_BUILDER, 29, ("embedder = Embedder.from_checkpoint(path)\n",
                                          "embedder = Embedder.from_checkpoint(path)\nembedder.eval()\n")),
    "classify_function": (CLASSIFY_FUNCTION, 14, ("    logits = model(features)", "    model.eval()\n"
                                                                               "    logits = model(features)")),
}


def _write(project, source: str, fixed: tuple[str, str] | None = None) -> None:
    source = textwrap.dedent(source)
    if fixed is not None:
        assert fixed[0] in source
        source = source.replace(*fixed)
    project.write("prog.py", source)


def _findings(project) -> list:
    return project.findings("--select", "TL414,TL419", "--no-cache")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(project, case) -> None:
    source, row, _fixed = CASES[case]
    _write(project, source)
    found = _findings(project)
    assert [(f[0], f[1], f[3]) for f in found] == [("prog.py", row, "TL414")], found


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(project, case) -> None:
    source, _row, fixed = CASES[case]
    _write(project, source, fixed)
    assert _findings(project) == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_shows_the_bug_on_the_bad_program_and_not_on_the_fixed_one(project, case) -> None:
    pytest.importorskip("torch")
    source, _row, fixed = CASES[case]
    env = dict(os.environ, PYTHONPATH=str(project.root))
    for twin, fails in ((None, True), (fixed, False)):
        _write(project, source, twin)
        result = subprocess.run([sys.executable, "prog.py"], cwd=project.root, capture_output=True, text=True,
                                timeout=120, env=env)
        assert (result.returncode != 0 and "BUG" in result.stderr) is fails, result.stderr[-500:]


def test_the_call_is_named_with_the_forward_it_runs(project) -> None:
    _write(project, METHOD_UNDER_NO_GRAD)
    [finding] = project.run("check", "--select", "TL414", "--no-cache", "--output-format", "json").json()
    assert "`scores()`" in finding["message"] and "nn.Dropout(0.3)" in finding["message"], finding
    related = " ".join(item["message"] for item in finding["related"])
    assert "the forward runs here, under `torch.no_grad()`" in related, related


QUIET = {
    # a method that runs no layer that behaves differently (only `encode_image` is called)
    "no_such_layer_run": METHOD_UNDER_NO_GRAD.replace("        text = model.encode_text(tokens)\n",
                                                      "        text = tokens[:, :4]\n"),
    # a forward whose output is dropped: batch-norm statistics refreshed on purpose
    "statistics_refreshed": """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))

            def refresh(self, batches):
                for x in batches:
                    self.body(x)


        net = Net()
        with torch.no_grad():
            net.refresh([torch.randn(8, 4) for _ in range(3)])
    """,
    # no forward at all: weights initialized under no_grad
    "weights_initialized": """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))

            def init_weights(self):
                for p in self.body.parameters():
                    p.normal_(0, 0.02)
                return self.body


        net = Net()
        with torch.no_grad():
            body = net.init_weights()
    """,
    # the setup method switches the model it builds
    "setup_switches": SETUP_METHOD.replace("        self.net.load_state_dict(state)\n",
                                           "        self.net.load_state_dict(state)\n        self.net.eval()\n"),
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_what_stays_quiet(project, case) -> None:
    _write(project, QUIET[case])
    assert _findings(project) == []
