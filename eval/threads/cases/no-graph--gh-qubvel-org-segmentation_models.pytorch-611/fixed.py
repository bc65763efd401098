# segmentation_models.pytorch utils-style training: functional f_score/iou with an optional
# threshold, a DiceLoss to which the contributor added a `threshold` parameter (passed on to
# f_score like the metrics do), an IoU metric, and a TrainEpoch-like runner. A tiny conv net and
# random masks stand in for the Unet and the data set.
import torch
import torch.nn as nn

torch.manual_seed(0)


def _threshold(x, threshold=None):
    if threshold is not None:
        return (x > threshold).type(x.dtype)
    return x


def f_score(pr, gt, beta=1, eps=1e-7, threshold=None):
    pr = _threshold(pr, threshold=threshold)
    tp = torch.sum(gt * pr)
    fp = torch.sum(pr) - tp
    fn = torch.sum(gt) - tp
    return ((1 + beta ** 2) * tp + eps) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + eps)


def iou(pr, gt, eps=1e-7, threshold=None):
    pr = _threshold(pr, threshold=threshold)
    intersection = torch.sum(gt * pr)
    union = torch.sum(gt) + torch.sum(pr) - intersection + eps
    return (intersection + eps) / union


class DiceLoss(nn.Module):
    __name__ = "dice_loss"

    def __init__(self, eps=1.0, beta=1.0, activation=None, threshold=None):
        super().__init__()
        self.eps = eps
        self.beta = beta
        self.activation = nn.Sigmoid() if activation == "sigmoid" else nn.Identity()
        self.threshold = threshold

    def forward(self, y_pr, y_gt):
        y_pr = self.activation(y_pr)
        return 1 - f_score(y_pr, y_gt, beta=self.beta, eps=self.eps, threshold=self.threshold)


class IoU(nn.Module):
    __name__ = "iou_score"

    def __init__(self, threshold=0.5):
        super().__init__()
        self.threshold = threshold

    def forward(self, y_pr, y_gt):
        return iou(torch.sigmoid(y_pr), y_gt, threshold=self.threshold)


class TrainEpoch:
    def __init__(self, model, loss, metrics, optimizer):
        self.model, self.loss, self.metrics, self.optimizer = model, loss, metrics, optimizer

    def batch_update(self, x, y):
        self.optimizer.zero_grad()
        prediction = self.model.forward(x)
        loss = self.loss(prediction, y)
        loss.backward()
        self.optimizer.step()
        return loss, prediction

    def run(self, dataloader):
        self.model.train()
        logs = {}
        for x, y in dataloader:
            loss, y_pred = self.batch_update(x, y)
            logs[self.loss.__name__] = loss.item()
            for metric_fn in self.metrics:
                logs[metric_fn.__name__] = metric_fn(y_pred, y).item()
        return logs


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
loss = DiceLoss(activation="sigmoid")
metrics = [IoU(threshold=0.5)]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
train_epoch = TrainEpoch(model, loss=loss, metrics=metrics, optimizer=optimizer)

train_loader = [(torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()) for _ in range(3)]
for epoch in range(2):
    print(epoch, train_epoch.run(train_loader))
