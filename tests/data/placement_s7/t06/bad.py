import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.criterion = nn.BCEWithLogitsLoss()
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(self, x, labels):
        self.opt.zero_grad()
        logits = self.model(x).squeeze(1)
        loss = self.criterion(logits, labels)
        loss.backward()
        self.opt.step()


trainer = Trainer(nn.Linear(3, 1))
trainer.step(torch.randn(4, 3), torch.tensor([1, 0, 0, 1]))
