# RefineNet (4-cascade) for segmentation: residual conv units (RCU), multi-resolution fusion (MRF)
# and chained residual pooling (CRP) blocks on top of a ResNet's four stages. A small conv stack
# stands in for the torchvision ResNet-101, random images and masks for the dataset.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResidualConvUnit(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(x)
        out = self.conv1(out)
        out = self.relu(out)
        out = self.conv2(out)
        return out + x


class MultiResolutionFusion(nn.Module):
    def __init__(self, out_feats, *shapes):
        super().__init__()
        _, max_size = max(shapes, key=lambda x: x[1])
        for i, shape in enumerate(shapes):
            feat, size = shape
            scale_factor = max_size // size
            if scale_factor != 1:
                self.add_module(f"resolve{i}", nn.Sequential(
                    nn.Conv2d(feat, out_feats, kernel_size=3, stride=1, padding=1, bias=False),
                    nn.Upsample(scale_factor=scale_factor, mode="bilinear")))
            else:
                self.add_module(f"resolve{i}", nn.Conv2d(feat, out_feats, kernel_size=3, stride=1, padding=1, bias=False))

    def forward(self, *xs):
        output = self.resolve0(xs[0])
        for i, x in enumerate(xs[1:], 1):
            output += self.__getattr__(f"resolve{i}")(x)
        return output


class ChainedResidualPool(nn.Module):
    def __init__(self, feats):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        for i in range(1, 4):
            self.add_module(f"block{i}", nn.Sequential(
                nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                nn.Conv2d(feats, feats, kernel_size=3, stride=1, padding=1, bias=False)))

    def forward(self, x):
        x = self.relu(x)
        path = x
        for i in range(1, 4):
            path = self.__getattr__(f"block{i}")(path)
            x += path
        return x


class RefineNetBlock(nn.Module):
    def __init__(self, features, *shapes):
        super().__init__()
        for i, shape in enumerate(shapes):
            feats = shape[0]
            self.add_module(f"rcu{i}", nn.Sequential(ResidualConvUnit(feats), ResidualConvUnit(feats)))
        self.mrf = MultiResolutionFusion(features, *shapes) if len(shapes) != 1 else None
        self.crp = ChainedResidualPool(features)
        self.output_conv = ResidualConvUnit(features)

    def forward(self, *xs):
        for i, x in enumerate(xs):
            x = self.__getattr__(f"rcu{i}")(x)

        if self.mrf is not None:
            out = self.mrf(*xs)
        else:
            out = xs[0]

        out = self.crp(out)
        return self.output_conv(out)


class RefineNet4Cascade(nn.Module):
    def __init__(self, input_shape, num_classes=1, features=8):
        super().__init__()
        input_channel, input_size = input_shape
        self.layer1 = nn.Sequential(nn.Conv2d(input_channel, 8, 3, stride=4, padding=1), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.layer3 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.layer1_rn = nn.Conv2d(8, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.layer2_rn = nn.Conv2d(16, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.layer3_rn = nn.Conv2d(32, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.layer4_rn = nn.Conv2d(64, 2 * features, kernel_size=3, stride=1, padding=1, bias=False)
        self.refinenet4 = RefineNetBlock(2 * features, (2 * features, input_size // 32))
        self.refinenet3 = RefineNetBlock(features, (2 * features, input_size // 32), (features, input_size // 16))
        self.refinenet2 = RefineNetBlock(features, (features, input_size // 16), (features, input_size // 8))
        self.refinenet1 = RefineNetBlock(features, (features, input_size // 8), (features, input_size // 4))
        self.output_conv = nn.Sequential(
            ResidualConvUnit(features), ResidualConvUnit(features),
            nn.Conv2d(features, num_classes, kernel_size=1, stride=1, padding=0, bias=True))

    def forward(self, x):
        layer_1 = self.layer1(x)
        layer_2 = self.layer2(layer_1)
        layer_3 = self.layer3(layer_2)
        layer_4 = self.layer4(layer_3)
        layer_1_rn = self.layer1_rn(layer_1)
        layer_2_rn = self.layer2_rn(layer_2)
        layer_3_rn = self.layer3_rn(layer_3)
        layer_4_rn = self.layer4_rn(layer_4)
        path_4 = self.refinenet4(layer_4_rn)
        path_3 = self.refinenet3(path_4, layer_3_rn)
        path_2 = self.refinenet2(path_3, layer_2_rn)
        path_1 = self.refinenet1(path_2, layer_1_rn)
        return self.output_conv(path_1)


net = RefineNet4Cascade(input_shape=(3, 64), num_classes=2)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for it in range(2):
    x = torch.randn(4, 3, 64, 64)
    target = torch.randn(4, 2, 16, 16)
    output = net(x)
    loss = criterion(output, target)
    net.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
