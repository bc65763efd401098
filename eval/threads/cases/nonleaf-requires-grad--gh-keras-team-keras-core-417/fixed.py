# A Keras-style PyTorch backend: ops.stop_gradient() is implemented by switching off
# requires_grad on its argument; a SimSiam-style loss stops the gradient of the
# projection branch with it.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# --- backend/torch/core.py -------------------------------------------------------------
def stop_gradient(variable):
    return variable.detach()


# --- the model -------------------------------------------------------------------------
encoder = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
predictor = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16))


def negative_cosine(p, z):
    z = stop_gradient(z)
    return -F.cosine_similarity(p, z, dim=-1).mean()


optimizer = torch.optim.SGD(list(encoder.parameters()) + list(predictor.parameters()), lr=0.05)
x = torch.randn(64, 32)
for step in range(3):
    x1 = x + 0.1 * torch.randn_like(x)
    x2 = x + 0.1 * torch.randn_like(x)
    z1, z2 = encoder(x1), encoder(x2)
    p1, p2 = predictor(z1), predictor(z2)
    loss = negative_cosine(p1, z2) / 2 + negative_cosine(p2, z1) / 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
