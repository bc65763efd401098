# Seq2seq (GRU encoder, attention-free decoder) trained with teacher forcing; evaluate() wraps the
# validation batches with Variable(..., volatile=True) to skip autograd.
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
random.seed(0)
vocab_size, hidden, pad = 25, 32, 0


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(vocab_size, hidden)
        self.trg_embed = nn.Embedding(vocab_size, hidden)
        self.encoder = nn.GRU(hidden, hidden)
        self.decoder = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, src, trg, teacher_forcing_ratio=0.5):
        _, h = self.encoder(self.src_embed(src))
        h = h[0]
        outputs = [torch.zeros(trg.size(1), vocab_size)]
        token = trg[0]
        for t in range(1, trg.size(0)):
            h = self.decoder(self.trg_embed(token), h)
            logits = F.log_softmax(self.out(h), dim=-1)
            outputs.append(logits)
            token = trg[t] if random.random() < teacher_forcing_ratio else logits.argmax(1)
        return torch.stack(outputs)


def evaluate(model, val_iter):
    model.eval()
    total_loss = 0
    with torch.no_grad():
        for b, (src, trg) in enumerate(val_iter):
            output = model(src, trg, teacher_forcing_ratio=0.0)
            loss = F.nll_loss(output[1:].view(-1, vocab_size), trg[1:].contiguous().view(-1), ignore_index=pad)
            total_loss += loss.item()
    return total_loss / len(val_iter)


def train(model, optimizer, train_iter):
    model.train()
    for src, trg in train_iter:
        optimizer.zero_grad()
        output = model(src, trg)
        loss = F.nll_loss(output[1:].view(-1, vocab_size), trg[1:].contiguous().view(-1), ignore_index=pad)
        loss.backward()
        optimizer.step()


def batches(n):
    return [(torch.randint(1, vocab_size, (7, 4)), torch.randint(1, vocab_size, (6, 4))) for _ in range(n)]


seq2seq = Seq2Seq()
optimizer = torch.optim.Adam(seq2seq.parameters(), lr=1e-3)
train_iter, val_iter = batches(3), batches(2)
for e in range(1, 3):
    train(seq2seq, optimizer, train_iter)
    print(f"[Epoch:{e}] val_loss:{evaluate(seq2seq, val_iter):5.3f}")
