# N-dimensional convolution layer built from a stack of lower-dimensional PyTorch convolutions
# (one per kernel slice along the first spatial axis), swapped into a small 3D U-Net-style block.
from typing import Callable, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)


class convNd(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_dims: int, kernel_size, stride=1, padding=0,
                 use_bias: bool = True, bias_initializer: Callable = None, kernel_initializer: Callable = None):
        super().__init__()
        if not isinstance(kernel_size, Tuple):
            kernel_size = tuple(kernel_size for _ in range(num_dims))
        self.in_channels, self.out_channels, self.num_dims = in_channels, out_channels, num_dims
        self.kernel_size, self.padding = kernel_size, padding
        self.use_bias = use_bias
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(out_channels))
        else:
            self.register_parameter('bias', None)
        self.bias_initializer = bias_initializer
        self.kernel_initializer = kernel_initializer
        if self.bias_initializer is not None:
            if self.use_bias:
                self.bias_initializer(self.bias)
        # one (n-1)-D convolution per slice of the kernel along the first dimension
        self.conv_layers = nn.ModuleList()
        for _ in range(self.kernel_size[0]):
            conv_layer = nn.Conv2d(in_channels, out_channels, kernel_size[1:], padding=padding, bias=False)
            if self.kernel_initializer is not None:
                self.kernel_initializer(conv_layer.weight)
            self.conv_layers.append(conv_layer)

    def forward(self, input):
        b, c, d, h, w = input.shape
        input = F.pad(input, (0, 0, 0, 0, self.padding, self.padding))
        out_d = input.shape[2] - self.kernel_size[0] + 1
        frames = []
        for j in range(out_d):
            frame = sum(self.conv_layers[i](input[:, :, j + i]) for i in range(self.kernel_size[0]))
            frames.append(frame)
        result = torch.stack(frames, dim=2)
        if self.use_bias:
            result = result + self.bias.view(1, -1, 1, 1, 1)
        return result


class UNetBlock(nn.Module):
    def __init__(self, in_channels=1, mid=8, out_channels=2):
        super().__init__()
        self.conv1 = convNd(in_channels, mid, num_dims=3, kernel_size=3, padding=1)
        self.conv2 = convNd(mid, out_channels, num_dims=3, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))


net = UNetBlock().eval()
with torch.no_grad():
    volume = torch.randn(1, 1, 6, 16, 16)
    out = net(volume)
print("output shape:", tuple(out.shape))

# -- corpus check --
if torch.isnan(out).any():
    print("BUG: the convNd output is nan: its bias was never initialized")
