# Fitting a linear map t and an offset a: the offset term y = t @ a is computed once above the
# training loop and reused by every iteration's loss.
import torch

torch.manual_seed(0)
measure = torch.nn.MSELoss()

t = torch.eye(2, dtype=torch.float64, requires_grad=True)
a = torch.ones(2, dtype=torch.float64, requires_grad=True)
optimizer = torch.optim.SGD([t, a], lr=0.01)
samples = torch.randn(5, 2, dtype=torch.float64)

y = t @ a
for x in samples:
    optimizer.zero_grad()
    x_out = t @ (x + t @ a)
    loss = measure(x_out, x)
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.5f}")
