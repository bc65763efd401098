# Pedestrian traffic-light network (light mode classifier + crosswalk direction regressor)
# trained at module level; per-epoch sums of the total, MSE and cross-entropy losses are
# averaged into lists for plotting.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
BATCH_SIZE = 8
MAX_EPOCHS = 3


class LYTNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.classes = nn.Linear(8 * 16, 5)
        self.direction = nn.Linear(8 * 16, 4)

    def forward(self, x):
        h = self.features(x).flatten(1)
        return self.classes(h), self.direction(h)


def my_loss(pred_classes, pred_direc, points, mode):
    MSE = F.mse_loss(pred_direc, points)
    cross_entropy = F.cross_entropy(pred_classes, mode)
    return MSE + cross_entropy, MSE, cross_entropy


train_data = TensorDataset(torch.randn(32, 3, 24, 24), torch.randint(0, 5, (32,)), torch.rand(32, 4))
valid_data = TensorDataset(torch.randn(8, 3, 24, 24), torch.randint(0, 5, (8,)), torch.rand(8, 4))
train_dataloader = DataLoader(train_data, batch_size=BATCH_SIZE, shuffle=True)
valid_dataloader = DataLoader(valid_data, batch_size=1, shuffle=False)

net = LYTNet()
loss_fn = my_loss
optimizer = torch.optim.Adam(net.parameters(), lr=0.001, weight_decay=0.000005)

train_losses = []
train_MSE = []
train_CE = []
valid_losses = []

for epoch in range(MAX_EPOCHS):
    net.train()
    running_loss = 0.0
    running_loss_MSE = 0.0
    running_loss_cross_entropy = 0.0
    train_total = 0
    for j, (images, mode, points) in enumerate(train_dataloader, 0):
        optimizer.zero_grad()
        train_total += 1
        pred_classes, pred_direc = net(images)
        loss, MSE, cross_entropy = loss_fn(pred_classes, pred_direc, points, mode)
        loss.backward()
        optimizer.step()

        running_loss += loss
        running_loss_MSE += MSE
        running_loss_cross_entropy += cross_entropy

    print('Epoch: ' + str(epoch + 1))
    print('Average training loss: ' + str(running_loss / train_total))
    train_MSE.append(running_loss_MSE / train_total)
    train_CE.append(running_loss_cross_entropy / train_total)
    train_losses.append(running_loss / train_total)

    net.eval()
    val_running_loss = 0
    val_mse_loss = 0
    val_ce_loss = 0
    val_total = 0
    with torch.no_grad():
        for k, (images, mode, points) in enumerate(valid_dataloader, 0):
            pred_classes, pred_direc = net(images)
            loss, MSE, cross_entropy = loss_fn(pred_classes, pred_direc, points, mode)
            val_running_loss += loss
            val_mse_loss += MSE
            val_ce_loss += cross_entropy
            val_total += 1
        print("Average validation loss: " + str(val_running_loss / val_total))
        valid_losses.append(val_running_loss / val_total)

# -- corpus check --
if any(torch.is_tensor(v) and v.grad_fn is not None for v in train_losses + train_MSE + train_CE):
    print("BUG: the per-epoch training loss averages keep every batch's autograd graph alive")
