# The reporter wants the gradient of the loss with respect to a convolution's output (to look
# at it per position), runs a forward and a backward and reads y.grad.
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)

x = Variable(torch.rand(8, 1, 5, 5), requires_grad=True)
conv = nn.Conv2d(1, 1, 3)
y = conv(x)
y.retain_grad()
final = torch.sum(y)
print('y.grad', y.grad)
final.backward()
print('y.grad', y.grad)
print('y.requires_grad', y.requires_grad)
print('x.grad', x.grad.shape)
