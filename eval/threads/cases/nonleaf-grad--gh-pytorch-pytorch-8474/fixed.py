# The reporter (an RL library author) checks the gradient of a small weight vector that is
# reshaped into a column before it is used: the reshaped tensor is bound to the same name as the
# vector, and the gradient is read through that name after backward().
import torch

torch.manual_seed(0)

features = torch.rand(3, 5)
returns = torch.rand(3, 1)

x1 = torch.rand(5).requires_grad_()
x1_col = x1.view((-1, 1))
values = features.mm(x1_col)
loss = 0.5 * (values - returns).pow(2).sum()
loss.backward()
print("gradient of the weights:", x1.grad)

x2 = torch.rand(5).requires_grad_()
x2.sum().backward()
print("gradient without the view:", x2.grad)
