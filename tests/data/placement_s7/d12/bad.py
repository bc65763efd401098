import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(-2, -1)
        mask = torch.tril(torch.ones(T, T))
        att = att.masked_fill(mask == 0, float("-inf")).softmax(-1)
        return self.proj(att @ v)


device = torch.device("meta")
block = CausalSelfAttention(8).to(device)
print(block(torch.randn(2, 5, 8, device=device)).shape)
