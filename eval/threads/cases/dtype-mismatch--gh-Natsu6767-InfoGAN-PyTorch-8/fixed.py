# InfoGAN on MNIST-sized data: a shared discriminator body with a D head (real/fake, BCELoss) and
# a Q head (categorical code); labels for the D loss are filled with torch.full.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")

num_z, num_dis_c, dis_c_dim, batch_size = 16, 1, 10, 32
real_label = 1.0
fake_label = 0.0


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(num_z + num_dis_c * dis_c_dim, 128), nn.ReLU(),
                                  nn.Linear(128, 28 * 28), nn.Tanh())

    def forward(self, x):
        return self.main(x.flatten(1)).view(-1, 1, 28, 28)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 128), nn.LeakyReLU(0.1))

    def forward(self, x):
        return self.main(x)


class DHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, 1)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class QHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, dis_c_dim)

    def forward(self, x):
        return self.fc(x)


def noise_sample(n_dis_c, dis_c_dim, n_z, batch_size, device):
    idx = torch.randint(0, dis_c_dim, (n_dis_c, batch_size))
    dis_c = torch.zeros(batch_size, n_dis_c, dis_c_dim, device=device)
    for i in range(n_dis_c):
        dis_c[torch.arange(batch_size), i, idx[i]] = 1.0
    z = torch.randn(batch_size, n_z, device=device)
    return torch.cat([z, dis_c.view(batch_size, -1)], dim=1), idx


netG, discriminator, netD, netQ = Generator(), Discriminator(), DHead(), QHead()
criterionD = nn.BCELoss()
criterionQ_dis = nn.CrossEntropyLoss()
optimD = torch.optim.Adam(list(discriminator.parameters()) + list(netD.parameters()), lr=2e-4)
optimG = torch.optim.Adam(list(netG.parameters()) + list(netQ.parameters()), lr=1e-3)

dataloader = [torch.rand(batch_size, 1, 28, 28) * 2 - 1 for _ in range(3)]

for epoch in range(2):
    for i, data in enumerate(dataloader):
        real_data = data.to(device)
        b_size = real_data.size(0)

        # Updating discriminator and DHead
        optimD.zero_grad()
        label = torch.full((b_size,), real_label, device=device)
        output1 = discriminator(real_data)
        probs_real = netD(output1).view(-1)
        loss_real = criterionD(probs_real, label)
        loss_real.backward()

        label.fill_(fake_label)
        noise, idx = noise_sample(num_dis_c, dis_c_dim, num_z, b_size, device)
        fake_data = netG(noise)
        output2 = discriminator(fake_data.detach())
        probs_fake = netD(output2).view(-1)
        loss_fake = criterionD(probs_fake, label)
        loss_fake.backward()
        D_loss = loss_real + loss_fake
        optimD.step()

        # Updating Generator and QHead
        optimG.zero_grad()
        output = discriminator(fake_data)
        label.fill_(real_label)
        probs_fake = netD(output).view(-1)
        gen_d_loss = criterionD(probs_fake, label)
        q_logits = netQ(output)
        dis_loss = criterionQ_dis(q_logits, idx[0])
        G_loss = gen_d_loss + dis_loss
        G_loss.backward()
        optimG.step()
    print(epoch, round(D_loss.item(), 4), round(G_loss.item(), 4))
