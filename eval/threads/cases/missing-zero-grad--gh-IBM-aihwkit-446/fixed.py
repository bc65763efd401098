# aihwkit example 1: a single (analog) linear layer learns to map four inputs to two sums; the
# analog layer and its SGD optimizer are stood in for by nn.Linear and torch.optim.SGD.
import torch
from torch import Tensor
from torch.nn import Linear
from torch.nn.functional import mse_loss

torch.manual_seed(0)

# Prepare the datasets (input and expected output).
x = Tensor([[0.1, 0.2, 0.4, 0.3], [0.2, 0.1, 0.1, 0.3]])
y = Tensor([[1.0, 0.5], [0.7, 0.3]])

# Define a single-layer network.
model = Linear(4, 2, bias=True)

# Define the optimizer, preparing it for using the layers.
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train_step(model, opt, x, y):
    # Add the training Tensor to the model (input).
    pred = model(x)
    # Add the expected output Tensor.
    loss = mse_loss(pred, y)
    # Run training (backward propagation).
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for epoch in range(10):
    loss = train_step(model, opt, x, y)
    print('Loss error: {:.16f}'.format(loss))

# -- corpus check --
for group in opt.param_groups:
    group["lr"] = 0.0
grads = []
for _ in range(2):
    train_step(model, opt, x, y)
    grads.append(model.weight.grad.clone())
if not torch.allclose(grads[0], grads[1]):
    print("BUG: the same batch at the same weights left different .grad: gradients are never zeroed")
