# Transformer sentiment classifier from a course notebook: the position embedding table is
# filled with sinusoids by a helper that writes into slices of the nn.Embedding weight.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def create_sinusoidal_embeddings(nb_p, dim, E):
    theta = np.array([
        [p / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
        for p in range(nb_p)
    ])
    E[:, 0::2] = torch.FloatTensor(np.sin(theta[:, 0::2]))
    E[:, 1::2] = torch.FloatTensor(np.cos(theta[:, 1::2]))
    E.detach_()
    E.requires_grad = False


class Embeddings(nn.Module):
    def __init__(self, d_model, vocab_size, max_position_embeddings, p):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, d_model, padding_idx=1)
        self.position_embeddings = nn.Embedding(max_position_embeddings, d_model)
        create_sinusoidal_embeddings(
            nb_p=max_position_embeddings,
            dim=d_model,
            E=self.position_embeddings.weight,
        )
        self.LayerNorm = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class TransformerClassifier(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, conv_hidden_dim, input_vocab_size,
                 num_answers, maximum_position_encoding=64):
        super().__init__()
        self.embedding = Embeddings(d_model, input_vocab_size, maximum_position_encoding, p=0.1)
        layer = nn.TransformerEncoderLayer(d_model, num_heads, conv_hidden_dim, batch_first=True)
        self.encoder = nn.ModuleList([layer for _ in range(num_layers)])
        self.dense = nn.Linear(d_model, num_answers)

    def forward(self, x):
        x = self.embedding(x)
        for enc in self.encoder:
            x = enc(x)
        x, _ = torch.max(x, dim=1)
        return self.dense(x)


model = TransformerClassifier(num_layers=1, d_model=32, num_heads=2,
                              conv_hidden_dim=128, input_vocab_size=500, num_answers=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
x = torch.randint(0, 500, (8, 20))
y = torch.randint(0, 2, (8,))

for epoch in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
