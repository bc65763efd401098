import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, loader, device):
        self.device = device
        self.model = model.to(device)
        self.loader = loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def train_epoch(self):
        for inputs, labels in self.loader:
            self.optimizer.zero_grad()
            outputs = self.model(inputs.to(self.device))
            loss = self.criterion(outputs, labels.to(self.device))
            loss.backward()
            self.optimizer.step()


data = TensorDataset(torch.randn(32, 10), torch.randint(0, 3, (32,)))
trainer = Trainer(nn.Linear(10, 3), DataLoader(data, batch_size=8), torch.device("meta"))
trainer.train_epoch()
