# A newcomer (PyTorch 0.1, Variable API) multiplies a row by a column whose values should be
# learned; the column is made a Variable that requires grad and reshaped in the same expression,
# and its gradient is read after backward().
import torch
from torch.autograd import Variable

a = Variable(torch.Tensor([1, 2, 3])).view(1, 3)
b = Variable(torch.Tensor([4, 5, 6]).view(3, 1), requires_grad=True)
c = a.mm(b).sum()
c.backward()
print(a.requires_grad)
print(b.requires_grad)
print(b.grad)
