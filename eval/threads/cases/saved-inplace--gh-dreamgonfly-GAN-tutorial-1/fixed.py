# GAN-tutorial (GAN.ipynb): a fully connected GAN on MNIST, trained with BCE, the
# discriminator first and then the generator. Random images in [-1, 1] stand in for the
# normalized MNIST batches; the loss log keeps .item() in place of the notebook's .data[0]
# (an IndexError on 0-dim tensors today) and the image logging is left out.
import torch
import torch.nn as nn
from torch.optim import Adam
from torch.autograd import Variable

torch.manual_seed(0)
use_gpu = False


class Generator(nn.Module):

    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=100, out_features=256),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=256, out_features=512),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=512, out_features=1024),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=1024, out_features=28*28),
            nn.Tanh())

    def forward(self, inputs):
        return self.main(inputs).view(-1, 1, 28, 28)


class Discriminator(nn.Module):

    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=28*28, out_features=1024),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=1024, out_features=512),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=512, out_features=256),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=256, out_features=1),
            nn.Sigmoid())

    def forward(self, inputs):
        inputs = inputs.view(-1, 28*28)
        return self.main(inputs)


G = Generator()
D = Discriminator()
if use_gpu:
    G.cuda()
    D.cuda()

criterion = nn.BCELoss()
G_optimizer = Adam(G.parameters(), lr=0.0002, betas=(0.5, 0.999))
D_optimizer = Adam(D.parameters(), lr=0.0002, betas=(0.5, 0.999))

dataloader = [(torch.rand(8, 1, 28, 28) * 2 - 1, torch.randint(0, 10, (8,))) for _ in range(2)]
for epoch in range(1):
    D_losses = []
    G_losses = []
    for real_data, _ in dataloader:
        batch_size = real_data.size(0)
        real_data = Variable(real_data)

        target_real = Variable(torch.ones(batch_size, 1))
        target_fake = Variable(torch.zeros(batch_size, 1))

        D_result_from_real = D(real_data)
        D_loss_real = criterion(D_result_from_real, target_real)

        z = Variable(torch.randn((batch_size, 100)))
        fake_data = G(z)
        D_result_from_fake = D(fake_data)
        D_loss_fake = criterion(D_result_from_fake, target_fake)

        D_loss = D_loss_real + D_loss_fake
        D.zero_grad()
        D_loss.backward()
        D_optimizer.step()
        D_losses.append(D_loss.item())

        z = Variable(torch.randn((batch_size, 100)))
        fake_data = G(z)
        D_result_from_fake = D(fake_data)
        G_loss = criterion(D_result_from_fake, target_real)
        G.zero_grad()
        G_loss.backward()
        G_optimizer.step()
        G_losses.append(G_loss.item())
    message = "Epoch: {epoch:<3d} D Loss: {d_loss:<.6} G Loss: {g_loss:<.6}".format(
        epoch=epoch, d_loss=sum(D_losses)/len(D_losses), g_loss=sum(G_losses)/len(G_losses))
    print(message)
