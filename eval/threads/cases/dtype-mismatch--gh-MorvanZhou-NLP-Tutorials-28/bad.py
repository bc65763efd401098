# NLP-Tutorials (pytorch/CBOW.py): training a CBOW word2vec model on a toy corpus. The
# (context, centre) index pairs come from numpy; on Windows, where the PR's author ran it,
# np.array of Python ints is int32, which is spelled out here so that Linux builds the same
# arrays. The corpus is shortened, the loop runs a few steps and the embedding plot is left out.
import itertools

import numpy as np
import torch
from torch import nn
from torch.nn.functional import cross_entropy

torch.manual_seed(0)
np.random.seed(0)

corpus = [
    "5 2 4 8 6 2 3 6 4",
    "4 8 5 6 9 5 5 6",
    "1 1 5 2 3 3 8",
    "a t g q e h 9 u f",
    "e q y u o i p s",
    "q o 9 p l k j o k k o p",
]


class Dataset:
    def __init__(self, x, y, v2i, i2v):
        self.x, self.y = x, y
        self.v2i, self.i2v = v2i, i2v
        self.vocab = v2i.keys()

    def sample(self, n):
        b_idx = np.random.randint(0, len(self.x), n)
        bx, by = self.x[b_idx], self.y[b_idx]
        return bx, by

    @property
    def num_word(self):
        return len(self.v2i)


def process_w2v_data(corpus, skip_window=2, method="skip_gram"):
    all_words = [sentence.split(" ") for sentence in corpus]
    all_words = np.array(list(itertools.chain(*all_words)))
    vocab, v_count = np.unique(all_words, return_counts=True)
    vocab = vocab[np.argsort(v_count)[::-1]]
    v2i = {v: i for i, v in enumerate(vocab)}
    i2v = {i: v for v, i in v2i.items()}

    pairs = []
    js = [i for i in range(-skip_window, skip_window + 1) if i != 0]
    for c in corpus:
        words = c.split(" ")
        w_idx = [v2i[w] for w in words]
        for i in range(skip_window, len(w_idx) - skip_window):
            context = []
            for j in js:
                context.append(w_idx[i + j])
            pairs.append(context + [w_idx[i]])
    pairs = np.array(pairs, dtype=np.int32)  # the Windows default integer
    x, y = pairs[:, :-1], pairs[:, -1]
    return Dataset(x, y, v2i, i2v)


class CBOW(nn.Module):
    def __init__(self, v_dim, emb_dim):
        super().__init__()
        self.v_dim = v_dim
        self.embeddings = nn.Embedding(v_dim, emb_dim)
        self.embeddings.weight.data.normal_(0, 0.1)
        self.hidden_out = nn.Linear(emb_dim, v_dim)
        self.opt = torch.optim.SGD(self.parameters(), momentum=0.9, lr=0.01)

    def forward(self, x, training=None, mask=None):
        o = self.embeddings(x)
        o = torch.mean(o, dim=1)
        return o

    def loss(self, x, y, training=None):
        embedded = self(x, training)
        pred = self.hidden_out(embedded)
        return cross_entropy(pred, y)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = self.loss(x, y, True)
        loss.backward()
        self.opt.step()
        return loss.detach().numpy()


def train(model, data):
    device = torch.device("cpu")
    model = model.cpu()
    for t in range(3):
        bx, by = data.sample(16)
        bx, by = torch.from_numpy(bx).to(device), torch.from_numpy(by).to(device)
        loss = model.step(bx, by)
        print(f"step: {t}  |  loss: {loss:.4f}")


d = process_w2v_data(corpus, skip_window=2, method="cbow")
m = CBOW(d.num_word, 2)
train(m, d)
