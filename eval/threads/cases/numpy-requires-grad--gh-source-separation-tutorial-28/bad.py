# Tutorial page on gradient descent: the same small mask-estimation network is trained with several
# learning rates, the gradient norm and the loss of every iteration are kept per learning rate, and
# the two curves are plotted side by side ("signs of healthy training").
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Axes:
    """Minimal stand-in for a matplotlib Axes: plot converts its data with np.asarray."""

    def __init__(self):
        self.lines = []

    def plot(self, y, label=None):
        self.lines.append((np.asarray(y), label))

    def legend(self):
        pass


LEARNING_RATES = [1e-1, 1e-2, 1e-3]
N_ITERATIONS = 20
mixture = torch.rand(16, 64)
source = mixture * (torch.rand(16, 64) > 0.5).float()

grad_norms, losses = [], []
for lr in LEARNING_RATES:
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.Sigmoid())
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    grad_norms.append([])
    losses.append([])
    for i in range(N_ITERATIONS):
        estimate = model(mixture) * mixture
        loss = nn.functional.l1_loss(estimate, source)
        optimizer.zero_grad()
        loss.backward()
        grad_norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5
        optimizer.step()
        grad_norms[-1].append(grad_norm.item())
        losses[-1].append(loss)

ax = [Axes(), Axes()]
for j, lr in enumerate(LEARNING_RATES):
    ax[0].plot(grad_norms[j], label=f'Learning rate: {lr}')
    ax[0].legend()
for j, lr in enumerate(LEARNING_RATES):
    ax[1].plot(np.log10(losses[j]), label=f'Learning rate: {lr}')
    ax[1].legend()
print("final log-losses", [round(float(line[0][-1]), 3) for line in ax[1].lines])
