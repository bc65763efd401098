import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, z):
        return self.fc(z)


device = torch.device("meta")
encoder = Encoder().to(device)
decoder = Decoder().to(device)
x = torch.randn(5, 8).to(device)
recon = decoder(encoder(x))
print(recon.shape)
