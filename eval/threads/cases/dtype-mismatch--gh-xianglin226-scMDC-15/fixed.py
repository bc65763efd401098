# scMDC (run_scMDC.py + scMDC.py): a multimodal deep clustering autoencoder for single-cell RNA
# and ATAC counts. The counts are normalized and log-transformed with numpy (float64). Pretraining
# wraps them in torch.Tensor(...) and runs; after pretraining, the script embeds all cells with
# encodeBatch(torch.tensor(adata1.X), torch.tensor(adata2.X)). A small holder class stands in
# for AnnData, random counts for the h5 file, an MSE reconstruction for the ZINB loss.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)


class AnnDataLike:
    def __init__(self, counts):
        self.X = counts


def normalize(adata):
    size_factors = adata.X.sum(1, keepdims=True) / np.median(adata.X.sum(1))
    return AnnDataLike(np.log1p(adata.X / size_factors))


class scMultiCluster(nn.Module):
    def __init__(self, input_dim1, input_dim2, encodeLayer=(64, 16), device='cpu'):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(input_dim1 + input_dim2, encodeLayer[0]), nn.ReLU(),
                                     nn.Linear(encodeLayer[0], encodeLayer[1]))
        self.decoder1 = nn.Sequential(nn.Linear(encodeLayer[1], input_dim1))
        self.decoder2 = nn.Sequential(nn.Linear(encodeLayer[1], input_dim2))
        self.device = device

    def forwardAE(self, x1, x2):
        z = self.encoder(torch.cat([x1, x2], dim=-1))
        return z, self.decoder1(z), self.decoder2(z)

    def encodeBatch(self, X1, X2, batch_size=64):
        self.eval()
        encoded = []
        num = X1.shape[0]
        num_batch = int(np.ceil(num / batch_size))
        for batch_idx in range(num_batch):
            x1batch = X1[batch_idx * batch_size: min((batch_idx + 1) * batch_size, num)]
            x2batch = X2[batch_idx * batch_size: min((batch_idx + 1) * batch_size, num)]
            with torch.no_grad():
                z, _, _ = self.forwardAE(x1batch.to(self.device), x2batch.to(self.device))
            encoded.append(z)
        return torch.cat(encoded, dim=0)

    def pretrain_autoencoder(self, X1, X2, batch_size=64, lr=1e-3, epochs=3):
        self.train()
        dataset = TensorDataset(torch.Tensor(X1), torch.Tensor(X2))
        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=True)
        optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, self.parameters()), lr=lr, amsgrad=True)
        for epoch in range(epochs):
            for x1_batch, x2_batch in dataloader:
                _, mean1, mean2 = self.forwardAE(x1_batch, x2_batch)
                loss = ((mean1 - x1_batch) ** 2).mean() + ((mean2 - x2_batch) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(f"Pretrain epoch {epoch + 1}, Total loss:{loss.item():.6f}")


if __name__ == "__main__":
    adata1 = normalize(AnnDataLike(np.random.poisson(2.0, size=(300, 50)) + 1))
    adata2 = normalize(AnnDataLike(np.random.poisson(1.0, size=(300, 30)) + 1))
    model = scMultiCluster(input_dim1=adata1.X.shape[1], input_dim2=adata2.X.shape[1])
    model.pretrain_autoencoder(X1=adata1.X, X2=adata2.X, batch_size=64, epochs=3)
    latent = model.encodeBatch(torch.tensor(adata1.X, dtype=torch.float32).to(model.device),
                               torch.tensor(adata2.X, dtype=torch.float32).to(model.device))
    print(latent.shape)
