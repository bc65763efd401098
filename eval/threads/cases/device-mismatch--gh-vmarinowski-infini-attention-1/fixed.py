# Infini-attention layer (compressive memory + local causal attention per segment) used in a small
# language model: the layer takes the device as an argument and builds its parameters and the
# causal mask there, then starts every forward with an empty memory. The model is trained on the
# GPU (the meta device stands in for it); random token ids stand in for the text, and RoPE is left
# out.
import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import Optional

torch.manual_seed(0)
device = torch.device("meta")


class InfiniAttention(nn.Module):
    def __init__(self, seq_len: int, emb_dim: int, d_head: int, n_head: int, n_segments: int,
                 is_causal: Optional[bool] = True, update: Optional[str] = 'linear',
                 device: Optional[str] = 'cpu'):
        super().__init__()
        assert seq_len % n_segments == 0, 'seq_len must be divisible to n_segments'
        self.seq_len = seq_len
        self.n_segments = n_segments
        self.n_head = n_head
        self.emb_dim = emb_dim
        self.d_head = d_head
        self.is_causal = is_causal
        self.update = update
        self.device = device

        self.beta = nn.Parameter(torch.ones((1,), device=device))  # a learnable scalar from the paper
        self.q = nn.Linear(emb_dim, emb_dim, device=device)
        self.k = nn.Linear(emb_dim, emb_dim, device=device)
        self.v = nn.Linear(emb_dim, emb_dim, device=device)
        self.o = nn.Linear(emb_dim, emb_dim, device=device)
        self.elu = nn.ELU()
        self.register_buffer('causal', torch.tril(torch.ones(seq_len // n_segments, seq_len // n_segments, device=device)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch_size, _, _ = x.size()

        # no initialization is given for these in the paper: start from zero
        memory = torch.zeros((self.n_head, self.d_head, self.d_head)).to(self.device)
        z = torch.zeros((self.n_head, self.d_head, 1)).to(self.device)

        query = self.q(x)
        key = self.k(x)
        value = self.v(x)

        query = query.view(batch_size, self.n_head, self.n_segments, self.seq_len // self.n_segments, self.d_head)
        key = key.view(batch_size, self.n_head, self.n_segments, self.seq_len // self.n_segments, self.d_head)
        value = value.view(batch_size, self.n_head, self.n_segments, self.seq_len // self.n_segments, self.d_head)

        output = []
        for idx in range(self.n_segments):
            sigma_q = self.elu(query[:, :, idx, :, :]) + 1.0
            sigma_k = self.elu(key[:, :, idx, :, :]) + 1.0
            A_mem = (sigma_q @ memory) / ((sigma_q @ z) + 1e-6)  # 1e-6 keeps it from dividing by 0

            A_dot = query[:, :, idx, :, :] @ key[:, :, idx, :, :].transpose(-2, -1)
            if self.is_causal:
                A_dot.masked_fill_(self.causal == 0, float('-inf'))
            A_dot = F.softmax(A_dot / torch.sqrt(torch.tensor(self.d_head)), dim=-1)
            A_dot = A_dot @ value[:, :, idx, :, :]

            attention = (F.sigmoid(self.beta) * A_mem) + ((1 - F.sigmoid(self.beta)) * A_dot)

            if self.update == 'linear':
                memory = memory + (sigma_k.transpose(-2, -1) @ value[:, :, idx, :, :])
            else:
                delta = (sigma_k @ memory) / ((sigma_k @ z) + 1e-6)
                memory = memory + (sigma_k.transpose(-2, -1) @ (value[:, :, idx, :, :] - delta))
            z = z + sigma_k.sum(dim=-2, keepdim=True)

            output.append(attention)

        attention = torch.concat(output, dim=2).view(batch_size, self.seq_len, self.emb_dim)
        return self.o(attention)


class LLM(nn.Module):
    def __init__(self, vocab_size, seq_len, emb_dim, n_head, n_segments, device):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, device=device)
        self.attn = InfiniAttention(seq_len, emb_dim, emb_dim // n_head, n_head, n_segments, device=device)
        self.norm = nn.LayerNorm(emb_dim, device=device)
        self.lm_head = nn.Linear(emb_dim, vocab_size, device=device)

    def forward(self, ids):
        x = self.embedding(ids)
        x = x + self.attn(x)
        return self.lm_head(self.norm(x))


vocab_size, seq_len = 50, 16
model = LLM(vocab_size, seq_len, emb_dim=32, n_head=4, n_segments=4, device=device)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(3):
    ids = torch.randint(0, vocab_size, (2, seq_len + 1)).to(device)
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, vocab_size), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, tuple(logits.shape), loss.device.type)
