# Someone writing their own residual unit for a small CNN: the residual branch is computed
# from x, then added onto x in place before the final in-place ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualUnitA(nn.Module):
    def __init__(self):
        super(ResidualUnitA, self).__init__()
        self.conv_0 = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(24)
        self.conv_1 = nn.Conv2d(24, 24, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(24)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x = x + residual
        x = F.relu(x, inplace=True)

        return x


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super(Net, self).__init__()
        self.unit = ResidualUnitA()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(24, num_classes)

    def forward(self, x):
        x = self.unit(x)
        x = self.pool(x).flatten(1)
        return self.fc(x)


net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
inputs = torch.randn(8, 3, 16, 16)
labels = torch.randint(0, 10, (8,))

for epoch in range(2):
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
