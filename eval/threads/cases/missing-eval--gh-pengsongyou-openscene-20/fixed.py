# OpenScene-style 3D distillation (run/distill.py): a 3D point network (BatchNorm and Dropout;
# it stands for the MinkowskiNet on sparse voxels) is trained to regress the fused 2D CLIP
# features of each point with a cosine loss, and every eval_freq epochs validate() scores
# zero-shot segmentation (point features @ text features) on the validation scenes. Random
# points and features stand in for ScanNet.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class AverageMeter(object):
    def __init__(self):
        self.sum, self.count, self.avg = 0, 0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class DisNet(nn.Module):
    def __init__(self, in_channels=3, feat_dim=16):
        super(DisNet, self).__init__()
        self.net3d = nn.Sequential(
            nn.Linear(in_channels + 3, 32), nn.BatchNorm1d(32), nn.ReLU(inplace=True),
            nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(inplace=True), nn.Dropout(0.3),
            nn.Linear(32, feat_dim))

    def forward(self, coords, feat):
        return self.net3d(torch.cat((coords, feat), 1))


def obtain_text_features_and_palette(classes=5, feat_dim=16):
    g = torch.Generator().manual_seed(1)
    text_features = torch.randn(classes, feat_dim, generator=g)
    return text_features / text_features.norm(dim=-1, keepdim=True), None


def intersectionAndUnion(output, target, K):
    intersection = output[output == target]
    area_intersection = torch.histc(intersection.float(), bins=K, min=0, max=K - 1)
    area_output = torch.histc(output.float(), bins=K, min=0, max=K - 1)
    area_target = torch.histc(target.float(), bins=K, min=0, max=K - 1)
    return area_intersection, area_output + area_target - area_intersection, area_target


def distill(train_loader, model, optimizer, epoch):
    '''Distillation pipeline.'''
    loss_meter = AverageMeter()
    model.train()
    for i, batch_data in enumerate(train_loader):
        (coords, feat, feat_3d) = batch_data
        output_3d = model(coords, feat)
        loss = (1 - torch.nn.CosineSimilarity()(output_3d, feat_3d)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_meter.update(loss.item(), coords.size(0))
    return loss_meter.avg


def validate(val_loader, model, criterion, classes=5):
    '''Validation.'''
    loss_meter = AverageMeter()
    intersection_meter, union_meter, target_meter = AverageMeter(), AverageMeter(), AverageMeter()
    text_features, _ = obtain_text_features_and_palette()

    model.eval()
    with torch.no_grad():
        for batch_data in val_loader:
            (coords, feat, label) = batch_data
            output = model(coords, feat)
            output = output @ text_features.t()
            loss = criterion(output, label)
            output = torch.max(output, 1)[1]
            intersection, union, target = intersectionAndUnion(output, label, classes)
            intersection_meter.update(intersection.numpy()), union_meter.update(union.numpy())
            target_meter.update(target.numpy())
            loss_meter.update(loss.item(), coords.size(0))

    iou_class = intersection_meter.sum / (union_meter.sum + 1e-10)
    mIoU = np.mean(iou_class)
    return loss_meter.avg, mIoU


train_data = TensorDataset(torch.rand(256, 3), torch.rand(256, 3), torch.randn(256, 16))
val_data = TensorDataset(torch.rand(96, 3), torch.rand(96, 3), torch.randint(0, 5, (96,)))
train_loader = DataLoader(train_data, batch_size=32, shuffle=True)
val_loader = DataLoader(val_data, batch_size=32, shuffle=False)

model = DisNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss(ignore_index=255)  # for evaluation
val_outputs = []
model.register_forward_hook(  # corpus instrumentation, not part of the thread's code
    lambda module, inputs, output: None if torch.is_grad_enabled() else val_outputs.append(output))

best_iou = 0.0
for epoch in range(0, 4):
    loss_train = distill(train_loader, model, optimizer, epoch)
    epoch_log = epoch + 1
    if epoch_log % 2 == 0:
        val_outputs.clear()
        loss_val, mIoU_val = validate(val_loader, model, criterion)
        best_iou = max(best_iou, mIoU_val)
        print("epoch {} loss_train {:.4f} loss_val {:.4f} mIoU_val {:.4f}".format(epoch_log, loss_train, loss_val, mIoU_val))

# -- corpus check --
model.eval()
with torch.no_grad():
    expected = [model.net3d(torch.cat((c, f), 1)) for c, f, _ in val_loader]
if not all(torch.allclose(a, b, atol=1e-5) for a, b in zip(val_outputs, expected)):
    print("BUG: validation ran the network in training mode (BatchNorm batch statistics and dropout)")
