# Training a copy-augmented transformer for grammatical error correction (a fairseq fork):
# its multi-head attention projects q, k, v in one matmul, chunks them, and scales q in place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.dropout = dropout
        self.in_proj_weight = nn.Parameter(torch.empty(3 * embed_dim, embed_dim))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * embed_dim))
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def in_proj_qkv(self, query):
        return F.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)

    def forward(self, query, key_padding_mask=None):
        tgt_len, bsz, embed_dim = query.size()
        q, k, v = self.in_proj_qkv(query)
        q = q * self.scaling

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = F.dropout(attn_weights, p=self.dropout, training=self.training)
        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        return self.out_proj(attn), attn_weights


class EncoderLayer(nn.Module):
    def __init__(self, embed_dim=32, heads=4):
        super().__init__()
        self.self_attn = MultiheadAttention(embed_dim, heads, dropout=0.1)
        self.fc1 = nn.Linear(embed_dim, 64)
        self.fc2 = nn.Linear(64, embed_dim)
        self.norm1 = nn.LayerNorm(embed_dim)
        self.norm2 = nn.LayerNorm(embed_dim)

    def forward(self, x):
        residual = x
        x, _ = self.self_attn(x)
        x = self.norm1(residual + x)
        residual = x
        x = self.fc2(F.relu(self.fc1(x)))
        return self.norm2(residual + x)


vocab = 40
embed = nn.Embedding(vocab, 32)
layers = nn.ModuleList([EncoderLayer(), EncoderLayer()])
out = nn.Linear(32, vocab)
params = list(embed.parameters()) + list(layers.parameters()) + list(out.parameters())
optimizer = torch.optim.Adam(params, lr=5e-4)
src_tokens = torch.randint(0, vocab, (7, 3))   # time x batch
tgt_tokens = torch.randint(0, vocab, (7, 3))

for update in range(2):
    x = embed(src_tokens)
    for layer in layers:
        x = layer(x)
    loss = F.cross_entropy(out(x).view(-1, vocab), tgt_tokens.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(update, loss.item())
