import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class PairsDataset(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 6)
        self.y = torch.randn(n, 1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


device = torch.device("meta")
model = nn.Sequential(nn.Linear(6, 4), nn.Tanh(), nn.Linear(4, 1)).to(device)
loader = DataLoader(PairsDataset(16), batch_size=4)
for batch in loader:
    inputs, targets = batch[0].to(device), batch[1]
    loss = nn.functional.mse_loss(model(inputs), targets.to(device))
