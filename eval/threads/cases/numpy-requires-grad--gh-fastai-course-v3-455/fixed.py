# Lesson 2 "SGD from scratch" notebook: fit y = x@a with a as an nn.Parameter, hand-written
# update(), then scatter-plot the data and the fitted line x@a.
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


class plt:
    """Minimal stand-in for matplotlib.pyplot: scatter converts its inputs with np.asarray."""
    artists = []

    @staticmethod
    def scatter(x, y, c=None):
        plt.artists.append((np.asarray(x), np.asarray(y), c))


n = 100
x = torch.ones(n, 2)
x[:, 0].uniform_(-1., 1)
a = torch.tensor([3., 2])
y = x @ a + torch.rand(n)


def mse(y_hat, y):
    return ((y_hat - y) ** 2).mean()


a = nn.Parameter(torch.tensor([-1., 1]))


def update():
    y_hat = x @ a
    loss = mse(y, y_hat)
    if t % 10 == 0:
        print(loss)
    loss.backward()
    with torch.no_grad():
        a.sub_(lr * a.grad)
        a.grad.zero_()


lr = 1e-1
for t in range(100):
    update()

plt.scatter(x[:, 0], y)
with torch.no_grad():
    plt.scatter(x[:, 0], x @ a)
print(len(plt.artists), "series plotted")
