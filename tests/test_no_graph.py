"""TL408 on the shared graph-absence analysis (torchlint/analysis/no_graph.py): real files
through the real CLI, and the runtime verdict under real torch."""

from __future__ import annotations

import pytest

from torchlint.analysis import torch_api

FROZEN_EVALUATION = '''
import torch
import torch.nn as nn


def attack(model, x, y):
    x = x.clone().requires_grad_(True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return x.grad.sign()


def evaluate(model, batches):
    torch.set_grad_enabled(False)
    model.eval()
    for x, y in batches:
        noise = attack(model, x, y)
        print((model(x + 0.1 * noise).argmax(1) == y).float().mean().item())
    torch.set_grad_enabled(True)


model = nn.Sequential(nn.Linear(4, 3))
evaluate(model, [(torch.randn(5, 4), torch.randint(0, 3, (5,)))])
'''

ROUND_TRIP = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, a, b):
        return torch.clamp(self.margin - F.pairwise_distance(a, b), min=0.0).mean()


model = nn.Linear(4, 2)
criterion = PairLoss(1.0)
x = torch.randn(6, 4)
out = model(x)
picked = torch.from_numpy(out.data.numpy()[:3])
loss = criterion(picked, torch.from_numpy(out.data.numpy()[3:]))
loss.backward()
'''


def test_a_set_grad_enabled_false_statement_turns_gradients_off_for_what_follows(project) -> None:
    project.write("attack.py", FROZEN_EVALUATION)
    assert project.findings("--select", "TL408") == [("attack.py", 16, 17, "TL408")]
    # Turned back on before the call: nothing to report.
    turned_on = "        torch.set_grad_enabled(True)\n        noise = attack"
    project.write("attack.py", FROZEN_EVALUATION.replace("        noise = attack", turned_on))
    assert project.findings("--select", "TL408") == []


def test_a_round_trip_through_numpy_into_a_loss_of_the_file_is_reported_where_it_is_made(project) -> None:
    project.write("pairs.py", ROUND_TRIP)
    assert project.findings("--select", "TL408") == [("pairs.py", 19, 10, "TL408")]
    # Indexing the output itself keeps the graph.
    project.write("pairs.py", ROUND_TRIP.replace("torch.from_numpy(out.data.numpy()[:3])", "out[:3]")
                  .replace("torch.from_numpy(out.data.numpy()[3:])", "out[3:]"))
    assert project.findings("--select", "TL408") == []


@pytest.mark.parametrize("forward", [
    "return (a - b).pow(2).mean() * self.scale",  # a parameter of its own
    "return self.helper(a, b)",  # something the analysis does not follow
])
def test_a_module_of_the_file_that_may_attach_its_output_proves_nothing(project, forward) -> None:
    source = ROUND_TRIP.replace("return torch.clamp(self.margin - F.pairwise_distance(a, b), min=0.0).mean()", forward)
    if "scale" in forward:
        scale = "self.margin = margin\n        self.scale = nn.Parameter(torch.ones(()))"
        source = source.replace("self.margin = margin", scale)
    project.write("pairs.py", source)
    assert project.findings("--select", "TL408") == []


def test_the_round_trip_is_confirmed_at_runtime(project) -> None:
    project.write("pairs.py", ROUND_TRIP)
    result = project.run("check", "--select", "TL408", "--runtime", "pairs.py")
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout


@pytest.mark.parametrize("method", sorted(torch_api.VALUES_AND_INDICES))
def test_values_and_indices_methods_return_integer_indices_without_a_graph(method: str) -> None:
    torch = pytest.importorskip("torch")
    scores = torch.randn(4, 5, requires_grad=True)
    arguments = {"topk": (2,), "kthvalue": (2,)}.get(method, (1,) if method in torch_api.VALUES_AND_INDICES_WITH_DIM
                                                     or method in ("cummax", "cummin") else ())
    result = getattr(scores, method)(*arguments)
    assert result[1] is result.indices and result.indices.dtype == torch.int64
    assert result.indices.grad_fn is None and result.values.grad_fn is not None


STOPPED = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 3)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
out = model(x)
{loss}
loss.backward()
'''


