# Adding BiFPN-style weighted feature fusion to a YOLOv5-like detector in place of Concat: the
# learnable fusion weights go through an nn.ReLU module, and the model's weight initializer
# switches every ReLU to inplace=True.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Fusefeature(nn.Module):
    # replace concat with fusefeature
    def __init__(self, e=1e-4):
        super(Fusefeature, self).__init__()
        self.e = e
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.weight_relu = nn.ReLU()
        self.swish = Swish()

    def forward(self, x):
        weight = self.weight_relu(self.weight)
        weight = weight / (torch.sum(weight, dim=0) + self.e)
        return self.swish(weight[0] * x[0] + weight[1] * x[1])


class Neck(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = Fusefeature()
        self.head = nn.Conv2d(16, 9, 1)

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down(p3)
        return self.head(self.fuse([p3, self.up(p4)]))


def initialize_weights(model):
    for m in model.modules():
        t = type(m)
        if t is nn.BatchNorm2d:
            m.eps = 1e-3
            m.momentum = 0.03
        elif t in [nn.Hardswish, nn.LeakyReLU, nn.ReLU, nn.ReLU6]:
            m.inplace = True


model = Neck()
initialize_weights(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
imgs = torch.randn(2, 3, 32, 32)

for i in range(2):
    pred = model(imgs)
    loss = pred.sigmoid().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.item())
