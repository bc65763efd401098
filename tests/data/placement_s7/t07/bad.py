import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 3)
        self.fc = nn.Linear(4 * 14, 2)

    def forward(self, x):
        return self.fc(self.conv(x).flatten(1))


def load_signals(n):
    t = np.linspace(0, 1, 16)
    return np.stack([np.sin(2 * np.pi * k * t) for k in range(n)])


signals = torch.as_tensor(load_signals(6)).unsqueeze(1)
net = Net()
print(net(signals).shape)
