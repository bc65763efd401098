# Faster R-CNN training script: FasterRCNNTrainer.train_step() returns the four partial losses
# and their total, and fit_one_epoch() sums each of them for the progress printout.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FasterRCNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.extractor = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
        self.rpn_loc = nn.Conv2d(16, 4 * 9, 1)
        self.rpn_score = nn.Conv2d(16, 2 * 9, 1)
        self.head = nn.Linear(16, num_classes * 5)
        self.num_classes = num_classes

    def forward(self, x):
        h = self.extractor(x)
        head = self.head(h.mean(dim=(2, 3)))
        return self.rpn_loc(h), self.rpn_score(h), head[:, :self.num_classes * 4], head[:, self.num_classes * 4:]


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, optimizer):
        super().__init__()
        self.faster_rcnn = faster_rcnn
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        rpn_locs, rpn_scores, roi_cls_locs, roi_scores = self.faster_rcnn(imgs)
        rpn_loc_loss = F.smooth_l1_loss(rpn_locs.mean(dim=(2, 3))[:, :4], bboxes)
        rpn_cls_loss = F.cross_entropy(rpn_scores.mean(dim=(2, 3))[:, :2], (labels > 0).long())
        roi_loc_loss = F.smooth_l1_loss(roi_cls_locs[:, :4], bboxes)
        roi_cls_loss = F.cross_entropy(roi_scores, labels)
        losses = [rpn_loc_loss, rpn_cls_loss, roi_loc_loss, roi_cls_loss]
        losses = losses + [sum(losses)]
        return losses

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def gen(n):
    for _ in range(n):
        yield torch.randn(2, 3, 32, 32), torch.rand(2, 4), torch.randint(0, 4, (2,))


def fit_one_epoch(net, epoch, epoch_size, Epoch):
    train_util = FasterRCNNTrainer(net, optimizer)
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0
    for iteration, batch in enumerate(gen(epoch_size)):
        start_time = time.time()
        imgs, boxes, labels = batch[0], batch[1], batch[2]
        losses = train_util.train_step(imgs, boxes, labels, 1)
        rpn_loc, rpn_cls, roi_loc, roi_cls, total = losses
        total_loss += float(total)
        rpn_loc_loss += float(rpn_loc)
        rpn_cls_loss += float(rpn_cls)
        roi_loc_loss += float(roi_loc)
        roi_cls_loss += float(roi_cls)

        waste_time = time.time() - start_time
        print('Epoch:' + str(epoch + 1) + '/' + str(Epoch))
        print('iter:' + str(iteration) + '/' + str(epoch_size) + ' || total_loss: %.4f|| rpn_loc_loss: %.4f || rpn_cls_loss: %.4f || roi_loc_loss: %.4f || roi_cls_loss: %.4f || %.4fs/step'
              % (total_loss / (iteration + 1), rpn_loc_loss / (iteration + 1), rpn_cls_loss / (iteration + 1),
                 roi_loc_loss / (iteration + 1), roi_cls_loss / (iteration + 1), waste_time))
    return total_loss / epoch_size


model = FasterRCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
epoch_losses = []
for epoch in range(2):
    epoch_losses.append(fit_one_epoch(model, epoch, 4, 2))

# -- corpus check --
if any(torch.is_tensor(l) and l.grad_fn is not None for l in epoch_losses):
    print("BUG: the epoch's summed total loss is a tensor that keeps every iteration's autograd graph")
