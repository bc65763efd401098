import torch
from torch import nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=50):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-9.2 / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.pe = pe

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.pos = PositionalEncoding(16)
        self.out = nn.Linear(16, 2)

    def forward(self, tokens):
        return self.out(self.pos(self.embed(tokens)))


device = torch.device("meta")
model = Encoder().to(device)
print(model(torch.randint(0, 100, (2, 9)).to(device)).shape)
