# CS-Net-style retinal vessel segmentation: residual encoders (two conv-BN-ReLU plus a 1x1
# projection of the input), a spatial + channel affinity attention at the bottleneck, and
# transposed-conv decoders with skip connections; trained with a sigmoid output and BCE.
import torch
import torch.nn as nn

torch.manual_seed(0)


def downsample():
    return nn.MaxPool2d(kernel_size=2, stride=2)


def deconv(in_channels, out_channels):
    return nn.ConvTranspose2d(in_channels, out_channels, kernel_size=2, stride=2)


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual
        out = self.relu(out)
        return out


class Decoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Decoder, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True))

    def forward(self, x):
        return self.conv(x)


class SpatialAttention(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.query = nn.Conv2d(channels, channels // 4, kernel_size=(1, 3), padding=(0, 1))
        self.key = nn.Conv2d(channels, channels // 4, kernel_size=(3, 1), padding=(1, 0))
        self.value = nn.Conv2d(channels, channels, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        b, c, h, w = x.shape
        q = self.query(x).flatten(2).transpose(1, 2)
        k = self.key(x).flatten(2)
        affinity = torch.softmax(q @ k, dim=-1)
        v = self.value(x).flatten(2)
        return self.gamma * (v @ affinity.transpose(1, 2)).view(b, c, h, w) + x


class ChannelAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        b, c, h, w = x.shape
        flat = x.view(b, c, -1)
        affinity = flat @ flat.transpose(1, 2)
        affinity = torch.softmax(affinity.max(-1, keepdim=True)[0].expand_as(affinity) - affinity, dim=-1)
        return self.gamma * (affinity @ flat).view(b, c, h, w) + x


class CSNet(nn.Module):
    def __init__(self, classes=1, channels=3):
        super(CSNet, self).__init__()
        self.enc_input = ResEncoder(channels, 8)
        self.encoder1 = ResEncoder(8, 16)
        self.encoder2 = ResEncoder(16, 32)
        self.downsample = downsample()
        self.sab = SpatialAttention(32)
        self.cab = ChannelAttention()
        self.deconv2 = deconv(32, 16)
        self.decoder2 = Decoder(32, 16)
        self.deconv1 = deconv(16, 8)
        self.decoder1 = Decoder(16, 8)
        self.final = nn.Conv2d(8, classes, kernel_size=1)

    def forward(self, x):
        enc_input = self.enc_input(x)
        enc1 = self.encoder1(self.downsample(enc_input))
        feature = self.encoder2(self.downsample(enc1))
        attention = self.sab(feature) + self.cab(feature)
        fused = feature + attention
        dec2 = self.decoder2(torch.cat((enc1, self.deconv2(fused)), dim=1))
        dec1 = self.decoder1(torch.cat((enc_input, self.deconv1(dec2)), dim=1))
        return torch.sigmoid(self.final(dec1))


net = CSNet(classes=1, channels=3)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, weight_decay=5e-4)
critrion = nn.BCELoss()
net.train()
for idx in range(2):
    image = torch.rand(2, 3, 32, 32)
    label = (torch.rand(2, 1, 32, 32) > 0.85).float()
    pred = net(image)
    loss = critrion(pred, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(idx, loss.item())
