# Character-level next-token model: token ids are one-hot encoded with F.one_hot and fed straight
# into an nn.RNN (batch_first), followed by a linear read-out over the vocabulary.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

vocab_size, hidden_size, seq_len, batch_size = 128, 64, 24, 8


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(vocab_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, x, h=None):
        y, h = self.rnn(x, h)
        return self.out(y), h


def encode(batch_ids):
    return F.one_hot(batch_ids, num_classes=vocab_size).float()


model = CharRNN()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
corpus = torch.randint(0, vocab_size, (batch_size, seq_len + 1))

for step in range(3):
    inputs, targets = corpus[:, :-1], corpus[:, 1:]
    logits, _ = model(encode(inputs))
    loss = F.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
