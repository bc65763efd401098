"""Issue 41, session 13: the model class in a module of its own (``from models import
SeriesNet``), the shape of most projects. Rewriting the caught dev cases of the thread corpus
so that their module classes live in models.py lost 20 of 69 findings; what the script asks
of an imported class is now answered by the analysis of the module that defines it:

- the layer a model's input meets first (TL413: float64 numpy data into its float32 layers);
- the layers of a model held as ``self.model``, set in the ``__init__`` of a base class of the
  file (TL414: evaluated in training mode);
- what a function of another module returns requires grad (TL415: `np.copy` of it raises);
- and the other way round, a module class that another module of the project moves to a
  device (``TinyLM(50).to(device)`` in train.py): what its constructor leaves on the CPU (TL416,
  reported in the class's module, naming the move and where it is).

Also: a method under a decorator that hands on something else than what its callers pass
(``@pytorch_wrap`` turning tensors into arrays) takes no values from those calls.

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

import pytest

from twin_cases import run_program, twin, twin_tests

MODELS = '''\
import torch.nn as nn


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv1d(cin, cout, 5, padding=2), nn.BatchNorm1d(cout), nn.ReLU())


class SeriesNet(nn.Module):
    def __init__(self, channels, classes):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(channels, 16, 5, padding=2), ConvBlock(16, 16))
        self.head = nn.Linear(16, classes)

    def forward(self, x):
        return self.head(self.body(x).mean(-1))
'''

FLOAT64_INTO_AN_IMPORTED_MODEL = twin(
    "numpy's float64 series go into a model imported from the project", "TL413", '''\
import numpy as np
import torch
import torch.nn as nn

from models import SeriesNet

torch.manual_seed(0)
np.random.seed(0)

series = np.random.randn(32, 3, 40)
labels = np.random.randint(0, 4, 32)
model = SeriesNet(3, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for start in range(0, 32, 8):
    x = torch.from_numpy(series[start:start + 8])
    y = torch.from_numpy(labels[start:start + 8])
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
''', ("x = torch.from_numpy(series[start:start + 8])", "x = torch.from_numpy(series[start:start + 8]).float()"),
    "raises", "should be the same", ((15, 9, "TL413"),), files=(("models.py", MODELS),))

MODEL_SET_BY_A_BASE_CLASS = twin(
    "a predictor evaluates the imported model its base class built, in training mode", "TL414", '''\
import torch

from models import SeriesNet

torch.manual_seed(0)


class BaseRunner:
    def __init__(self, channels):
        self.model = SeriesNet(channels, 4)


class Predictor(BaseRunner):
    @torch.no_grad()
    def predict(self, x):
        return self.model(x)


runner = Predictor(3)
x = torch.randn(8, 3, 40)
first = runner.predict(x)

# -- check --
if not torch.allclose(first[:2], runner.predict(x[:2])):
    print("BUG: a sample's prediction depends on the rest of its batch")
''', ("first = runner.predict(x)", "runner.model.eval()\nfirst = runner.predict(x)"),
    "wrong-value", "BUG:", ((16, 16, "TL414"),), files=(("models.py", MODELS),))

PRUNE = '''\
import numpy as np
import torch


def hard_threshold(weight, sparsity):
    values = weight.detach().cpu().numpy().ravel()
    cut = np.percentile(np.abs(values), sparsity * 100.0)
    values[np.abs(values) < cut] = 0.0
    return torch.tensor(values.reshape(weight.shape), requires_grad=True)
'''

NUMPY_OF_AN_IMPORTED_RESULT = twin(
    "a helper of another module returns a tensor made to require grad, and numpy copies it", "TL415", '''\
import numpy as np
import torch
import torch.nn as nn

from prune import hard_threshold

torch.manual_seed(0)

layer = nn.Linear(8, 4)
kept = hard_threshold(layer.weight, 0.5)
mask = np.copy(kept) != 0
print(mask.sum())
''', ("mask = np.copy(kept) != 0", "mask = np.copy(kept.detach()) != 0"),
    "raises", "Can't call numpy() on Tensor that requires grad", ((11, 8, "TL415"),), files=(("prune.py", PRUNE),))

CASES = {
    "numpy_of_an_imported_result": NUMPY_OF_AN_IMPORTED_RESULT,
    "float64_into_an_imported_model": FLOAT64_INTO_AN_IMPORTED_MODEL,
    "model_set_by_a_base_class": MODEL_SET_BY_A_BASE_CLASS,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_method_whose_decorator_converts_the_arguments_takes_nothing_from_its_calls(project) -> None:
    """visdom's `@pytorch_wrap` turns tensor arguments into numpy arrays before the method
    runs: `Y` is no tensor in `line`, whatever `vis.line(Y=loss.view(1))` passes."""
    project.write("plots.py", '''\
import numpy as np
import torch


def pytorch_wrap(fn):
    def result(*args, **kwargs):
        for k in kwargs:
            if torch.is_tensor(kwargs[k]):
                kwargs[k] = kwargs[k].cpu().detach().numpy()
        return fn(*args, **kwargs)
    return result


class Board:
    @pytorch_wrap
    def line(self, Y, X=None):
        return np.stack([np.asarray(X, dtype=float).ravel(), np.asarray(Y).ravel()], 1)


w = torch.randn(3, requires_grad=True)
loss = (w ** 2).sum()
print(Board().line(Y=loss.view(1), X=np.array([0])))
''')
    assert project.findings("--no-cache", "--select", "TL415", "plots.py") == []


LAYERS = '''\
import math

import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, dim, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        scale = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        self.table = torch.zeros(max_len, dim)
        self.table[:, 0::2] = torch.sin(position * scale)
        self.table[:, 1::2] = torch.cos(position * scale)

    def forward(self, x):
        return x + self.table[:x.size(1)]


class TinyLM(nn.Module):
    def __init__(self, vocab, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = PositionalEncoding(dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.out(self.position(self.embed(tokens)))
'''

TRAIN = '''\
import torch
import torch.nn.functional as F

from layers import TinyLM

torch.manual_seed(0)
device = torch.device("meta")  # stands in for "cuda"

model = TinyLM(50).to(device)
tokens = torch.randint(0, 50, (4, 12), device=device)
logits = model(tokens)
loss = F.cross_entropy(logits.view(-1, 50), tokens.view(-1))
print(loss.shape)
'''


def test_a_class_moved_by_the_module_that_imports_it_is_checked_where_it_is_written(project) -> None:
    project.write("layers.py", LAYERS)
    project.write("train.py", TRAIN)
    assert project.findings("--no-cache", "--select", "TL416", ".") == [("layers.py", 12, 9, "TL416")]
    result = project.run("check", "--output-format", "json", "--no-cache", "--select", "TL416", ".")
    message = result.json()[0]["message"]
    assert "`TinyLM(50).to(device)` (train.py:9) does not move it" in message
    project.write("layers.py", LAYERS.replace("self.table = torch.zeros(max_len, dim)",
                                              'self.register_buffer("table", torch.zeros(max_len, dim))'))
    assert project.findings("--no-cache", "--select", "TL416", ".") == []


def test_the_program_of_a_class_moved_elsewhere_shows_the_bug_and_the_fix_does_not(project) -> None:
    pytest.importorskip("torch")
    project.write("layers.py", LAYERS)
    project.write("train.py", TRAIN)
    result = run_program(project, "train.py")
    assert result.returncode != 0 and "is not on the expected device" in result.stderr
    project.write("layers.py", LAYERS.replace("self.table = torch.zeros(max_len, dim)",
                                              'self.register_buffer("table", torch.zeros(max_len, dim))'))
    assert run_program(project, "train.py").returncode == 0


def test_a_class_nothing_moves_is_not_reported(project) -> None:
    project.write("layers.py", LAYERS)
    project.write("train.py", TRAIN.replace("model = TinyLM(50).to(device)", "model = TinyLM(50)").replace(
        ", device=device)", ")"))
    assert project.findings("--no-cache", "--select", "TL416", ".") == []


def test_the_cached_result_of_the_class_module_follows_the_module_that_moves_it(project) -> None:
    """layers.py's findings depend on train.py: with the cache on, moving the model there
    (or no longer) changes them on the next run, though layers.py did not change."""
    project.write("layers.py", LAYERS)
    project.write("train.py", TRAIN.replace("model = TinyLM(50).to(device)", "model = TinyLM(50)"))
    cache = ("--cache-dir", str(project.root / ".cache"), "--select", "TL416", ".")
    assert project.findings(*cache) == []
    project.write("train.py", TRAIN)
    assert project.findings(*cache) == [("layers.py", 12, 9, "TL416")]
    project.write("train.py", TRAIN.replace("model = TinyLM(50).to(device)", "model = TinyLM(50)"))
    assert project.findings(*cache) == []


def test_a_class_of_a_models_package_moved_by_a_script_beside_it_is_checked(project) -> None:
    """models/layers.py (a package) and train.py above it: `from models.layers import TinyLM`."""
    project.write("models/__init__.py", "")
    project.write("models/layers.py", LAYERS)
    project.write("train.py", TRAIN.replace("from layers import TinyLM", "from models.layers import TinyLM"))
    assert project.findings("--no-cache", "--select", "TL416", ".") == [("models/layers.py", 12, 9, "TL416")]
