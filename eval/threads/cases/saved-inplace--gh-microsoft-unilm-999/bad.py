# Fine-tuning an audio transformer backbone (BEATs-style) on a small classification task:
# the encoder adds its convolutional positional embedding onto its own input with +=.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        return x[:, :, :-self.remove] if self.remove > 0 else x


class TransformerEncoder(nn.Module):
    def __init__(self, embedding_dim=32, conv_pos=8, conv_pos_groups=4, layers=2, dropout=0.1):
        super().__init__()
        self.dropout = dropout
        self.embedding_dim = embedding_dim
        self.pos_conv = nn.Conv1d(embedding_dim, embedding_dim, kernel_size=conv_pos,
                                  padding=conv_pos // 2, groups=conv_pos_groups)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(embedding_dim, 4, 64, dropout=dropout) for _ in range(layers)
        ])
        self.layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, padding_mask=None):
        return self.extract_features(x, padding_mask)

    def extract_features(self, x, padding_mask=None):
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv

        x = self.layer_norm(x)
        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        for layer in self.layers:
            x = layer(x)
        # T x B x C -> B x T x C
        return x.transpose(0, 1)


class BEATs(nn.Module):
    def __init__(self, embed_dim=32):
        super().__init__()
        self.patch_embedding = nn.Conv2d(1, 16, kernel_size=4, stride=4, bias=False)
        self.post_extract_proj = nn.Linear(16, embed_dim)
        self.encoder = TransformerEncoder(embed_dim)

    def extract_features(self, fbank):
        features = self.patch_embedding(fbank.unsqueeze(1))
        features = features.flatten(2).transpose(1, 2)
        x = self.post_extract_proj(features)
        return self.encoder(x)


backbone = BEATs()
head = nn.Linear(32, 5)
optimizer = torch.optim.AdamW(list(backbone.parameters()) + list(head.parameters()), lr=1e-4)
fbank = torch.randn(3, 32, 16)        # batch x frames x mel bins
labels = torch.tensor([0, 3, 1])

backbone.train()
for step in range(2):
    feats = backbone.extract_features(fbank)
    logits = head(feats.mean(dim=1))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
