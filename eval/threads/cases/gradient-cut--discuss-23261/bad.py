# Two angles a and b are optimized; their cosines are packed into a vector with
# torch.tensor([...]) so the vector can be multiplied by a matrix.
import torch

a = torch.tensor(0.3)
b = torch.tensor(0.5)
a.requires_grad = True
b.requires_grad = True
mat = torch.tensor([[1.0, 2.0],
                    [3.0, 4.0]])
target = torch.tensor([1.0, 1.5])

optimizer = torch.optim.SGD([a, b], lr=0.05)
for step in range(5):
    optimizer.zero_grad()
    cosa = torch.cos(a)
    cosb = torch.cos(b)
    y2 = torch.tensor([cosa, cosb])
    y2 = torch.matmul(y2, mat)
    loss = ((y2 - target) ** 2).sum()
    loss.backward()
    optimizer.step()
    print(step, loss.item(), a.item(), b.item())
