# DCGAN on MNIST: a generator and a discriminator in their own classes, BCELoss on the
# discriminator's sigmoid output, one label tensor made with torch.full and refilled with
# fill_() for the fake and the generator steps. Random images stand in for MNIST.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, nc, nz, ngf):
        super().__init__()
        self.network = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 7, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.network(input)


class Discriminator(nn.Module):
    def __init__(self, nc, ndf):
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 7, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.network(input).view(-1, 1).squeeze(1)


nc, nz, ngf, ndf, batch_size = 1, 16, 8, 8, 8
train_loader = [(torch.rand(batch_size, nc, 28, 28) * 2 - 1, torch.zeros(batch_size)) for _ in range(2)]
device = torch.device("cpu")
netG = Generator(nc, nz, ngf).to(device)
netD = Discriminator(nc, ndf).to(device)
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=0.0002)
optimizerG = optim.Adam(netG.parameters(), lr=0.0002)

real_label = 1.0
fake_label = 0.0

for epoch in range(1):
    for i, (real_images, _) in enumerate(train_loader):
        bs = real_images.shape[0]
        netD.zero_grad()
        real_images = real_images.to(device)
        label = torch.full((bs,), real_label, device=device)
        output = netD(real_images)
        lossD_real = criterion(output, label)
        lossD_real.backward()

        noise = torch.randn(bs, nz, 1, 1, device=device)
        fake_images = netG(noise)
        label.fill_(fake_label)
        output = netD(fake_images.detach())
        lossD_fake = criterion(output, label)
        lossD_fake.backward()
        lossD = lossD_real + lossD_fake
        optimizerD.step()

        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake_images)
        lossG = criterion(output, label)
        lossG.backward()
        optimizerG.step()
        print(epoch, i, round(lossD.item(), 4), round(lossG.item(), 4))
