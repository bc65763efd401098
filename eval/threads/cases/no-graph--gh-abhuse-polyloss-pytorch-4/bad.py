# PolyLoss (Poly-1 cross-entropy and Poly-1 focal loss) as nn.Module losses, exercised the way the
# README example does: random logits and labels, the loss, then backward before the optimizer step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Poly1CrossEntropyLoss(nn.Module):
    def __init__(self, num_classes: int, epsilon: float = 1.0, reduction: str = "none"):
        super().__init__()
        self.num_classes = num_classes
        self.epsilon = epsilon
        self.reduction = reduction

    def forward(self, logits, labels):
        labels_onehot = F.one_hot(labels, num_classes=self.num_classes).to(device=logits.device, dtype=logits.dtype)
        pt = torch.sum(labels_onehot * F.softmax(logits, dim=-1), dim=-1)
        CE = F.cross_entropy(input=logits, target=labels, reduction="none")
        poly1 = CE + self.epsilon * (1 - pt)
        if self.reduction == "mean":
            poly1 = poly1.mean()
        elif self.reduction == "sum":
            poly1 = poly1.sum()
        return poly1


class Poly1FocalLoss(nn.Module):
    def __init__(self, num_classes: int, epsilon: float = 1.0, alpha: float = 0.25, gamma: float = 2.0,
                 reduction: str = "none"):
        super().__init__()
        self.num_classes, self.epsilon, self.alpha, self.gamma, self.reduction = num_classes, epsilon, alpha, gamma, reduction

    def forward(self, logits, labels):
        p = torch.sigmoid(logits)
        if labels.ndim == 1:
            labels = F.one_hot(labels, num_classes=self.num_classes)
        else:
            labels = F.one_hot(labels.unsqueeze(1), self.num_classes).transpose(1, -1).squeeze_(-1)
        labels = labels.to(device=logits.device, dtype=logits.dtype)
        ce_loss = F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
        pt = labels * p + (1 - labels) * (1 - p)
        FL = ce_loss * ((1 - pt) ** self.gamma)
        if self.alpha >= 0:
            FL = (self.alpha * labels + (1 - self.alpha) * (1 - labels)) * FL
        poly1 = FL + self.epsilon * torch.pow(1 - pt, self.gamma + 1)
        if self.reduction == "mean":
            poly1 = poly1.mean()
        elif self.reduction == "sum":
            poly1 = poly1.sum()
        return poly1


# Poly1 Cross-Entropy Loss, classification task
batch_size = 10
num_classes = 5
logits = torch.rand([batch_size, num_classes])
labels = torch.randint(0, num_classes, [batch_size])
loss = Poly1CrossEntropyLoss(num_classes=num_classes, reduction='mean')
out = loss(logits, labels)
out.backward()
print("poly1 cross-entropy", round(out.item(), 4), logits.grad.shape)

# Poly1 Focal Loss, segmentation task
H, W = 4, 7
logits = torch.rand([batch_size, num_classes, H, W])
labels = torch.randint(0, num_classes, [batch_size, H, W])
loss = Poly1FocalLoss(num_classes=num_classes, reduction='mean')
out = loss(logits, labels)
out.backward()
print("poly1 focal", round(out.item(), 4), logits.grad.shape)
