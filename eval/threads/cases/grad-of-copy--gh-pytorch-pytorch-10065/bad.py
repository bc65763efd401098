# Weights created (as double here) with requires_grad=True, then cast with .type() to the
# dtype the rest of the code uses; the gradient of their mean is read from w1.grad.
import torch

w = torch.tensor([1, 2, 3], dtype=torch.float64, requires_grad=True)
w1 = w.type(torch.float)
print(w1, w1.type(), id(w1), w1.requires_grad)
o = torch.mean(w1)
o.backward()
print(w1.grad)
