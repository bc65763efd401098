# Fine-tuning a small GPT-2-style language model, then reading the hidden state of a given input
# token to use as its vector; the same token is looked up several times.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab_size, n_embd, n_positions = 100, 32, 16


class TinyGPT2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(n_positions, n_embd)
        self.drop = nn.Dropout(0.1)
        self.h = nn.TransformerEncoderLayer(n_embd, nhead=4, dim_feedforward=64, dropout=0.1, batch_first=True)
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, input_ids):
        T = input_ids.size(1)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        x = self.drop(self.wte(input_ids) + self.wpe(torch.arange(T)))
        hidden_states = self.ln_f(self.h(x, src_mask=causal))
        return self.lm_head(hidden_states), hidden_states


def train(model, data, optimizer, epochs=2):
    model.train()
    for _ in range(epochs):
        for input_ids in data:
            logits, _ = model(input_ids)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab_size), input_ids[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


model = TinyGPT2()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = [torch.randint(0, vocab_size, (4, n_positions)) for _ in range(3)]
print("train loss", train(model, data, optimizer))

input_ids = torch.tensor([[11, 42, 7, 42, 3]])
with torch.no_grad():
    _, hidden_1 = model(input_ids)
    _, hidden_2 = model(input_ids)
token_vector = hidden_1[0, 1]
print("vector of token 42:", token_vector[:4])

# -- corpus check --
reference = copy.deepcopy(model).eval()
with torch.no_grad():
    _, hidden_ref = reference(input_ids)
if not torch.allclose(hidden_1, hidden_2) or not torch.allclose(hidden_1, hidden_ref):
    print("BUG: the hidden state of the same input changes between calls (dropout active at inference)")
