# Word-level language model (the word_language_model example): parameters are updated by
# hand after clipping, adding -lr * grad to each parameter in place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers=1):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(output).view(-1, self.decoder.out_features), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


ntokens, bptt, batch_size, lr, clip = 50, 5, 4, 20.0, 0.25
train_data = torch.randint(0, ntokens, (41, batch_size))
model = RNNModel(ntokens, 16, 16)
criterion = nn.CrossEntropyLoss()


def train():
    model.train()
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        seq_len = min(bptt, len(train_data) - 1 - i)
        data = train_data[i:i + seq_len]
        targets = train_data[i + 1:i + 1 + seq_len].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)
        print(batch, loss.item())


train()
