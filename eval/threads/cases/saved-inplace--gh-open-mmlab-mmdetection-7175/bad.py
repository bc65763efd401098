# MMDetection's FPN neck used with ReLU activations on its lateral and output convolutions
# (act_cfg=dict(type='ReLU')), trained under a toy detection head. A small ConvModule (conv,
# then an in-place ReLU when act_cfg asks for one) stands in for mmcv's; random feature maps of
# a 4-level backbone stand in for the ResNet outputs and an MSE loss for the detection losses.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, act_cfg=None, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1, add_extra_convs=False,
                 act_cfg=None, upsample_cfg=dict(mode='nearest')):
        super(FPN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.upsample_cfg = upsample_cfg.copy()
        self.backbone_end_level = self.num_ins if end_level == -1 else end_level
        self.start_level = start_level
        self.add_extra_convs = add_extra_convs

        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.start_level, self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg, inplace=False)
            fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)

        # build laterals
        laterals = [
            lateral_conv(inputs[i + self.start_level])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            # In some cases, fixing `scale factor` (e.g. 2) is preferred, but
            #  it cannot co-exist with `size` in `F.interpolate`.
            if 'scale_factor' in self.upsample_cfg:
                laterals[i - 1] += F.interpolate(laterals[i], **self.upsample_cfg)
            else:
                prev_shape = laterals[i - 1].shape[2:]
                laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, **self.upsample_cfg)

        # build outputs
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        if self.num_outs > len(outs):
            if not self.add_extra_convs:
                for i in range(self.num_outs - used_backbone_levels):
                    outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


neck = FPN(in_channels=[8, 16, 32, 64], out_channels=16, num_outs=5, act_cfg=dict(type='ReLU'))
head = nn.Conv2d(16, 4, 3, padding=1)
optimizer = torch.optim.SGD(list(neck.parameters()) + list(head.parameters()), lr=0.02, momentum=0.9)
neck.train()
for it in range(2):
    feats = [torch.randn(2, c, s, s) for c, s in zip([8, 16, 32, 64], [32, 16, 8, 4])]
    outs = neck(feats)
    loss = sum(F.mse_loss(head(o), torch.zeros(2, 4, o.shape[2], o.shape[3])) for o in outs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
