# SOLOv2 instance segmentation ported from mmdetection to plain PyTorch: the mask feature head
# runs one conv tower per FPN level (built in loops in __init__) and sums the towers' outputs.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def normal_init(module, mean=0, std=1, bias=0):
    nn.init.normal_(module.weight, mean, std)
    if hasattr(module, 'bias') and module.bias is not None:
        nn.init.constant_(module.bias, bias)


class MaskFeatHead(nn.Module):
    def __init__(self, in_channels, out_channels, start_level, end_level, num_classes):
        super(MaskFeatHead, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.start_level = start_level
        self.end_level = end_level
        self.num_classes = num_classes

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.start_level, self.end_level + 1):
            convs_per_level = nn.Sequential()
            if i == 0:
                one_conv = nn.Sequential(
                    nn.Conv2d(self.in_channels, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=4),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(i), one_conv)
                self.convs_all_levels.append(convs_per_level)
                continue

            for j in range(i):
                chn = (self.in_channels + 2 if i == 3 else self.in_channels) if j == 0 else self.out_channels
                one_conv = nn.Sequential(
                    nn.Conv2d(chn, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=4),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(j), one_conv)
                one_upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                convs_per_level.add_module('upsample' + str(j), one_upsample)

            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.out_channels, self.num_classes, 1, padding=0, bias=False),
            nn.GroupNorm(num_channels=self.num_classes, num_groups=4),
            nn.ReLU(inplace=True))

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                normal_init(m, std=0.01)

    def forward(self, inputs):
        assert len(inputs) == (self.end_level - self.start_level + 1)

        feature_add_all_level = self.convs_all_levels[0](inputs[0])
        for i in range(1, len(inputs)):
            input_p = inputs[i]
            if i == 3:
                input_feat = input_p
                x_range = torch.linspace(-1, 1, input_feat.shape[-1], device=input_feat.device)
                y_range = torch.linspace(-1, 1, input_feat.shape[-2], device=input_feat.device)
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([input_feat.shape[0], 1, -1, -1])
                x = x.expand([input_feat.shape[0], 1, -1, -1])
                coord_feat = torch.cat([x, y], 1)
                input_p = torch.cat([input_p, coord_feat], 1)

            feature_add_all_level = self.convs_all_levels[i](input_p) + feature_add_all_level

        feature_pred = self.conv_pred(feature_add_all_level)
        return feature_pred


class TinyFPN(nn.Module):
    """Stands in for the ResNet + FPN neck: four levels at strides 4, 8, 16, 32."""
    def __init__(self, channels=16):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, stride=4, padding=1)
        self.downs = nn.ModuleList([nn.Conv2d(channels, channels, 3, stride=2, padding=1) for _ in range(3)])

    def forward(self, img):
        feats = [self.stem(img)]
        for down in self.downs:
            feats.append(down(feats[-1]))
        return feats


class SOLOv2(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyFPN(16)
        self.mask_feat_head = MaskFeatHead(16, 16, 0, 3, 16)
        self.kernel_pred = nn.Conv2d(16, 16, 1)   # dynamic kernels from the category branch (one grid cell here)
        self.mask_feat_head.init_weights()

    def forward(self, img):
        feats = self.backbone(img)
        mask_feat = self.mask_feat_head(feats)
        kernels = self.kernel_pred(F.adaptive_avg_pool2d(feats[-1], 1))      # B, E, 1, 1
        return (mask_feat * kernels).sum(1, keepdim=True)                  # B, 1, H/4, W/4


model = SOLOv2()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
imgs = torch.randn(2, 3, 64, 64)
gt_masks = (torch.rand(2, 1, 16, 16) > 0.5).float()

model.train()
for it in range(2):
    pred = model(imgs)
    loss = F.binary_cross_entropy_with_logits(pred, gt_masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
