# disentangling-vae style FactorVAE loss object: the loss's __call__ runs the VAE optimizer itself,
# then trains its own discriminator on d_z, which was computed from the encoder before that step.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, x_dim=20, latent_dim=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(x_dim, 32), nn.ReLU(), nn.Linear(32, 2 * latent_dim))
        self.decoder = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, x_dim), nn.Sigmoid())
        self.latent_dim = latent_dim

    def encode(self, x):
        stats = self.encoder(x)
        return stats[:, :self.latent_dim], stats[:, self.latent_dim:]

    def reparameterize(self, mean, logvar):
        return mean + torch.exp(0.5 * logvar) * torch.randn_like(mean)

    def sample_latent(self, x):
        return self.reparameterize(*self.encode(x))

    def forward(self, x):
        latent_dist = self.encode(x)
        latent_sample = self.reparameterize(*latent_dist)
        return self.decoder(latent_sample), latent_dist, latent_sample


class Discriminator(nn.Module):
    def __init__(self, latent_dim=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

    def forward(self, z):
        return self.net(z)


def _kl_normal_loss(mean, logvar):
    return 0.5 * (-1 - logvar + mean.pow(2) + logvar.exp()).mean(dim=0).sum()


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size)
        perm[:, z] = latent_sample[pi, z]
    return perm


class FactorKLoss:
    def __init__(self, gamma=10.0, latent_dim=4):
        self.gamma = gamma
        self.discriminator = Discriminator(latent_dim)
        self.optimizer_d = optim.Adam(self.discriminator.parameters(), lr=5e-5, betas=(0.5, 0.9))

    def __call__(self, data, model, optimizer, storer):
        half_batch_size = data.size(0) // 2
        data1, data2 = data.split(half_batch_size)

        recon_batch, latent_dist, latent_sample1 = model(data1)
        rec_loss = F.binary_cross_entropy(recon_batch, data1, reduction="sum") / half_batch_size
        kl_loss = _kl_normal_loss(*latent_dist)
        d_z = self.discriminator(latent_sample1)
        tc_loss = (F.logsigmoid(d_z) - F.logsigmoid(1 - d_z)).clamp(0).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss
        storer["loss"].append(vae_loss.item())

        # Run VAE optimizer
        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)
        optimizer.step()

        # Discriminator Loss
        latent_sample2 = model.sample_latent(data2)
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        d_tc_loss = - (0.5 * (F.logsigmoid(d_z) + F.logsigmoid(1 - d_z_perm))).mean()

        # Run discriminator optimizer
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()
        storer["discrim_loss"].append(d_tc_loss.item())
        return vae_loss


class Trainer:
    def __init__(self, model, optimizer, loss_f):
        self.model, self.optimizer, self.loss_f = model, optimizer, loss_f

    def __call__(self, data_loader, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            storer = {"loss": [], "discrim_loss": []}
            for data in data_loader:
                self.loss_f(data, self.model, self.optimizer, storer)
            print(f"epoch {epoch}: loss {sum(storer['loss']) / len(storer['loss']):.3f}")


model = VAE()
data_loader = [torch.rand(16, 20) for _ in range(3)]
trainer = Trainer(model, optim.Adam(model.parameters(), lr=5e-4), FactorKLoss())
trainer(data_loader)
