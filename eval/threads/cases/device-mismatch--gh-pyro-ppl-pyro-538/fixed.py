# The VAE example (pyro 0.1): an Encoder for q(z|x), a Decoder for p(x|z) and a VAE module that
# holds both and, when run with --cuda, moves itself to the GPU in its constructor. Pyro's SVI is
# replaced by the ELBO written out (Gaussian posterior, standard normal prior, Bernoulli pixels),
# the meta device stands in for the GPU and random binary images for MNIST.
import argparse

import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # what self.cuda() / x.cuda() reach
fudge = 1e-7


class Encoder(nn.Module):
    def __init__(self, z_dim, hidden_dim):
        super(Encoder, self).__init__()
        self.fc1 = nn.Linear(784, hidden_dim)
        self.fc21 = nn.Linear(hidden_dim, z_dim)
        self.fc22 = nn.Linear(hidden_dim, z_dim)
        self.softplus = nn.Softplus()

    def forward(self, x):
        x = x.view(-1, 784)
        hidden = self.softplus(self.fc1(x))
        z_mu = self.fc21(hidden)
        z_sigma = torch.exp(self.fc22(hidden))
        return z_mu, z_sigma


class Decoder(nn.Module):
    def __init__(self, z_dim, hidden_dim):
        super(Decoder, self).__init__()
        self.fc1 = nn.Linear(z_dim, hidden_dim)
        self.fc21 = nn.Linear(hidden_dim, 784)
        self.softplus = nn.Softplus()
        self.sigmoid = nn.Sigmoid()

    def forward(self, z):
        hidden = self.softplus(self.fc1(z))
        mu_img = (self.sigmoid(self.fc21(hidden)) + fudge) * (1 - 2 * fudge)
        return mu_img


class VAE(nn.Module):
    def __init__(self, z_dim=50, hidden_dim=400, use_cuda=False):
        super(VAE, self).__init__()
        self.encoder = Encoder(z_dim, hidden_dim)
        self.decoder = Decoder(z_dim, hidden_dim)

        if use_cuda:
            # calling cuda() here will put all the parameters of
            # the encoder and decoder networks into gpu memory
            self.to(device)
        self.use_cuda = use_cuda
        self.z_dim = z_dim

    def elbo_loss(self, x):
        # guide q(z|x), then model p(x|z)p(z), as SVI would score them
        z_mu, z_sigma = self.encoder(x)
        z = z_mu + z_sigma * torch.randn_like(z_mu)
        mu_img = self.decoder(z)
        x = x.view(-1, 784)
        log_px = (x * torch.log(mu_img) + (1 - x) * torch.log(1 - mu_img)).sum(1)
        kl = 0.5 * (z_mu ** 2 + z_sigma ** 2 - 2 * torch.log(z_sigma) - 1).sum(1)
        return (kl - log_px).sum()


def main(argv):
    parser = argparse.ArgumentParser(description="parse args")
    parser.add_argument('-n', '--num-epochs', default=2, type=int)
    parser.add_argument('-lr', '--learning-rate', default=1.0e-3, type=float)
    parser.add_argument('--cuda', action='store_true', default=False)
    args = parser.parse_args(argv)

    train_x = (torch.rand(64, 1, 28, 28) > 0.5).float()
    vae = VAE(z_dim=10, hidden_dim=64, use_cuda=args.cuda)
    optimizer = torch.optim.Adam(vae.parameters(), lr=args.learning_rate, betas=(0.95, 0.999))
    for epoch in range(args.num_epochs):
        for i in range(0, 64, 16):
            x = train_x[i:i + 16]
            if args.cuda:
                x = x.to(device)
            loss = vae.elbo_loss(x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch", epoch, loss.device.type)


main(["--cuda"])
