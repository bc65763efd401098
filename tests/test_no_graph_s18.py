"""No graph where the analysis did not look before (issue 41, round 18): a function handed to a
class and called through the attribute that keeps it, the gradients of `torch.autograd.grad`
without `create_graph=True` in a term of the loss, and a loss made of constants on one path.
Real files through the real CLI; the runtime verdict under real torch where torchlint gives one."""

from __future__ import annotations

import pytest

CLOSURE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Fitter:
    def __init__(self, model, closure):
        self.model = model
        self.closure = closure

    def step(self, x, y):
        out = self.model(x)
        return self.closure(out.detach(), y)


def train_closure(out, y):
    loss = F.mse_loss(out, y)
    loss.backward()
    return loss.item()


fitter = Fitter(nn.Linear(4, 1), train_closure)
print(fitter.step(torch.randn(8, 4), torch.randn(8, 1)))
'''


def test_a_function_handed_to_a_class_gets_what_the_attribute_keeping_it_is_called_with(project) -> None:
    project.write("fit.py", CLOSURE)
    # The detach in `Fitter.step` is the line to change: `train_closure` differentiates what it gets.
    assert project.findings("--select", "TL408") == [("fit.py", 13, 29, "TL408")]
    result = project.run("check", "--select", "TL408", "--runtime", "fit.py")
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout
    project.write("fit.py", CLOSURE.replace("self.closure(out.detach(), y)", "self.closure(out, y)"))
    assert project.findings("--select", "TL408") == []


def test_a_function_kept_in_an_attribute_assigned_twice_is_not_followed(project) -> None:
    source = CLOSURE.replace("        self.closure = closure\n",
                             "        self.closure = closure\n\n    def reset(self):\n"
                             "        self.closure = print\n")
    project.write("fit.py", source)
    assert project.findings("--select", "TL408") == []


OBJECTIVE = '''
import numpy as np
import torch


class Objective:
    def __init__(self, loss_function):
        self.loss_function = loss_function

    def derivatives(self, predictions, targets):
        preds = torch.tensor(np.asarray(predictions), requires_grad=True)
        loss = self.loss_function(preds, torch.tensor(np.asarray(targets)))
        return torch.autograd.grad(loss, preds)[0]


def rank_loss(pred, target):
    pred_t = torch.tensor(pred.view(1, -1), requires_grad=True)
    return -(pred_t * target.view(1, -1)).sum()


print(Objective(rank_loss).derivatives(np.random.rand(5), np.random.rand(5)))
'''


def test_the_parameter_of_a_handed_function_is_known_to_be_the_tensor_passed(project) -> None:
    project.write("objective.py", OBJECTIVE)
    assert ("objective.py", 16, 14, "TL403") in project.findings("--select", "TL403")
    project.write("objective.py", OBJECTIVE.replace("torch.tensor(pred.view(1, -1), requires_grad=True)",
                                                    "pred.view(1, -1)"))
    assert project.findings("--select", "TL403") == []


PENALTY = '''
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
for step in range(3):
    real, fake = torch.randn(8, 2), torch.randn(8, 2) + 2
    alpha = torch.rand(8, 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(critic(mixed).sum(), mixed)[0]
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10.0 * penalty
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def test_a_gradient_penalty_without_create_graph_trains_nothing(project) -> None:
    project.write("wgan.py", PENALTY)
    assert project.findings("--select", "TL410,TL408") == [("wgan.py", 11, 13, "TL410")]
    project.write("wgan.py", PENALTY.replace("mixed)[0]", "mixed, create_graph=True)[0]"))
    assert project.findings("--select", "TL410,TL408") == []


def test_the_gradients_accumulated_over_parameters_in_a_loop_are_followed(project) -> None:
    source = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 2)
batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(2)]
total, grads = 0, []
for x, y in batches:
    env_loss = F.cross_entropy(model(x), y)
    total += env_loss
    grads.append(torch.autograd.grad(env_loss, model.parameters(), retain_graph=True))
penalty = 0
for grad in grads:
    for g in grad:
        penalty += g.pow(2).sum()
(total + 0.5 * penalty).backward()
'''
    project.write("irm.py", source)
    assert project.findings("--select", "TL410,TL408") == [("irm.py", 11, 18, "TL410")]
    project.write("irm.py", source.replace("retain_graph=True", "create_graph=True"))
    assert project.findings("--select", "TL410,TL408") == []


@pytest.mark.parametrize("term, reported", [
    ("0.1 * torch.tensor(reg.item())", True),  # a round trip through a Python number
    ("0.1 * reg.detach()", False),  # a detach may be meant (a target, a straight-through)
    ("0.1 * reg", False),
])
def test_a_term_of_the_loss_made_from_plain_values(project, term: str, reported: bool) -> None:
    source = f'''
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 3)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
out = model(x)
reg = out.pow(2).mean()
loss = F.cross_entropy(out, y) + {term}
loss.backward()
'''
    project.write("reg.py", source)
    found = project.findings("--select", "TL410,TL408")
    assert (found == [("reg.py", 9, 40, "TL410")]) if reported else found == [], found


def test_a_loss_scaled_by_a_round_trip_is_no_inert_term(project) -> None:
    source = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(4, 3)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
out = model(x)
ce = F.cross_entropy(out, y)
loss = ce * torch.tensor(1.0 / ce.item()) + out.pow(2).mean()
loss.backward()
'''
    project.write("scaled.py", source)
    assert project.findings("--select", "TL410,TL408") == []


