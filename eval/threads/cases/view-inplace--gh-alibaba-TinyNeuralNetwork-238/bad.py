# TinyNeuralNetwork quantization-aware training: the traced keyword-spotting CRNN calls the
# library's quantizable GRU with an initial hidden state that comes out of the graph (here a
# projection of a conditioning vector); the GRU splits the hidden state per layer with unbind
# and squeezes each piece.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GRULayer(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.GRUCell(input_size, hidden_size)

    def forward(self, x, hx):
        outs = []
        h = hx[0]
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
            outs.append(h)
        return torch.stack(outs), h


class GRU(nn.Module):
    """quantizable/gru.py: a multi-layer GRU made of per-layer modules."""

    def __init__(self, input_size, hidden_size, num_layers=1):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.layers = nn.ModuleList(
            [GRULayer(input_size if i == 0 else hidden_size, hidden_size) for i in range(num_layers)])

    def forward(self, x, hidden=None):
        max_batch_size = x.size(1)
        num_directions = 1
        if hidden is None:
            zeros = torch.zeros(num_directions, max_batch_size, self.hidden_size)
            hx = [zeros for _ in range(self.num_layers)]
        else:
            hx = hidden.reshape(self.num_layers, num_directions, max_batch_size, self.hidden_size).unbind(0)
            hx = [(hx[idx].squeeze_(0)) for idx in range(self.num_layers)]
        hx_list = []
        for idx, layer in enumerate(self.layers):
            x, h = layer(x, hx[idx].unsqueeze(0))
            hx_list.append(h)
        return x, torch.stack(hx_list)


class CRNNKWS(nn.Module):
    def __init__(self, n_mels=20, hidden=16, n_keywords=4):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, hidden, 3, padding=1)
        self.init_state = nn.Linear(8, 2 * hidden)
        self.kws_predictor_rnn = GRU(hidden, hidden, num_layers=2)
        self.fc = nn.Linear(hidden, n_keywords)

    def forward(self, mels, cond):
        feats = torch.relu(self.conv(mels)).permute(2, 0, 1)
        h0 = self.init_state(cond).reshape(2, -1, feats.shape[-1])
        out, _ = self.kws_predictor_rnn(feats, h0)
        return self.fc(out[-1])


model = CRNNKWS()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    mels, cond = torch.randn(4, 20, 12), torch.randn(4, 8)
    target = torch.randint(0, 4, (4,))
    loss = nn.functional.cross_entropy(model(mels, cond), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
