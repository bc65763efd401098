# Seismic image-to-image training with the torch backend, in the shape of dgbpy's torch_classes:
# the training dataset keeps its cubes as float32 numpy arrays and runs each example through a
# composed list of augmentation transforms (RandomRotation, RandomGaussianNoise) in __getitem__;
# the DataLoader collates the numpy examples and the training loop feeds a small 2D UNet-like net.
# Random cubes stand in for the OpendTect image data.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

torch.manual_seed(0)
np.random.seed(0)


class RandomRotation():
    def __init__(self, p=0.55):
        self.p = p

    def __call__(self, image, label, image_only=False):
        if self.p > np.random.uniform(0, 1):
            if image_only:
                return self.transform(image), label
            return self.transform(image), self.transform(label)
        return image, label

    def transform(self, arr):
        return np.flip(arr, axis=-1).copy()


class RandomGaussianNoise():
    def __init__(self, p=1, std=.2):
        self.p = p
        self.std = std

    def __call__(self, image, label, image_only=True):
        self.noise = np.random.normal(loc=0, scale=self.std, size=image.shape).astype('float32')
        if self.p > np.random.uniform(0, 1):
            return self.transform(image), label
        else:
            return image, label

    def transform(self, arr):
        arr = self.noise + arr
        return arr


class TransformComposefromList():
    def __init__(self, transforms):
        if not hasattr(transforms, '__iter__'):
            transforms = [transforms]
        self.transforms = transforms

    def __call__(self, image, label, image_only=False):
        for transform in self.transforms:
            image, label = transform(image, label, image_only=image_only)
        return image, label


class SeismicTrainDataset:
    def __init__(self, X, y, transform=list()):
        self.X = X.astype('float32')
        self.y = y.astype('float32')
        self.transform = TransformComposefromList(transform)

    def __len__(self):
        return self.X.shape[0]

    def __getitem__(self, idx):
        image_only = len(self.y.shape) < 3
        if self.transform:
            X, Y = self.transform(self.X[idx], self.y[idx], image_only=image_only)
            return X, Y
        return self.X[idx], self.y[idx]


class Net(nn.Module):
    def __init__(self, ch=1):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(ch, 8, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(8, ch, 3, padding=1)

    def forward(self, x):
        return self.dec(self.enc(x))


def train(model, loader, optimizer, criterion, epochs=2):
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for X, y in loader:
            optimizer.zero_grad()
            pred = model(X)
            loss = criterion(pred, y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print("epoch", epoch, "loss", round(total / len(loader), 4))


X = np.random.randn(16, 1, 16, 16)
y = np.random.randn(16, 1, 16, 16)
transforms = [RandomRotation(p=0.5), RandomGaussianNoise(p=0.5, std=0.3)]
train_ds = SeismicTrainDataset(X, y, transform=transforms)
loader = DataLoader(train_ds, batch_size=4, shuffle=True)
model = Net()
train(model, loader, torch.optim.Adam(model.parameters(), lr=1e-3), nn.MSELoss())
