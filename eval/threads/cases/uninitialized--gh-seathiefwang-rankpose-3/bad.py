# Head-pose estimation (yaw/pitch/roll) with a ResNet backbone and a cosine-normalized output
# layer whose weight matrix is a bare nn.Parameter.
import math

import torch
import torch.nn as nn

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
FEAT = 64


def l2_norm(input, axis=1):
    norm = torch.norm(input, 2, axis, True)
    return torch.div(input, norm)


class ResNet(nn.Module):
    def __init__(self, n_class=3, use_norm=True):
        super().__init__()
        self.n_class = n_class
        self.use_norm = use_norm
        self.model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.BatchNorm2d(16), nn.ReLU(),
                                   nn.Conv2d(16, FEAT, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        if self.use_norm:
            self.w = nn.Parameter(torch.Tensor(FEAT, n_class))
        else:
            self.fc_angles = nn.Linear(FEAT, n_class)

    def forward(self, x):
        x = self.model(x)
        x = torch.flatten(x, 1)
        if self.use_norm:
            return torch.matmul(l2_norm(x, 1), l2_norm(self.w, 0)) * 180
        return self.fc_angles(x)


model = ResNet(n_class=3)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
criterion = nn.SmoothL1Loss()
images, angles = torch.randn(8, 3, 32, 32), (torch.rand(8, 3) - 0.5) * 120
for epoch in range(3):
    optimizer.zero_grad()
    pred = model(images)
    loss = criterion(pred, angles)
    loss.backward()
    optimizer.step()
    print("epoch %d loss %.4f" % (epoch, loss.item()))

# -- corpus check --
if torch.isnan(loss):
    print("BUG: the training loss is NaN: the cosine head's weight was never initialized")
