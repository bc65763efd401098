# OpenNMT-style Transformer decoder layer: the subsequent-position mask for up to 1000 steps is
# built once in __init__ and combined with the target padding mask in forward(); the whole model is
# moved to the GPU with .to(device) (the meta device stands in for it).
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")
PAD = 0


def masked_attention(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    return F.softmax(scores.masked_fill(mask, -1e18), dim=-1) @ v


class TransformerDecoderLayer(nn.Module):
    def __init__(self, size, dropout):
        super().__init__()
        self.self_q, self.self_k, self.self_v = nn.Linear(size, size), nn.Linear(size, size), nn.Linear(size, size)
        self.ctx_q = nn.Linear(size, size)
        self.feed_forward = nn.Sequential(nn.Linear(size, 4 * size), nn.ReLU(), nn.Linear(4 * size, size))
        self.layer_norm_1, self.layer_norm_2 = nn.LayerNorm(size), nn.LayerNorm(size)
        self.dropout = nn.Dropout(dropout)
        self.mask = self._get_attn_subsequent_mask(1000)

    def forward(self, input, context, src_pad_mask, tgt_pad_mask):
        T = tgt_pad_mask.size(1)
        dec_mask = torch.gt(tgt_pad_mask + self.mask[:, :T, :T], 0)
        x = self.layer_norm_1(input)
        query = masked_attention(self.self_q(x), self.self_k(x), self.self_v(x), dec_mask)
        query = self.dropout(query) + input
        q = self.layer_norm_2(query)
        mid = masked_attention(self.ctx_q(q), context, context, src_pad_mask) + query
        return self.feed_forward(mid) + mid

    def _get_attn_subsequent_mask(self, size):
        attn_shape = (1, size, size)
        subsequent_mask = np.triu(np.ones(attn_shape), k=1).astype('uint8')
        return torch.from_numpy(subsequent_mask)


class TransformerModel(nn.Module):
    def __init__(self, vocab, size):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, size, padding_idx=PAD), nn.Embedding(vocab, size, padding_idx=PAD)
        self.layer = TransformerDecoderLayer(size, 0.1)
        self.generator = nn.Linear(size, vocab)

    def forward(self, src, tgt):
        context = self.src_emb(src)
        src_pad_mask = src.eq(PAD).unsqueeze(1).expand(src.size(0), tgt.size(1), src.size(1))
        tgt_pad_mask = tgt.eq(PAD).unsqueeze(1).expand(tgt.size(0), tgt.size(1), tgt.size(1)).to(torch.uint8)
        out = self.layer(self.tgt_emb(tgt), context, src_pad_mask, tgt_pad_mask)
        return self.generator(out)


model = TransformerModel(40, 32).to(device)
optim = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    src = torch.randint(1, 40, (4, 7)).to(device)
    tgt = torch.randint(1, 40, (4, 9)).to(device)
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 40), tgt[:, 1:].reshape(-1), ignore_index=PAD)
    optim.zero_grad()
    loss.backward()
    optim.step()
    print(step, loss.shape, loss.device)
