# PointNet++-style foreground segmentation on KITTI point clouds (tools/train_and_eval.py): a
# per-point network (shared MLPs with BatchNorm, a classification head with Dropout) is trained
# with a Dice loss, and every ckpt_save_interval epochs eval_one_epoch() reports the foreground
# IoU on the validation split. Random point clouds stand in for KITTI.
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.optim.lr_scheduler as lr_sched
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)
np.random.seed(0)

FG_THRESH = 0.3
args = {"epochs": 4, "ckpt_save_interval": 2, "lr": 0.002, "weight_decay": 0.001, "lr_decay": 0.2,
        "lr_clip": 0.000001, "decay_step_list": [50, 70, 80, 90]}


def log_print(info, log_f=None):
    print(info)


class Pointnet2MSG(nn.Module):
    def __init__(self, input_channels=0):
        super().__init__()
        self.SA_modules = nn.Sequential(
            nn.Conv1d(3 + input_channels, 32, 1), nn.BatchNorm1d(32), nn.ReLU(),
            nn.Conv1d(32, 64, 1), nn.BatchNorm1d(64), nn.ReLU())
        self.FC_layer = nn.Sequential(
            nn.Conv1d(64 + 64, 64, 1), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.5),
            nn.Conv1d(64, 1, 1))

    def forward(self, pointcloud):
        xyz = pointcloud.transpose(1, 2)
        l_features = self.SA_modules(xyz)
        global_feature = l_features.max(dim=2, keepdim=True)[0].expand_as(l_features)
        pred_cls = self.FC_layer(torch.cat((l_features, global_feature), 1)).transpose(1, 2).contiguous()
        return pred_cls


class DiceLoss(nn.Module):
    def __init__(self, ignore_target=-1):
        super().__init__()
        self.ignore_target = ignore_target

    def forward(self, input, target):
        input = torch.sigmoid(input.view(-1))
        target = target.float().view(-1)
        mask = (target != self.ignore_target).float()
        return 1.0 - (torch.min(input, target) * mask).sum() / torch.clamp((torch.max(input, target) * mask).sum(), min=1.0)


def train_one_epoch(model, train_loader, optimizer, epoch, lr_scheduler, total_it, log_f):
    model.train()
    log_print('===============TRAIN EPOCH %d================' % epoch, log_f=log_f)
    loss_func = DiceLoss(ignore_target=-1)

    for it, batch in enumerate(train_loader):
        optimizer.zero_grad()
        pts_input, cls_labels = batch['pts_input'], batch['cls_labels']
        pts_input = torch.from_numpy(pts_input).float()
        cls_labels = torch.from_numpy(cls_labels).long().view(-1)

        pred_cls = model(pts_input)
        pred_cls = pred_cls.view(-1)

        loss = loss_func(pred_cls, cls_labels)
        loss.backward()
        clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total_it += 1
    return total_it


def eval_one_epoch(model, eval_loader, epoch, log_f=None):
    model.eval()
    log_print('===============EVAL EPOCH %d================' % epoch, log_f=log_f)

    iou_list = []
    for it, batch in enumerate(eval_loader):
        pts_input, cls_labels = batch['pts_input'], batch['cls_labels']
        pts_input = torch.from_numpy(pts_input).float()
        cls_labels = torch.from_numpy(cls_labels).long().view(-1)

        pred_cls = model(pts_input)
        pred_cls = pred_cls.view(-1)

        pred_class = (torch.sigmoid(pred_cls) > FG_THRESH)
        fg_mask = cls_labels > 0
        correct = ((pred_class.long() == cls_labels) & fg_mask).float().sum()
        union = fg_mask.sum().float() + (pred_class > 0).sum().float() - correct
        iou = correct / torch.clamp(union, min=1.0)
        iou_list.append(iou.item())

    avg_iou = np.array(iou_list).mean()
    log_print('Epoch %d: Average IoU (samples=%d): %.6f' % (epoch, len(iou_list), avg_iou), log_f=log_f)
    return avg_iou


def train_and_eval(model, train_loader, eval_loader, log_f):
    optimizer = optim.Adam(model.parameters(), lr=args["lr"], weight_decay=args["weight_decay"])

    def lr_lbmd(cur_epoch):
        cur_decay = 1
        for decay_step in args["decay_step_list"]:
            if cur_epoch >= decay_step:
                cur_decay = cur_decay * args["lr_decay"]
        return max(cur_decay, args["lr_clip"] / args["lr"])

    lr_scheduler = lr_sched.LambdaLR(optimizer, lr_lbmd)
    total_it = 0
    for epoch in range(1, args["epochs"] + 1):
        total_it = train_one_epoch(model, train_loader, optimizer, epoch, lr_scheduler, total_it, log_f)
        lr_scheduler.step()
        if epoch % args["ckpt_save_interval"] == 0:
            with torch.no_grad():
                eval_outputs.clear()
                avg_iou = eval_one_epoch(model, eval_loader, epoch, log_f)


def make_batches(n_batches, batch_size=4, npoints=64):
    batches = []
    for _ in range(n_batches):
        pts = np.random.rand(batch_size, npoints, 3).astype(np.float32)
        labels = (pts[:, :, 2] > 0.6).astype(np.int64)
        batches.append({'pts_input': pts, 'cls_labels': labels})
    return batches


train_loader, eval_loader = make_batches(6), make_batches(3)
model = Pointnet2MSG(input_channels=0)
eval_outputs = []
hook = model.register_forward_hook(  # corpus instrumentation, not part of the thread's code
    lambda module, inputs, output: None if torch.is_grad_enabled() else eval_outputs.append(output))
train_and_eval(model, train_loader, eval_loader, log_f=None)

# -- corpus check --
hook.remove()
model.eval()
with torch.no_grad():
    expected = [model(torch.from_numpy(b['pts_input'])) for b in eval_loader]
if not all(torch.allclose(a, b, atol=1e-5) for a, b in zip(eval_outputs, expected)):
    print("BUG: eval_one_epoch ran the network in training mode (BatchNorm batch statistics and dropout)")
