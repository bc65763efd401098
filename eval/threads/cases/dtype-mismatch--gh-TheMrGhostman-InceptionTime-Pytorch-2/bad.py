# InceptionTime for time-series classification moved to another dataset: the series are loaded with
# numpy (float64), wrapped in a TensorDataset and fed to a stack of Inception blocks (a bottleneck
# Conv1d, three wide convolutions and a max-pool branch, batch norm, a residual connection).
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)


def pass_through(X):
    return X


class Inception(nn.Module):
    def __init__(self, in_channels, n_filters, kernel_sizes=(9, 19, 39), bottleneck_channels=32, activation=nn.ReLU()):
        super().__init__()
        if in_channels > 1:
            self.bottleneck = nn.Conv1d(in_channels, bottleneck_channels, kernel_size=1, stride=1, bias=False)
        else:
            self.bottleneck = pass_through
            bottleneck_channels = 1
        self.conv_from_bottleneck_1 = nn.Conv1d(bottleneck_channels, n_filters, kernel_sizes[0], padding=kernel_sizes[0] // 2, bias=False)
        self.conv_from_bottleneck_2 = nn.Conv1d(bottleneck_channels, n_filters, kernel_sizes[1], padding=kernel_sizes[1] // 2, bias=False)
        self.conv_from_bottleneck_3 = nn.Conv1d(bottleneck_channels, n_filters, kernel_sizes[2], padding=kernel_sizes[2] // 2, bias=False)
        self.max_pool = nn.MaxPool1d(kernel_size=3, stride=1, padding=1)
        self.conv_from_maxpool = nn.Conv1d(in_channels, n_filters, kernel_size=1, bias=False)
        self.batch_norm = nn.BatchNorm1d(num_features=4 * n_filters)
        self.activation = activation

    def forward(self, X):
        Z_bottleneck = self.bottleneck(X)
        Z_maxpool = self.max_pool(X)
        Z1 = self.conv_from_bottleneck_1(Z_bottleneck)
        Z2 = self.conv_from_bottleneck_2(Z_bottleneck)
        Z3 = self.conv_from_bottleneck_3(Z_bottleneck)
        Z4 = self.conv_from_maxpool(Z_maxpool)
        Z = torch.cat([Z1, Z2, Z3, Z4], axis=1)
        return self.activation(self.batch_norm(Z))


class InceptionBlock(nn.Module):
    def __init__(self, in_channels, n_filters=8, bottleneck_channels=8, activation=nn.ReLU()):
        super().__init__()
        self.activation = activation
        self.inception_1 = Inception(in_channels, n_filters, bottleneck_channels=bottleneck_channels, activation=activation)
        self.inception_2 = Inception(4 * n_filters, n_filters, bottleneck_channels=bottleneck_channels, activation=activation)
        self.residual = nn.Sequential(nn.Conv1d(in_channels, 4 * n_filters, kernel_size=1), nn.BatchNorm1d(4 * n_filters))

    def forward(self, X):
        Z = self.inception_2(self.inception_1(X))
        return self.activation(Z + self.residual(X))


n_channels, series_length, n_classes = 3, 64, 4
series = np.random.normal(size=(32, n_channels, series_length))  # float64, as np.loadtxt gives
labels = np.random.randint(0, n_classes, size=32)
train_loader = DataLoader(TensorDataset(torch.tensor(series), torch.tensor(labels)), batch_size=8, shuffle=True)

model = nn.Sequential(InceptionBlock(n_channels), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, n_classes))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for X, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(X), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
