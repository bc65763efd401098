# Building a YOLOv5 model before training: the Detect head's output-conv biases get a
# "smart" prior through a view of each bias, adjusted with += at construction time.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=4, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.stride = torch.tensor([8.0, 16.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, xs):
        return [self.m[i](xs[i]) for i in range(self.nl)]


class Model(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 8, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.detect = Detect(nc=nc)
        self._initialize_biases()  # only run once

    def forward(self, x):
        feats = []
        for layer in self.backbone:
            x = torch.relu(layer(x))
            feats.append(x)
        return self.detect(feats)

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.detect
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model(nc=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
imgs = torch.randn(2, 3, 64, 64)
for i in range(2):
    preds = model(imgs)
    loss = sum(p.sigmoid().mean() for p in preds)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.item())
