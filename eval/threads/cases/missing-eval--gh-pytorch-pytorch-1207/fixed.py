# Regression of a sine curve with a small MLP that uses dropout (p=0.5) between its hidden
# layers, trained with SGD; the fitted curve is then predicted on a dense grid to be plotted.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, n_hidden=64):
        super().__init__()
        self.hidden1 = nn.Linear(1, n_hidden)
        self.hidden2 = nn.Linear(n_hidden, n_hidden)
        self.dropout = nn.Dropout(0.5)
        self.predict = nn.Linear(n_hidden, 1)

    def forward(self, x):
        x = self.dropout(F.relu(self.hidden1(x)))
        x = self.dropout(F.relu(self.hidden2(x)))
        return self.predict(x)


x = torch.linspace(-3.14, 3.14, 200).unsqueeze(1)
y = torch.sin(x)
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
loss_func = nn.MSELoss()

for t in range(200):
    prediction = net(x)
    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

net.train(mode=False)
x_plot = torch.linspace(-3.14, 3.14, 500).unsqueeze(1)
y_plot = net(x_plot).detach()
print("fit error on the plotting grid: %.4f" % F.mse_loss(y_plot, torch.sin(x_plot)).item())

# -- corpus check --
reference = copy.deepcopy(net).eval()
with torch.no_grad():
    expected = reference(x_plot)
if not torch.allclose(y_plot, expected, atol=1e-5):
    print("BUG: the curve was predicted with dropout still active")
