# SOTR-style mask head (detectron2/AdelaiDet project): one conv tower per FPN level, the deeper
# levels upsampled back to the first level's size, the towers summed into one mask feature and a
# final conv predicting the mask maps. Random FPN features and masks stand in for COCO.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cfg:
    NUM_MASKS = 8
    MASK_IN_FEATURES = ["p2", "p3", "p4", "p5"]
    MASK_IN_CHANNELS = 16
    MASK_CHANNELS = 16
    NORM = "GN"


class MaskHead(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.num_masks = cfg.NUM_MASKS
        self.mask_in_channels = cfg.MASK_IN_CHANNELS
        self.mask_channels = cfg.MASK_CHANNELS
        self.num_levels = len(cfg.MASK_IN_FEATURES)
        norm = None if cfg.NORM == "none" else cfg.NORM

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                conv_tower = [nn.Conv2d(self.mask_in_channels, self.mask_channels, 3, padding=1, bias=norm is None)]
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(4, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module("conv0", nn.Sequential(*conv_tower))
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                chn = self.mask_in_channels if j == 0 else self.mask_channels
                conv_tower = [nn.Conv2d(chn, self.mask_channels, 3, padding=1, bias=norm is None)]
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(4, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module("conv" + str(j), nn.Sequential(*conv_tower))
                convs_per_level.add_module("upsample" + str(j), nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False))
            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.mask_channels, self.num_masks, 1, bias=norm is None),
            nn.GroupNorm(4, self.num_masks),
            nn.ReLU(inplace=True),
        )

    def forward(self, features):
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            feature_add_all_level = feature_add_all_level + self.convs_all_levels[i](mask_feat)

        mask_pred = self.conv_pred(feature_add_all_level)
        return mask_pred


class FPNStandIn(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, stride=4, padding=1)
        self.downs = nn.ModuleList([nn.Conv2d(channels, channels, 3, stride=2, padding=1) for _ in range(3)])

    def forward(self, images):
        x = self.stem(images)
        feats = [x]
        for down in self.downs:
            x = down(x)
            feats.append(x)
        return feats


def dice_loss(pred, target):
    pred = pred.sigmoid().flatten(1)
    target = target.flatten(1)
    a = (pred * target).sum(1)
    b = (pred * pred).sum(1) + 0.001
    c = (target * target).sum(1) + 0.001
    return (1 - 2 * a / (b + c)).mean()


backbone = FPNStandIn()
mask_head = MaskHead(Cfg())
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(mask_head.parameters()), lr=0.01, momentum=0.9)

for it in range(3):
    images = torch.randn(2, 3, 64, 64)
    gt_masks = (torch.rand(2, Cfg.NUM_MASKS, 16, 16) > 0.5).float()
    mask_pred = mask_head(backbone(images))
    loss = dice_loss(mask_pred, gt_masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
