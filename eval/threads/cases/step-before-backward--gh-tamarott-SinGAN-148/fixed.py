# SinGAN single-scale training: D steps make `fake` from the generator, then several G steps
# reuse that same `fake` (with retain_graph=True) while optimizerG.step() updates netG in place.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def conv_block(in_ch, out_ch):
    return nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.LeakyReLU(0.2))


class Generator(nn.Module):
    def __init__(self, nc=3, nfc=16):
        super().__init__()
        self.head = conv_block(nc, nfc)
        self.body = conv_block(nfc, nfc)
        self.tail = nn.Sequential(nn.Conv2d(nfc, nc, 3, padding=1), nn.Tanh())

    def forward(self, x, y):
        return self.tail(self.body(self.head(x))) + y


class WDiscriminator(nn.Module):
    def __init__(self, nc=3, nfc=16):
        super().__init__()
        self.head = conv_block(nc, nfc)
        self.tail = nn.Conv2d(nfc, 1, 3, padding=1)

    def forward(self, x):
        return self.tail(self.head(x))


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA):
    alpha = torch.rand(1, 1).expand(real_data.size())
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).detach().requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones_like(disc_interpolates),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


def train_single_scale(netD, netG, real, niter=2, Dsteps=3, Gsteps=3, alpha=10, noise_amp=0.1):
    optimizerD = optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
    z_opt = torch.randn_like(real)
    prev = torch.zeros_like(real)
    z_prev = torch.zeros_like(real)

    for epoch in range(niter):
        noise_ = torch.randn_like(real)

        ############################
        # (1) Update D network: maximize D(x) + D(G(z))
        ############################
        for j in range(Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)

            noise = noise_amp * noise_ + prev
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)

            gradient_penalty = calc_gradient_penalty(netD, real, fake, 0.1)
            gradient_penalty.backward()
            errD = errD_real + errD_fake + gradient_penalty
            optimizerD.step()

        ############################
        # (2) Update G network: maximize D(G(z))
        ############################
        for j in range(Gsteps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            loss = nn.MSELoss()
            Z_opt = noise_amp * z_opt + z_prev
            rec_loss = alpha * loss(netG(Z_opt.detach(), z_prev), real)
            rec_loss.backward(retain_graph=True)
            optimizerG.step()

        print(f"[{epoch}/{niter}] errD {errD.item():.4f} errG {errG.item():.4f} rec {rec_loss.item():.4f}")
    return z_opt, netG


real = torch.rand(1, 3, 16, 16) * 2 - 1
train_single_scale(WDiscriminator(), Generator(), real)
