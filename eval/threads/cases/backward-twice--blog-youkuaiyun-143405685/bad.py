# LSTM sequence model trained batch after batch: h0/c0 are created once per epoch and then
# replaced by the state the LSTM returns, which is fed into the next batch.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
EPOCH, batch_size, seq_len = 2, 4, 6
embedding_dim, hidden_dim, num_layers = 5, 16, 1


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return self.fc(out), (hn, cn)


inputs = torch.randn(16, seq_len, embedding_dim)
targets = torch.randn(16, seq_len, embedding_dim)
data_loader = DataLoader(TensorDataset(inputs, targets), batch_size=batch_size, drop_last=True)
batch_count = len(data_loader)

lstm = LSTMModel()
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)

for epoch in range(EPOCH):
    batch_num = 0
    h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    for batch in data_loader:
        optimizer.zero_grad()
        output, (h0, c0) = lstm(batch[0], h0, c0)
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1].reshape(-1, embedding_dim))
        loss.backward()
        optimizer.step()
        batch_num += 1
        if batch_num % min(10, batch_count // 2) == 0:
            print(f"epoch {epoch} : batch {batch_num} : {loss.item():.4f}")
