# AWD-LSTM style language model training: the hidden state is carried from batch to batch and
# "repackaged" by a helper written for the old Variable API.
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
ntokens, emsize, nhid, bptt, batch_size = 50, 16, 32, 7, 4


def repackage_hidden(h):
    """Wraps hidden states in new Variables, to detach them from their history."""
    if type(h) == Variable:
        return Variable(h.data)
    else:
        return tuple(repackage_hidden(v) for v in h)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous()


def get_batch(source, i, seq_len):
    seq_len = min(seq_len, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(ntokens, emsize)
        self.rnn = nn.LSTM(emsize, nhid, 2, dropout=0.1)
        self.decoder = nn.Linear(nhid, ntokens)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output.view(-1, nhid)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return (Variable(weight.new(2, bsz, nhid).zero_()), Variable(weight.new(2, bsz, nhid).zero_()))


train_data = batchify(torch.randint(0, ntokens, (600,)), batch_size)
model = RNNModel()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=20)


def train():
    model.train()
    total_loss = 0
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i, bptt)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        total_loss += loss.item()
    return total_loss / (batch + 1)


for epoch in range(1, 3):
    print(f"epoch {epoch}: train loss {train():.3f}")
