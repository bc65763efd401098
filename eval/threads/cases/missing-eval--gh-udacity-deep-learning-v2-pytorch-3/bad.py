# MNIST MLP with validation (the course's solution notebook): three linear layers with dropout 0.2,
# train for a few epochs, after every epoch compute the validation loss and keep the model with the
# lowest one, then test it. Random images stand in for MNIST.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        hidden_1 = 64
        hidden_2 = 64
        self.fc1 = nn.Linear(28 * 28, hidden_1)
        self.fc2 = nn.Linear(hidden_1, hidden_2)
        self.fc3 = nn.Linear(hidden_2, 10)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x):
        x = x.view(-1, 28 * 28)
        x = self.dropout(F.relu(self.fc1(x)))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.fc3(x)


images, labels = torch.rand(96, 1, 28, 28), torch.randint(0, 10, (96,))
train_loader = DataLoader(TensorDataset(images[:64], labels[:64]), batch_size=16, shuffle=True)
valid_loader = DataLoader(TensorDataset(images[64:], labels[64:]), batch_size=16)

model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def validation_loss(model):
    valid_loss = 0.0
    for data, target in valid_loader:
        output = model(data)
        loss = criterion(output, target)
        valid_loss += loss.item() * data.size(0)
    return valid_loss / len(valid_loader.sampler)


valid_loss_min = float("inf")
for epoch in range(1, 3):
    train_loss = 0.0
    for data, target in train_loader:
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * data.size(0)
    valid_loss = validation_loss(model)
    print(epoch, round(train_loss / len(train_loader.sampler), 4), round(valid_loss, 4))
    if valid_loss <= valid_loss_min:
        valid_loss_min = valid_loss

# -- corpus check --
first, second = validation_loss(model), validation_loss(model)
if first != second:
    print("BUG: the validation loss of the same model on the same data changes between two evaluations")
