# Hyperspectral pixel classification (DeepHyperX-style toolbox): a small 3D CNN with batch norm and
# dropout over spectral-spatial patches, train() runs the epochs and calls val() on the validation
# loader after each one; val() counts correct predictions, skipping the ignored labels.
# Random patches stand in for the Indian Pines scene.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class HamidaEtAl(nn.Module):
    def __init__(self, input_channels, n_classes, patch_size=5):
        super(HamidaEtAl, self).__init__()
        self.conv1 = nn.Conv3d(1, 8, (3, 3, 3), padding=(1, 1, 1))
        self.bn1 = nn.BatchNorm3d(8)
        self.pool1 = nn.Conv3d(8, 8, (3, 1, 1), stride=(2, 1, 1), padding=(1, 0, 0))
        self.dropout = nn.Dropout(p=0.5)
        self.fc = nn.Linear(8 * ((input_channels + 1) // 2) * patch_size * patch_size, n_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool1(x)
        x = self.dropout(x.view(x.size(0), -1))
        return self.fc(x)


class PatchDataset(TensorDataset):
    ignored_labels = [0]


def val(net, data_loader, device="cpu", supervision="full"):
    accuracy, total = 0.0, 0.0
    ignored_labels = data_loader.dataset.ignored_labels
    for batch_idx, (data, target) in enumerate(data_loader):
        with torch.no_grad():
            data, target = data.to(device), target.to(device)
            output = net(data)
            _, output = torch.max(output, dim=1)
            for pred, out in zip(output.view(-1), target.view(-1)):
                if out.item() in ignored_labels:
                    continue
                accuracy += out.item() == pred.item()
                total += 1
    return accuracy / total


def train(net, optimizer, criterion, data_loader, epoch, val_loader=None, device="cpu"):
    for e in range(1, epoch + 1):
        net.train()
        for data, target in data_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(net(data), target)
            loss.backward()
            optimizer.step()
        if val_loader is not None:
            val_acc = val(net, val_loader, device=device)
            print(e, round(loss.item(), 4), val_acc)


n_bands, n_classes = 10, 5
patches, labels = torch.rand(80, 1, n_bands, 5, 5), torch.randint(0, n_classes, (80,))
train_loader = DataLoader(PatchDataset(patches[:60], labels[:60]), batch_size=10, shuffle=True)
val_loader = DataLoader(PatchDataset(patches[60:], labels[60:]), batch_size=10)
net = HamidaEtAl(n_bands, n_classes)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
train(net, optimizer, nn.CrossEntropyLoss(ignore_index=0), train_loader, epoch=2, val_loader=val_loader)

# -- corpus check --
running_mean = net.bn1.running_mean.clone()
val(net, val_loader)
if not torch.equal(running_mean, net.bn1.running_mean):
    print("BUG: val() updates the batch-norm running statistics with validation data (the model is in training mode)")
