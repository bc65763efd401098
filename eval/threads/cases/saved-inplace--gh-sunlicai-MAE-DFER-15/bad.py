# Fine-tuning a video transformer for facial expression recognition (MAE-DFER style): the
# local-global block lets one messenger token per local region attend to the others and writes
# the updated messenger tokens back into the token tensor.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if not self.drop_prob or not self.training:
            return x
        keep = torch.rand(x.shape[0], *([1] * (x.ndim - 1))) >= self.drop_prob
        return x * keep / (1 - self.drop_prob)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, act_layer=nn.GELU, drop=0.):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = act_layer()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class GeneralAttention(nn.Module):
    def __init__(self, dim, num_heads=4, attn_drop=0., proj_drop=0.):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, dim * 2, bias=False)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x, context=None):
        B, T1, C = x.shape
        q = self.q(x).reshape(B, T1, self.num_heads, -1).transpose(1, 2)
        kv = self.kv(x if context is None else context)
        _, T2, _ = kv.shape
        kv = kv.reshape(B, T2, 2, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        attn = self.attn_drop(attn)
        x = (attn @ v).transpose(1, 2).reshape(B, T1, -1)
        return self.proj_drop(self.proj(x))


class LGBlock(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=4., drop=0., drop_path=0., norm_layer=nn.LayerNorm):
        super().__init__()
        self.first_attn_norm0 = norm_layer(dim)
        self.first_attn = GeneralAttention(dim, num_heads, proj_drop=drop)
        self.second_attn_norm0 = norm_layer(dim)
        self.second_attn = GeneralAttention(dim, num_heads, proj_drop=drop)
        self.third_attn_norm0 = norm_layer(dim)
        self.third_attn_norm1 = norm_layer(dim)
        self.third_attn = GeneralAttention(dim, num_heads, proj_drop=drop)
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=drop)

    def forward(self, x, b):
        """x: (B*N, S, C), one messenger token followed by the region's tokens."""
        n = x.shape[0] // b
        # local (intra-region) self-attention
        x = x + self.drop_path(self.first_attn(self.first_attn_norm0(x)))

        # global (inter-region) attention on the messenger tokens
        messenger_tokens = x[:, 0].reshape(b, n, -1)   # (b*n, c) -> (b, n, c)
        messenger_tokens = messenger_tokens + self.drop_path(
            self.second_attn(self.second_attn_norm0(messenger_tokens))
        )
        x[:, 0] = messenger_tokens.reshape(b * n, -1)

        # local-global interaction: the local tokens attend to the messengers
        local_tokens = x[:, 1:].reshape(b, -1, x.shape[-1])   # (b*n, s, c) -> (b, n*s, c)
        local_tokens = local_tokens + self.drop_path(
            self.third_attn(self.third_attn_norm0(local_tokens),
                            context=self.third_attn_norm1(messenger_tokens))
        )
        x[:, 1:] = local_tokens.reshape(b * n, -1, x.shape[-1])

        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, num_classes=7, embed_dim=32, depth=2, num_heads=4, patch_size=4, all_frames=4,
                 img_size=16, tubelet_size=2, lg_region_size=(1, 2, 2), drop_path_rate=0.1):
        super().__init__()
        self.patch_embed = nn.Conv3d(3, embed_dim, kernel_size=(tubelet_size, patch_size, patch_size),
                                     stride=(tubelet_size, patch_size, patch_size))
        self.input_token_size = (all_frames // tubelet_size, img_size // patch_size, img_size // patch_size)
        self.lg_region_size = lg_region_size
        self.lg_num_region_size = [i // j for i, j in zip(self.input_token_size, lg_region_size)]
        num_regions = self.lg_num_region_size[0] * self.lg_num_region_size[1] * self.lg_num_region_size[2]
        self.lg_region_tokens = nn.Parameter(torch.randn(num_regions, embed_dim) * 0.02)
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.ModuleList([LGBlock(embed_dim, num_heads, drop_path=dpr[i]) for i in range(depth)])
        self.fc_norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward_features(self, x):
        x = self.patch_embed(x)                     # B, C, T, H, W
        b = x.size(0)
        nt, nh, nw = self.lg_num_region_size
        t, h, w = self.lg_region_size
        c = x.size(1)
        x = x.view(b, c, nt, t, nh, h, nw, w).permute(0, 2, 4, 6, 3, 5, 7, 1).reshape(b * nt * nh * nw, t * h * w, c)
        region_tokens = self.lg_region_tokens.unsqueeze(0).expand(b, -1, -1).reshape(-1, 1, c)
        x = torch.cat([region_tokens, x], dim=1)    # (b*n, 1 + t*h*w, c)
        for blk in self.blocks:
            x = blk(x, b)
        x = x[:, 1:].reshape(b, -1, x.shape[-1])
        return self.fc_norm(x.mean(1))

    def forward(self, x):
        return self.head(self.forward_features(x))


model = VisionTransformer()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
videos = torch.randn(2, 3, 4, 16, 16)   # B, C, T, H, W
labels = torch.tensor([1, 4])

model.train()
for step in range(2):
    loss = F.cross_entropy(model(videos), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
