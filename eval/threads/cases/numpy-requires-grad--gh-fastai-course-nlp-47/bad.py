# fastai course-nlp, notebook 5-nn-imdb: after fine-tuning the AWD-LSTM language model on the
# movie reviews, the notebook checks that two words missing from the fine-tuning vocabulary
# ("30-something", "linklater") were both mapped to xxunk, by comparing their rows of the
# encoder's embedding matrix with np.allclose.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

itos = ["xxunk", "xxpad", "the", "movie", "was", "good", "bad", "plot", "actor", "30-something", "linklater"]
in_lm_vocab = set(itos[:9])


class Vocab:
    def __init__(self, itos):
        self.itos = itos
        self.stoi = {w: (i if w in in_lm_vocab else 0) for i, w in enumerate(itos)}


class AWD_LSTM(nn.Module):
    def __init__(self, vocab_sz, emb_sz, n_hid):
        super().__init__()
        self.encoder = nn.Embedding(vocab_sz, emb_sz, padding_idx=1)
        self.rnn = nn.LSTM(emb_sz, n_hid, batch_first=True)

    def forward(self, x):
        out, _ = self.rnn(self.encoder(x))
        return out


class LinearDecoder(nn.Module):
    def __init__(self, n_hid, vocab_sz):
        super().__init__()
        self.decoder = nn.Linear(n_hid, vocab_sz)

    def forward(self, x):
        return self.decoder(x)


vocab = Vocab(itos)
model = nn.Sequential(AWD_LSTM(len(itos), 16, 16), LinearDecoder(16, len(itos)))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    xb = torch.randint(2, 9, (4, 7))
    yb = torch.roll(xb, -1, dims=1)
    out = model(xb)
    loss = F.cross_entropy(out.reshape(-1, len(itos)), yb.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()

enc = model[0].encoder
print(vocab.stoi["30-something"], vocab.stoi["linklater"])
print(np.allclose(enc.weight[vocab.stoi["30-something"], :], enc.weight[vocab.stoi["linklater"], :]))
