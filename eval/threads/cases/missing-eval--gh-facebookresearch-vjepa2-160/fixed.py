# V-JEPA 2 style video encoder: transformer blocks whose Attention module calls
# F.scaled_dot_product_attention when use_sdpa is set (an explicit softmax/attn_drop path
# otherwise), with dropout probabilities from the config. The encoder is configured with a
# nonzero proj_drop, put in eval mode and used to extract features for a frozen evaluation probe.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, in_features, hidden_features=None, drop=0.0):
        super().__init__()
        hidden_features = hidden_features or in_features
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        x = self.drop(self.act(self.fc1(x)))
        return self.drop(self.fc2(x))


class Attention(nn.Module):
    def __init__(self, dim, num_heads=8, qkv_bias=False, qk_scale=None, attn_drop=0.0, proj_drop=0.0, use_sdpa=True, is_causal=False):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = qk_scale or head_dim**-0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop_prob = proj_drop
        self.proj_drop = nn.Dropout(proj_drop)
        self.use_sdpa = use_sdpa
        self.is_causal = is_causal

    def forward(self, x, mask=None, attn_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # [B, num_heads, N, D]

        if attn_mask is not None or self.use_sdpa:
            x = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.proj_drop_prob if self.training else 0.0, is_causal=self.is_causal, attn_mask=attn_mask
            )
            attn = None
        else:
            attn = (q @ k.transpose(-2, -1)) * self.scale
            attn = attn.softmax(dim=-1)
            attn = self.attn_drop(attn)
            x = attn @ v

        x = x.transpose(1, 2).reshape(B, N, C)
        x = self.proj(x)
        x = self.proj_drop(x)
        return x


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4.0, drop=0.0, attn_drop=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads=num_heads, attn_drop=attn_drop, proj_drop=drop)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, x, mask=None, attn_mask=None):
        x = x + self.attn(self.norm1(x), mask=mask, attn_mask=attn_mask)
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(self, in_chans=3, patch_size=4, embed_dim=32, depth=2, num_heads=4, drop_rate=0.0):
        super().__init__()
        self.patch_embed = nn.Conv3d(in_chans, embed_dim, (2, patch_size, patch_size), stride=(2, patch_size, patch_size))
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, drop=drop_rate) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


encoder = VisionTransformer(drop_rate=0.1)
encoder.eval()
clips = torch.randn(2, 3, 4, 16, 16)
with torch.no_grad():
    features = encoder(clips)
print("features", tuple(features.shape), features.mean().item())

# -- corpus check --
with torch.no_grad():
    again = encoder(clips)
if not torch.equal(features, again):
    print("BUG: the encoder in eval mode gives different features for the same clip (SDPA dropout still applied)")
