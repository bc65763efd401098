# texar-style RNN encoder: a dynamic_rnn helper unrolls an LSTM cell and masks the outputs past
# each sequence's length. The encoder is called without sequence_length, on the GPU (the meta
# device stands in for it here).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


def sequence_mask(lengths, max_len, dtype=None):
    row_vector = torch.arange(max_len, device=lengths.device).view(1, -1)
    mask = row_vector < lengths.view(-1, 1)
    return mask if dtype is None else mask.to(dtype)


def mask_sequences(sequence, sequence_length):
    mask = sequence_mask(sequence_length, sequence.size(1), dtype=sequence.dtype)
    return sequence * mask.unsqueeze(-1)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None):
    batch_size, max_time = inputs.shape[:2]
    if sequence_length is None:
        sequence_length = torch.tensor([max_time] * batch_size, dtype=torch.int32, device=inputs.device)
    state = initial_state
    outputs = []
    for t in range(max_time):
        state = cell(inputs[:, t], state)
        outputs.append(state[0])
    outputs = mask_sequences(torch.stack(outputs, dim=1), sequence_length)
    return outputs, state


class UnidirectionalRNNEncoder(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)

    def forward(self, inputs, sequence_length=None):
        return dynamic_rnn(self.cell, inputs, sequence_length)


class Classifier(nn.Module):
    def __init__(self, vocab_size=50, emb_dim=16, hidden_size=32, num_classes=3):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, emb_dim)
        self.encoder = UnidirectionalRNNEncoder(emb_dim, hidden_size)
        self.out = nn.Linear(hidden_size, num_classes)

    def forward(self, text_ids):
        outputs, (h, c) = self.encoder(self.embedder(text_ids))
        return self.out(outputs.mean(dim=1))


model = Classifier().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
text_ids = torch.randint(0, 50, (4, 10)).to(device)
labels = torch.randint(0, 3, (4,)).to(device)
for step in range(2):
    loss = nn.functional.cross_entropy(model(text_ids), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.shape, loss.device)
