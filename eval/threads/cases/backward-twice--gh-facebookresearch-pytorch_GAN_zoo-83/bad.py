# Progressive GAN trainer with the GDPP (determinantal point process) diversity loss: the generator
# step backpropagates the adversarial loss on D(G(z)), then the GDPP loss computed from D's features
# of the same fake batch.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DNet(nn.Module):
    def __init__(self, dim_in=32, dim_hidden=16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(dim_in, dim_hidden), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(dim_hidden, 1)

    def forward(self, x, getFeature=False):
        phi = self.features(x)
        out = self.decision(phi)
        return (out, phi) if getFeature else out


def GDPPLoss(phiFake, phiReal):
    def eigen(phi):
        a = phi.t() @ phi / phi.size(0)
        return torch.linalg.eigh(a)
    fake_vals, fake_vecs = eigen(phiFake)
    real_vals, real_vecs = eigen(phiReal)
    real_vals = real_vals / real_vals.sum()
    fake_vals = fake_vals / fake_vals.sum()
    val_loss = F.mse_loss(fake_vals, real_vals)
    vec_loss = -(real_vals * F.cosine_similarity(fake_vecs, real_vecs, dim=0)).sum()
    return val_loss + vec_loss


class PGAN:
    def __init__(self, dimLatent=8, dimOutput=32, GDPP=True):
        self.dimLatent, self.GDPP = dimLatent, GDPP
        self.netG = nn.Sequential(nn.Linear(dimLatent, 32), nn.ReLU(), nn.Linear(32, dimOutput))
        self.netD = DNet(dimOutput)
        self.optimizerG = torch.optim.Adam(self.netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.optimizerD = torch.optim.Adam(self.netD.parameters(), lr=1e-3, betas=(0.0, 0.99))

    def optimizeParameters(self, real_input):
        n_samples = real_input.size(0)
        self.optimizerD.zero_grad()
        predFakeG = self.netG(torch.randn(n_samples, self.dimLatent)).detach()
        lossD = F.softplus(-self.netD(real_input)).mean() + F.softplus(self.netD(predFakeG)).mean()
        lossD.backward()
        self.optimizerD.step()

        self.optimizerG.zero_grad()
        self.optimizerD.zero_grad()
        inputNoise = torch.randn(n_samples, self.dimLatent)
        predFakeG = self.netG(inputNoise)
        predFakeD, phiGFake = self.netD(predFakeG, True)
        lossGFake = F.softplus(-predFakeD).mean()
        lossGFake.backward()
        if self.GDPP:
            _, phiDReal = self.netD(real_input, True)
            lossGDPP = GDPPLoss(phiGFake, phiDReal.detach())
            lossGDPP.backward()
        self.optimizerG.step()
        return lossD.item(), lossGFake.item()


model = PGAN()
data = torch.randn(64, 32)
for it in range(3):
    print(it, model.optimizeParameters(data[it * 16:(it + 1) * 16]))
