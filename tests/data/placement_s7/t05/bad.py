import numpy as np
import torch
from torch import nn


class LSTMForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 16, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def make_windows(series, width):
    xs = [series[i:i + width] for i in range(len(series) - width)]
    return torch.from_numpy(np.array(xs)).unsqueeze(-1)


series = np.sin(np.linspace(0, 20, 100))
windows = make_windows(series, 10)
model = LSTMForecaster()
print(model(windows).shape)
