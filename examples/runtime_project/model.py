"""A tiny regression model and its training step.

The step has a bug from the pre-0.4 days: weight decay written through `p.data` *between*
the forward pass and backward().  The second layer saved its weight for backward; the
write changes those bytes without bumping the version counter, so autograd cannot notice,
and the first layer's gradient is computed with the decayed weight: silently wrong.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self, features: int = 4, hidden: int = 16):
        super().__init__()
        self.hidden = nn.Linear(features, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


def train_step(model, optimizer, batch: dict, weight_decay: float = 0.5):
    """One step on ``batch = {"x": inputs, "y": targets}``; returns the loss."""
    optimizer.zero_grad()
    loss = F.mse_loss(model(batch["x"]), batch["y"])
    for p in model.parameters():
        p.data.mul_(1 - weight_decay)  # BUG: before backward(); move it after optimizer.step()
    loss.backward()
    optimizer.step()
    return loss.item()


def make_batches(count: int, size: int = 32, features: int = 4, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(count):
        x = torch.randn(size, features, generator=generator)
        batches.append({"x": x, "y": x.sum(dim=1, keepdim=True)})
    return batches
