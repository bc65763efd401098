import torch
from torch import nn


def train_step(model, optimizer, criterion, batch_x, batch_labels, device):
    optimizer.zero_grad()
    outputs = model(batch_x.to(device))
    labels = torch.LongTensor(batch_labels).to(device)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    return loss


device = torch.device("meta")
model = nn.Linear(5, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_step(model, optimizer, nn.CrossEntropyLoss(), torch.randn(4, 5), [0, 2, 1, 1], device)
