# YOLOv3 training script: fit_ont_epoch() trains one epoch on three detection heads (one YOLOLoss per
# scale), then validates; the epoch's running losses are printed and written into the checkpoint name.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class YoloBody(nn.Module):
    def __init__(self, num_anchors=3, num_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1))
        out = num_anchors * (5 + num_classes)
        self.heads = nn.ModuleList([nn.Conv2d(8, out, 1, stride=s) for s in (1, 2, 4)])

    def forward(self, x):
        x = self.backbone(x)
        return [head(x) for head in self.heads]


class YOLOLoss(nn.Module):
    def forward(self, prediction, targets):
        conf = prediction[:, 4::9]
        loss = nn.functional.binary_cross_entropy_with_logits(conf, torch.zeros_like(conf))
        loss = loss + 0.01 * sum(t.abs().sum() for t in targets)
        return loss, conf.numel()


def fit_ont_epoch(net, yolo_losses, epoch, epoch_size, epoch_size_val, gen, genval, Epoch):
    total_loss = 0
    val_loss = 0
    for iteration, (images, targets) in enumerate(gen):
        if iteration >= epoch_size:
            break
        optimizer.zero_grad()
        outputs = net(images)
        losses = []
        for i in range(3):
            loss_item = yolo_losses[i](outputs[i], targets)
            losses.append(loss_item[0])
        loss = sum(losses)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    net.eval()
    print('Start Validation')
    for iteration, (images_val, targets_val) in enumerate(genval):
        if iteration >= epoch_size_val:
            break
        with torch.no_grad():
            outputs = net(images_val)
            losses = []
            for i in range(3):
                loss_item = yolo_losses[i](outputs[i], targets_val)
                losses.append(loss_item[0])
            loss = sum(losses)
            val_loss += loss.item()
    net.train()
    print('Epoch:' + str(epoch + 1) + '/' + str(Epoch))
    print('Total Loss: %.4f || Val Loss: %.4f ' % (total_loss / (epoch_size + 1), val_loss / (epoch_size_val + 1)))
    return total_loss / (epoch_size + 1)


def batches(n):
    return [(torch.randn(2, 3, 32, 32), [torch.rand(3, 5) for _ in range(2)]) for _ in range(n)]


model = YoloBody()
net = model.train()
yolo_losses = [YOLOLoss() for _ in range(3)]
optimizer = optim.Adam(net.parameters(), 1e-3)
lr_scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.95)
gen, gen_val = batches(4), batches(2)
epoch_losses = []
for epoch in range(2):
    epoch_losses.append(fit_ont_epoch(net, yolo_losses, epoch, 4, 2, gen, gen_val, 2))
    lr_scheduler.step()

# -- corpus check --
if any(torch.is_tensor(v) and v.grad_fn is not None for v in epoch_losses):
    print("BUG: the epoch's total_loss keeps every iteration's autograd graph alive")
