# NanoDet-style detector training: a GFL head returns class scores and box distributions, its
# loss() sums a quality focal loss and box losses over the positive samples, and when a batch
# has no positive sample (avg_factor <= 0) the three losses are set to zero tensors. The trainer's
# warm_up() runs run_step() -> loss.backward() on the first batches; here the first warm-up batch
# has no ground-truth boxes, as happens early with a short warm-up. Random images stand in for COCO.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")  # .cuda() in the original


class GFLHead(nn.Module):
    def __init__(self, num_classes=3, in_channels=8, reg_max=7):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, in_channels, 3, stride=4, padding=1), nn.ReLU())
        self.gfl_cls = nn.Conv2d(in_channels, num_classes, 3, padding=1)
        self.gfl_reg = nn.Conv2d(in_channels, 4 * (reg_max + 1), 3, padding=1)
        self.num_classes = num_classes

    def forward(self, img):
        feat = self.backbone(img)
        return self.gfl_cls(feat), self.gfl_reg(feat)

    def loss(self, preds, gt_meta):
        cls_scores, bbox_preds = preds
        b, _, h, w = cls_scores.shape
        labels = torch.full((b, h, w), self.num_classes, dtype=torch.long, device=cls_scores.device)
        for i, boxes in enumerate(gt_meta["gt_bboxes"]):
            for (cx, cy, cls) in boxes:
                labels[i, cy, cx] = cls
        pos = labels < self.num_classes
        avg_factor = pos.sum().item()
        if avg_factor <= 0:
            loss_qfl = torch.tensor(0, dtype=torch.float32).to(device)
            loss_bbox = torch.tensor(0, dtype=torch.float32).to(device)
            loss_dfl = torch.tensor(0, dtype=torch.float32).to(device)
        else:
            target = F.one_hot(labels, self.num_classes + 1)[..., :self.num_classes].permute(0, 3, 1, 2).float()
            loss_qfl = F.binary_cross_entropy_with_logits(cls_scores, target, reduction="sum") / avg_factor
            reg = bbox_preds.permute(0, 2, 3, 1)[pos]
            loss_bbox = reg.sigmoid().mean()
            loss_dfl = F.cross_entropy(reg.reshape(-1, 8), torch.zeros(reg.numel() // 8, dtype=torch.long, device=reg.device))
        loss = loss_qfl + loss_bbox + loss_dfl
        return loss, dict(loss_qfl=loss_qfl, loss_bbox=loss_bbox, loss_dfl=loss_dfl)


class Trainer:
    def __init__(self, model, warmup_steps):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.warmup_steps = warmup_steps

    def run_step(self, batch):
        preds = self.model(batch["img"])
        loss, loss_stats = self.model.loss(preds, batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss, loss_stats

    def warm_up(self, train_loader):
        for step, batch in enumerate(train_loader):
            if step >= self.warmup_steps:
                break
            for group in self.optimizer.param_groups:
                group["lr"] = 0.01 * (step + 1) / self.warmup_steps
            loss, loss_stats = self.run_step(batch)
            print("warm up", step, round(loss.item(), 4))


train_loader = [
    {"img": torch.rand(2, 3, 32, 32), "gt_bboxes": [[], []]},
    {"img": torch.rand(2, 3, 32, 32), "gt_bboxes": [[(1, 2, 0)], [(3, 3, 2), (5, 1, 1)]]},
]
trainer = Trainer(GFLHead().to(device), warmup_steps=2)
trainer.warm_up(train_loader)