@pytest.mark.parametrize("loss, reported", [
    ("loss = nn.functional.mse_loss(out.argmax(1).float(), y.float())", True),
    ("_, predicted = torch.max(out, 1)\nloss = (predicted.float() - y.float()).pow(2).mean()", True),
    ("loss = (out.max(1)[1] != y).float().mean()", True),
    ("loss = (out.topk(2).indices.float() - 1).abs().mean()", True),
    # the values of max keep the graph; so does a mask multiplying the loss
    ("values, _ = torch.max(out, 1)\nloss = values.mean()", False),
    ("loss = (nn.functional.cross_entropy(out, y, reduction='none') * (y > 0).float()).mean()", False),
    ("loss = torch.max(out, torch.zeros(8, 3)).mean()", False),  # the elementwise max of two tensors
])
def test_results_no_gradient_flows_through(project, loss: str, reported: bool) -> None:
    project.write("train.py", STOPPED.format(loss=loss))
    found = project.findings("--select", "TL408")
    assert bool(found) is reported, found
    if reported:
        result = project.run("check", "--select", "TL408", "--runtime", "train.py")
        assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout


def test_tensors_made_without_requires_grad_elsewhere_or_later_are_not_judged(project) -> None:
    source = """
import torch

def fit(features, targets, weights):
    loss = ((features @ weights - targets) ** 2).mean()
    loss.backward()

weights = torch.randn(3, 1)
fit(torch.randn(5, 3), torch.randn(5, 1), weights)
"""
    project.write("fit.py", source)
    assert project.findings("--select", "TL408") == []
    project.write("fit.py", "import torch\nw = torch.randn(3, 1)\nw.requires_grad = True\n"
                            "loss = (torch.randn(4, 3) @ w).sum()\nloss.backward()\n")
    assert project.findings("--select", "TL408") == []


# --- through a helper's parameters, `.detach()` of an unknown value, lists of plain values ---------

HELPER_LOSS = '''\
import torch
import torch.nn as nn


def compute_loss(model, x, y):
    out = model(x).detach()
    return nn.functional.mse_loss(out, y)


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = compute_loss(model, torch.randn(8, 4), torch.randn(8, 1))
    opt.zero_grad()
    loss.backward()
    opt.step()
'''


def test_a_helper_that_detaches_the_output_of_a_model_it_is_given(project) -> None:
    project.write("train.py", HELPER_LOSS)
    assert project.findings("--select", "TL408") == [("train.py", 6, 11, "TL408")]
    result = project.run("check", "--select", "TL408", "--runtime", "train.py")
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout
    # The target a call site passes may require grad: then nothing is shown.
    project.write("train.py", HELPER_LOSS.replace("torch.randn(8, 1))", "torch.randn(8, 1, requires_grad=True))"))
    assert project.findings("--select", "TL408") == []
    project.write("train.py", HELPER_LOSS.replace("model(x).detach()", "model(x)"))
    assert project.findings("--select", "TL408") == []


PLAIN_LOSSES = '''\
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
losses = []
for i in range(8):
    out = model(x[i])
    losses.append(((out - y[i]) ** 2).{take})
loss = torch.tensor(losses).mean()
loss.backward()
'''


def test_a_tensor_made_from_a_list_of_item_values_has_no_graph(project) -> None:
    project.write("losses.py", PLAIN_LOSSES.format(take="item()"))
    assert project.findings("--select", "TL408") == [("losses.py", 10, 8, "TL408")]
    project.write("losses.py", PLAIN_LOSSES.format(take="sum()").replace("torch.tensor(losses)", "torch.stack(losses)"))
    assert project.findings("--select", "TL408") == []


NO_GRAD_FORWARD = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    {decorator}
    def forward(self, x):
        return self.fc(x){read}


net = Net()
loss = ((net(torch.randn(8, 4)) - torch.randn(8, 1)) ** 2).mean()
loss.backward()
'''


@pytest.mark.parametrize("decorator, read, reported", [
    ("@torch.no_grad()", "", (10, 5)),  # at the decorator, the line to change
    ("", ".data", (12, 16)),  # at the `.data` in `forward`
    ("", "", None),
    ("@torch.enable_grad()", "", None),
])
def test_what_the_forward_of_a_module_of_the_file_returns(project, decorator, read, reported) -> None:
    project.write("net.py", NO_GRAD_FORWARD.format(decorator=decorator, read=read))
    assert project.findings("--select", "TL408") == ([("net.py", *reported, "TL408")] if reported else [])
