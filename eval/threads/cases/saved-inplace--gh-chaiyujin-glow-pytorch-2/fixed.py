# Glow-style normalizing flow (glow-pytorch): each FlowStep applies ActNorm, an invertible 1x1
# convolution and an affine coupling layer; the coupling splits the features into z1, z2 with
# thops.split_feature, computes shift and scale from z1 with a small conv net f, and updates z2.
# The reporter applies it to a 3D model with batch size 1; random tensors stand in for the data.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class thops:
    @staticmethod
    def sum(tensor, dim):
        for d in sorted(dim, reverse=True):
            tensor = tensor.sum(dim=d)
        return tensor

    @staticmethod
    def split_feature(tensor, type="split"):
        C = tensor.size(1)
        if type == "split":
            return tensor[:, :C // 2, ...], tensor[:, C // 2:, ...]
        elif type == "cross":
            return tensor[:, 0::2, ...], tensor[:, 1::2, ...]

    @staticmethod
    def cat_feature(tensor_a, tensor_b):
        return torch.cat((tensor_a, tensor_b), dim=1)


class ActNorm2d(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1, num_features, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, num_features, 1, 1))

    def forward(self, input, logdet):
        pixels = input.size(2) * input.size(3)
        output = (input + self.bias) * torch.exp(self.logs)
        return output, logdet + thops.sum(self.logs, dim=[1, 2, 3]) * pixels


class InvertibleConv1x1(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        w_init = torch.linalg.qr(torch.randn(num_channels, num_channels))[0]
        self.weight = nn.Parameter(w_init)

    def forward(self, input, logdet):
        pixels = input.size(2) * input.size(3)
        dlogdet = torch.slogdet(self.weight)[1] * pixels
        weight = self.weight.view(*self.weight.shape, 1, 1)
        return F.conv2d(input, weight), logdet + dlogdet


def f(in_channels, out_channels, hidden_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, hidden_channels, 3, padding=1), nn.ReLU(inplace=False),
        nn.Conv2d(hidden_channels, hidden_channels, 1), nn.ReLU(inplace=False),
        nn.Conv2d(hidden_channels, out_channels, 3, padding=1))


class FlowStep(nn.Module):
    def __init__(self, in_channels, hidden_channels, flow_coupling="affine"):
        super().__init__()
        self.flow_coupling = flow_coupling
        self.actnorm = ActNorm2d(in_channels)
        self.invconv = InvertibleConv1x1(in_channels)
        if flow_coupling == "additive":
            self.f = f(in_channels // 2, in_channels - in_channels // 2, hidden_channels)
        else:
            self.f = f(in_channels // 2, in_channels, hidden_channels)

    def forward(self, input, logdet):
        # 1. actnorm
        z, logdet = self.actnorm(input, logdet=logdet)
        # 2. permute
        z, logdet = self.invconv(z, logdet)
        # 3. coupling
        z1, z2 = thops.split_feature(z, "split")
        if self.flow_coupling == "additive":
            z2 = z2 + self.f(z1)
        elif self.flow_coupling == "affine":
            h = self.f(z1)
            shift, scale = thops.split_feature(h, "cross")
            scale = torch.sigmoid(scale + 2.)
            z2 = z2 + shift
            z2 = z2 * scale
            logdet = thops.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = thops.cat_feature(z1, z2)
        return z, logdet


class Glow(nn.Module):
    def __init__(self, in_channels=4, hidden_channels=16, K=2):
        super().__init__()
        self.flows = nn.ModuleList([FlowStep(in_channels, hidden_channels) for _ in range(K)])

    def forward(self, x):
        logdet = torch.zeros(x.size(0))
        z = x
        for flow in self.flows:
            z, logdet = flow(z, logdet)
        pixels = x.size(2) * x.size(3)
        log_p = -0.5 * thops.sum(z ** 2 + math.log(2 * math.pi), dim=[1, 2, 3])
        return -(log_p + logdet) / (math.log(2.) * pixels)


graph = Glow()
optimizer = torch.optim.Adam(graph.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(1, 4, 8, 8)  # batch size 1
    nll = graph(x).mean()
    optimizer.zero_grad()
    nll.backward()
    optimizer.step()
    print(step, nll.item())
