# SRGAN training loop: D is updated on (real, G(z)), then G's loss reuses the fake_out that was
# computed through D before optimizerD.step().
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
UPSCALE_FACTOR = 2


class Generator(nn.Module):
    def __init__(self, scale_factor):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.PReLU())
        self.upsample = nn.Sequential(nn.Conv2d(16, 3 * scale_factor ** 2, 3, padding=1), nn.PixelShuffle(scale_factor))

    def forward(self, x):
        return (torch.tanh(self.upsample(self.block1(x))) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1), nn.Conv2d(32, 1, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x).view(x.size(0)))


class GeneratorLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.mse_loss = nn.MSELoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse_loss(out_images, target_images)
        tv_loss = torch.mean(torch.abs(out_images[:, :, 1:, :] - out_images[:, :, :-1, :]))
        return image_loss + 0.001 * adversarial_loss + 2e-8 * tv_loss


lr_images = torch.rand(16, 3, 8, 8)
hr_images = torch.rand(16, 3, 16, 16)
train_loader = DataLoader(TensorDataset(lr_images, hr_images), batch_size=4, shuffle=True)

netG = Generator(UPSCALE_FACTOR)
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = optim.Adam(netG.parameters())
optimizerD = optim.Adam(netD.parameters())

for epoch in range(1, 3):
    netG.train()
    netD.train()
    for data, target in train_loader:
        ############################
        # (1) Update D network: maximize D(x)-1-D(G(z))
        ############################
        real_img = target
        z = data
        fake_img = netG(z)

        netD.zero_grad()
        real_out = netD(real_img).mean()
        fake_out = netD(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        optimizerD.step()

        ############################
        # (2) Update G network: minimize 1-D(G(z)) + Image Loss + TV Loss
        ############################
        netG.zero_grad()
        g_loss = generator_criterion(fake_out, fake_img, real_img)
        g_loss.backward()
        optimizerG.step()

    print(f"epoch {epoch}: d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")
