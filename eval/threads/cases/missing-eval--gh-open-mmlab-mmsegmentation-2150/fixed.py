# Inference with an MMSegmentation PSPNet built from its config: the person builds the segmentor
# from cfg.model and passes it straight to inference_segmentor with one image. Small stand-ins for
# build_segmentor (a ResNet-style stem, the pyramid pooling module whose 1x1 branch pools to one
# value per channel before its BatchNorm, a decode head), inference_segmentor and the config; a
# random array stands in for the image read with mmcv.imread.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__(nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU(inplace=True))


class PPM(nn.ModuleList):
    def __init__(self, pool_scales, in_channels, channels):
        super().__init__(nn.Sequential(nn.AdaptiveAvgPool2d(scale), ConvModule(in_channels, channels, 1))
                         for scale in pool_scales)

    def forward(self, x):
        return [F.interpolate(ppm(x), size=x.shape[2:], mode='bilinear', align_corners=False) for ppm in self]


class PSPHead(nn.Module):
    def __init__(self, in_channels, channels, num_classes, pool_scales=(1, 2, 3, 6)):
        super().__init__()
        self.psp_modules = PPM(pool_scales, in_channels, channels)
        self.bottleneck = ConvModule(in_channels + len(pool_scales) * channels, channels, 3, padding=1)
        self.conv_seg = nn.Conv2d(channels, num_classes, 1)

    def forward(self, x):
        psp_outs = [x] + self.psp_modules(x)
        return self.conv_seg(self.bottleneck(torch.cat(psp_outs, dim=1)))


class EncoderDecoder(nn.Module):
    def __init__(self, backbone_channels, channels, num_classes):
        super().__init__()
        self.backbone = nn.Sequential(ConvModule(3, 16, 3, padding=1), nn.MaxPool2d(2),
                                      ConvModule(16, backbone_channels, 3, padding=1), nn.MaxPool2d(2))
        self.decode_head = PSPHead(backbone_channels, channels, num_classes)

    def forward(self, img):
        seg_logit = self.decode_head(self.backbone(img))
        return F.interpolate(seg_logit, size=img.shape[2:], mode='bilinear', align_corners=False)


class Config(dict):
    __getattr__ = dict.__getitem__

    @staticmethod
    def fromfile(filename):
        return Config(model=dict(type='EncoderDecoder', backbone_channels=32, channels=16, num_classes=19))


def build_segmentor(cfg):
    cfg = dict(cfg)
    cfg.pop('type')
    return EncoderDecoder(**cfg)


def inference_segmentor(model, img):
    data = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0).float() / 255
    with torch.no_grad():
        result = model(data).argmax(1)
    return result.numpy()


cfg = Config.fromfile('configs/pspnet/pspnet_r50-d8_512x1024_40k_cityscapes.py')

img = np.random.RandomState(0).randint(0, 256, (48, 64, 3)).astype(np.uint8)

model = build_segmentor(cfg.model).eval()

model.cfg = cfg
result = inference_segmentor(model, img)
print(result.shape, np.unique(result)[:5])
