# Attention-is-all-you-need translation model: train_model() takes (seq, batch) token batches,
# transposes them and builds padding / no-peak masks with create_masks(); the model and the
# no-peak mask live on the GPU (the meta device stands in for it).
import math
import types

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
opt = types.SimpleNamespace(device=torch.device("meta"), src_pad=0, trg_pad=0, d_model=32, heads=4)


def nopeak_mask(size, opt):
    np_mask = np.triu(np.ones((1, size, size)), k=1).astype('uint8')
    np_mask = torch.from_numpy(np_mask) == 0
    return np_mask.to(opt.device)


def create_masks(src, trg, opt):
    src_mask = (src != opt.src_pad).unsqueeze(-2)
    trg_mask = (trg != opt.trg_pad).unsqueeze(-2)
    size = trg.size(1)
    np_mask = nopeak_mask(size, opt)
    trg_mask = trg_mask & np_mask
    return src_mask, trg_mask


def attention(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores.masked_fill(mask.unsqueeze(1) == 0, -1e9)
    return F.softmax(scores, dim=-1) @ v


class MultiHeadAttention(nn.Module):
    def __init__(self, heads, d_model):
        super().__init__()
        self.h, self.d_k = heads, d_model // heads
        self.q_linear, self.k_linear = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.v_linear, self.out = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, q, k, v, mask):
        bs = q.size(0)
        split = lambda x: x.view(bs, -1, self.h, self.d_k).transpose(1, 2)
        out = attention(split(self.q_linear(q)), split(self.k_linear(k)), split(self.v_linear(v)), mask)
        return self.out(out.transpose(1, 2).contiguous().view(bs, -1, self.h * self.d_k))


class Transformer(nn.Module):
    def __init__(self, src_vocab, trg_vocab, d_model, heads):
        super().__init__()
        self.src_embed, self.trg_embed = nn.Embedding(src_vocab, d_model), nn.Embedding(trg_vocab, d_model)
        self.enc_attn = MultiHeadAttention(heads, d_model)
        self.dec_attn, self.cross_attn = MultiHeadAttention(heads, d_model), MultiHeadAttention(heads, d_model)
        self.out = nn.Linear(d_model, trg_vocab)

    def forward(self, src, trg, src_mask, trg_mask):
        e = self.src_embed(src)
        e = e + self.enc_attn(e, e, e, src_mask)
        d = self.trg_embed(trg)
        d = d + self.dec_attn(d, d, d, trg_mask)
        d = d + self.cross_attn(d, e, e, src_mask)
        return self.out(d)


def train_model(model, batches, opt, optimizer):
    model.train()
    for i, batch in enumerate(batches):
        src = batch.src.transpose(0, 1).to(opt.device)
        trg = batch.trg.transpose(0, 1).to(opt.device)
        trg_input = trg[:, :-1]
        src_mask, trg_mask = create_masks(src, trg_input, opt)
        preds = model(src, trg_input, src_mask, trg_mask)
        ys = trg[:, 1:].contiguous().view(-1)
        optimizer.zero_grad()
        loss = F.cross_entropy(preds.view(-1, preds.size(-1)), ys, ignore_index=opt.trg_pad)
        loss.backward()
        optimizer.step()
        print(i, loss.shape, loss.device)


model = Transformer(50, 60, opt.d_model, opt.heads).to(opt.device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
batches = [types.SimpleNamespace(src=torch.randint(1, 50, (9, 4)), trg=torch.randint(1, 60, (11, 4)))
           for _ in range(2)]
train_model(model, batches, opt, optimizer)
