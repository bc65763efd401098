# A DeepXDE-style PyTorch backend: the per-term losses of a small PINN are gathered into
# one tensor by the backend helper as_tensor(), which wraps torch.as_tensor.
import torch
import torch.nn as nn

torch.manual_seed(0)


# --- backend/pytorch/tensor.py ---------------------------------------------------------
def as_tensor(data, dtype=None):
    if isinstance(data, (list, tuple)) and all(isinstance(d, torch.Tensor) for d in data):
        return torch.stack(data)
    return torch.as_tensor(data, dtype=dtype)


# --- the PDE: u'(x) = cos(x) on [0, pi], u(0) = 0 --------------------------------------
net = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))


def losses_fn(x):
    x = x.requires_grad_(True)
    u = net(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    pde = ((du - torch.cos(x)) ** 2).mean()
    bc = (net(torch.zeros(1, 1)) ** 2).mean()
    losses = as_tensor((pde, bc))
    return losses


optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
x_train = torch.linspace(0, torch.pi, 64).unsqueeze(1)
for step in range(20):
    optimizer.zero_grad()
    losses = losses_fn(x_train.clone())
    total = losses.sum()
    total.backward()
    optimizer.step()
print(f"final loss {total.item():.4f}")

# -- corpus check --
if all(p.grad is None for p in net.parameters()):
    print("BUG: no network parameter received a gradient from the stacked losses")
