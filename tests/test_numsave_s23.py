"""Session 23 facts of the requires-grad analysis (TL415) and of the view analysis (TL303),
each on a bad program and its corrected near-twin, linted through the real CLI (shapes of
our own; tests/test_array_conversions.py runs the scipy functions under torch):

- ``nn.Sequential(a, b, c)`` holds the modules it is given: ``model[0]`` is ``a`` (its
  parameters, and the layers of a module of the file it is), and iterating over it gives
  instances of one class of the file when all of them are;
- a function that converts its arrays converts a tensor given by keyword too, and scipy's
  optimizers convert their starting point (``minimize(f, x0=t)``);
- every item of the tuple of views a call returns (``hx = h.unbind(0)``; ``hx[i]``, whatever
  the index) is one of those views, and an in-place change of shape (``squeeze_``, ``t_``)
  is an in-place operation on it, which autograd refuses.
"""

from __future__ import annotations

from tests.conftest import finding_rows, lint_findings

SEQUENTIAL_INDEX = """
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)

    def forward(self, x):
        return self.embed(x).mean(1)


model = nn.Sequential(Encoder(), nn.Linear(4, 2))
loss = model(torch.randint(0, 10, (3, 5))).pow(2).mean()
loss.backward()
table = model[0].embed
print(np.allclose(table.weight[1, :], table.weight[2, :]))
print(model[1].weight.numpy().shape)
"""


def test_an_item_of_a_sequential_is_the_module_given_there(tmp_path):
    found = lint_findings(tmp_path, SEQUENTIAL_INDEX, "TL415")
    assert finding_rows(found) == [(20, "TL415"), (21, "TL415")]
    assert "a parameter of `table`" in found[0]["message"]


def test_detached_items_of_a_sequential_are_quiet(tmp_path):
    fixed = SEQUENTIAL_INDEX.replace("table.weight[1, :], table.weight[2, :]",
                                     "table.weight[1, :].detach(), table.weight[2, :].detach()")
    fixed = fixed.replace("model[1].weight.numpy()", "model[1].weight.detach().numpy()")
    assert lint_findings(tmp_path, fixed, "TL415") == []


def test_a_sequential_appended_to_is_not_read_by_position(tmp_path):
    # `model.append(..)` may put another module anywhere: which one `model[0]` is is not known.
    source = SEQUENTIAL_INDEX.replace("loss = model(", "model.append(nn.Identity())\nloss = model(")
    assert lint_findings(tmp_path, source, "TL415") == []


EXPORT = """
import numpy as np
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, 1, bias=False)

    def forward(self, x):
        return self.conv(x).relu()


class Exported:
    def __init__(self, w):
        self.kernel = w.conv.weight.permute(2, 3, 1, 0).numpy()


model = nn.Sequential(Block(3, 8), Block(8, 4))
layers = [Exported(m) for m in model]
print(np.stack([layer.kernel.sum() for layer in layers]))
"""


def test_each_module_of_a_sequential_of_one_class(tmp_path):
    assert finding_rows(lint_findings(tmp_path, EXPORT, "TL415")) == [(18, "TL415")]
    fixed = EXPORT.replace(".permute(2, 3, 1, 0).numpy()", ".permute(2, 3, 1, 0).detach().numpy()")
    assert lint_findings(tmp_path, fixed, "TL415") == []


OPTIMIZE = """
import numpy as np
import scipy.optimize
import torch


def objective(values):
    x = torch.tensor(values, requires_grad=True)
    loss = ((x - 3.0) ** 2).sum()
    loss.backward()
    return loss.item(), x.grad.numpy()


start = torch.zeros(4, dtype=torch.float64, requires_grad=True)
result = scipy.optimize.minimize(objective, x0=start, jac=True, method="L-BFGS-B")
print(np.round(result.x, 3))
"""


def test_a_starting_point_given_by_keyword_is_converted(tmp_path):
    assert finding_rows(lint_findings(tmp_path, OPTIMIZE, "TL415")) == [(15, "TL415")]
    fixed = OPTIMIZE.replace("x0=start,", "x0=start.detach().numpy(),")
    assert lint_findings(tmp_path, fixed, "TL415") == []


def test_an_item_of_the_views_unbind_returns_changed_in_shape(tmp_path):
    found = lint_findings(tmp_path, """
        import torch

        w = torch.randn(2, 1, 3, requires_grad=True)
        hidden = w * 2
        hx = hidden.unbind(0)
        hx = [hx[i].squeeze_(0) for i in range(2)]
        parts = hidden.split(1)
        parts[0].t_()
        """, "TL303")
    assert finding_rows(found) == [(7, "TL303"), (9, "TL303")]
    assert "one of the views `hidden.unbind(0)` returns of `hidden`" in found[0]["message"]


def test_out_of_place_changes_of_shape_and_tuples_grown_are_quiet(tmp_path):
    found = lint_findings(tmp_path, """
        import torch

        w = torch.randn(2, 1, 3, requires_grad=True)
        hidden = w * 2
        hx = hidden.unbind(0)
        hx = [hx[i].squeeze(0) for i in range(2)]
        parts = hidden.split(1)
        parts += (hidden,)
        with torch.no_grad():
            frozen = hidden.unbind(0)
            frozen[0].unsqueeze_(0)
        detached = hidden.detach().unbind(0)
        detached[0].unsqueeze_(0)
        """, "TL303")
    assert found == []


EIGH = """
import torch

a = torch.randn(5, 5, requires_grad=True)
k = a @ a.T
evals, evecs = torch.linalg.eigh(k)
evals.clamp_min_(0.0)
values, order = torch.sort(k.sum(1))
values.mul_(2)
loss = (evecs * evals.sqrt()).sum() + (values * order.float()).sum()
loss.backward()
"""


def test_a_saved_tensor_of_a_tuple_result_written_in_place(tmp_path):
    # `eigh` keeps both its eigenvalues and eigenvectors for backward; `sort` keeps only its
    # indices, so writing its values is fine (torch's facts say which, measured).
    found = lint_findings(tmp_path, EIGH, "TL409")
    assert finding_rows(found) == [(7, "TL409")]
    assert "`torch.linalg.eigh(k)` saved for backward" in found[0]["message"]
    fixed = EIGH.replace("evals.clamp_min_(0.0)", "evals = evals.clamp_min(0.0)")
    assert lint_findings(tmp_path, fixed, "TL409") == []


def test_the_facts_name_the_kept_items_of_tuple_results():
    from torchlint.analysis import torch_facts

    assert torch_facts.kept_outputs(torch_facts.fact("torch.linalg.eigh")) == {0, 1}
    assert torch_facts.kept_outputs(torch_facts.fact("torch.sort")) == {1}
    assert torch_facts.kept_outputs(torch_facts.fact("torch.frexp")) == {1}
    assert torch_facts.kept_outputs(torch_facts.fact("torch.exp")) == frozenset()
