# fepegar/unet-style 2D U-Net built with residual=True: each encoding and decoding block runs two
# ConvolutionalBlocks (conv -> norm -> ReLU) and adds a 1x1 residual projection of its input.
# Random images and masks stand in for the segmentation dataset.
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CHANNELS_DIMENSION = 1


class ConvolutionalBlock(nn.Module):
    def __init__(self, in_channels, out_channels, normalization: Optional[str] = None, kernel_size=3,
                 activation: Optional[str] = "ReLU", preactivation=False, padding=1):
        super().__init__()
        block = nn.ModuleList()
        conv_layer = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding if kernel_size > 1 else 0)
        norm_layer = None
        if normalization is not None:
            norm_class = getattr(nn, "{}Norm2d".format(normalization.capitalize()))
            norm_layer = norm_class(in_channels if preactivation else out_channels)
        activation_layer = getattr(nn, activation)() if activation is not None else None
        if preactivation:
            layers = [norm_layer, activation_layer, conv_layer]
        else:
            layers = [conv_layer, norm_layer, activation_layer]
        for layer in layers:
            if layer is not None:
                block.append(layer)
        self.block = nn.Sequential(*block)

    def forward(self, x):
        return self.block(x)


class EncodingBlock(nn.Module):
    def __init__(self, in_channels, out_channels_first, normalization, pooling_type, preactivation=False,
                 residual=False):
        super().__init__()
        self.residual = residual
        self.conv1 = ConvolutionalBlock(in_channels, out_channels_first, normalization, preactivation=preactivation)
        self.conv2 = ConvolutionalBlock(out_channels_first, out_channels_first, normalization, preactivation=preactivation)
        if residual:
            self.conv_residual = ConvolutionalBlock(in_channels, out_channels_first, kernel_size=1, activation=None)
        self.downsample = None if pooling_type is None else getattr(nn, "{}Pool2d".format(pooling_type.capitalize()))(2)
        self.out_channels = out_channels_first

    def forward(self, x):
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x = x + connection
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        if self.downsample is None:
            return x
        skip_connection = x
        x = self.downsample(x)
        return x, skip_connection


class DecodingBlock(nn.Module):
    def __init__(self, in_channels_skip_connection, normalization, preactivation=False, residual=False):
        super().__init__()
        self.residual = residual
        self.upsample = nn.Upsample(scale_factor=2, mode="nearest")
        in_channels_first = in_channels_skip_connection * (1 + 2)
        out_channels = in_channels_skip_connection
        self.conv1 = ConvolutionalBlock(in_channels_first, out_channels, normalization, preactivation=preactivation)
        self.conv2 = ConvolutionalBlock(out_channels, out_channels, normalization, preactivation=preactivation)
        if residual:
            self.conv_residual = ConvolutionalBlock(in_channels_first, out_channels, kernel_size=1, activation=None)

    def forward(self, skip_connection, x):
        x = self.upsample(x)
        x = torch.cat((skip_connection, x), dim=CHANNELS_DIMENSION)
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x = x + connection
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        return x


class UNet(nn.Module):
    def __init__(self, in_channels=1, out_classes=2, num_encoding_blocks=3, out_channels_first_layer=8,
                 normalization="batch", pooling_type="max", preactivation=False, residual=False):
        super().__init__()
        self.encoding_blocks = nn.ModuleList()
        channels = out_channels_first_layer
        for _ in range(num_encoding_blocks):
            self.encoding_blocks.append(EncodingBlock(in_channels, channels, normalization, pooling_type,
                                                      preactivation, residual=residual))
            in_channels, channels = channels, channels * 2
        self.bottom_block = EncodingBlock(in_channels, channels, normalization, None, preactivation, residual=residual)
        self.decoding_blocks = nn.ModuleList()
        for _ in range(num_encoding_blocks):
            self.decoding_blocks.append(DecodingBlock(in_channels, normalization, preactivation, residual=residual))
            in_channels //= 2
        self.classifier = nn.Conv2d(out_channels_first_layer, out_classes, kernel_size=1)

    def forward(self, x):
        skip_connections = []
        for encoding_block in self.encoding_blocks:
            x, skip_connection = encoding_block(x)
            skip_connections.append(skip_connection)
        x = self.bottom_block(x)
        for skip_connection, decoding_block in zip(reversed(skip_connections), self.decoding_blocks):
            x = decoding_block(skip_connection, x)
        return self.classifier(x)


model = UNet(residual=True)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    images = torch.randn(2, 1, 32, 32)
    labels = torch.randint(0, 2, (2, 32, 32))
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
