# A simple Faster R-CNN training step: a backbone, an RPN head (objectness + box deltas) and a
# Fast R-CNN head on pooled features; the RPN and Fast R-CNN losses each combine a classification
# loss with a smooth-L1 box loss masked by the inside weights of the targets. The targets (labels,
# box targets, inside weights) come from random tensors instead of anchor/proposal matching.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
device = torch.device("cpu")  # "cuda" in the original


def to_var(x):
    x = x.to(device)
    return Variable(x)


class FasterRCNN(nn.Module):
    def __init__(self, num_anchors=3, num_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.rpn_conv = nn.Conv2d(16, 16, 3, padding=1)
        self.rpn_cls = nn.Conv2d(16, num_anchors * 2, 1)
        self.rpn_bbox = nn.Conv2d(16, num_anchors * 4, 1)
        self.fc = nn.Linear(16 * 4 * 4, 64)
        self.frcnn_cls = nn.Linear(64, num_classes)
        self.frcnn_bbox = nn.Linear(64, num_classes * 4)

    def forward(self, image, rois_per_image=8):
        features = self.backbone(image)
        rpn = F.relu(self.rpn_conv(features))
        rpn_cls_score = self.rpn_cls(rpn).permute(0, 2, 3, 1).reshape(-1, 2)
        rpn_bbox_pred = self.rpn_bbox(rpn).permute(0, 2, 3, 1).reshape(-1, 4)
        pooled = F.adaptive_max_pool2d(features, 4).flatten(1).repeat(rois_per_image, 1)
        hidden = F.relu(self.fc(pooled))
        return rpn_cls_score, rpn_bbox_pred, self.frcnn_cls(hidden), self.frcnn_bbox(hidden)


def rpn_loss(rpn_cls_prob, rpn_labels, rpn_bbox_pred, rpn_bbox_targets, rpn_bbox_inside_weights):
    rpn_cls_loss = F.cross_entropy(rpn_cls_prob, rpn_labels, ignore_index=-1)
    rpn_bbox_pred = torch.mul(rpn_bbox_pred, to_var(rpn_bbox_inside_weights))
    rpn_bbox_targets = to_var(torch.mul(rpn_bbox_targets, rpn_bbox_inside_weights))
    rpn_loss_box = F.smooth_l1_loss(rpn_bbox_pred, rpn_bbox_targets, reduction="sum") / (rpn_bbox_inside_weights.sum() + 1e-4)
    return rpn_cls_loss, rpn_loss_box


def frcnn_loss(frcnn_cls_prob, frcnn_labels, frcnn_bbox_pred, frcnn_bbox_targets, frcnn_bbox_inside_weights):
    frcnn_cls_loss = F.cross_entropy(frcnn_cls_prob, frcnn_labels)
    frcnn_bbox_pred = torch.mul(frcnn_bbox_pred, to_var(frcnn_bbox_inside_weights))
    frcnn_bbox_targets = to_var(torch.mul(frcnn_bbox_targets, frcnn_bbox_inside_weights))
    frcnn_loss_box = F.smooth_l1_loss(frcnn_bbox_pred, frcnn_bbox_targets, reduction="sum") / (frcnn_bbox_inside_weights.sum() + 1e-4)
    return frcnn_cls_loss, frcnn_loss_box


model = FasterRCNN().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
for step in range(3):
    image = torch.randn(1, 3, 16, 16, device=device)
    rpn_cls_score, rpn_bbox_pred, frcnn_cls_score, frcnn_bbox_pred = model(image)
    n_anchors, n_rois = rpn_cls_score.size(0), frcnn_cls_score.size(0)
    rpn_labels = torch.randint(-1, 2, (n_anchors,), device=device)
    rpn_bbox_inside_weights = (rpn_labels == 1).float().unsqueeze(1).expand(-1, 4)
    rpn_cls_loss, rpn_loss_box = rpn_loss(rpn_cls_score, rpn_labels, rpn_bbox_pred,
                                          torch.randn(n_anchors, 4, device=device), rpn_bbox_inside_weights)
    frcnn_labels = torch.randint(0, 4, (n_rois,), device=device)
    frcnn_bbox_inside_weights = F.one_hot(frcnn_labels, 4).float().repeat_interleave(4, dim=1)
    frcnn_cls_loss, frcnn_loss_box = frcnn_loss(frcnn_cls_score, frcnn_labels, frcnn_bbox_pred,
                                                torch.randn(n_rois, 16, device=device), frcnn_bbox_inside_weights)
    total_loss = rpn_cls_loss + rpn_loss_box + frcnn_cls_loss + frcnn_loss_box
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()
    print("step", step, "rpn box", round(rpn_loss_box.item(), 4), "frcnn box", round(frcnn_loss_box.item(), 4))

# -- corpus check --
if model.rpn_bbox.weight.grad is None or model.frcnn_bbox.weight.grad is None:
    print("BUG: the box regression heads get no gradient from the box losses")
