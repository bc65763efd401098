# The "native PyTorch" part of a DDP/Accelerate blog post: a small MNIST ConvNet is trained on
# the GPU and then evaluated on the test set in the same script (the meta device stands in for
# the GPU; synthetic images stand in for MNIST).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")


class BasicNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 12 * 12, 32)
        self.fc2 = nn.Linear(32, 10)
        self.act = F.relu

    def forward(self, x):
        x = self.act(self.conv1(x))
        x = self.act(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.dropout2(self.act(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


def mnist_like(n):
    return TensorDataset(torch.randn(n, 1, 28, 28), torch.randint(0, 10, (n,)))


train_loader = DataLoader(mnist_like(64), shuffle=True, batch_size=16)
test_loader = DataLoader(mnist_like(32), shuffle=False, batch_size=16)

model = BasicNet().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

model.train()
for batch_idx, (data, target) in enumerate(train_loader):
    data, target = data.to(device), target.to(device)
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

model.eval()
correct = 0
with torch.no_grad():
    for data, target in test_loader:
        data, target = data.to(device), target.to(device)
        output = model(data)
        pred = output.argmax(dim=1, keepdim=True)
        correct = correct + pred.eq(target.view_as(pred)).sum()
print("correct", correct.shape, correct.device)
