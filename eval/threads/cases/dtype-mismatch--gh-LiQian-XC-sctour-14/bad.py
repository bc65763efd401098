# scTour on a person's AnnData: the raw counts are taken back from the counts layer (which comes
# back as float64), the 2000 most variable genes are kept, and scTour's Trainer fits its VAE + ODE
# model to adata.X. Small stand-ins for AnnData, the preprocessing and sct.train.Trainer (its
# dataset hands out rows of adata.X as tensors, its encoder is a stack of float32 Linear layers);
# random counts stand in for the h5ad file.
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
rng = np.random.RandomState(0)


class MakeData(Dataset):
    def __init__(self, adata):
        self.X = adata.X

    def __len__(self):
        return self.X.shape[0]

    def __getitem__(self, idx):
        return torch.tensor(self.X[idx])


class TNODE(nn.Module):
    def __init__(self, n_int, n_latent=5, n_hidden=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_int, n_hidden), nn.ReLU(), nn.Linear(n_hidden, 2 * n_latent))
        self.decoder = nn.Sequential(nn.Linear(n_latent, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_int))

    def forward(self, x):
        x = torch.log1p(x)
        qz_mean, qz_logvar = self.encoder(x).chunk(2, dim=-1)
        z = qz_mean + torch.randn_like(qz_mean) * torch.exp(0.5 * qz_logvar)
        recon = self.decoder(z)
        kl = -0.5 * torch.sum(1 + qz_logvar - qz_mean.pow(2) - qz_logvar.exp(), dim=-1).mean()
        return ((recon - x) ** 2).mean() + kl


class Trainer:
    def __init__(self, adata, loss_mode='nb', alpha_recon_lec=0.5, alpha_recon_lode=0.5, batch_size=64, nepoch=2):
        self.adata = adata
        self.loss_mode = loss_mode
        self.alpha_recon_lec, self.alpha_recon_lode = alpha_recon_lec, alpha_recon_lode
        self.model = TNODE(adata.X.shape[1])
        self.loader = DataLoader(MakeData(adata), batch_size=batch_size, shuffle=True)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.nepoch = nepoch

    def train(self):
        for epoch in range(self.nepoch):
            for X in self.loader:
                self.optimizer.zero_grad()
                loss = self.model(X)
                loss.backward()
                self.optimizer.step()
            print('epoch', epoch, 'loss', round(loss.item(), 4))


def retrieve_layers(adata, layers='counts'):
    adata.X = adata.layers[layers].astype(np.float64)


def highly_variable_genes(adata, n_top_genes=2000, subset=True):
    keep = np.argsort(adata.X.var(0))[::-1][:n_top_genes]
    adata.X = adata.X[:, np.sort(keep)]


counts = rng.poisson(1.0, size=(300, 400))
adata_counts = SimpleNamespace(X=np.log1p(counts).astype(np.float32), layers={'counts': counts})
print(adata_counts.X.dtype)

retrieve_layers(adata_counts, layers='counts')
print(adata_counts.X.dtype)

adata = adata_counts

highly_variable_genes(adata, n_top_genes=200, subset=True)

tnode = Trainer(adata, loss_mode='nb', alpha_recon_lec=0.5, alpha_recon_lode=0.5)
tnode.train()
