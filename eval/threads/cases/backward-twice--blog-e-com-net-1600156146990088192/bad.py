# LSTM classifier that keeps its initial hidden/cell state on self and writes the LSTM's returned
# state back into self.h0/self.c0 inside forward(), so the next batch starts from it.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
batch_size, seq_len, n_feat, hidden = 8, 5, 3, 16


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.flat = nn.Flatten(start_dim=2)
        self.lstm = nn.LSTM(n_feat * 2, hidden, batch_first=True)
        self.h0 = torch.zeros(1, batch_size, hidden)
        self.c0 = torch.zeros(1, batch_size, hidden)
        self.model1 = nn.Sequential(nn.Flatten(), nn.Linear(seq_len * hidden, 2))

    def forward(self, inp):
        to_in = self.flat(inp)
        f, _ = self.lstm(to_in, (self.h0, self.c0))
        (self.h0, self.c0) = _
        return self.model1(f)


x = torch.randn(32, seq_len, n_feat, 2)
y = torch.randint(0, 2, (32,))
loader = DataLoader(TensorDataset(x, y), batch_size=batch_size, drop_last=True)
net = Net()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

for epoch in range(2):
    for inp, target in loader:
        optimizer.zero_grad()
        loss = loss_fn(net(inp), target)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
