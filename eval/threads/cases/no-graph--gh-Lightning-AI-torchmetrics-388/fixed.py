# Training a binary classifier with a ranking metric as the loss: the metric object (a stand-in
# for torchmetrics.AveragePrecision, computed the same way from the ranking of the scores) is
# called on the sigmoid outputs and targets, and its value is back-propagated.
import torch
import torch.nn as nn

torch.manual_seed(0)


class AveragePrecision:
    """Average precision of binary scores: precision at each positive, ranked by score."""

    def __call__(self, preds, target):
        order = torch.argsort(preds, descending=True)
        hits = target[order].float()
        precision_at_k = hits.cumsum(0) / torch.arange(1, len(hits) + 1)
        return (precision_at_k * hits).sum() / hits.sum().clamp(min=1)


model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
metric = AveragePrecision()
x = torch.randn(64, 10)
y = (x[:, 0] > 0).long()

for epoch in range(3):
    optimizer.zero_grad()
    probs = torch.sigmoid(model(x)).squeeze(1)
    loss = nn.functional.binary_cross_entropy(probs, y.float())
    loss.backward()
    optimizer.step()
    print("epoch", epoch, round(loss.item(), 4))
