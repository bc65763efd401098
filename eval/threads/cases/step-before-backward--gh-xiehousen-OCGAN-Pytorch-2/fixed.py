# OCGAN (one-class novelty detection) training step: classifier, latent discriminator and visual
# discriminator are updated in turn, then the autoencoder loss reuses the latent discriminator's
# logits computed before its optimizer stepped.
import torch
import torch.nn as nn

torch.manual_seed(0)
batch, latent = 8, 18


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, latent), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, 64), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, 1, 8, 8)


def small_disc(in_features):
    return nn.Sequential(nn.Flatten(), nn.Linear(in_features, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())


enc, dec = Encoder(), Decoder()
cl, disc_l, disc_v = small_disc(64), small_disc(latent), small_disc(64)
optimizer_en = torch.optim.Adam(enc.parameters(), lr=1e-4)
optimizer_de = torch.optim.Adam(dec.parameters(), lr=1e-4)
optimizer_c = torch.optim.Adam(cl.parameters(), lr=1e-4)
optimizer_dl = torch.optim.Adam(disc_l.parameters(), lr=1e-4)
optimizer_dv = torch.optim.Adam(disc_v.parameters(), lr=1e-4)
criterion_ae, criterion_ce = nn.MSELoss(), nn.BCELoss()


def train(trainloader):
    for batch_idx, inputs in enumerate(trainloader):
        l2 = torch.empty(batch, latent).uniform_(-1, 1)
        dec_l2 = dec(l2)
        n = torch.randn(batch, 1, 8, 8) * 0.2
        l1 = enc(inputs + n)

        # update classifier
        logits_C_l1 = cl(dec(l1))
        logits_C_l2 = cl(dec_l2)
        loss_cl = (criterion_ce(logits_C_l1, torch.ones(batch, 1)) + criterion_ce(logits_C_l2, torch.zeros(batch, 1))) / 2
        cl.zero_grad()
        loss_cl.backward(retain_graph=True)
        optimizer_c.step()

        # update latent discriminator
        disc_l_l1 = l1
        disc_l.zero_grad()
        logits_Dl_l1 = disc_l(disc_l_l1)
        logits_Dl_l2 = disc_l(l2)
        loss_dl = (criterion_ce(logits_Dl_l1, torch.zeros(batch, 1)) + criterion_ce(logits_Dl_l2, torch.ones(batch, 1))) / 2
        loss_dl.backward(retain_graph=True)
        optimizer_dl.step()

        # update visual discriminator
        logits_Dv_X = disc_v(inputs)
        logits_Dv_l2 = disc_v(dec(l2))
        loss_dv = (criterion_ce(logits_Dv_X, torch.ones(batch, 1)) + criterion_ce(logits_Dv_l2, torch.zeros(batch, 1))) / 2
        disc_v.zero_grad()
        loss_dv.backward()
        optimizer_dv.step()

        # update autoencoder
        Xh = dec(l1)
        loss_mse = criterion_ae(Xh, inputs)
        logits_Dl_l1 = disc_l(disc_l_l1)
        loss_AE_l = criterion_ce(logits_Dl_l1, torch.ones(batch, 1))
        logits_Dv_l2_mine = disc_v(dec_l2)
        loss_ae_v = criterion_ce(logits_Dv_l2_mine, torch.ones(batch, 1))
        loss_ae_all = 10 * loss_mse + loss_ae_v + loss_AE_l
        enc.zero_grad()
        dec.zero_grad()
        loss_ae_all.backward()
        optimizer_en.step()
        optimizer_de.step()
        print(f"batch {batch_idx}: loss_ae_all {loss_ae_all.item():.4f}")


train([torch.rand(batch, 1, 8, 8) * 2 - 1 for _ in range(3)])
