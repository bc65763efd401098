# Tennis court keypoint detection: a TrackNet-style encoder-decoder predicts one heatmap per
# court keypoint; base_trainer.train() runs one epoch and main drives the epochs.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class BallTrackerNet(nn.Module):
    def __init__(self, out_channels=15):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(16, out_channels, 3, padding=1))

    def forward(self, x):
        return self.dec(self.enc(x))


def train(model, train_loader, optimizer, criterion, device, epoch, max_iters=1000):
    model.train()
    losses = []
    max_iters = min(max_iters, len(train_loader))

    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0].float().to(device))
        gt_hm_hp = batch[1].float().to(device)
        loss = criterion(F.sigmoid(out), gt_hm_hp)

        loss.backward()
        optimizer.step()
        print('train, epoch = {}, iter_id = {}/{}, loss = {}'.format(epoch, iter_id, max_iters, loss.item()))
        losses.append(loss.item())
        if iter_id > max_iters:
            break

    return np.mean(losses)


device = 'cpu'
model = BallTrackerNet(out_channels=15).to(device)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), 1e-5, betas=(0.9, 0.999), weight_decay=0)
train_dataset = TensorDataset(torch.rand(8, 3, 32, 32), torch.rand(8, 15, 32, 32))
train_loader = DataLoader(train_dataset, batch_size=2, shuffle=True)
for epoch in range(2):
    train_loss = train(model, train_loader, optimizer, criterion, device, epoch, 1000)

# -- corpus check --
for group in optimizer.param_groups:
    group["lr"] = 0.0
one_batch = [next(iter(DataLoader(train_dataset, batch_size=2)))]
grads = []
for _ in range(2):
    train(model, one_batch, optimizer, criterion, device, epoch=-1)
    grads.append(model.enc[0].weight.grad.clone())
if not torch.allclose(grads[0], grads[1]):
    print("BUG: the same batch at the same weights left different .grad: gradients pile up across iterations")
