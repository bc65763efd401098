import torch
from torch import nn


class GRUTagger(nn.Module):
    def __init__(self, vocab, hidden, tags):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, tags)

    def init_hidden(self, batch):
        return torch.zeros(1, batch, self.hidden)

    def forward(self, tokens):
        h0 = self.init_hidden(tokens.size(0))
        out, _ = self.gru(self.embed(tokens), h0)
        return self.fc(out)


device = torch.device("meta")
model = GRUTagger(50, 8, 5).to(device)
print(model(torch.randint(0, 50, (3, 7), device=device)).shape)
