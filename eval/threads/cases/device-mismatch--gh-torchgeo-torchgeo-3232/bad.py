# torchgeo's CROMA model (a SAR/optical ViT with 2D-ALiBi attention biases) fine-tuned with a
# linear head for scene classification on the GPU (the meta device stands in for it). The
# encoder is cut down in width and depth (16 heads are kept, as the attention bias needs a
# power of two), einops' rearrange is written with reshape/permute, and random tensors stand
# in for the Sentinel-1/2 patches.
import itertools
import math
from collections.abc import Sequence

import torch
import torch.nn as nn
from torch import Tensor, einsum

torch.manual_seed(0)
device = torch.device("meta")


def get_2dalibi(num_heads: int, num_patches: int) -> Tensor:
    points = list(itertools.product(range(int(math.sqrt(num_patches))), range(int(math.sqrt(num_patches)))))

    def get_slopes(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    slopes = torch.Tensor(get_slopes(num_heads)).unsqueeze(1)
    idxs = []
    for p1 in points:
        for p2 in points:
            dist = math.sqrt((p1[0] - p2[0]) ** 2 + (p1[1] - p2[1]) ** 2)
            idxs.append(dist * slopes * -1)
    all_bias = torch.cat(idxs, dim=1)
    return all_bias.view(1, num_heads, num_patches, num_patches)


class FFN(nn.Module):
    def __init__(self, dim: int, mult: int = 4, dropout: float = 0.0) -> None:
        super().__init__()
        inner_dim = int(dim * mult)
        self.net = nn.Sequential(nn.Linear(dim, inner_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(inner_dim, dim))
        self.input_norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.net(self.input_norm(x))


class Attention(nn.Module):
    def __init__(self, dim: int, num_heads: int = 8, dropout: float = 0.0) -> None:
        super().__init__()
        self.num_heads = num_heads
        dim_head = int(dim / num_heads)
        self.scale = dim_head**-0.5
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.input_norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, relative_position_bias: Tensor) -> Tensor:
        x = self.input_norm(x)
        b, n, _ = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: t.reshape(b, n, self.num_heads, -1).permute(0, 2, 1, 3), (q, k, v))
        attention_scores = einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
        attention_scores = attention_scores + relative_position_bias
        attn = attention_scores.softmax(dim=-1)
        attn = self.dropout(attn)
        x = einsum('b h i j, b h j d -> b h i d', attn, v)
        x = x.permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(x)


class BaseTransformer(nn.Module):
    def __init__(self, dim: int, depth: int, num_heads: int = 8, final_norm: bool = True) -> None:
        super().__init__()
        self.final_norm = final_norm
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([Attention(dim=dim, num_heads=num_heads), FFN(dim=dim)]))
        if self.final_norm:
            self.norm_out = nn.LayerNorm(dim)

    def forward(self, x: Tensor, relative_position_bias: Tensor) -> Tensor:
        for self_attn, ffn in self.layers:
            x = self_attn(x, relative_position_bias) + x
            x = ffn(x) + x
        return self.norm_out(x) if self.final_norm else x


class ViT(nn.Module):
    def __init__(self, dim: int, depth: int, in_channels: int) -> None:
        super().__init__()
        self.depth = depth
        self.in_channels = in_channels
        self.dim = dim
        self.num_heads = 16  # always 16, for base and large models
        self.patch_size = 8  # always 8, for base and large models
        pixels_per_patch = int(self.patch_size * self.patch_size * in_channels)
        self.linear_input = nn.Linear(pixels_per_patch, self.dim)
        self.transformer = BaseTransformer(dim=self.dim, depth=self.depth, num_heads=self.num_heads)

    def forward(self, imgs: Tensor, attn_bias: Tensor) -> Tensor:
        b, c, H, W = imgs.shape
        p = self.patch_size
        imgs = imgs.reshape(b, c, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * p * p)
        imgs = self.linear_input(imgs)
        return self.transformer(imgs, relative_position_bias=attn_bias)


class CROMA(nn.Module):
    valid_modalities = ('sar', 'optical')

    def __init__(self, modalities: Sequence[str] = ['sar', 'optical'], encoder_dim: int = 768,
                 encoder_depth: int = 12, num_heads: int = 16, patch_size: int = 8, image_size: int = 120) -> None:
        super().__init__()
        self.modalities = modalities
        self.encoder_dim = encoder_dim
        self.num_heads = num_heads
        self.num_patches = int((image_size / 8) ** 2)
        self.s2_channels = 12  # fixed at 12 multispectral optical channels

        self.attn_bias = get_2dalibi(num_heads=self.num_heads, num_patches=self.num_patches)

        def initialize_encoder(encoder_dim: int, encoder_depth: int, in_channels: int):
            encoder = ViT(dim=encoder_dim, depth=encoder_depth, in_channels=in_channels)
            gap_ffn = nn.Sequential(nn.LayerNorm(encoder_dim), nn.Linear(encoder_dim, int(4 * encoder_dim)),
                                    nn.GELU(), nn.Linear(int(4 * encoder_dim), encoder_dim))
            return encoder, gap_ffn

        if 'optical' in modalities:
            self.s2_encoder, self.s2_GAP_FFN = initialize_encoder(encoder_dim, encoder_depth, self.s2_channels)

    def forward(self, x_sar: Tensor | None = None, x_optical: Tensor | None = None) -> dict[str, Tensor]:
        return_dict: dict[str, Tensor] = {}
        if 'optical' in self.modalities and x_optical is not None:
            optical_encodings = self.s2_encoder(imgs=x_optical, attn_bias=self.attn_bias)
            optical_GAP = self.s2_GAP_FFN(optical_encodings.mean(dim=1))
            return_dict['optical_encodings'] = optical_encodings
            return_dict['optical_GAP'] = optical_GAP
        return return_dict


backbone = CROMA(modalities=['optical'], encoder_dim=32, encoder_depth=2, image_size=32)
head = nn.Linear(32, 10)
backbone.to(device)
head.to(device)
optimizer = torch.optim.AdamW(list(backbone.parameters()) + list(head.parameters()), lr=1e-4)
for step in range(2):
    x_optical = torch.randn(4, 12, 32, 32).to(device)
    y = torch.randint(0, 10, (4,)).to(device)
    logits = head(backbone(x_optical=x_optical)['optical_GAP'])
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, tuple(logits.shape), loss.device.type)
