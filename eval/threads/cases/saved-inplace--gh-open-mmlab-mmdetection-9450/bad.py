# A PAFPN neck configured with act_cfg=dict(type='ReLU'): every ConvModule ends in an in-place
# ReLU, and the top-down and bottom-up paths add into the list entries with +=.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 act_cfg=None, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding)
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, act_cfg=None):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for c in in_channels:
            self.lateral_convs.append(ConvModule(c, out_channels, 1, act_cfg=act_cfg))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg))
        for _ in range(len(in_channels) - 1):
            self.downsample_convs.append(
                ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg))
            self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg))

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode="nearest")

        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]

        # add bottom-up path
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])

        outs = [inter_outs[0]]
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i]) for i in range(1, used_backbone_levels)])
        return tuple(outs)


backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1), nn.Conv2d(16, 32, 3, 2, 1)])
neck = PAFPN([8, 16, 32], 8, act_cfg=dict(type="ReLU"))
head = nn.Conv2d(8, 4, 1)
params = list(backbone.parameters()) + list(neck.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9)
img = torch.randn(2, 3, 32, 32)

for it in range(2):
    feats, x = [], img
    for layer in backbone:
        x = F.relu(layer(x))
        feats.append(x)
    outs = neck(feats)
    loss = sum(head(o).pow(2).mean() for o in outs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
