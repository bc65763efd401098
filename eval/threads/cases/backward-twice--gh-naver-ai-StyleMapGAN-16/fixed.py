# StyleMapGAN-style training step: one model call in "G" mode returns the adversarial loss and the
# stylecode reconstruction loss (both through the generated image); each gets its own backward().
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)
latent_dim, img_dim, batch = 8, 32, 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(latent_dim, latent_dim), nn.LeakyReLU(0.2))
        self.generator = nn.Sequential(nn.Linear(latent_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, img_dim))
        self.encoder = nn.Sequential(nn.Linear(img_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, latent_dim))
        self.discriminator = nn.Sequential(nn.Linear(img_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))

    def forward(self, real_img, mode):
        if mode == "G":
            z = torch.randn(batch, latent_dim)
            stylecode = self.mapping(z)
            fake_img = self.generator(stylecode)
            adv_loss = F.softplus(-self.discriminator(fake_img)).mean()
            w_rec_loss = F.mse_loss(self.encoder(fake_img), stylecode.detach())
            return adv_loss, w_rec_loss, stylecode
        if mode == "D":
            with torch.no_grad():
                fake_img = self.generator(self.mapping(torch.randn(batch, latent_dim)))
            real_pred, fake_pred = self.discriminator(real_img), self.discriminator(fake_img)
            return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()
        raise ValueError(mode)


model = Model()
g_optim = optim.Adam(list(model.mapping.parameters()) + list(model.generator.parameters()), lr=2e-3)
e_optim = optim.Adam(model.encoder.parameters(), lr=2e-3)
d_optim = optim.Adam(model.discriminator.parameters(), lr=2e-3)
lambda_adv_loss, lambda_w_rec_loss = 1.0, 1.0

for i in range(3):
    real_img = torch.randn(batch, img_dim)

    adv_loss, w_rec_loss, stylecode = model(None, "G")
    adv_loss = adv_loss.mean()
    g_loss = adv_loss * lambda_adv_loss
    w_rec_loss = w_rec_loss.mean()
    g_w_rec_loss = g_loss + w_rec_loss * lambda_w_rec_loss

    g_optim.zero_grad()
    e_optim.zero_grad()
    g_w_rec_loss.backward()
    g_optim.step()
    e_optim.step()

    d_loss = model(real_img, "D")
    d_optim.zero_grad()
    d_loss.backward()
    d_optim.step()
    print(f"g: {g_loss.item():.4f}; w_rec: {w_rec_loss.item():.4f}; d: {d_loss.item():.4f}")
