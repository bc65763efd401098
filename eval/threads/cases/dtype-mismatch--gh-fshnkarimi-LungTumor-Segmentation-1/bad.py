# LungTumor-Segmentation (dataset.py + the training notebook): CT slices are saved as numpy
# arrays scaled to [0, 1] by dividing the Hounsfield values by 3071, which leaves them float64;
# the dataset augments them and returns them with the tumour mask. A LightningModule-style class
# (training_step / configure_optimizers) trains a UNet; a small loop stands in for pl.Trainer,
# random volumes for the preprocessed files, a flip for the imgaug pipeline, and a two-layer
# conv net for the UNet.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
np.random.seed(0)


class LungDataset(Dataset):
    def __init__(self, n, augment_params=None):
        self.cts = np.random.randint(-1000, 3071, size=(n, 64, 64)) / 3071
        self.masks = (np.random.rand(n, 64, 64) > 0.9).astype(np.uint8)
        self.augment_params = augment_params

    def augment(self, slice, mask):
        if np.random.rand() < 0.5:
            slice, mask = slice[:, ::-1], mask[:, ::-1]
        return slice.copy(), mask.copy()

    def __len__(self):
        return len(self.cts)

    def __getitem__(self, idx):
        slice = self.cts[idx]
        mask = self.masks[idx]
        if self.augment_params:
            slice, mask = self.augment(slice, mask)
        return np.expand_dims(slice, 0), np.expand_dims(mask, 0)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))

    def forward(self, x):
        return self.layers(x)


class TumorSegmentation(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = UNet()
        self.loss_fn = nn.BCEWithLogitsLoss()

    def forward(self, data):
        return self.model(data)

    def training_step(self, batch, batch_idx):
        ct, mask = batch
        mask = mask.float()
        pred = self(ct)
        loss = self.loss_fn(pred, mask)
        return loss

    def configure_optimizers(self):
        return [torch.optim.Adam(self.parameters(), lr=1e-4)]


def fit(module, loader, max_epochs):
    optimizer = module.configure_optimizers()[0]
    for epoch in range(max_epochs):
        module.train()
        for batch_idx, batch in enumerate(loader):
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


train_dataset = LungDataset(16, augment_params={'flip': True})
train_loader = DataLoader(train_dataset, batch_size=4, shuffle=True)
fit(TumorSegmentation(), train_loader, max_epochs=2)
