# Multi-label classification of PASCAL VOC 2007: PascalNetwork.resnet50() builds a ResNet with a
# new fc head, PascalTrain trains it, and inference.py loads a checkpoint into a freshly built
# network and prints its output for one test image.
import os
import tempfile

import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
device = torch.device("cpu")


class Bottleneck(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(out)))


class ResNet(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(Bottleneck(8), Bottleneck(8))
        self.avgpool = nn.AvgPool2d(7)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.layer1(torch.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50(classes, pretrain=True):
    net = ResNet()
    net.avgpool = nn.AdaptiveAvgPool2d(1)
    net.fc = nn.Linear(net.fc.in_features, classes)
    return net


def train(checkpoint):
    net = resnet50(classes=21).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    criterion = nn.MultiLabelSoftMarginLoss()
    images, labels = torch.randn(8, 3, 56, 56), (torch.rand(8, 21) > 0.8).float()
    for _ in range(3):
        optimizer.zero_grad()
        criterion(net(images.to(device)), labels.to(device)).backward()
        optimizer.step()
    torch.save(net.state_dict(), checkpoint)


checkpoint = os.path.join(tempfile.mkdtemp(), 'jps_155.pth')
train(checkpoint)
val_data = [(torch.randn(3, 56, 56), (torch.rand(21) > 0.8).float()) for _ in range(4)]

# inference.py
net = resnet50(classes=21).to(device)
net.load_state_dict(torch.load(checkpoint))
image = val_data[2][0]
labels = val_data[2][1]

images = image.view((-1, 3, 56, 56))
images = Variable(images).to(device)

output = net(images).cpu().data
print(output)
print(labels)

# -- corpus check --
reference = resnet50(classes=21)
reference.load_state_dict(torch.load(checkpoint))
reference.eval()
with torch.no_grad():
    expected = reference(image.view((-1, 3, 56, 56)))
if not torch.allclose(output, expected, atol=1e-5):
    print("BUG: the image was classified with BatchNorm in training mode")
