# A library GAN class: Generator and Discriminator each own their optimizer, and GAN.step()
# trains both on one batch; the training loop over the data lives in the caller.
from typing import Tuple

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, image_size: int, channels: int, latent_dims: int, lr: float):
        super().__init__()
        self.image_size, self.channels, self.latent_dims = image_size, channels, latent_dims
        self.main = nn.Sequential(nn.Linear(latent_dims, 64), nn.LeakyReLU(0.2),
                                  nn.Linear(64, image_size * image_size * channels), nn.Tanh())
        self.optimizer = optim.Adam(self.parameters(), lr=lr)

    def forward(self, x):
        return self.main(x).view(-1, self.channels, self.image_size, self.image_size)


class Discriminator(nn.Module):
    def __init__(self, image_size: int, channels: int, lr: float):
        super().__init__()
        self.image_size, self.channels = image_size, channels
        self.main = nn.Sequential(nn.Linear(image_size * image_size * channels, 64), nn.LeakyReLU(0.2),
                                  nn.Dropout(0.3), nn.Linear(64, 1), nn.Sigmoid())
        self.optimizer = optim.Adam(self.parameters(), lr=lr)

    def forward(self, x):
        return self.main(x.view(-1, self.image_size * self.image_size * self.channels))


class GAN:
    def __init__(self, image_size: int, channels: int, latent_dims: int, device: torch.device, lr: float):
        self.latent_dims = latent_dims
        self.device = device
        self.generator = Generator(image_size, channels, latent_dims, lr).to(device)
        self.discriminator = Discriminator(image_size, channels, lr).to(device)
        self.criterion = torch.nn.BCELoss()
        self.real_label, self.fake_label = 1.0, 0.0

    def step(self, data) -> Tuple:
        real_image, _ = data
        real_image = real_image.to(self.device)
        batch_size = real_image.shape[0]
        label = torch.full((batch_size,), self.real_label, dtype=torch.float, device=self.device)
        # Forward pass real batch through D
        output = self.discriminator(real_image).view(-1)
        errD_real = self.criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        # Train with all-fake batch
        noise = torch.randn(batch_size, self.latent_dims, device=self.device)
        fake = self.generator(noise)
        label.fill_(self.fake_label)
        output = self.discriminator(fake.detach()).view(-1)
        errD_fake = self.criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        # Update D
        self.discriminator.optimizer.step()

        self.generator.zero_grad()
        label.fill_(self.real_label)
        output = self.discriminator(fake).view(-1)
        errG = self.criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        # Update G
        self.generator.optimizer.step()
        return D_x, D_G_z1, errD, D_G_z2


model = GAN(image_size=8, channels=1, latent_dims=16, device=torch.device("cpu"), lr=2e-4)
dataloader = [(torch.rand(8, 1, 8, 8) * 2 - 1, torch.zeros(8)) for _ in range(5)]
for epoch in range(2):
    for i, data in enumerate(dataloader):
        D_x, D_G_z1, errD, D_G_z2 = model.step(data)
    print(f"epoch {epoch}: D(x)={D_x:.3f} D(G(z))={D_G_z1:.3f}/{D_G_z2:.3f} errD={errD.item():.3f}")

# -- corpus check --
seen = []
weight = model.discriminator.main[0].weight
model.discriminator.optimizer.register_step_pre_hook(lambda opt, args, kwargs: seen.append(weight.grad.clone()))
for net in (model.generator, model.discriminator):
    for group in net.optimizer.param_groups:
        group["lr"] = 0.0
for _ in range(2):
    torch.manual_seed(1)
    model.step(dataloader[0])
if not torch.allclose(seen[0], seen[1]):
    print("BUG: the discriminator stepped on gradients kept from earlier steps (and from errG): never zeroed")
