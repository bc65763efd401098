# Coefficients initialized from a numpy array, requiring grad and moved to the GPU;
# the gradient of a dot product with respect to them is printed after backward().
import numpy as np
import torch

device = torch.device("cpu")
dtype = torch.float64  # stands for the .cuda() copy of the thread

init = np.array([1., 2., 3.])
a = torch.tensor(init, dtype=dtype, device=device, requires_grad=True)
print(a.requires_grad, a.dtype)

b = torch.ones(3, device=device, dtype=dtype)
l = a @ b
print(l.item())
l.backward()
print(a.grad)
