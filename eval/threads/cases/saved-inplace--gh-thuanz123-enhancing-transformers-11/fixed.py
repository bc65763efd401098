# ViT-VQGAN-style autoencoder (enhancing-transformers, stage 1): a ViT encoder, a vector
# quantizer with a straight-through estimator, and ViT decoders that add their positional
# embedding to the incoming tokens. The reporter decodes the same quantized tokens with two
# decoders (two reconstruction targets) and back-propagates both reconstruction losses.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_2d_sincos_pos_embed(embed_dim, grid_size):
    gh, gw = grid_size
    grid = np.stack(np.meshgrid(np.arange(gw, dtype=np.float32), np.arange(gh, dtype=np.float32)), axis=0)
    omega = 1. / 10000 ** (np.arange(embed_dim // 4, dtype=np.float32) / (embed_dim / 4.))
    out = [np.einsum('m,d->md', g.reshape(-1), omega) for g in grid]
    return np.concatenate([np.sin(out[0]), np.cos(out[0]), np.sin(out[1]), np.cos(out[1])], axis=1)


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.norm(x))


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, mlp_dim):
        super().__init__()
        self.layers = nn.ModuleList([])
        for idx in range(depth):
            self.layers.append(nn.ModuleList([
                PreNorm(dim, nn.MultiheadAttention(dim, heads, batch_first=True)),
                PreNorm(dim, nn.Sequential(nn.Linear(dim, mlp_dim), nn.Tanh(), nn.Linear(mlp_dim, dim)))]))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for attn, ff in self.layers:
            h = attn.norm(x)
            x = attn.fn(h, h, h, need_weights=False)[0] + x
            x = ff(x) + x
        return self.norm(x)


class ViTEncoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, heads, mlp_dim, channels=3):
        super().__init__()
        grid = (image_size // patch_size, image_size // patch_size)
        self.to_patch_embedding = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.en_pos_embedding = nn.Parameter(torch.from_numpy(get_2d_sincos_pos_embed(dim, grid)).float().unsqueeze(0),
                                             requires_grad=False)
        self.transformer = Transformer(dim, depth, heads, mlp_dim)

    def forward(self, img):
        x = self.to_patch_embedding(img).flatten(2).transpose(1, 2)
        x = x + self.en_pos_embedding
        x = self.transformer(x)
        return x


class ViTDecoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, heads, mlp_dim, channels=3):
        super().__init__()
        self.grid = (image_size // patch_size, image_size // patch_size)
        self.transformer = Transformer(dim, depth, heads, mlp_dim)
        self.de_pos_embedding = nn.Parameter(torch.from_numpy(get_2d_sincos_pos_embed(dim, self.grid)).float().unsqueeze(0),
                                             requires_grad=False)
        self.to_pixel = nn.ConvTranspose2d(dim, channels, kernel_size=patch_size, stride=patch_size)

    def forward(self, token):
        token = token + self.de_pos_embedding
        x = self.transformer(token)
        x = x.transpose(1, 2).reshape(x.size(0), -1, *self.grid)
        x = self.to_pixel(x)
        return x


class VectorQuantizer(nn.Module):
    def __init__(self, embed_dim, n_embed, beta=0.25):
        super().__init__()
        self.embedding = nn.Embedding(n_embed, embed_dim)
        self.beta = beta

    def forward(self, z):
        d = torch.cdist(z.reshape(-1, z.size(-1)), self.embedding.weight)
        z_qnorm = self.embedding(d.argmin(dim=1)).view_as(z)
        loss = self.beta * F.mse_loss(z_qnorm.detach(), z) + F.mse_loss(z_qnorm, z.detach())
        z_qnorm = z + (z_qnorm - z).detach()
        return z_qnorm, loss


cfg = dict(image_size=16, patch_size=4, dim=32, depth=1, heads=4, mlp_dim=64)
encoder, quantizer = ViTEncoder(**cfg), VectorQuantizer(embed_dim=32, n_embed=64)
decoder_a, decoder_b = ViTDecoder(**cfg), ViTDecoder(**cfg, channels=1)
params = [p for m in (encoder, quantizer, decoder_a, decoder_b) for p in m.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-4)

img = torch.rand(2, 3, 16, 16)
depth_map = img.mean(dim=1, keepdim=True)
for step in range(2):
    quant, emb_loss = quantizer(encoder(img))
    rec_a = decoder_a(quant)
    rec_b = decoder_b(quant)
    loss = F.l1_loss(rec_a, img) + F.l1_loss(rec_b, depth_map) + emb_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
