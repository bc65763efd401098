# FactorVAE solver: the VAE is updated with its total-correlation term from D(z), then the
# discriminator loss reuses that D_z, whose graph goes back through the (already stepped) encoder.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class FactorVAE(nn.Module):
    def __init__(self, z_dim=6, x_dim=32):
        super().__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(nn.Linear(x_dim, 64), nn.ReLU(), nn.Linear(64, 2 * z_dim))
        self.decode = nn.Sequential(nn.Linear(z_dim, 64), nn.ReLU(), nn.Linear(64, x_dim))

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp()
        return mu + std * torch.randn_like(std)

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu, logvar = stats[:, :self.z_dim], stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)
        if no_dec:
            return z
        return self.decode(z), mu, logvar, z


class Discriminator(nn.Module):
    def __init__(self, z_dim=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 100), nn.LeakyReLU(0.2), nn.Linear(100, 2))

    def forward(self, z):
        return self.net(z)


def recon_loss(x, x_recon):
    return F.mse_loss(x_recon, x, reduction="sum") / x.size(0)


def kl_divergence(mu, logvar):
    return (-0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1)).mean()


def permute_dims(z):
    B, _ = z.size()
    return torch.stack([z[torch.randperm(B), j] for j in range(z.size(1))], dim=1)


class Solver:
    def __init__(self):
        self.gamma = 6.4
        self.VAE = FactorVAE()
        self.D = Discriminator()
        self.optim_VAE = optim.Adam(self.VAE.parameters(), lr=1e-4, betas=(0.9, 0.999))
        self.optim_D = optim.Adam(self.D.parameters(), lr=1e-4, betas=(0.5, 0.9))

    def train(self, data, max_iter=3):
        ones = torch.ones(16, dtype=torch.long)
        zeros = torch.zeros(16, dtype=torch.long)
        for it in range(max_iter):
            x_true1, x_true2 = data[it]
            x_recon, mu, logvar, z = self.VAE(x_true1)
            vae_recon_loss = recon_loss(x_true1, x_recon)
            vae_kld = kl_divergence(mu, logvar)

            D_z = self.D(z)
            vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()
            vae_loss = vae_recon_loss + vae_kld + self.gamma * vae_tc_loss

            self.optim_VAE.zero_grad()
            vae_loss.backward(retain_graph=True)
            self.optim_VAE.step()

            z_prime = self.VAE(x_true2, no_dec=True)
            z_pperm = permute_dims(z_prime).detach()
            D_z_pperm = self.D(z_pperm)
            D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))

            self.optim_D.zero_grad()
            D_tc_loss.backward()
            self.optim_D.step()
            print(f"[{it}] vae_loss {vae_loss.item():.3f} D_tc_loss {D_tc_loss.item():.3f}")


data = [(torch.randn(16, 32), torch.randn(16, 32)) for _ in range(3)]
Solver().train(data)
