"""Session 23 facts of the train-mode analysis (TL414), each on a bad program and its fixed
twin (shapes of our own, run under torch to show the bug is real):

- a builder function that replaces a layer of the module it builds with a new one
  (``net.fc = nn.Linear(net.fc.in_features, n)``) still returns a module in training mode:
  the new layer starts in training mode as the module did, and reading an attribute of a
  layer to build another switches nothing;
- a script that calls ``model.train()`` and then uses the output of one forward, run once
  (no loop, no comprehension, its input not replicated) under ``no_grad``, makes one
  stochastic prediction, not the many samples of Monte Carlo dropout;
- ``self.define_graph()`` in a method of a plain class runs the method of the class of the
  instance: the module it builds has the layers of the subclass this file instantiates;
- a name bound to ``None`` on one path and to a new module on the other holds that module
  wherever it holds one (``lm = None`` / ``lm = LM()``);
- a call that hands a function a literal ``True``/``False``/``None`` runs only the branches
  of it that value decides (``run_epoch(model, val_batches, False)`` skips the
  ``if train:`` that steps): what is left of it may be an evaluation;
- ``self.net = model(shape)`` in an ``__init__`` whose every construction in the file hands a
  module class for ``model`` builds a new module in training mode (with the layers of the
  classes handed); a parameter named like an instance (``def __init__(self, model)``) does
  not hand that instance anywhere.

And what stays quiet: the builder hands a layer of the module to code not seen; Monte Carlo
dropout written as a loop or as one forward of a replicated input; a forward whose output is
dropped (a refresh of the batch-norm statistics).
"""

from __future__ import annotations

import pytest

from test_eval_s20 import _write
from test_train_mode_s22 import _findings, found_on_its_line_and_twin_quiet, torch_shows_the_bug

HEAD = """
import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x))


def build(classes):
    net = Backbone()
    net.fc = nn.Linear(net.fc.in_features, classes)
    return net


trained = build(3)
trained(torch.randn(32, 4) + 2.0)  # the running statistics move away from the batch's
torch.save(trained.state_dict(), "weights.pt")
net = build(3)
net.load_state_dict(torch.load("weights.pt"))
x = torch.randn(4, 4)
prediction = net(x).detach()
reference = build(3)
reference.load_state_dict(torch.load("weights.pt"))
reference.eval()
if not torch.allclose(prediction, reference(x).detach(), atol=1e-5):
    raise SystemExit("BUG: the prediction used the batch's statistics (the model is in training mode)")
"""

ONE_SAMPLE = """
import torch
from torch import nn


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.head = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        return torch.sigmoid(self.head(self.body(x)))


trained = Segmenter()
trained(torch.randn(8, 3, 8, 8) * 3.0)
torch.save(trained.state_dict(), "weights.pt")
model = Segmenter()
model.load_state_dict(torch.load("weights.pt"))
image = torch.randn(1, 3, 8, 8)
model.train()
with torch.no_grad():
    matte = model(image)
reference = Segmenter()
reference.load_state_dict(torch.load("weights.pt"))
reference.eval()
with torch.no_grad():
    expected = reference(image)
if not torch.allclose(matte, expected, atol=1e-5):
    raise SystemExit("BUG: the matte used the image's own statistics (the model is in training mode)")
"""

ESTIMATOR = """
import torch
from torch import nn


class ShallowClassifier:
    def __init__(self, hidden=16):
        self.hidden = hidden

    def define_graph(self):
        return nn.Sequential(nn.Linear(4, self.hidden), nn.Tanh(), nn.Linear(self.hidden, 2))

    def fit(self, X, y):
        self.model = self.define_graph()
        optimizer = torch.optim.Adam(self.model.parameters(), lr=0.01)
        for _ in range(3):
            optimizer.zero_grad()
            nn.functional.cross_entropy(self.model(X), y).backward()
            optimizer.step()
        return self

    def predict_proba(self, X):
        with torch.no_grad():
            return torch.softmax(self.model(X), dim=1)


class DropoutClassifier(ShallowClassifier):
    def define_graph(self):
        return nn.Sequential(nn.Linear(4, self.hidden), nn.Dropout(0.7), nn.Tanh(), nn.Linear(self.hidden, 2))


X, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
clf = DropoutClassifier()
clf.fit(X, y)
first, second = clf.predict_proba(X), clf.predict_proba(X)
if not torch.equal(first, second):
    raise SystemExit("BUG: two predictions of one input differ (dropout is on)")
"""

OPTIONAL_LM = """
import torch
from torch import nn


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 16)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(16, 8)

    def forward(self, tokens):
        return self.out(self.drop(self.embed(tokens))).log_softmax(-1)


def decode(scores, lm=None):
    if lm is not None:
        scores = scores + lm(scores.argmax(-1))
    return scores


def recognize(use_lm, path, batches):
    lm = None
    if use_lm:
        lm = LM()
        lm.load_state_dict(torch.load(path))
    results = []
    with torch.no_grad():
        for scores in batches:
            results.append(decode(scores, lm))
    return results


torch.save(LM().state_dict(), "lm.pt")
batches = [torch.randn(4, 8) for _ in range(2)]
first, second = recognize(True, "lm.pt", batches), recognize(True, "lm.pt", batches)
if any(not torch.equal(a, b) for a, b in zip(first, second)):
    raise SystemExit("BUG: two decodings of one input differ (the language model's dropout is on)")
"""

