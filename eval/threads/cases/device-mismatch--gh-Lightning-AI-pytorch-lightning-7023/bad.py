# A Lightning-style VAE module trained on the GPU (the meta device stands in for it): during the
# first steps it trains as a plain autoencoder (no KL term), then switches the KL term on; every
# step logs its losses and the trainer averages each logged metric over the epoch.
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")
beta = 0.5


class VAEModule(nn.Module):
    def __init__(self, warmup_steps=2):
        super().__init__()
        self.encoder = nn.Linear(20, 2 * 4)
        self.decoder = nn.Linear(4, 20)
        self.warmup_steps = warmup_steps
        self.global_step = 0
        self.logged = defaultdict(list)

    def log(self, name, value):
        self.logged[name].append(value)

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        if self.global_step < self.warmup_steps:
            return self.decoder(mu), None
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        kld = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        return self.decoder(z), kld

    def calculate_losses(self, loss, kld, r=0.5):
        if kld is None:
            loss_rec = loss
            total_loss = loss
            loss_kl = torch.tensor(0)
        else:
            loss_rec = loss
            loss_kl = kld
            total_loss = loss + beta * kld
        return total_loss, loss_rec, loss_kl

    def training_step(self, batch, batch_idx):
        recon, kld = self(batch)
        loss = F.mse_loss(recon, batch)
        total_loss, loss_rec, loss_kl = self.calculate_losses(loss, kld)
        self.log("train_loss", total_loss.detach())
        self.log("train_rec", loss_rec.detach())
        self.log("train_kl", loss_kl.detach())
        return total_loss


def fit(module, batches, epochs):
    optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
    for epoch in range(epochs):
        module.logged.clear()
        for batch_idx, batch in enumerate(batches):
            loss = module.training_step(batch.to(device), batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            module.global_step += 1
        epoch_metrics = {name: torch.stack(values).mean() for name, values in module.logged.items()}
        print(epoch, {name: tuple(v.shape) for name, v in epoch_metrics.items()})


model = VAEModule().to(device)
fit(model, [torch.randn(16, 20) for _ in range(4)], epochs=2)
