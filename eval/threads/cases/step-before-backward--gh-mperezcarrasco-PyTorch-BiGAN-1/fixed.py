# BiGAN trainer: generator, encoder and discriminator share one forward pass; the D loss and the
# G/E loss are both built from it, then D steps before the G/E loss is backpropagated.
import torch
import torch.nn as nn
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, latent_dim, x_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, 32), nn.LeakyReLU(0.1), nn.Linear(32, x_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Encoder(nn.Module):
    def __init__(self, latent_dim, x_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.1), nn.Linear(32, latent_dim))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self, latent_dim, x_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim + latent_dim, 32), nn.LeakyReLU(0.1), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x, z):
        return self.net(torch.cat([x, z], dim=1))


class TrainerBiGAN:
    def __init__(self, latent_dim, train_loader, num_epochs=2):
        self.latent_dim = latent_dim
        self.train_loader = train_loader
        self.num_epochs = num_epochs

    def train(self):
        self.G = Generator(self.latent_dim)
        self.E = Encoder(self.latent_dim)
        self.D = Discriminator(self.latent_dim)
        optimizer_ge = optim.Adam(list(self.G.parameters()) + list(self.E.parameters()), lr=1e-4)
        optimizer_d = optim.Adam(self.D.parameters(), lr=1e-4)
        criterion = nn.BCELoss()

        for epoch in range(self.num_epochs):
            for x, _ in self.train_loader:
                y_true = torch.ones((x.size(0), 1))
                y_fake = torch.zeros((x.size(0), 1))
                noise1 = torch.randn(x.size()) * 0.1 * (self.num_epochs - epoch) / self.num_epochs
                noise2 = torch.randn(x.size()) * 0.1 * (self.num_epochs - epoch) / self.num_epochs

                # Cleaning gradients.
                optimizer_d.zero_grad()
                optimizer_ge.zero_grad()

                # Generator:
                z_fake = torch.randn((x.size(0), self.latent_dim))
                x_fake = self.G(z_fake)

                # Encoder:
                x_true = x.float()
                z_true = self.E(x_true)

                # Discriminator
                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)

                # Losses
                loss_d = criterion(out_true, y_true) + criterion(out_fake, y_fake)

                # Computing gradients and backpropagate.
                loss_d.backward()
                optimizer_d.step()

                # Cleaning gradients, then a new forward pass for the generator and encoder.
                optimizer_ge.zero_grad()
                z_fake = torch.randn((x.size(0), self.latent_dim))
                x_fake = self.G(z_fake)
                z_true = self.E(x_true)
                out_true = self.D(x_true + noise1, z_true)
                out_fake = self.D(x_fake + noise2, z_fake)
                loss_ge = criterion(out_fake, y_true) + criterion(out_true, y_fake)
                loss_ge.backward()
                optimizer_ge.step()
            print(f"Training... Epoch: {epoch}, Discriminator Loss: {loss_d.item():.3f}, Generator Loss: {loss_ge.item():.3f}")


data = TensorDataset(torch.rand(32, 16) * 2 - 1, torch.zeros(32))
TrainerBiGAN(latent_dim=4, train_loader=DataLoader(data, batch_size=8)).train()
