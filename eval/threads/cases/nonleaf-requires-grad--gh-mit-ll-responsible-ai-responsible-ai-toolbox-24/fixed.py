# A robustness toolbox: freeze(*items) switches off requires_grad on tensors and module
# parameters and returns a function restoring them; a perturbation utility freezes the
# model and its data while it optimizes a perturbation of that data.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def freeze(*items):
    param_states = {}
    for item in items:
        params = item.parameters() if isinstance(item, nn.Module) else [item]
        for param in params:
            if param not in param_states:
                param_states[param] = param.requires_grad
                param.requires_grad_(False)

    def restore_state():
        for p, requires_grad in param_states.items():
            p.requires_grad_(requires_grad)

    return restore_state


def gradient_ascent(*, model, data, target, epsilon=0.1, steps=3, step_size=0.05):
    data = data.detach() if not data.is_leaf else data
    restore = freeze(model, data, target)
    delta = torch.zeros_like(data, requires_grad=True)
    for _ in range(steps):
        loss = F.cross_entropy(model(data + delta), target)
        (grad,) = torch.autograd.grad(loss, delta)
        with torch.no_grad():
            delta += step_size * grad.sign()
            delta.clamp_(-epsilon, epsilon)
    restore()
    return (data + delta).detach(), loss.item()


# the data to perturb comes out of a (trainable) feature extractor
extractor = nn.Linear(20, 10)
classifier = nn.Sequential(nn.ReLU(), nn.Linear(10, 3))
raw = torch.randn(8, 20)
features = 2 * extractor(raw)
labels = torch.randint(0, 3, (8,))

adv, adv_loss = gradient_ascent(model=classifier, data=features, target=labels)
print("adversarial loss", round(adv_loss, 4), tuple(adv.shape))
