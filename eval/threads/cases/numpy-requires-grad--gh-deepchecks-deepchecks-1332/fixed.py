# A model-validation library's vision check: a Batch wrapper asks the user's VisionData for the
# model's predictions (infer_on_batch), and ConfusionMatrixReport matches each detection
# [x, y, w, h, confidence, class] to the labels [class, x, y, w, h] by their IoU, computed in numpy.
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def jaccard_iou(dt, gt):
    x_dt, y_dt, w_dt, h_dt = dt[:4]
    x_gt, y_gt, w_gt, h_gt = gt[1:]
    xi, yi = max(x_dt, x_gt), max(y_dt, y_gt)
    x2i, y2i = min(x_dt + w_dt, x_gt + w_gt), min(y_dt + h_dt, y_gt + h_gt)
    intersection = max(x2i - xi, 0) * max(y2i - yi, 0)
    return intersection / (w_dt * h_dt + w_gt * h_gt - intersection)


class Batch:
    def __init__(self, batch, context):
        self._batch, self._context = batch, context
        self._predictions = None

    @property
    def labels(self):
        return self._context.dataset.batch_to_labels(self._batch)

    @property
    def predictions(self):
        if self._predictions is None:
            self._predictions = self._context.dataset.infer_on_batch(self._batch, self._context.model,
                                                                     self._context.device)
        return self._predictions


class ConfusionMatrixReport:
    def __init__(self, confidence_threshold=0.3, iou_threshold=0.1):
        self.confidence_threshold, self.iou_threshold = confidence_threshold, iou_threshold
        self.matrix = defaultdict(lambda: defaultdict(int))

    def update(self, context, batch):
        self.update_object_detection(batch.predictions, batch.labels)

    def update_object_detection(self, predictions, labels):
        for image_detections, image_labels in zip(predictions, labels):
            detections_passed_threshold = [d for d in image_detections if d[4] > self.confidence_threshold]
            list_of_ious = (
                (label_index, detected_index, jaccard_iou(detected.cpu().detach().numpy(), label.cpu().detach().numpy()))
                for label_index, label in enumerate(image_labels)
                for detected_index, detected in enumerate(detections_passed_threshold)
            )
            for label_index, detected_index, iou in list_of_ious:
                if iou > self.iou_threshold:
                    label_class = int(image_labels[label_index][0].item())
                    detected_class = int(detections_passed_threshold[detected_index][5].item())
                    self.matrix[label_class][detected_class] += 1

    def run(self, context):
        for raw in context.dataset.loader:
            self.update(context, Batch(raw, context))
        return {k: dict(v) for k, v in self.matrix.items()}


# ---- the user's side: a tiny box regressor and its VisionData ----
class TinyDetector(nn.Module):
    def __init__(self, num_boxes=3, num_classes=2):
        super().__init__()
        self.num_boxes, self.num_classes = num_boxes, num_classes
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, num_boxes * (5 + num_classes))

    def forward(self, images):
        out = self.head(self.backbone(images)).view(images.shape[0], self.num_boxes, 5 + self.num_classes)
        boxes = torch.sigmoid(out[..., :4]) * 32
        conf = torch.sigmoid(out[..., 4:5])
        cls = out[..., 5:].argmax(-1, keepdim=True).float()
        return torch.cat([boxes, conf, cls], dim=-1)


class MyDetectionData:
    def __init__(self, loader):
        self.loader = loader

    def batch_to_labels(self, batch):
        return [labels for labels in batch[1]]

    def infer_on_batch(self, batch, model, device):
        return list(model(batch[0].to(device)))


class Context:
    def __init__(self, dataset, model, device):
        self.dataset, self.model, self.device = dataset, model, device


images = torch.rand(2, 3, 32, 32)
labels = torch.tensor([[[0.0, 4.0, 4.0, 20.0, 20.0]], [[1.0, 8.0, 8.0, 16.0, 16.0]]])
context = Context(MyDetectionData([(images, labels)]), TinyDetector(), torch.device("cpu"))
print(ConfusionMatrixReport(confidence_threshold=0.0).run(context))
