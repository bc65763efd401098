# A training library's ROC AUC metric: an epoch-level lambda metric gathers y_pred / y_true over
# the epoch and hands them to sklearn's roc_auc_score (a numpy stand-in here) at epoch end.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def roc_auc_score(y_true, y_score):
    """numpy stand-in for sklearn.metrics.roc_auc_score (binary)."""
    y_true, y_score = np.asarray(y_true), np.asarray(y_score)
    order = np.argsort(y_score)
    ranks = np.empty(len(y_score))
    ranks[order] = np.arange(1, len(y_score) + 1)
    n_pos = y_true.sum()
    n_neg = len(y_true) - n_pos
    return (ranks[y_true == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


class EpochLambda:
    def __init__(self, name, metric_function):
        self.name = name
        self._metric_function = metric_function
        self.reset()

    def reset(self):
        self._y_pred, self._y_true = [], []

    def process(self, y_pred, y_true):
        self._y_pred.append(y_pred)
        self._y_true.append(y_true)

    def process_final(self):
        return self._metric_function(torch.cat(self._y_pred), torch.cat(self._y_true))


class RocAucScore(EpochLambda):
    def __init__(self, one_hot_labels=True, one_hot_offset=0, one_hot_classes=2):
        if one_hot_labels:
            process = lambda y: np.eye(one_hot_classes)[y - one_hot_offset][:, 1]
        else:
            process = lambda y: y
        super().__init__('roc_auc_score', lambda y_pred, y_true: roc_auc_score(process(y_true.cpu().numpy()), y_pred.cpu().detach().numpy()))


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCELoss()
metric = RocAucScore(one_hot_labels=False)

x = torch.randn(96, 6)
y = (x[:, 0] + 0.3 * torch.randn(96) > 0).long()

for epoch in range(2):
    metric.reset()
    for i in range(0, 96, 32):
        xb, yb = x[i:i + 32], y[i:i + 32]
        y_pred = model(xb).squeeze(1)
        loss = criterion(y_pred, yb.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metric.process(y_pred, yb)
    print(epoch, 'loss', round(loss.item(), 4), metric.name, round(float(metric.process_final()), 4))
