# An imbalanced classification setup: the loss function, with class weights from the label counts,
# is built once in a helper; the training loop moves the model, the inputs and the labels to the GPU
# (the meta device stands in for it).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")


def build_loss(train_labels, num_classes):
    counts = torch.bincount(train_labels, minlength=num_classes).float()
    weights = counts.sum() / (num_classes * counts)
    return torch.nn.CrossEntropyLoss(weight=weights)


num_classes = 5
features = torch.randn(200, 16)
labels = torch.multinomial(torch.tensor([0.5, 0.2, 0.15, 0.1, 0.05]), 200, replacement=True)
loader = DataLoader(TensorDataset(features, labels), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, num_classes)).to(device)
loss_fn = build_loss(labels, num_classes).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        model_output = model(x)
        loss = loss_fn(input=model_output, target=y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.shape, loss.device)
