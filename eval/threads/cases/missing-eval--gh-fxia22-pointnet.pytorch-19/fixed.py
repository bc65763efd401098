# PointNet classification training script: every 10 batches a test batch is scored, and after
# training the accuracy on the whole test set is reported. The classifier uses BatchNorm and
# Dropout. (Synthetic point clouds stand in for ModelNet/ShapeNet.)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class PointNetCls(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 32, 1)
        self.conv2 = nn.Conv1d(32, 64, 1)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(64)
        self.fc1 = nn.Linear(64, 32)
        self.bn3 = nn.BatchNorm1d(32)
        self.dropout = nn.Dropout(p=0.3)
        self.fc2 = nn.Linear(32, k)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.bn2(self.conv2(x))
        x = torch.max(x, 2)[0]
        x = F.relu(self.bn3(self.dropout(self.fc1(x))))
        return F.log_softmax(self.fc2(x), dim=1)


def make_set(n):
    target = torch.randint(0, 4, (n,))
    points = torch.randn(n, 64, 3) * (1 + target[:, None, None].float())
    return TensorDataset(points, target)


dataloader = DataLoader(make_set(96), batch_size=16, shuffle=True)
testdataloader = DataLoader(make_set(32), batch_size=16, shuffle=True)
classifier = PointNetCls()
optimizer = torch.optim.Adam(classifier.parameters(), lr=0.001)

for epoch in range(2):
    for i, data in enumerate(dataloader, 0):
        points, target = data
        points = points.transpose(2, 1)
        optimizer.zero_grad()
        classifier = classifier.train()
        pred = classifier(points)
        loss = F.nll_loss(pred, target)
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            j, data = next(enumerate(testdataloader, 0))
            points, target = data
            points = points.transpose(2, 1)
            classifier = classifier.eval()
            pred = classifier(points)
            loss = F.nll_loss(pred, target)
            correct = pred.data.max(1)[1].eq(target.data).cpu().sum()
            print('[%d: %d] test loss: %f accuracy: %f' % (epoch, i, loss.item(), correct.item() / float(len(target))))

total_correct, total_testset = 0, 0
classifier = classifier.eval()
for i, data in enumerate(testdataloader, 0):
    points, target = data
    points = points.transpose(2, 1)
    pred = classifier(points)
    total_correct += pred.data.max(1)[1].eq(target.data).cpu().sum().item()
    total_testset += points.size()[0]
print("final accuracy {}".format(total_correct / float(total_testset)))

# -- corpus check --
reference = copy.deepcopy(classifier).eval()
with torch.no_grad():
    expected = reference(points)
if not torch.allclose(pred.detach(), expected, atol=1e-5):
    print("BUG: the test set was scored with BatchNorm and Dropout in training mode")
