# segmentation_models.pytorch, multiclass example adapted by the person: a CamVid-style dataset
# whose masks hold a class index per pixel, an epoch runner in the style of smp.utils.train
# (TrainEpoch: run() loops the loader, batch_update() does one step), and CrossEntropyLoss. The
# mask is read into a float array, as the binary example of the library does. Random images and
# masks stand in for the files, a small conv net for smp.Unet.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
np.random.seed(0)

CLASSES = ['sky', 'building', 'road', 'car']


class CamVidDataset(Dataset):
    def __init__(self, n, classes=CLASSES, augmentation=None):
        self.images = np.random.randint(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)
        self.masks = np.random.randint(0, len(classes), size=(n, 32, 32), dtype=np.uint8)
        self.augmentation = augmentation

    def __getitem__(self, i):
        image = self.images[i].astype('float32') / 255.0
        mask = self.masks[i].astype('float32')
        if self.augmentation:
            image, mask = self.augmentation(image, mask)
        return image.transpose(2, 0, 1), mask

    def __len__(self):
        return len(self.images)


class SmallUnet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.segmentation_head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        return self.segmentation_head(self.encoder(x))


class TrainEpoch:
    def __init__(self, model, loss, optimizer, device='cpu', verbose=True):
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.device = device
        self.verbose = verbose

    def on_epoch_start(self):
        self.model.train()

    def batch_update(self, x, y):
        self.optimizer.zero_grad()
        prediction = self.model.forward(x)
        loss = self.loss(prediction, y)
        loss.backward()
        self.optimizer.step()
        return loss, prediction

    def run(self, dataloader):
        self.on_epoch_start()
        total = 0.0
        for x, y in dataloader:
            x, y = x.to(self.device), y.to(self.device)
            loss, _ = self.batch_update(x, y)
            total += loss.item()
        if self.verbose:
            print(f"train loss {total / len(dataloader):.4f}")


model = SmallUnet(len(CLASSES))
train_loader = DataLoader(CamVidDataset(16), batch_size=4, shuffle=True)
loss = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_epoch = TrainEpoch(model, loss=loss, optimizer=optimizer, device='cpu')

for i in range(2):
    print(f"Epoch: {i}")
    train_epoch.run(train_loader)
