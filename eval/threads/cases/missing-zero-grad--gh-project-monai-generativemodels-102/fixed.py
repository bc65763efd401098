# VQGAN tutorial: a VQ-VAE generator and a patch discriminator trained at module level, the
# generator with L1 + quantization + adversarial losses, the discriminator with a
# least-squares adversarial loss.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import L1Loss

torch.manual_seed(0)
device = torch.device("cpu")


class VQVAE(nn.Module):
    def __init__(self, num_embeddings=16, embedding_dim=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, embedding_dim, 1))
        self.codebook = nn.Embedding(num_embeddings, embedding_dim)
        self.decoder = nn.Sequential(nn.ConvTranspose2d(embedding_dim, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 1, 3, padding=1))

    def forward(self, images):
        z = self.encoder(images)
        flat = z.permute(0, 2, 3, 1).reshape(-1, z.size(1))
        idx = torch.cdist(flat, self.codebook.weight).argmin(dim=1)
        q = self.codebook(idx).view(z.size(0), z.size(2), z.size(3), -1).permute(0, 3, 1, 2)
        quantization_loss = F.mse_loss(q, z.detach()) + 0.25 * F.mse_loss(z, q.detach())
        q = z + (q - z).detach()
        return self.decoder(q), quantization_loss


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(1, 16, 4, 2, 1), nn.LeakyReLU(0.2)),
            nn.Sequential(nn.Conv2d(16, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.LeakyReLU(0.2)),
            nn.Conv2d(32, 1, 3, padding=1),
        ])

    def forward(self, x):
        out = []
        for block in self.blocks:
            x = block(x)
            out.append(x)
        return out


def adv_loss(logits, target_is_real, for_discriminator):
    target = torch.ones_like(logits) if target_is_real else torch.zeros_like(logits)
    return F.mse_loss(logits, target)


model = VQVAE().to(device)
discriminator = PatchDiscriminator().to(device)
optimizer_g = torch.optim.Adam(params=model.parameters(), lr=1e-4)
optimizer_d = torch.optim.Adam(params=discriminator.parameters(), lr=5e-4)
l1_loss = L1Loss()
adv_weight = 0.01

train_loader = [{"image": torch.rand(4, 1, 16, 16)} for _ in range(8)]
n_epochs = 2
for epoch in range(n_epochs):
    model.train()
    discriminator.train()
    epoch_loss = 0
    disc_epoch_loss = 0
    for step, batch in enumerate(train_loader):
        images = batch["image"].to(device)
        optimizer_g.zero_grad(set_to_none=True)

        # Generator part
        reconstruction, quantization_loss = model(images=images)
        logits_fake = discriminator(reconstruction.contiguous().float())[-1]
        recons_loss = l1_loss(reconstruction.float(), images.float())
        generator_loss = adv_loss(logits_fake, target_is_real=True, for_discriminator=False)
        loss_g = recons_loss + quantization_loss + adv_weight * generator_loss
        loss_g.backward()
        optimizer_g.step()

        # Discriminator part
        optimizer_d.zero_grad(set_to_none=True)
        logits_fake = discriminator(reconstruction.contiguous().detach())[-1]
        loss_d_fake = adv_loss(logits_fake, target_is_real=False, for_discriminator=True)
        logits_real = discriminator(images.contiguous().detach())[-1]
        loss_d_real = adv_loss(logits_real, target_is_real=True, for_discriminator=True)
        discriminator_loss = (loss_d_fake + loss_d_real) * 0.5
        loss_d = adv_weight * discriminator_loss
        loss_d.backward()
        optimizer_d.step()

        epoch_loss += recons_loss.item()
        disc_epoch_loss += discriminator_loss.item()
    print(f"epoch {epoch}: recons_loss {epoch_loss / (step + 1):.4f} disc_loss {disc_epoch_loss / (step + 1):.4f}")

# -- corpus check --
weight = discriminator.blocks[0][0].weight
fake_d = adv_loss(discriminator(reconstruction.detach())[-1], target_is_real=False, for_discriminator=True)
real_d = adv_loss(discriminator(images)[-1], target_is_real=True, for_discriminator=True)
last_batch_grad = torch.autograd.grad(adv_weight * (fake_d + real_d) * 0.5, weight)[0]
drift = ((weight.grad - last_batch_grad).norm() / last_batch_grad.norm()).item()
if drift > 0.5:
    print("BUG: the discriminator's .grad is %.1fx off the last batch's gradient: it was never zeroed" % drift)
