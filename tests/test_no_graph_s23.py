"""No graph where torch itself turns gradients off (issue 41, round 23):

- autograd runs backward with gradients disabled, so a hook it calls during backward (a
  module's backward hook, a tensor's hook) records no graph, nor does a function of the file
  called only from such hooks: a `backward()` on what they compute raises, unless that
  computation is wrapped in `torch.enable_grad()` (or the backward that fires them creates a
  graph);
- a function's result is what the path its arguments select returns: a helper that returns a
  comparison (a hard threshold, a step) when a parameter is set, given that parameter by every
  call (a literal, a default, through a caller's parameter or an attribute of `self` its
  `__init__` sets), has no graph; the finding is on the argument that selects the path;
- a step no gradient flows through (a comparison, `argmax`) of data that never had a graph
  cuts nothing: a target made by a comparison is not where the graph was lost, the `argmax`
  of the predictions is.

Each bad program is found on the line named and its fixed twin is clean; both run under torch,
the bad one raising "element 0 of tensors does not require grad"."""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings
from torch_programs import run_program

HOOK_RECOMPUTES = """
import torch
import torch.nn as nn


def weight_gradient(inputs, layer, grad_output):
    x = inputs.detach().requires_grad_(True)
    copy = nn.Linear(layer.in_features, layer.out_features)
    copy.load_state_dict(layer.state_dict())
    out = copy(x)
    (out * grad_output).sum().backward()
    return copy.weight.grad


seen, grads = {}, {}


def remember(module, args):
    seen[module] = args[0].detach()


def on_backward(module, grad_input, grad_output):
    grads[module] = weight_gradient(seen[module], module, grad_output[0])


net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
for layer in (net[0], net[2]):
    layer.register_forward_pre_hook(remember)
    layer.register_full_backward_hook(on_backward)
x = torch.randn(3, 4, requires_grad=True)
net(x).pow(2).sum().backward()
print(sorted(g.shape for g in grads.values()))
"""

TENSOR_HOOK = """
import torch

w = torch.randn(5, requires_grad=True)
scale = torch.nn.Linear(5, 5)


def penalise(grad):
    score = scale(grad).norm()
    score.backward()
    return grad


w.register_hook(penalise)
(w * 3).sum().backward()
"""

HARD_MASK = """
import torch
import torch.nn as nn


def soften(scores, hard=None):
    probs = torch.sigmoid(scores)
    if hard is not None:
        return (probs > hard).float()
    return probs


def overlap(probs, target):
    return (probs * target).sum() / (probs.sum() + target.sum() + 1e-6)


class OverlapLoss(nn.Module):
    def __init__(self, hard=None):
        super().__init__()
        self.hard = hard

    def forward(self, scores, target):
        return 1 - overlap(soften(scores, self.hard), target)


net = nn.Conv2d(1, 1, 3, padding=1)
criterion = OverlapLoss(hard=0.5)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    image, mask = torch.rand(2, 1, 8, 8), torch.rand(2, 1, 8, 8).round()
    loss = criterion(net(image), mask)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

HARD_PREDICTIONS = """
import torch
import torch.nn as nn

features = torch.randn(16, 4)
labels = (features[:, 0] > 0).float()
net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    predicted = net(features).argmax(1).float()
    loss = ((predicted - labels) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

CASES = {
    # name: (source, row of the finding, (text in bad, text in fixed))
    "hook_recomputes": (HOOK_RECOMPUTES, 11, ("    out = copy(x)\n    (out * grad_output).sum().backward()",
                                              "    with torch.enable_grad():\n        out = copy(x)\n"
                                              "        (out * grad_output).sum().backward()")),
    "tensor_hook": (TENSOR_HOOK, 10, ("    score = scale(grad).norm()\n    score.backward()",
                                      "    with torch.enable_grad():\n        score = scale(grad).norm()\n"
                                      "        score.backward()")),
    "hard_predictions": (HARD_PREDICTIONS, 10, ("net(features).argmax(1).float()",
                                                "net(features).softmax(1)[:, 1]")),
    "hard_mask": (HARD_MASK, 27, ("criterion = OverlapLoss(hard=0.5)", "criterion = OverlapLoss()")),
}


def _source(case: str, fixed: bool) -> str:
    source, _row, (bad, good) = CASES[case]
    assert bad in source
    return source.replace(bad, good) if fixed else source


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(tmp_path, case) -> None:
    assert finding_rows(lint_findings(tmp_path, _source(case, False), "TL408")) == [(CASES[case][1], "TL408")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fixed_twin_has_no_finding(tmp_path, case) -> None:
    assert lint_findings(tmp_path, _source(case, True), "TL408") == []


def test_a_hook_fired_by_a_backward_that_creates_a_graph_records_one(tmp_path) -> None:
    source = HOOK_RECOMPUTES.replace("net(x).pow(2).sum().backward()",
                                     "net(x).pow(2).sum().backward(create_graph=True)")
    assert lint_findings(tmp_path, source, "TL408") == []


def test_a_function_also_called_outside_backward_is_left_alone(tmp_path) -> None:
    source = HOOK_RECOMPUTES + "weight_gradient(torch.randn(3, 4), net[0], torch.randn(3, 8))\n"
    assert lint_findings(tmp_path, source, "TL408") == []


def test_a_path_callers_do_not_agree_on_is_left_alone(tmp_path) -> None:
    source = HARD_MASK.replace("opt.step()\n", "opt.step()\nprint(OverlapLoss()(net(image), mask))\n")
    assert lint_findings(tmp_path, source, "TL408") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(tmp_path, case) -> None:
    pytest.importorskip("torch")
    for fixed in (False, True):
        path = tmp_path / "train.py"
        path.write_text(_source(case, fixed))
        run = run_program(path, cwd=tmp_path, timeout=120)
        if fixed:
            assert run.returncode == 0, run.stderr[-500:]
        else:
            assert "does not require grad and does not have a grad_fn" in run.stderr, run.stderr[-500:]
