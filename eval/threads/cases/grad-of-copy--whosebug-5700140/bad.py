# A tensor built from a numpy array with requires_grad=True and then cast with .float()
# is passed through a small function; its gradient is printed after backward().
import numpy as np
import torch

z = torch.tensor(np.array([1., 1.]), requires_grad=True).float()


def pre_main(z):
    return z * 3.0


x = pre_main(z)
x.backward(torch.tensor([1., 1.]))
print(z.grad)
