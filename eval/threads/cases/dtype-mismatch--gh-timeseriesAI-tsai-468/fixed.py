# Time-series classification: X (samples, variables, steps) and y prepared as numpy arrays, wrapped
# in a Dataset/DataLoader and fed to a small 1-D convolutional classifier.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
np.random.seed(0)

n_samples, c_in, seq_len, c_out = 64, 3, 50, 4
X = np.cumsum(np.random.randn(n_samples, c_in, seq_len), axis=-1)
X = ((X - X.mean(axis=(0, 2), keepdims=True)) / X.std(axis=(0, 2), keepdims=True)).astype('float32')
y = np.random.randint(0, c_out, n_samples)


class TSDataset(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.X)

    def __getitem__(self, i):
        return torch.from_numpy(self.X[i]), torch.tensor(self.y[i])


class FCN(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.convblock1 = nn.Sequential(nn.Conv1d(c_in, 32, 7, padding=3), nn.BatchNorm1d(32), nn.ReLU())
        self.convblock2 = nn.Sequential(nn.Conv1d(32, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU())
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(64, c_out)

    def forward(self, x):
        x = self.convblock2(self.convblock1(x))
        return self.fc(self.gap(x).squeeze(-1))


dls = DataLoader(TSDataset(X, y), batch_size=16, shuffle=True)
model = FCN(c_in, c_out)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_func = nn.CrossEntropyLoss()

for epoch in range(2):
    total = 0.0
    for xb, yb in dls:
        loss = loss_func(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(epoch, total / len(dls))
