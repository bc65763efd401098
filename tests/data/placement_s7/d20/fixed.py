import torch
from torch import nn


class LSTMClassifier(nn.Module):
    def __init__(self, batch_size, hidden=16):
        super().__init__()
        self.hidden_size = hidden
        self.lstm = nn.LSTM(4, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 2)
        self.hidden = self.init_hidden(batch_size)

    def init_hidden(self, batch_size):
        return (torch.zeros(1, batch_size, self.hidden_size), torch.zeros(1, batch_size, self.hidden_size))

    def forward(self, x):
        out, self.hidden = self.lstm(x, tuple(h.to(x.device) for h in self.hidden))
        return self.fc(out[:, -1])


device = torch.device("meta")
model = LSTMClassifier(3).to(device)
print(model(torch.randn(3, 7, 4, device=device)).shape)
