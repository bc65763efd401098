# Imbalanced classification: per-class weights are given to nn.CrossEntropyLoss; the model and
# every batch are moved to the GPU (the meta device stands in for it here).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")

num_classes = 3
class_counts = torch.tensor([700., 250., 50.])
weight = class_counts.sum() / (num_classes * class_counts)

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, num_classes)).to(device)
criterion = nn.CrossEntropyLoss(weight=weight.to(device))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

batches = [(torch.randn(32, 20), torch.randint(0, num_classes, (32,))) for _ in range(3)]
for epoch in range(2):
    for x, t in batches:
        x, t = x.to(device), t.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), t)
        loss.backward()
        optimizer.step()
    print(epoch, loss.shape, loss.device)
