import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

X = np.random.randn(40, 3)
y = (X.sum(axis=1) > 0).astype(np.int64)
dataset = TensorDataset(torch.from_numpy(X).float(), torch.from_numpy(y))
loader = DataLoader(dataset, batch_size=8, shuffle=True)

model = nn.Sequential(nn.Linear(3, 1))
criterion = nn.BCEWithLogitsLoss()
for xb, yb in loader:
    loss = criterion(model(xb).squeeze(1), yb)
    loss.backward()
