# Ordinal regression with a CONDOR head: labels are expanded to cumulative binary levels and the
# conditional negative log-likelihood is computed by a small loss helper; training runs on the GPU
# (the meta device stands in for it here).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")
NUM_CLASSES = 5


def label_to_levels(labels, num_classes):
    return (torch.arange(num_classes - 1, device=labels.device) < labels.unsqueeze(1)).float()


def condor_negloglikeloss(logits, labels, reduction='mean'):
    """logits: (N, K-1) conditional logits; labels: (N, K-1) cumulative levels."""
    piLab = torch.cat([torch.ones((labels.shape[0], 1), device=labels.device), labels[:, :-1]], dim=1)
    logsig = F.logsigmoid(logits)
    loss_tensor = -torch.sum(piLab * (labels * logsig + (1 - labels) * (logsig - logits)), dim=1)
    if reduction == 'mean':
        return torch.mean(loss_tensor)
    if reduction == 'sum':
        return torch.sum(loss_tensor)
    return loss_tensor


class CondorMLP(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU())
        self.fc = nn.Linear(32, num_classes - 1)

    def forward(self, x):
        return self.fc(self.features(x))


model = CondorMLP(10, NUM_CLASSES).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(64, 10)
y = torch.randint(0, NUM_CLASSES, (64,))

for epoch in range(2):
    for i in range(0, 64, 16):
        features, class_labels = X[i:i + 16].to(device), y[i:i + 16].to(device)
        levels = label_to_levels(class_labels, NUM_CLASSES)
        logits = model(features)
        loss = condor_negloglikeloss(logits, levels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.shape, loss.device)