EMPTY_TARGETS = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def box_loss(pred, boxes):
    if boxes.numel() == 0:
        return torch.tensor(0.0)
    return F.l1_loss(pred[: len(boxes)], boxes)


model = nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for boxes in [torch.rand(2, 4), torch.zeros(0, 4)]:
    loss = box_loss(model(torch.randn(3, 4)), boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
'''


def test_a_loss_returned_as_a_constant_when_there_is_no_target_has_no_graph(project) -> None:
    project.write("boxes.py", EMPTY_TARGETS)
    assert project.findings("--select", "TL408") == [("boxes.py", 10, 16, "TL408")]
    result = project.run("check", "--select", "TL408", "--runtime", "boxes.py")
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout


@pytest.mark.parametrize("edit", [
    ("torch.tensor(0.0)", "torch.tensor(0.0, requires_grad=True)"),  # a leaf: backward runs
    ("torch.tensor(0.0)", "pred.sum() * 0"),  # the graph of the predictions
    ("    loss = box_loss(", "    loss = model(torch.randn(3, 4)).pow(2).mean() + box_loss("),  # another term
])
def test_a_constant_on_one_path_with_a_graph_beside_it_is_left_alone(project, edit) -> None:
    project.write("boxes.py", EMPTY_TARGETS.replace(*edit))
    assert project.findings("--select", "TL408") == []


def test_constants_on_every_pass_of_a_loop_that_skips_the_rest(project) -> None:
    source = '''
import torch
import torch.nn as nn

model = nn.Linear(4, 2)


def batch_loss(scores, targets):
    losses = []
    for score, target in zip(scores, targets):
        if target.sum() == 0:
            losses.append(torch.zeros(()))
            continue
        losses.append((score - target).abs().mean())
    return torch.stack(losses).mean()


loss = batch_loss(model(torch.randn(3, 4)), torch.zeros(3, 2))
loss.backward()
'''
    project.write("batch.py", source)
    assert project.findings("--select", "TL408") == [("batch.py", 11, 27, "TL408")]
    project.write("batch.py", source.replace("            continue\n", ""))
    assert project.findings("--select", "TL408") == []


LEFT_OFF = '''
import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, training=False):
        super().__init__()
        self.net = nn.Conv2d(1, 1, 3, padding=1)
        self.training_mode = training

    def refine(self, x):
        torch.set_grad_enabled(True)
        x = x.requires_grad_()
        score = torch.autograd.grad(self.net(x).sum(), x, create_graph=True)[0]
        if not self.training_mode:
            torch.set_grad_enabled(False)
        return x - score

    def forward(self, x):
        return self.refine(x)


def build():
    return Denoiser()


denoiser = build()
clean = denoiser(torch.rand(1, 1, 8, 8))
head = nn.Linear(64, 1)
loss = head(clean.detach().flatten(1)).mean()
loss.backward()
'''


def test_gradients_switched_off_under_an_if_by_a_module_built_by_a_function_stay_off(project) -> None:
    project.write("denoise.py", LEFT_OFF)
    assert project.findings("--select", "TL408") == [("denoise.py", 16, 13, "TL408")]
    result = project.run("check", "--select", "TL408", "--runtime", "denoise.py")
    assert "(when `not self.training_mode`, line 15)" in result.stdout
    assert "CONFIRMED: RuntimeError: element 0 of tensors does not require grad" in result.stdout
    project.write("denoise.py", LEFT_OFF.replace("        if not self.training_mode:\n"
                                                 "            torch.set_grad_enabled(False)\n", ""))
    assert project.findings("--select", "TL408") == []


FROZEN_TOWER = '''
import torch
import torch.nn as nn


class ImageEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    @torch.no_grad()
    def forward(self, images):
        return self.backbone(images)


class Captioner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = ImageEncoder()
        self.head = nn.Linear(8, 10)

    def forward(self, images):
        return self.head(self.encoder(images))


model = Captioner()
model.encoder.backbone.requires_grad_(True)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
loss = model(torch.rand(2, 3, 16, 16)).logsumexp(1).mean()
loss.backward()
optimizer.step()
'''


def test_a_layer_made_to_train_that_runs_only_in_a_no_grad_forward(project) -> None:
    project.write("caption.py", FROZEN_TOWER)
    assert project.findings("--select", "TL408") == [("caption.py", 10, 5, "TL408")]
    loop = "for p in model.encoder.backbone.parameters():\n    p.requires_grad = True\n"
    project.write("caption.py", FROZEN_TOWER.replace("model.encoder.backbone.requires_grad_(True)\n", loop))
    assert project.findings("--select", "TL408") == [("caption.py", 10, 5, "TL408")]


@pytest.mark.parametrize("edit", [
    ("    @torch.no_grad()\n", ""),  # the decorator removed: it trains
    ("requires_grad_(True)", "requires_grad_(False)"),  # kept frozen, as the decorator says
    ("model = Captioner()\n", "model = Captioner()\nfeatures = model.encoder.backbone(torch.rand(1, 3, 16, 16))\n"),
])
def test_a_no_grad_forward_with_nothing_made_to_train_through_it_only(project, edit) -> None:
    project.write("caption.py", FROZEN_TOWER.replace(*edit))
    assert project.findings("--select", "TL408") == []


def test_a_backward_run_only_under_a_test_may_be_kept_from_the_constant(project) -> None:
    guarded = EMPTY_TARGETS.replace("    loss.backward()\n", "    if boxes.numel() > 0:\n        loss.backward()\n")
    project.write("boxes.py", guarded)
    assert project.findings("--select", "TL408") == []
