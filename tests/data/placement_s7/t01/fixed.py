import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class TabularDataset(Dataset):
    def __init__(self, n):
        self.features = np.random.rand(n, 5)
        self.targets = np.random.rand(n)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, idx):
        return torch.from_numpy(self.features[idx]).float(), torch.tensor(self.targets[idx])


model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
loader = DataLoader(TabularDataset(12), batch_size=4)
for xb, yb in loader:
    pred = model(xb)
