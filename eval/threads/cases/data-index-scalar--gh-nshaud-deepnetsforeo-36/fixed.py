# SegNet-style semantic segmentation of aerial tiles: train() keeps a numpy array of the
# per-iteration losses and a running mean of the last 100 for plotting.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
N_CLASSES = 6
WEIGHTS = torch.ones(N_CLASSES)
device = torch.device("cpu")


class SegNet(nn.Module):
    def __init__(self, in_channels=3, out_channels=N_CLASSES):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.out = nn.Conv2d(16, out_channels, 1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return F.log_softmax(self.out(x), dim=1)


def CrossEntropy2d(input, target, weight=None):
    return F.nll_loss(input, target, weight)


def accuracy(input, target):
    return 100 * float(np.count_nonzero(input == target)) / target.size


tiles = torch.randn(16, 3, 32, 32)
labels = torch.randint(0, N_CLASSES, (16, 32, 32))
train_loader = DataLoader(TensorDataset(tiles, labels), batch_size=4, shuffle=True)


def train(net, optimizer, epochs, scheduler=None, weights=WEIGHTS):
    losses = np.zeros(1000)
    mean_losses = np.zeros(1000)
    weights = weights.to(device)
    iter_ = 0
    for e in range(1, epochs + 1):
        net.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = net(data)
            loss = CrossEntropy2d(output, target, weight=weights)
            loss.backward()
            optimizer.step()

            losses[iter_] = loss.item()
            mean_losses[iter_] = np.mean(losses[max(0, iter_ - 100):iter_ + 1])

            if iter_ % 4 == 0:
                pred = np.argmax(output.data.cpu().numpy()[0], axis=0)
                gt = target.data.cpu().numpy()[0]
                print('Train (epoch {}/{}) [{}/{}]\tLoss: {:.6f}\tAccuracy: {}'.format(
                    e, epochs, batch_idx, len(train_loader), loss.item(), accuracy(pred, gt)))
            iter_ += 1
        if scheduler is not None:
            scheduler.step()
    return mean_losses[:iter_]


net = SegNet().to(device)
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
scheduler = optim.lr_scheduler.MultiStepLR(optimizer, [25, 35, 45], gamma=0.1)
train(net, optimizer, 2, scheduler)
