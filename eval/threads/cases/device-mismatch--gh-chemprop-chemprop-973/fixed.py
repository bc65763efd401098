# Chemprop v2 MPNN (a LightningModule) trained on a binary task with the MCC metric for validation:
# loss functions keep their per-task weights as a registered buffer, a metric is a loss function,
# and the model keeps its metrics next to its criterion. The Lightning trainer puts the model on
# the GPU (the meta device stands in for it here); a small feed-forward encoder stands in for the
# message passing and random fingerprints for the molecules.
import torch
from torch import Tensor, nn
from torch.nn import functional as F

torch.manual_seed(0)
device = torch.device("meta")


class LossFunction(nn.Module):
    def __init__(self, task_weights=1.0):
        super().__init__()
        task_weights = torch.as_tensor(task_weights, dtype=torch.float).view(1, -1)
        self.register_buffer("task_weights", task_weights)

    def forward(self, preds, targets, mask, weights, lt_mask, gt_mask):
        L = self._calc_unreduced_loss(preds, targets, mask, weights, lt_mask, gt_mask)
        L = L * weights.view(-1, 1) * self.task_weights.view(1, -1) * mask
        return L.sum() / mask.sum()


class BCELoss(LossFunction):
    def _calc_unreduced_loss(self, preds: Tensor, targets: Tensor, *args) -> Tensor:
        return F.binary_cross_entropy_with_logits(preds, targets, reduction="none")


class BinaryMCCLoss(LossFunction):
    def forward(self, preds: Tensor, targets: Tensor, mask: Tensor, weights: Tensor, *args):
        preds = preds.sigmoid()  # the predictor returns logits

        L = self._calc_unreduced_loss(preds, targets.long(), mask, weights, *args)
        L = L * self.task_weights.to(preds.device)

        return L.mean()

    def _calc_unreduced_loss(self, preds, targets, mask, weights, *args) -> Tensor:
        TP = (targets * preds * weights * mask).sum(0, keepdim=True)
        FP = ((1 - targets) * preds * weights * mask).sum(0, keepdim=True)
        TN = ((1 - targets) * (1 - preds) * weights * mask).sum(0, keepdim=True)
        FN = (targets * (1 - preds) * weights * mask).sum(0, keepdim=True)

        MCC = (TP * TN - FP * FN) / ((TP + FP) * (TP + FN) * (TN + FP) * (TN + FN) + 1e-8).sqrt()

        return 1 - MCC


class Metric(LossFunction):
    minimize: bool = True


class BinaryMCCMetric(BinaryMCCLoss, Metric):
    alias = "mcc"


class BinaryClassificationFFN(nn.Module):
    def __init__(self, n_tasks, input_dim, hidden_dim=64, criterion=None):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_tasks))
        self.criterion = criterion or BCELoss(task_weights=torch.ones(n_tasks))

    def forward(self, Z):
        return self.ffn(Z)


class MPNN(nn.Module):
    def __init__(self, message_passing, predictor, metrics=None):
        super().__init__()
        self.message_passing = message_passing
        self.predictor = predictor
        self.metrics = [*metrics, self.criterion]

    @property
    def criterion(self):
        return self.predictor.criterion

    def forward(self, X):
        return self.predictor(self.message_passing(X))

    def training_step(self, batch):
        X, targets, weights = batch
        mask = targets.isfinite()
        targets = targets.nan_to_num(nan=0.0)
        preds = self(X)
        return self.criterion(preds, targets, mask, weights, None, None)

    def validation_step(self, batch):
        losses = self._evaluate_batch(batch)
        return {f"val/{m.alias}": l for m, l in zip(self.metrics, losses)}

    def _evaluate_batch(self, batch):
        X, targets, weights = batch
        mask = targets.isfinite()
        targets = targets.nan_to_num(nan=0.0)
        preds = self(X)
        weights = torch.ones_like(weights)
        return [metric(preds, targets, mask, weights, None, None) for metric in self.metrics[:-1]]


def make_batch(n=32, d=16, t=3):
    return torch.randn(n, d), torch.randint(0, 2, (n, t)).float(), torch.ones(n, 1)


n_tasks = 3
model = MPNN(nn.Sequential(nn.Linear(16, 32), nn.ReLU()), BinaryClassificationFFN(n_tasks, 32),
             metrics=[BinaryMCCMetric()])
model.to(device)  # done by the Lightning trainer
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for _ in range(3):
        batch = tuple(t.to(device) for t in make_batch())
        loss = model.training_step(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        logs = model.validation_step(tuple(t.to(device) for t in make_batch()))
    print(epoch, {k: (tuple(v.shape), v.device.type) for k, v in logs.items()})
