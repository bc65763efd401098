# An instance-segmentation model (Yolact-style) wrapped in a small REST handler: process() takes an
# uploaded image, runs the net and post-processing, then draw_img() renders the top detections
# with numpy. The handler was adapted from detect.py.
import types

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyYolact(nn.Module):
    def __init__(self, num_classes=4, num_priors=20):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.class_head = nn.Linear(8 * 16, num_priors * num_classes)
        self.box_head = nn.Linear(8 * 16, num_priors * 4)
        self.mask_head = nn.Conv2d(8, num_priors, 1)
        self.num_classes, self.num_priors = num_classes, num_priors

    def forward(self, img):
        f = self.backbone(img)
        flat = f.flatten(1)
        cls = self.class_head(flat).view(-1, self.num_priors, self.num_classes).softmax(-1)
        box = self.box_head(flat).view(-1, self.num_priors, 4).sigmoid()
        masks = self.mask_head(f).sigmoid()
        return cls, box, masks


def nms(cls, box, masks, top_k=10):
    scores, class_ids = cls[0].max(-1)
    keep = scores.argsort(descending=True)[:top_k]
    return class_ids[keep], scores[keep], box[0][keep], masks[0][keep]


def draw_img(results, img_origin, args):
    class_ids, classes, boxes = [x[:args.visual_top_k].cpu().numpy() for x in results[:3]]
    canvas = img_origin.copy()
    h, w = canvas.shape[:2]
    for (x1, y1, x2, y2), score in zip(boxes, classes):
        canvas[int(y1 * h):int(y2 * h) + 1, int(x1 * w)] = 255 * score
    return canvas


net = TinyYolact()
net.eval()
args = types.SimpleNamespace(visual_top_k=5)


def process(img_origin):
    img = torch.from_numpy(img_origin).float().permute(2, 0, 1).unsqueeze(0) / 255.0
    with torch.no_grad():
        class_p, box_p, mask_p = net(img)
        results = nms(class_p, box_p, mask_p)
    img_numpy = draw_img(results, img_origin, args)
    return img_numpy


upload = (np.random.RandomState(0).rand(32, 32, 3) * 255).astype(np.float32)
out = process(upload)
print(out.shape, float(out.mean()))
