# Fourier-feature encodings for coordinate MLPs: functional encodings, thin nn.Module layers that
# call them, and an image-representation example that fits an MLP from pixel coordinates to colours
# on the GPU (the meta device stands in for it).
import numpy as np
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)
device = torch.device("meta")


def gaussian_encoding(v: Tensor, b: Tensor) -> Tensor:
    vp = 2 * np.pi * v @ b.T
    return torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)


def positional_encoding(v: Tensor, sigma: float, m: int) -> Tensor:
    j = torch.arange(m)
    coeffs = 2 * np.pi * sigma ** (j / m)
    vp = coeffs * torch.unsqueeze(v, -1)
    vp_cat = torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)
    return vp_cat.flatten(-2, -1)


class PositionalEncoding(nn.Module):
    """Layer for mapping coordinates using the positional encoding"""

    def __init__(self, sigma: float, m: int):
        super().__init__()
        self.sigma = sigma
        self.m = m

    def forward(self, v: Tensor) -> Tensor:
        return positional_encoding(v, self.sigma, self.m)


size = 16
coords = torch.stack(torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij"), dim=-1)
image = torch.rand(size, size, 3)  # stands for the picture being fitted
X, Y = coords.reshape(-1, 2).to(device), image.reshape(-1, 3).to(device)

encoding = PositionalEncoding(sigma=10.0, m=8)
model = nn.Sequential(encoding, nn.Linear(2 * 2 * 8, 64), nn.ReLU(), nn.Linear(64, 3), nn.Sigmoid()).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    loss = nn.functional.mse_loss(model(X), Y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.shape, loss.device)
