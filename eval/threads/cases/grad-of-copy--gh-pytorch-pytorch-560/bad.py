# Checking a gradient by hand on the GPU: a Variable that requires grad is moved with
# .cuda(), pushed through 3*x and squared, and xx.grad is printed.
import torch
from torch.autograd import Variable

torch.manual_seed(0)

# on CPU: gradient as expected
xx = Variable(torch.randn(1, 1), requires_grad=True)
yy = 3 * xx
zz = yy ** 2
zz.backward()
print(xx.grad)

# "on the GPU" (.double() stands for the .cuda() copy)
xx = Variable(torch.randn(1, 1), requires_grad=True).double()
yy = 3 * xx
zz = yy ** 2
zz.backward()
print(xx.grad)
