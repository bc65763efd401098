# PyPOTS 0.0.6: imputing missing values of a multivariate time series with BRITS on the GPU
# (the meta device stands in for it). The data are given to fit() as a tensor already on the
# GPU; DatasetForBRITS computes the time-gap (delta) matrices once, up front. The model is cut
# down to one direction of RITS (temporal decay, LSTM cell, history regression) trained on the
# masked reconstruction error; random series with missing entries stand in for PhysioNet.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = torch.device("meta")


def parse_delta(missing_mask):
    """ Generate time-gap (delta) matrix from missing masks. """
    n_samples, n_steps, n_features = missing_mask.shape
    delta_collector = []
    for m_mask in missing_mask:
        delta = []
        for step in range(n_steps):
            if step == 0:
                delta.append(torch.zeros(1, n_features))
            else:
                delta.append(torch.ones(1, n_features) + (1 - m_mask[step]) * delta[-1])
        delta = torch.concat(delta, dim=0)
        delta_collector.append(delta.unsqueeze(0))
    delta = torch.concat(delta_collector, dim=0)
    return delta


class DatasetForBRITS(Dataset):
    def __init__(self, X, y=None):
        super().__init__()
        self.X = X
        self.y = y
        forward_missing_mask = (~torch.isnan(X)).type(torch.float32)
        forward_X = torch.nan_to_num(X)
        forward_delta = parse_delta(forward_missing_mask)
        self.data = {'forward': {'X': forward_X, 'missing_mask': forward_missing_mask, 'delta': forward_delta}}

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return [
            torch.tensor(idx),
            self.data['forward']['X'][idx].to(torch.float32),
            self.data['forward']['missing_mask'][idx].to(torch.float32),
            self.data['forward']['delta'][idx].to(torch.float32),
        ]


class TemporalDecay(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)

    def forward(self, delta):
        return torch.exp(-torch.relu(self.linear(delta)))


class RITS(nn.Module):
    def __init__(self, n_steps, n_features, rnn_hidden_size, device=None):
        super().__init__()
        self.n_steps = n_steps
        self.rnn_hidden_size = rnn_hidden_size
        self.device = device
        self.rnn_cell = nn.LSTMCell(n_features * 2, rnn_hidden_size)
        self.temp_decay_h = TemporalDecay(n_features, rnn_hidden_size)
        self.hist_reg = nn.Linear(rnn_hidden_size, n_features)

    def forward(self, values, masks, deltas):
        hidden_states = torch.zeros((values.size()[0], self.rnn_hidden_size), device=self.device)
        cell_states = torch.zeros((values.size()[0], self.rnn_hidden_size), device=self.device)
        reconstruction_loss = 0.0
        for t in range(self.n_steps):
            x, m, d = values[:, t, :], masks[:, t, :], deltas[:, t, :]
            hidden_states = hidden_states * self.temp_decay_h(d)
            x_h = self.hist_reg(hidden_states)
            reconstruction_loss = reconstruction_loss + (torch.abs(x - x_h) * m).sum() / (m.sum() + 1e-9)
            x_c = m * x + (1 - m) * x_h
            hidden_states, cell_states = self.rnn_cell(torch.cat([x_c, m], dim=1), (hidden_states, cell_states))
        return reconstruction_loss / self.n_steps


class BRITS:
    def __init__(self, n_steps, n_features, rnn_hidden_size, learning_rate=1e-3, epochs=2, batch_size=8, device=None):
        self.n_steps, self.n_features, self.batch_size, self.epochs = n_steps, n_features, batch_size, epochs
        self.device = device
        self.model = RITS(n_steps, n_features, rnn_hidden_size, device).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=learning_rate)

    def fit(self, train_X):
        training_set = DatasetForBRITS(train_X)
        training_loader = DataLoader(training_set, batch_size=self.batch_size, shuffle=True)
        for epoch in range(self.epochs):
            for idx, data in enumerate(training_loader):
                indices, X, missing_mask, deltas = [x.to(self.device) for x in data]
                self.optimizer.zero_grad()
                loss = self.model(X, missing_mask, deltas)
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.device.type)
        return self


X = torch.randn(16, 6, 4)
X[torch.rand(16, 6, 4) < 0.2] = float("nan")
X = X.to(device)
brits = BRITS(n_steps=6, n_features=4, rnn_hidden_size=16, epochs=2, device=device)
brits.fit(X)
