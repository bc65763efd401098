# MNIST demo of a network with a non-local block: after each training epoch the test set is
# evaluated with Variable(img, volatile=True), written for PyTorch 0.3.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class NONLocalBlock2D(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.inter_channels = max(in_channels // 2, 1)
        self.g = nn.Conv2d(in_channels, self.inter_channels, 1)
        self.theta = nn.Conv2d(in_channels, self.inter_channels, 1)
        self.phi = nn.Conv2d(in_channels, self.inter_channels, 1)
        self.W = nn.Conv2d(self.inter_channels, in_channels, 1)

    def forward(self, x):
        b, _, h, w = x.shape
        g_x = self.g(x).view(b, self.inter_channels, -1).permute(0, 2, 1)
        theta_x = self.theta(x).view(b, self.inter_channels, -1).permute(0, 2, 1)
        phi_x = self.phi(x).view(b, self.inter_channels, -1)
        f = F.softmax(torch.matmul(theta_x, phi_x), dim=-1)
        y = torch.matmul(f, g_x).permute(0, 2, 1).contiguous().view(b, self.inter_channels, h, w)
        return self.W(y) + x


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                   NONLocalBlock2D(8), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        return self.fc(self.convs(x).view(x.size(0), -1))


train_loader = DataLoader(TensorDataset(torch.randn(32, 1, 16, 16), torch.randint(0, 10, (32,))), batch_size=8)
test_loader = DataLoader(TensorDataset(torch.randn(16, 1, 16, 16), torch.randint(0, 10, (16,))), batch_size=8)
net = Network()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
loss_func = nn.CrossEntropyLoss()

for epoch_index in range(2):
    net.train()
    for img_batch, label_batch in train_loader:
        img_batch, label_batch = Variable(img_batch), Variable(label_batch)
        predict = net(img_batch)
        loss = loss_func(predict, label_batch)
        net.zero_grad()
        loss.backward()
        opt.step()

    net.eval()
    total_loss, total_acc = 0.0, 0.0
    with torch.no_grad():
        for test_img, test_label in test_loader:
            predict = net(test_img)
            total_loss += loss_func(predict, test_label).item()
            total_acc += (predict.argmax(1) == test_label).float().mean().item()
    print(f"epoch {epoch_index}: test loss {total_loss / len(test_loader):.4f} acc {total_acc / len(test_loader):.3f}")
