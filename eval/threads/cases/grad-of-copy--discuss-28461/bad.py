# Defining a tensor to optimize on the GPU: it is created with requires_grad=True and
# then moved with .cuda(); after backward the program checks is_leaf and the gradient.
import torch

torch.manual_seed(0)
device = torch.device("cpu")
dtype = torch.float64  # the .cuda() copy of the thread, shown as a dtype copy

# Case 1: requires_grad at creation, then moved
x = torch.randn(4, requires_grad=True).to(device, dtype)
target = torch.ones(4, device=device, dtype=dtype)
loss = ((x * 2 - target) ** 2).sum()
loss.backward()
print("is_leaf:", x.is_leaf)
print("grad:", x.grad)
