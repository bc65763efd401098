"""Issue 41, session 11 (helper m): facts that a resolution census of real code (the 38 script
repositories of corpus/scripts and the dev cases) found unresolved in several repositories, for
the layers of a model that TL414 needs:

- a model class of another module of the project named through a star import
  (``from models import *``; NRI's ``MLPEncoder``, the semantic-segmentation scripts' ``FCN8s``):
  its layers are read in that module, as for ``from models import Net``;
- a model attribute rebound to a data-parallel wrapper of itself (``self.net =
  nn.DataParallel(self.net)``, DrQA's ``self.network``) is the same model, not one built on
  another path without such a layer.

Each bad program runs under torch and shows the bug; the finding is on the line to change; its
fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests

STAR_LAYERS = """\
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Dropout(0.5), nn.Linear(width, 2))

    def forward(self, x):
        return self.body(x)
"""

STAR_BAD = """\
import torch
import torch.nn as nn
from layers import *

torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()

sample = torch.randn(1, 4)
with torch.no_grad():
    first = model(sample)
    second = model(sample)
# -- corpus check --
if not torch.equal(first, second):
    print("BUG: two predictions of one sample differ")
"""

REWRAP_BAD = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Dropout(0.5), nn.Linear(width, 2))

    def forward(self, x):
        return self.body(x)


class Trainer:
    def __init__(self, parallel=False):
        self.net = Classifier()
        if parallel:
            self.net = nn.DataParallel(self.net)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def fit(self, steps):
        self.net.train()
        for _ in range(steps):
            x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
            self.opt.zero_grad()
            nn.functional.cross_entropy(self.net(x), y).backward()
            self.opt.step()

    def predict(self, x):
        with torch.no_grad():
            return self.net(x).argmax(1)


trainer = Trainer()
trainer.fit(5)
sample = torch.randn(64, 4)
first, second = trainer.predict(sample), trainer.predict(sample)
# -- corpus check --
if not torch.equal(first, second):
    print("BUG: two predictions of one sample differ")
"""

CASES = {
    "star_import": twin(
        "a model class named through `from layers import *`, evaluated in training mode", "TL414", STAR_BAD,
        ("with torch.no_grad():", "model.eval()\nwith torch.no_grad():"), "wrong-value", "BUG:",
        ((16, 13, "TL414"), (17, 14, "TL414")), files=(("layers.py", STAR_LAYERS),)),
    "rewrapped_attribute": twin(
        "`self.net` rewrapped in DataParallel, evaluated in training mode", "TL414", REWRAP_BAD,
        ("        with torch.no_grad():", "        self.net.eval()\n        with torch.no_grad():"), "wrong-value",
        "BUG:", ((33, 20, "TL414"),)),
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_star_imported_class_without_such_a_layer_is_not_reported(project) -> None:
    project.write("layers.py", STAR_LAYERS.replace("nn.Dropout(0.5)", "nn.Identity()"))
    project.write("bad.py", STAR_BAD)
    assert project.findings("--no-cache", "--select", "TL414", "bad.py") == []


def test_a_model_built_on_another_path_without_such_a_layer_still_keeps_it_quiet(project) -> None:
    """`self.net = Plain()` on one path is another model; only a wrapper of `self.net` itself is the same."""
    project.write("bad.py", REWRAP_BAD.replace("self.net = nn.DataParallel(self.net)",
                                               "self.net = nn.Linear(4, 2)"))
    assert project.findings("--no-cache", "--select", "TL414", "bad.py") == []
