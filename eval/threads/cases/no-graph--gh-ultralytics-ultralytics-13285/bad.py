# A custom ensemble training loop around a YOLO-style detector: each member model has its own
# loss object built from the model (as v8DetectionLoss is), which returns the loss to optimize
# and a detached copy of its parts for logging. Random tensors stand in for images and targets.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyDetector(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.nc = nc
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.SiLU())
        self.box = nn.Conv2d(16, 4, 1)
        self.cls = nn.Conv2d(16, nc, 1)

    def forward(self, x):
        f = self.backbone(x)
        return self.box(f), self.cls(f)


class DetectionLoss:
    def __init__(self, model):
        self.nc = model.nc
        self.box_gain, self.cls_gain = 7.5, 0.5

    def __call__(self, preds, batch):
        pred_box, pred_cls = preds
        loss = torch.zeros(2)
        loss[0] = F.l1_loss(pred_box, batch["boxes"]) * self.box_gain
        loss[1] = F.binary_cross_entropy_with_logits(pred_cls, batch["cls"]) * self.cls_gain
        batch_size = pred_box.shape[0]
        return loss.sum() * batch_size, loss.detach()


model_1 = TinyDetector()
criterion = DetectionLoss(model_1)
optimizer = torch.optim.SGD(model_1.parameters(), lr=0.01, momentum=0.9)

for it in range(3):
    imgs = torch.randn(4, 3, 32, 32)
    batch = {"boxes": torch.rand(4, 4, 16, 16), "cls": torch.randint(0, 2, (4, 4, 16, 16)).float()}
    pred1 = model_1(imgs)
    loss1, lossitem1 = criterion(pred1, batch)
    optimizer.zero_grad()
    lossitem1.sum().backward()
    optimizer.step()
    print("iter", it, [round(v, 4) for v in lossitem1.tolist()])
