# MultiResUNet for segmentation: MultiRes blocks (chained 3x3 convolutions concatenated, plus a 1x1
# shortcut), Res paths that carry the encoder features to the decoder through conv + shortcut + relu
# units, transposed-convolution upsampling and a sigmoid output. Two levels instead of five and
# random images/masks stand in for the dataset.
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv2d_batchnorm(nn.Module):
    def __init__(self, input_features: int, num_of_filters: int, kernel_size: Tuple = (2, 2), stride: Tuple = (1, 1),
                 activation: str = "relu", padding: int = 0) -> None:
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(input_features, num_of_filters, kernel_size=kernel_size, stride=stride, padding=padding)
        self.batchnorm = nn.BatchNorm2d(num_of_filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.batchnorm(self.conv1(x))
        if self.activation == "relu":
            return F.relu(x)
        return x


class Multiresblock(nn.Module):
    def __init__(self, input_features: int, corresponding_unet_filters: int, alpha: float = 1.67) -> None:
        super().__init__()
        self.W = corresponding_unet_filters * alpha
        f1, f2, f3 = int(self.W * 0.167), int(self.W * 0.333), int(self.W * 0.5)
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features, f1 + f2 + f3, kernel_size=(1, 1), activation="None", padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features, f1, kernel_size=(3, 3), activation="relu", padding=1)
        self.conv2d_bn_5x5 = Conv2d_batchnorm(f1, f2, kernel_size=(3, 3), activation="relu", padding=1)
        self.conv2d_bn_7x7 = Conv2d_batchnorm(f2, f3, kernel_size=(3, 3), activation="relu", padding=1)
        self.batch_norm1 = nn.BatchNorm2d(f1 + f2 + f3, affine=False)
        self.out_features = f1 + f2 + f3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        temp = self.conv2d_bn_1x1(x)
        a = self.conv2d_bn_3x3(x)
        b = self.conv2d_bn_5x5(a)
        c = self.conv2d_bn_7x7(b)
        x = self.batch_norm1(torch.cat([a, b, c], axis=1))
        x += temp
        return self.batch_norm1(x)


class Respath(nn.Module):
    def __init__(self, input_features: int, filters: int, respath_length: int) -> None:
        super().__init__()
        self.respath_length = respath_length
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features, filters, kernel_size=(1, 1), activation="None", padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features, filters, kernel_size=(3, 3), activation="relu", padding=1)
        self.conv2d_bn_1x1_common = Conv2d_batchnorm(filters, filters, kernel_size=(1, 1), activation="None", padding=0)
        self.conv2d_bn_3x3_common = Conv2d_batchnorm(filters, filters, kernel_size=(3, 3), activation="relu", padding=1)
        self.batch_norm1 = nn.BatchNorm2d(filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.conv2d_bn_1x1(x)
        x = self.conv2d_bn_3x3(x)
        x += shortcut
        x = self.batch_norm1(F.relu(x))
        if self.respath_length > 1:
            for i in range(self.respath_length):
                shortcut = self.conv2d_bn_1x1_common(x)
                x = self.conv2d_bn_3x3_common(x)
                x += shortcut
                x = self.batch_norm1(F.relu(x))
        return x


class MultiResUnet(nn.Module):
    def __init__(self, channels: int, filters: int = 8, nclasses: int = 1) -> None:
        super().__init__()
        self.multiresblock1 = Multiresblock(channels, filters)
        self.pool1 = nn.MaxPool2d(2, stride=2)
        self.respath1 = Respath(self.multiresblock1.out_features, filters, respath_length=2)
        self.multiresblock2 = Multiresblock(self.multiresblock1.out_features, filters * 2)
        self.upsample3 = nn.ConvTranspose2d(self.multiresblock2.out_features, filters, kernel_size=(2, 2), stride=(2, 2))
        self.multiresblock3 = Multiresblock(filters * 2, filters)
        self.conv_final = Conv2d_batchnorm(self.multiresblock3.out_features, nclasses, kernel_size=(1, 1), activation="None")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_multires1 = self.multiresblock1(x)
        x_pool1 = self.pool1(x_multires1)
        x_multires1 = self.respath1(x_multires1)
        x_multires2 = self.multiresblock2(x_pool1)
        up3 = torch.cat([self.upsample3(x_multires2), x_multires1], axis=1)
        return torch.sigmoid(self.conv_final(self.multiresblock3(up3)))


model = MultiResUnet(channels=3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    images = torch.rand(2, 3, 32, 32)
    masks = (torch.rand(2, 1, 32, 32) > 0.5).float()
    loss = F.binary_cross_entropy(model(images), masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
