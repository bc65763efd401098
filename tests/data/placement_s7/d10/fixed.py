import torch
from torch import nn


class FocalLoss(nn.Module):
    def __init__(self, alpha, gamma=2.0):
        super().__init__()
        self.register_buffer("alpha", torch.tensor(alpha))
        self.gamma = gamma

    def forward(self, logits, targets):
        logp = torch.log_softmax(logits, dim=1).gather(1, targets[:, None]).squeeze(1)
        at = self.alpha.gather(0, targets)
        return (-at * (1 - logp.exp()) ** self.gamma * logp).mean()


device = torch.device("meta")
model = nn.Linear(6, 3).to(device)
criterion = FocalLoss([0.2, 0.3, 0.5]).to(device)
x, y = torch.randn(5, 6).to(device), torch.randint(0, 3, (5,)).to(device)
print(criterion(model(x), y).shape)