RUN_EPOCH = """
import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def run_epoch(model, batches, train):
    total = 0.0
    for x, y in batches:
        loss = criterion(model(x), y)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        total += loss.item()
    return total / len(batches)


train_batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]
val_batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(2)]
for epoch in range(2):
    run_epoch(model, train_batches, True)
    first = run_epoch(model, val_batches, False)
    second = run_epoch(model, val_batches, False)
    if first != second:
        raise SystemExit("BUG: two validations of one model differ (dropout is on)")
"""

CLASS_HANDED = """
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class NeuralNet:
    def __init__(self, data, model):
        self.data = data
        self.net = model(data[0].shape[1])
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.01)

    def fit(self, epochs=3):
        x, y = self.data
        for _ in range(epochs):
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self.net(x), y).backward()
            self.optimizer.step()

    def predict(self, x):
        return self.net(x).detach()


model = NeuralNet((torch.randn(16, 4), torch.randn(16, 1)), Regressor)
model.fit()
x = torch.randn(8, 4)
if not torch.equal(model.predict(x), model.predict(x)):
    raise SystemExit("BUG: two predictions of one input differ (dropout is on)")
"""

# (source, line of the finding, the fixed twin's replacement)
CASES = {
    "builder_replaces_a_layer": (HEAD, 27, ("    return net\n", "    net.eval()\n    return net\n")),
    "train_then_one_prediction": (ONE_SAMPLE, 21, ("model.train()\n", "model.eval()\n")),
    "method_of_the_instance_class": (ESTIMATOR, 23, ("        with torch.no_grad():\n",
                                                     "        self.model.eval()\n        with torch.no_grad():\n")),
    "literal_flag_skips_the_step": (RUN_EPOCH, 25, ("    run_epoch(model, train_batches, True)\n",
                                                    "    model.train()\n    run_epoch(model, train_batches, True)\n"
                                                    "    model.eval()\n")),
    "class_handed_to_the_constructor": (CLASS_HANDED, 30, ("        return self.net(x).detach()\n",
                                                           "        self.net.eval()\n"
                                                           "        return self.net(x).detach()\n")),
    "module_or_none": (OPTIONAL_LM, 30, ("        lm.load_state_dict(torch.load(path))\n",
                                         "        lm.load_state_dict(torch.load(path))\n        lm.eval()\n")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found_and_its_twin_is_not(project, case) -> None:
    found_on_its_line_and_twin_quiet(project, *CASES[case])


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_shows_the_bug(project, case) -> None:
    torch_shows_the_bug(project, *CASES[case])


QUIET = {
    # the builder hands a layer to code not seen, which may switch it
    "layer_handed_to_unknown_code": HEAD.replace("    net.fc = nn.Linear(net.fc.in_features, classes)\n",
                                                 "    net.fc = nn.Linear(net.fc.in_features, classes)\n"
                                                 "    getattr(torch, 'no_op', print)(net.features)\n"),
    # Monte Carlo dropout: the same input again and again
    "samples_in_a_comprehension": ONE_SAMPLE.replace("    matte = model(image)\n",
                                                     "    matte = torch.stack([model(image) for _ in range(8)]).mean(0)\n"),
    "samples_as_a_replicated_batch": ONE_SAMPLE.replace("    matte = model(image)\n",
                                                        "    matte = model(image.repeat(8, 1, 1, 1)).mean(0)\n"),
    # a refresh of the batch-norm statistics: the output is dropped
    # the base class is instantiated too: its define_graph builds no layer that behaves differently
    "base_class_instantiated_too": ESTIMATOR.replace("first, second =",
                                                     "shallow = ShallowClassifier()\nfirst, second ="),
    # the optional model is switched where it is loaded
    "optional_model_switched": OPTIONAL_LM.replace("        lm.load_state_dict(torch.load(path))\n",
                                                   "        lm.load_state_dict(torch.load(path))\n"
                                                   "        lm.train(False)\n"),
    # the flag is no literal: the step may run
    "flag_not_known": RUN_EPOCH.replace("    first = run_epoch(model, val_batches, False)\n",
                                        "    first = run_epoch(model, val_batches, epoch > 5)\n")
                               .replace("    second = run_epoch(model, val_batches, False)\n",
                                        "    second = run_epoch(model, val_batches, epoch > 5)\n"),
    # one construction hands a class with no layer that behaves differently
    "a_plain_class_handed_too": CLASS_HANDED.replace("model.fit()\n", "model.fit()\nlinear = NeuralNet("
                                                     "(torch.randn(4, 4), torch.randn(4, 1)), nn.Identity)\n"),
    # the instance is handed to code not seen
    "instance_handed_on": CLASS_HANDED.replace("model.fit()\n", "model.fit()\ngetattr(torch, 'no_op', print)(model)\n"),
    "statistics_refreshed": ONE_SAMPLE.replace("    matte = model(image)\n", "    model(image)\n    matte = image\n"),
}


@pytest.mark.parametrize("case", sorted(QUIET))
def test_what_stays_quiet(project, case) -> None:
    _write(project, QUIET[case])
    assert _findings(project) == []
