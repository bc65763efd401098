# A custom in-RAM dataset of float images fed through ToTensor and Normalize transforms: for a
# float ndarray ToTensor returns a view of the stored array, and Normalize works in place.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
rng = np.random.RandomState(0)


class ToTensor(object):
    def __call__(self, pic):
        img = torch.from_numpy(pic.transpose((2, 0, 1)))
        if img.dtype == torch.uint8:
            return img.float().div(255)
        return img


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        tensor = tensor.clone()
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)
        return tensor


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class InMemoryDataset(Dataset):
    def __init__(self, images, labels, transform):
        self.images = images          # N x H x W x C float32, kept in RAM
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return self.transform(self.images[idx]), self.labels[idx]


images = rng.rand(32, 8, 8, 1).astype(np.float32)
labels = torch.from_numpy(rng.randint(0, 10, 32))
original = images.copy()
transform = Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
train_set = InMemoryDataset(images, labels, transform)
loader = DataLoader(train_set, batch_size=8, shuffle=True)

model = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    print("epoch", epoch, "input mean %.3f" % x.mean().item(), "loss %.4f" % loss.item())

# -- corpus check --
if not np.allclose(train_set.images, original):
    print("BUG: the stored dataset was normalized again on every epoch")
