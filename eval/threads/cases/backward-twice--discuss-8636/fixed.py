# Calling backward() repeatedly on a linear layer's summed output: the forward y = sum(x(a)) is
# written once above the loop, only backward() is inside it.
import torch

torch.manual_seed(0)
x = torch.nn.Linear(3, 3)
a = torch.randn(2, 3)
for i in range(100):
    y = torch.sum(x(a))
    y.backward()
print(x.weight.grad)
