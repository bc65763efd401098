"""The functions torch_api lists as converting the tensors they are given to arrays do so on
the torch in use: each raises numpy's "requires grad" error on a tensor that requires grad,
and TL415 reports each call in a file."""


import pytest

from torchlint.analysis import torch_api

torch = pytest.importorskip("torch")
numpy = pytest.importorskip("numpy")

# Arguments for the functions that need more than one array, or something else.
_CALLS = {
    "numpy.einsum": lambda f, t: f("i,i", t, t),
    "numpy.save": lambda f, t: f(__import__("io").BytesIO(), t),
    "numpy.savetxt": lambda f, t: f(__import__("io").StringIO(), t),
    "numpy.percentile": lambda f, t: f(t, 50),
    "numpy.quantile": lambda f, t: f(t, 0.5),
    "numpy.expand_dims": lambda f, t: f(t, 0),
    "numpy.tile": lambda f, t: f(t, 2),
    "matplotlib.pyplot.imshow": lambda f, t: f(t.reshape(2, 3)),
    "matplotlib.pyplot.matshow": lambda f, t: f(t.reshape(2, 3)),
    "matplotlib.pyplot.pcolormesh": lambda f, t: f(t.reshape(2, 3)),
    "matplotlib.pyplot.contourf": lambda f, t: f(t.reshape(2, 3)),
    "matplotlib.pyplot.errorbar": lambda f, t: f(t, t, yerr=t),
    "sklearn.metrics.pairwise.cosine_similarity": lambda f, t: f(t.reshape(2, 3)),
    "sklearn.metrics.pairwise.euclidean_distances": lambda f, t: f(t.reshape(2, 3)),
    "sklearn.metrics.pairwise_distances": lambda f, t: f(t.reshape(2, 3)),
    "sklearn.metrics.auc": lambda f, t: f(torch.arange(6.0), t),
    "numpy.clip": lambda f, t: f(t, 0.2, 0.8),
    "numpy.reshape": lambda f, t: f(t, (2, 3)),
    "numpy.argmax": lambda f, t: f(t.reshape(2, 3), axis=1),
    "numpy.round": lambda f, t: f(t, 2),
    # scipy's optimizers convert the starting point they are given, by position or keyword.
    "scipy.optimize.minimize": lambda f, t: f(lambda x: float((x ** 2).sum()), x0=t),
    "scipy.optimize.least_squares": lambda f, t: f(lambda x: x - 1.0, t),
    "scipy.optimize.root": lambda f, t: f(lambda x: x - 1.0, t),
    "scipy.optimize.fsolve": lambda f, t: f(lambda x: x - 1.0, t),
    "scipy.optimize.curve_fit": lambda f, t: f(lambda x, a: a * x, numpy.arange(6.0), numpy.arange(6.0), p0=t[:1]),
}
_BINARY = {"numpy.dot", "numpy.matmul", "numpy.inner", "numpy.outer", "numpy.maximum", "numpy.minimum",
           "numpy.add", "numpy.subtract", "numpy.multiply", "numpy.divide", "numpy.power", "numpy.isclose",
           "numpy.allclose", "scipy.stats.pearsonr", "scipy.stats.spearmanr", "scipy.stats.kendalltau",
           "matplotlib.pyplot.step", "matplotlib.pyplot.scatter", "matplotlib.pyplot.bar", "matplotlib.pyplot.fill_between"}
_LABELS = {"sklearn.metrics.accuracy_score", "sklearn.metrics.f1_score", "sklearn.metrics.precision_score",
           "sklearn.metrics.recall_score", "sklearn.metrics.confusion_matrix",
           "sklearn.metrics.classification_report", "sklearn.metrics.balanced_accuracy_score",
           "sklearn.metrics.matthews_corrcoef", "sklearn.metrics.cohen_kappa_score", "sklearn.metrics.hamming_loss"}


def _function(qualname: str):
    module_name, _, name = qualname.rpartition(".")
    if module_name.startswith("matplotlib"):
        matplotlib = pytest.importorskip("matplotlib")
        matplotlib.use("Agg")
    module = pytest.importorskip(module_name)
    return getattr(module, name)


@pytest.mark.parametrize("qualname", sorted(torch_api.ARRAY_CONVERTING_FUNCTIONS))
def test_each_function_converts_a_tensor_that_requires_grad(qualname: str) -> None:
    function = _function(qualname)
    torch.manual_seed(0)
    scores = torch.rand(6, requires_grad=True)
    if qualname in _LABELS:
        labels = torch.tensor([0, 1, 0, 1, 1, 0])
        call = lambda: function(labels, (scores > 0.5).float().requires_grad_())  # noqa: E731
    elif qualname in _CALLS:
        call = lambda: _CALLS[qualname](function, scores)  # noqa: E731
    elif qualname.startswith("sklearn."):
        labels = torch.tensor([0, 1, 0, 1, 1, 0])
        call = lambda: function(labels, scores)  # noqa: E731
    elif qualname in _BINARY:
        call = lambda: function(scores, scores)  # noqa: E731
    else:
        call = lambda: function(scores)  # noqa: E731
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        call()
    with torch.no_grad():
        call()  # the same call on values without a graph works


def test_a_metric_and_a_plot_of_a_model_output_are_reported(project) -> None:
    project.write("metrics.py", '''
import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
import matplotlib.pyplot as plt

model = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
scores = model(torch.randn(8, 4)).squeeze(1)
labels = torch.tensor([0, 1, 0, 1, 1, 0, 1, 0])
auc = roc_auc_score(labels, scores)
plt.plot(scores)
similarity = np.dot(scores, scores)
with torch.no_grad():
    quiet = model(torch.randn(8, 4)).squeeze(1)
plt.plot(quiet)
plt.plot(scores.detach())
''')
    assert [(row, code) for _, row, _, code in project.findings("--no-cache", "--select", "TL415")] == [
        (10, "TL415"), (11, "TL415"), (12, "TL415")]


def test_a_plot_of_a_list_of_losses_that_keep_their_graph(project) -> None:
    project.write("fit.py", '''
import torch
import matplotlib.pyplot as plt

w = torch.zeros(1, requires_grad=True)
x = torch.randn(20)
y = 3 * x + 1
losses, values = [], []
for epoch in range(5):
    loss = ((x * w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    losses.append(loss)
    values.append(loss.item())
plt.plot(range(5), values)
plt.plot(range(5), losses)
''')
    # Reported where the tensor is appended (the line to change), naming the plot that raises.
    found = project.run("check", "--no-cache", "--select", "TL415", "--output-format", "json").json()
    assert [(item["location"]["row"], item["code"]) for item in found] == [(14, "TL415")]
    assert "`plt.plot(range(5), losses)` (line 17)" in found[0]["message"]
