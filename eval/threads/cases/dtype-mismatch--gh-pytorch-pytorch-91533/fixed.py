# An MLP regressor trained on a numpy feature matrix (the person's 5_train_mlp.py): the features
# are wrapped with torch.from_numpy, the targets with torch.tensor(..., dtype=torch.float32),
# and both go into a TensorDataset. Random numpy arrays stand in for the tabular data.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.default_rng(0)
batch_size, lr, epochs = 16, 1e-3, 2

X = rng.normal(size=(64, 8))                 # float64, as numpy makes it
y = rng.normal(size=(64, 1))

X = torch.from_numpy(X).float()
print(X.dtype)
y = torch.tensor(y, dtype=torch.float32)
train_data = TensorDataset(X, y)
train_loader = DataLoader(dataset=train_data, batch_size=batch_size, shuffle=True)

net = nn.Sequential(
    nn.Linear(X.shape[1], 16),
    nn.ReLU(),
    nn.Linear(16, 1)
)

trainer = torch.optim.Adam(net.parameters(), lr=lr)
loss = nn.MSELoss()
for epoch in range(epochs):
    for _X, _y in train_loader:
        trainer.zero_grad()
        l = loss(net(_X), _y)
        l.backward()
        trainer.step()
    with torch.no_grad():
        l = loss(net(X), y)
        print(f'epoch {epoch} train loss: {l:.4f}')
