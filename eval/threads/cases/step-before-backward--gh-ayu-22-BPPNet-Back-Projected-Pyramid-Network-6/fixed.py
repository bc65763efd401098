# Dehazing GAN (UNet generator + patch discriminator) wrapped in one class: process() computes the
# generator and discriminator losses together, backward() steps the discriminator, then the UNet.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class UNet(nn.Module):
    def __init__(self, in_channels=3, out_channels=3, features=8):
        super().__init__()
        self.encoder1 = nn.Sequential(nn.Conv2d(in_channels, features, 3, padding=1), nn.ReLU())
        self.pool1 = nn.MaxPool2d(2)
        self.bottleneck = nn.Sequential(nn.Conv2d(features, features * 2, 3, padding=1), nn.ReLU())
        self.upconv1 = nn.ConvTranspose2d(features * 2, features, 2, stride=2)
        self.decoder1 = nn.Sequential(nn.Conv2d(features * 2, features, 3, padding=1), nn.ReLU())
        self.conv = nn.Conv2d(features, out_channels, 1)

    def forward(self, x):
        enc1 = self.encoder1(x)
        dec1 = self.upconv1(self.bottleneck(self.pool1(enc1)))
        dec1 = self.decoder1(torch.cat((dec1, enc1), dim=1))
        return torch.sigmoid(self.conv(dec1))


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.conv2 = nn.Conv2d(16, 1, 4, stride=1, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        return torch.sigmoid(self.conv2(conv1)), [conv1]


class DU_Net(nn.Module):
    def __init__(self, unet_input, unet_output, dis_input):
        super().__init__()
        self.unet = UNet(unet_input, unet_output)
        self.discriminator = Discriminator(dis_input)
        self.adversarial_loss = nn.BCELoss()
        self.l1_loss = nn.L1Loss()
        self.unet_optimizer = optim.Adam(self.unet.parameters(), lr=1e-4)
        self.dis_optimizer = optim.Adam(self.discriminator.parameters(), lr=1e-5)

    def process(self, haze_images, dehaze_images):
        self.unet_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self.unet(haze_images)

        # discriminator loss
        dis_real, _ = self.discriminator(dehaze_images)
        dis_fake, _ = self.discriminator(outputs.detach())
        dis_real_loss = self.adversarial_loss(dis_real, torch.ones_like(dis_real))
        dis_fake_loss = self.adversarial_loss(dis_fake, torch.zeros_like(dis_fake))
        dis_loss = (dis_real_loss + dis_fake_loss) / 2
        dis_loss.backward()
        self.dis_optimizer.step()

        # generator (unet) loss
        gen_fake, _ = self.discriminator(outputs)
        gen_gan_loss = self.adversarial_loss(gen_fake, torch.ones_like(gen_fake)) * 0.7
        unet_criterion = self.l1_loss(outputs, dehaze_images)
        unet_loss = unet_criterion + gen_gan_loss
        return unet_loss, dis_loss, unet_criterion

    def backward(self, unet_loss, dis_loss):
        unet_loss.backward()
        self.unet_optimizer.step()


haze = torch.rand(8, 3, 16, 16)
clear = torch.rand(8, 3, 16, 16)
train_loader = DataLoader(TensorDataset(haze, clear), batch_size=2, drop_last=True)
DUNet = DU_Net(3, 3, 3)


def train(max_epochs):
    for epoch in range(max_epochs):
        for i, (haze_images, dehaze_images) in enumerate(train_loader, 1):
            unet_loss, dis_loss, l1 = DUNet.process(haze_images, dehaze_images)
            DUNet.backward(unet_loss, dis_loss)
            print(f"Epoch: {epoch + 1} || Batch: {i} || unet loss: {unet_loss.item():.4f} || dis loss: {dis_loss.item():.4f}")


train(2)
