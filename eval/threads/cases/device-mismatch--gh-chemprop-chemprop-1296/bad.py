# Chemprop 2.2 losses and metrics (chemprop/nn/metrics.py) are torchmetrics Metrics: update() fills
# in defaults for the optional mask, per-sample weights and bound masks, and accumulates the
# weighted loss in registered states. A binary classification FFN holds its BCELoss as
# `criterion` and is moved to the accelerator (the meta device stands in for it); the script
# evaluates the criterion on predictions and targets alone. A small Metric base class stands in
# for torchmetrics.Metric.
import torch
from torch import Tensor, nn
from torch.nn import functional as F

torch.manual_seed(0)
device = torch.device("meta")  # "cuda" / "mps"


class Metric(nn.Module):
    def add_state(self, name, default, dist_reduce_fx=None):
        self.register_buffer(name, default.clone())

    def reset(self):
        for name, buf in self.named_buffers():
            if name in ("total_loss", "num_samples"):
                setattr(self, name, torch.zeros_like(buf))

    def forward(self, *args, **kwargs):
        self.reset()
        self.update(*args, **kwargs)
        return self.compute()


class ChempropMetric(Metric):
    is_differentiable = True
    higher_is_better = False
    full_state_update = False

    def __init__(self, task_weights=1.0):
        super().__init__()
        task_weights = torch.as_tensor(task_weights, dtype=torch.float).view(1, -1)
        self.register_buffer("task_weights", task_weights)

        self.add_state("total_loss", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("num_samples", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds: Tensor, targets: Tensor, mask: Tensor | None = None, weights: Tensor | None = None,
               lt_mask: Tensor | None = None, gt_mask: Tensor | None = None) -> None:
        mask = torch.ones_like(targets, dtype=torch.bool) if mask is None else mask
        weights = torch.ones(targets.shape[0], dtype=torch.float) if weights is None else weights
        lt_mask = torch.zeros_like(targets, dtype=torch.bool) if lt_mask is None else lt_mask
        gt_mask = torch.zeros_like(targets, dtype=torch.bool) if gt_mask is None else gt_mask

        L = self._calc_unreduced_loss(preds, targets, mask, weights, lt_mask, gt_mask)
        L = L * weights.view(-1, 1) * self.task_weights * mask

        self.total_loss += L.sum()
        self.num_samples += mask.sum()

    def compute(self):
        return self.total_loss / self.num_samples


class BCELoss(ChempropMetric):
    def _calc_unreduced_loss(self, preds: Tensor, targets: Tensor, *args) -> Tensor:
        return F.binary_cross_entropy_with_logits(preds, targets, reduction="none")


class BinaryClassificationFFN(nn.Module):
    def __init__(self, n_tasks=1, input_dim=300, hidden_dim=300, criterion=None):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, n_tasks))
        self.criterion = criterion or BCELoss(task_weights=torch.ones(n_tasks))

    def forward(self, Z):
        return self.ffn(Z)


task_dim = 3
predictor = BinaryClassificationFFN(n_tasks=task_dim, input_dim=16, hidden_dim=32,
                                    criterion=BCELoss(task_weights=torch.ones(task_dim)))
predictor.to(device=device)
optimizer = torch.optim.Adam(predictor.parameters(), lr=1e-3)
for step in range(3):
    Z = torch.randn(10, 16, device=device)
    targets = torch.randint(0, 2, (10, task_dim), device=device).float()
    loss = predictor.criterion(predictor(Z), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", tuple(loss.shape), loss.device)
