# Fine-tuning a RAFT-style optical-flow model: the encoders are stacks of residual BasicBlocks
# whose second ReLU output gets the identity added onto it with +=.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1, downsample=None, with_cp=False):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=True)
        self.norm1 = nn.InstanceNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=True)
        self.norm2 = nn.InstanceNorm2d(planes)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.with_cp = with_cp

    def forward(self, x):
        """Forward function."""

        def _inner_forward(x):
            identity = x

            out = self.conv1(x)
            out = self.norm1(out)
            out = self.relu(out)

            out = self.conv2(out)
            out = self.norm2(out)
            out = self.relu(out)

            if self.downsample is not None:
                identity = self.downsample(x)

            out += identity

            return out

        out = _inner_forward(x)
        out = self.relu(out)
        return out


class RAFTEncoder(nn.Module):
    def __init__(self, out_channels=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, stride=2, padding=3), nn.ReLU())
        down = nn.Conv2d(16, 24, 1, stride=2)
        self.layer1 = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 24, stride=2, downsample=down))
        self.conv = nn.Conv2d(24, out_channels, 1)

    def forward(self, x):
        return self.conv(self.layer1(self.stem(x)))


class RAFTLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.fnet = RAFTEncoder(32)
        self.cnet = RAFTEncoder(32)
        self.flow_head = nn.Sequential(nn.Conv2d(32 + 1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 2, 3, padding=1))

    def forward(self, img1, img2):
        f1, f2 = self.fnet(img1), self.fnet(img2)
        corr = (f1 * f2).sum(1, keepdim=True) / f1.size(1) ** 0.5
        ctx = self.cnet(img1)
        flow = self.flow_head(torch.cat([ctx, corr], 1))
        return F.interpolate(flow, scale_factor=4, mode="bilinear", align_corners=True) * 4


model = RAFTLite()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
img1, img2 = torch.rand(2, 3, 32, 32), torch.rand(2, 3, 32, 32)
flow_gt = torch.randn(2, 2, 32, 32)

for it in range(2):
    flow_pred = model(img1, img2)
    loss = (flow_pred - flow_gt).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
