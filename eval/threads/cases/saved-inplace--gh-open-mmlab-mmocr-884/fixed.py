# PANet text detection neck (mmocr FPEM_FFM): four backbone feature maps are reduced to one width,
# passed through two FPEM modules (up-scale then down-scale enhancement with separable convolutions),
# and the FFM sums the FPEM outputs level by level before upsampling and concatenating them for the
# text-kernel head. A tiny strided backbone and random images stand in for ResNet18 and the dataset.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(in_channels, in_channels, kernel_size=3, padding=1, stride=stride, groups=in_channels)
        self.pointwise_conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.pointwise_conv(self.depthwise_conv(x))))


class FPEM(nn.Module):
    def __init__(self, in_channels=16):
        super().__init__()
        self.up_add1 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add2 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add3 = SeparableConv2d(in_channels, in_channels, 1)
        self.down_add1 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add2 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add3 = SeparableConv2d(in_channels, in_channels, 2)

    def forward(self, c2, c3, c4, c5):
        c4 = self.up_add1(self._upsample_add(c5, c4))
        c3 = self.up_add2(self._upsample_add(c4, c3))
        c2 = self.up_add3(self._upsample_add(c3, c2))
        c3 = self.down_add1(self._upsample_add(c3, c2))
        c4 = self.down_add2(self._upsample_add(c4, c3))
        c5 = self.down_add3(self._upsample_add(c5, c4))
        return c2, c3, c4, c5

    def _upsample_add(self, x, y):
        return F.interpolate(x, size=y.size()[2:]) + y


class FPEM_FFM(nn.Module):
    def __init__(self, in_channels, conv_out=16, fpem_repeat=2, align_corners=False):
        super().__init__()
        self.reduce_convs = nn.ModuleList([nn.Sequential(nn.Conv2d(c, conv_out, kernel_size=1), nn.BatchNorm2d(conv_out), nn.ReLU())
                                           for c in in_channels])
        self.align_corners = align_corners
        self.fpems = nn.ModuleList([FPEM(conv_out) for _ in range(fpem_repeat)])

    def forward(self, x):
        c2, c3, c4, c5 = [reduce(feat) for reduce, feat in zip(self.reduce_convs, x)]
        for i, fpem in enumerate(self.fpems):
            c2, c3, c4, c5 = fpem(c2, c3, c4, c5)
            if i == 0:
                c2_ffm = c2
                c3_ffm = c3
                c4_ffm = c4
                c5_ffm = c5
            else:
                c2_ffm = c2_ffm + c2
                c3_ffm = c3_ffm + c3
                c4_ffm = c4_ffm + c4
                c5_ffm = c5_ffm + c5
        size = c2_ffm.size()[-2:]
        c5 = F.interpolate(c5_ffm, size, mode="bilinear", align_corners=self.align_corners)
        c4 = F.interpolate(c4_ffm, size, mode="bilinear", align_corners=self.align_corners)
        c3 = F.interpolate(c3_ffm, size, mode="bilinear", align_corners=self.align_corners)
        return tuple([c2_ffm, c3, c4, c5])


class PANet(nn.Module):
    def __init__(self):
        super().__init__()
        chans = [8, 16, 24, 32]
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(3 if i == 0 else chans[i - 1], c, 3, stride=2, padding=1), nn.ReLU())
                                     for i, c in enumerate(chans)])
        self.neck = FPEM_FFM(chans)
        self.head = nn.Conv2d(4 * 16, 2, kernel_size=1)

    def forward(self, img):
        feats, x = [], img
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return self.head(torch.cat(self.neck(feats), dim=1))


model = PANet()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.99)
for step in range(2):
    imgs = torch.rand(2, 3, 64, 64)
    gt_kernels = (torch.rand(2, 2, 32, 32) > 0.5).float()
    loss = F.binary_cross_entropy_with_logits(model(imgs), gt_kernels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
