# HardNet: a small L2-normalized patch descriptor trained with the hardest-in-batch triplet margin
# loss on (anchor, positive) patch pairs; train() logs the loss every log_interval batches.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class HardNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8, affine=False), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16, affine=False), nn.ReLU(),
            nn.Conv2d(16, 32, 8), nn.BatchNorm2d(32, affine=False))

    def forward(self, input):
        x = self.features(input).view(input.size(0), -1)
        return F.normalize(x, dim=1)


def loss_HardNet(anchor, positive, margin=1.0):
    dist_matrix = torch.cdist(anchor, positive)
    eye = torch.eye(dist_matrix.size(0))
    pos = torch.diag(dist_matrix)
    min_neg = (dist_matrix + eye * 10).min(dim=1)[0]
    return torch.clamp(margin + pos - min_neg, min=0.0).mean()


def train(train_loader, model, optimizer, epoch, log_interval=2):
    model.train()
    for batch_idx, (data_a, data_p) in enumerate(train_loader):
        out_a, out_p = model(data_a), model(data_p)
        loss = loss_HardNet(out_a, out_p)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data_a), len(train_loader.dataset), loss.data[0]))


patches = torch.rand(32, 1, 16, 16)
pairs = TensorDataset(patches, patches + 0.05 * torch.randn_like(patches))
train_loader = DataLoader(pairs, batch_size=8, shuffle=True)
model = HardNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.9, weight_decay=1e-4)
for epoch in range(2):
    train(train_loader, model, optimizer, epoch)
