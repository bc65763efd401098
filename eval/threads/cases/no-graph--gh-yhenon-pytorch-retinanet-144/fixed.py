# pytorch-retinanet: the FocalLoss module loops over the images of a batch, matches anchors to the
# image's boxes (annotation rows of -1 are padding) and returns the mean classification and
# regression losses; the training loop adds them and backpropagates. The dataset also has images
# without any object (negative samples). A tiny one-level detector with a fixed anchor grid and
# random images stand in for the ResNet-FPN RetinaNet and the CSV dataset.
import torch
import torch.nn as nn

torch.manual_seed(0)


def calc_iou(a, b):
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    iw = torch.min(torch.unsqueeze(a[:, 2], dim=1), b[:, 2]) - torch.max(torch.unsqueeze(a[:, 0], 1), b[:, 0])
    ih = torch.min(torch.unsqueeze(a[:, 3], dim=1), b[:, 3]) - torch.max(torch.unsqueeze(a[:, 1], 1), b[:, 1])
    iw = torch.clamp(iw, min=0)
    ih = torch.clamp(ih, min=0)
    ua = torch.unsqueeze((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]), dim=1) + area - iw * ih
    ua = torch.clamp(ua, min=1e-8)
    return iw * ih / ua


class FocalLoss(nn.Module):
    def forward(self, classifications, regressions, anchors, annotations):
        alpha = 0.25
        gamma = 2.0
        batch_size = classifications.shape[0]
        classification_losses = []
        regression_losses = []

        for j in range(batch_size):
            classification = classifications[j, :, :]
            regression = regressions[j, :, :]

            bbox_annotation = annotations[j, :, :]
            bbox_annotation = bbox_annotation[bbox_annotation[:, 4] != -1]

            classification = torch.clamp(classification, 1e-4, 1.0 - 1e-4)

            if bbox_annotation.shape[0] == 0:
                if torch.cuda.is_available():
                    alpha_factor = torch.ones(classification.shape).cuda() * alpha

                    alpha_factor = 1. - alpha_factor
                    focal_weight = classification
                    focal_weight = alpha_factor * torch.pow(focal_weight, gamma)

                    bce = -(torch.log(1.0 - classification))

                    cls_loss = focal_weight * bce
                    classification_losses.append(cls_loss.sum())
                    regression_losses.append(torch.tensor(0).float())
                else:
                    alpha_factor = torch.ones(classification.shape) * alpha

                    alpha_factor = 1. - alpha_factor
                    focal_weight = classification
                    focal_weight = alpha_factor * torch.pow(focal_weight, gamma)

                    bce = -(torch.log(1.0 - classification))

                    cls_loss = focal_weight * bce
                    classification_losses.append(cls_loss.sum())
                    regression_losses.append(torch.tensor(0).float())

                continue
            IoU = calc_iou(anchors[0, :, :], bbox_annotation[:, :4])  # num_anchors x num_annotations
            IoU_max, IoU_argmax = torch.max(IoU, dim=1)

            targets = torch.ones(classification.shape) * -1
            targets[torch.lt(IoU_max, 0.4), :] = 0
            positive_indices = torch.ge(IoU_max, 0.5)
            num_positive_anchors = positive_indices.sum()
            assigned_annotations = bbox_annotation[IoU_argmax, :]
            targets[positive_indices, :] = 0
            targets[positive_indices, assigned_annotations[positive_indices, 4].long()] = 1

            alpha_factor = torch.ones(targets.shape) * alpha
            alpha_factor = torch.where(torch.eq(targets, 1.), alpha_factor, 1. - alpha_factor)
            focal_weight = torch.where(torch.eq(targets, 1.), 1. - classification, classification)
            focal_weight = alpha_factor * torch.pow(focal_weight, gamma)
            bce = -(targets * torch.log(classification) + (1.0 - targets) * torch.log(1.0 - classification))
            cls_loss = focal_weight * bce
            cls_loss = torch.where(torch.ne(targets, -1.0), cls_loss, torch.zeros(cls_loss.shape))
            classification_losses.append(cls_loss.sum() / torch.clamp(num_positive_anchors.float(), min=1.0))

            if positive_indices.sum() > 0:
                target_boxes = assigned_annotations[positive_indices, :4]
                regression_diff = torch.abs(target_boxes / 32.0 - regression[positive_indices, :])
                regression_losses.append(regression_diff.mean())
            else:
                regression_losses.append(torch.tensor(0).float())

        return torch.stack(classification_losses).mean(dim=0, keepdim=True), torch.stack(regression_losses).mean(dim=0, keepdim=True)


class RetinaNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=8, padding=1), nn.ReLU())
        self.classificationModel = nn.Conv2d(8, num_classes, 3, padding=1)
        self.regressionModel = nn.Conv2d(8, 4, 3, padding=1)
        ys, xs = torch.meshgrid(torch.arange(4.0), torch.arange(4.0), indexing="ij")
        centers = torch.stack([xs.flatten(), ys.flatten()], 1) * 8 + 4
        self.anchors = torch.cat([centers - 8, centers + 8], 1)[None]  # 1 x 16 x 4
        self.focalLoss = FocalLoss()

    def forward(self, inputs):
        img_batch, annotations = inputs
        f = self.backbone(img_batch)
        classification = torch.sigmoid(self.classificationModel(f)).flatten(2).transpose(1, 2)
        regression = self.regressionModel(f).flatten(2).transpose(1, 2)
        return self.focalLoss(classification, regression, self.anchors, annotations)


retinanet = RetinaNet()
optimizer = torch.optim.Adam(retinanet.parameters(), lr=1e-5)
# two batches: one with a box per image, one made only of negative (empty) images
with_objects = torch.tensor([[[4.0, 4.0, 20.0, 20.0, 1.0]], [[8.0, 8.0, 24.0, 24.0, 0.0]]])
empty = -torch.ones(2, 1, 5)
batches = [(torch.rand(2, 3, 32, 32), with_objects), (torch.rand(2, 3, 32, 32), empty)]

for iter_num, (img, annot) in enumerate(batches):
    optimizer.zero_grad()
    classification_loss, regression_loss = retinanet([img.float(), annot])
    classification_loss = classification_loss.mean()
    regression_loss = regression_loss.mean()
    loss = classification_loss + regression_loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(retinanet.parameters(), 0.1)
    optimizer.step()
    print("Iteration: {} | Classification loss: {:1.5f} | Regression loss: {:1.5f}".format(
        iter_num, float(classification_loss), float(regression_loss)))
