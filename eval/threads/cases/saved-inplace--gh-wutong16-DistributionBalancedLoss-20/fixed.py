# Distribution-Balanced Loss for multi-label classification: the ResampleLoss module rebalances
# the per-class weights and regularises the logits (a negative-class bias and scale) before a
# focal binary cross-entropy. The user's classifier head ends with a Sigmoid, and its output is
# passed to the loss as cls_score.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def binary_cross_entropy(pred, label, weight=None, reduction="mean"):
    loss = F.binary_cross_entropy_with_logits(pred, label.float(), weight=weight, reduction="none")
    return loss.mean() if reduction == "mean" else loss


class ResampleLoss(nn.Module):
    def __init__(self, class_freq, train_num, focal=dict(focal=True, balance_param=2.0, gamma=2),
                 map_param=dict(alpha=10.0, beta=0.2, gamma=0.1), logit_reg=dict(neg_scale=5.0, neg_bias=0.1)):
        super().__init__()
        self.cls_criterion = binary_cross_entropy
        self.focal, self.gamma, self.balance_param = focal["focal"], focal["gamma"], focal["balance_param"]
        self.map_alpha, self.map_beta, self.map_gamma = map_param["alpha"], map_param["beta"], map_param["gamma"]
        self.class_freq = class_freq
        self.freq_inv = torch.ones(class_freq.shape) / class_freq
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg["neg_scale"]
        self.neg_bias = -torch.log(train_num / class_freq - 1) * logit_reg["neg_bias"] / self.neg_scale

    def forward(self, cls_score, label):
        weight = self.rebalance_weight(label.float())
        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)
        logpt = -self.cls_criterion(cls_score.clone(), label, weight=None, reduction="none")
        pt = torch.exp(logpt)
        loss = self.cls_criterion(cls_score, label.float(), weight=weight, reduction="none")
        loss = ((1 - pt) ** self.gamma) * loss
        return (self.balance_param * loss).mean()

    def logit_reg_functions(self, labels, logits, weight=None):
        if "neg_bias" in self.logit_reg:
            logits = logits + self.neg_bias
        if "neg_scale" in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate.clamp_min(1e-6)
        return torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha


num_classes = 6
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, num_classes), nn.Sigmoid())
class_freq = torch.tensor([50.0, 30.0, 12.0, 8.0, 5.0, 2.0])
criterion = ResampleLoss(class_freq, train_num=torch.tensor(100.0))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    x = torch.randn(64, 16)
    labels = (torch.rand(64, num_classes) < 0.3).long()
    cls_score = model(x)
    loss = criterion(cls_score, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
