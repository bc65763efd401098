# SEM-PCYC style zero-shot sketch-based retrieval: one nn.Module holds frozen sketch/image feature
# nets, four generators (sketch/image <-> semantic), three discriminators and a semantic
# autoencoder, each group with its own optimizer. forward() stores every intermediate on self and
# backward() updates the autoencoder, then the generators, then the discriminators, whose losses
# look at the (not detached) generator outputs. Random tensors stand in for Sketchy.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class FeatureNet(nn.Module):
    def __init__(self, in_dim=64, out_dim=32):
        super(FeatureNet, self).__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, out_dim), nn.ReLU())
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.features(x)


class Generator(nn.Module):
    def __init__(self, in_dim=32, out_dim=16, hid_dim=24):
        super(Generator, self).__init__()
        self.gen = nn.Sequential(nn.Linear(in_dim, hid_dim), nn.BatchNorm1d(hid_dim),
                                 nn.LeakyReLU(0.2, inplace=True), nn.Dropout(p=0.5),
                                 nn.Linear(hid_dim, out_dim))

    def forward(self, x):
        return self.gen(x)


class GaussianNoiseLayer(nn.Module):
    def __init__(self, std=0.3):
        super(GaussianNoiseLayer, self).__init__()
        self.std = std

    def forward(self, x):
        if self.training:
            x = x + x.data.new(x.size()).normal_(0.0, self.std)
        return x


class Discriminator(nn.Module):
    def __init__(self, in_dim=16, hid_dim=24):
        super(Discriminator, self).__init__()
        self.disc = nn.Sequential(GaussianNoiseLayer(), nn.Linear(in_dim, hid_dim), nn.BatchNorm1d(hid_dim),
                                  nn.LeakyReLU(0.2, inplace=True), nn.Linear(hid_dim, 1))

    def forward(self, x):
        return self.disc(x)


class AutoEncoder(nn.Module):
    def __init__(self, dim=20, hid_dim=16):
        super(AutoEncoder, self).__init__()
        self.enc = nn.Sequential(nn.Linear(dim, hid_dim), nn.ReLU(inplace=True))
        self.dec = nn.Sequential(nn.Linear(hid_dim, dim), nn.ReLU(inplace=True))

    def forward(self, x):
        xenc = self.enc(x)
        return xenc, self.dec(xenc)


class GANLoss(nn.Module):
    def __init__(self):
        super(GANLoss, self).__init__()
        self.loss = nn.MSELoss()

    def forward(self, input, target_is_real):
        target = torch.full_like(input, 1.0 if target_is_real else 0.0)
        return self.loss(input, target)


class SEM_PCYC(nn.Module):
    def __init__(self, feat_dim=32, dim_out=16, sem_dim=20, lr=1e-3):
        super(SEM_PCYC, self).__init__()
        self.sketch_model = FeatureNet(out_dim=feat_dim)
        self.image_model = FeatureNet(out_dim=feat_dim)
        self.gen_sk2se = Generator(feat_dim, dim_out)
        self.gen_im2se = Generator(feat_dim, dim_out)
        self.gen_se2sk = Generator(dim_out, feat_dim)
        self.gen_se2im = Generator(dim_out, feat_dim)
        self.disc_se = Discriminator(dim_out)
        self.disc_sk = Discriminator(feat_dim)
        self.disc_im = Discriminator(feat_dim)
        self.aut_enc = AutoEncoder(sem_dim, dim_out)
        self.optimizer_gen = optim.Adam(list(self.gen_sk2se.parameters()) + list(self.gen_im2se.parameters()) +
                                        list(self.gen_se2sk.parameters()) + list(self.gen_se2im.parameters()), lr=lr)
        self.optimizer_disc = optim.SGD(list(self.disc_se.parameters()) + list(self.disc_sk.parameters()) +
                                        list(self.disc_im.parameters()), lr=lr, momentum=0.9)
        self.optimizer_ae = optim.SGD(self.aut_enc.parameters(), lr=100 * lr, momentum=0.9)
        self.criterion_gan = GANLoss()
        self.criterion_cyc = nn.L1Loss()
        self.criterion_reg = nn.MSELoss()

    def forward(self, sk, im, se):
        self.sk_fe = self.sketch_model(sk)
        self.im_fe = self.image_model(im)
        self.se_em_enc, self.se_em_rec = self.aut_enc(se)
        self.im2se_em = self.gen_im2se(self.im_fe)
        self.sk2se_em = self.gen_sk2se(self.sk_fe)
        self.se2im_em = self.gen_se2im(self.se_em_enc.detach())
        self.se2sk_em = self.gen_se2sk(self.se_em_enc.detach())
        self.im_em_hat = self.gen_se2im(self.im2se_em)
        self.sk_em_hat = self.gen_se2sk(self.sk2se_em)

    def backward(self, se):
        loss_aut_enc = self.criterion_reg(self.se_em_rec, se)
        self.optimizer_ae.zero_grad()
        loss_aut_enc.backward(retain_graph=True)
        self.optimizer_ae.step()

        loss_gen_adv = self.criterion_gan(self.disc_se(self.im2se_em), True) + \
            self.criterion_gan(self.disc_se(self.sk2se_em), True) + \
            self.criterion_gan(self.disc_im(self.se2im_em), True) + \
            self.criterion_gan(self.disc_sk(self.se2sk_em), True)
        loss_gen_cyc = self.criterion_cyc(self.im_em_hat, self.im_fe) + self.criterion_cyc(self.sk_em_hat, self.sk_fe)
        loss_gen_reg = self.criterion_reg(self.im2se_em, self.sk2se_em)
        loss_gen = loss_gen_adv + loss_gen_cyc + loss_gen_reg
        self.optimizer_gen.zero_grad()
        loss_gen.backward(retain_graph=True)
        self.optimizer_gen.step()

        self.optimizer_disc.zero_grad()
        loss_disc_se = 2 * self.criterion_gan(self.disc_se(self.se_em_enc), True) + \
            self.criterion_gan(self.disc_se(self.im2se_em), False) + \
            self.criterion_gan(self.disc_se(self.sk2se_em), False)
        loss_disc_se.backward(retain_graph=True)
        loss_disc_sk = self.criterion_gan(self.disc_sk(self.sk_fe), True) + \
            self.criterion_gan(self.disc_sk(self.se2sk_em), False)
        loss_disc_sk.backward(retain_graph=True)
        loss_disc_im = self.criterion_gan(self.disc_im(self.im_fe), True) + \
            self.criterion_gan(self.disc_im(self.se2im_em), False)
        loss_disc_im.backward()
        self.optimizer_disc.step()

        return {'aut_enc': loss_aut_enc.item(), 'gen': loss_gen.item(),
                'disc': (loss_disc_se + loss_disc_sk + loss_disc_im).item()}

    def optimize_params(self, sk, im, se):
        self.forward(sk, im, se)
        return self.backward(se)


model = SEM_PCYC()
model.train()
for i in range(3):
    sk = torch.randn(8, 64)
    im = torch.randn(8, 64)
    se = torch.rand(8, 20)
    loss = model.optimize_params(sk, im, se)
    print(i, {k: round(v, 4) for k, v in loss.items()})
