import torch
from torch import nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(10, 4)
        self.dec = nn.Linear(2, 10)

    def reparameterize(self, mu, logvar):
        eps = torch.randn_like(mu)
        return mu + eps * torch.exp(0.5 * logvar)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        return self.dec(self.reparameterize(mu, logvar))


device = torch.device("meta")
vae = VAE().to(device)
print(vae(torch.randn(3, 10).to(device)).shape)
