# Video Swin Transformer used as a feature extractor, as in the repository's README: build the 3D
# Swin backbone, load the Kinetics checkpoint's backbone weights, run a clip through it and pool
# the features. A small stand-in for SwinTransformer3D (3D patch embedding, blocks with dropout and
# stochastic depth, as configured by drop_path_rate) and a random clip stand in for the real ones;
# the checkpoint is written to a temporary folder first.
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0. or not self.training:
            return x
        keep_prob = 1 - self.drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
        return x.div(keep_prob) * random_tensor.floor_()


class SwinTransformerBlock3D(nn.Module):
    def __init__(self, dim, drop_path=0., drop=0.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.Linear(dim, dim)
        self.drop_path = DropPath(drop_path)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(drop), nn.Linear(4 * dim, dim), nn.Dropout(drop))

    def forward(self, x):
        x = x + self.drop_path(self.attn(self.norm1(x)))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class SwinTransformer3D(nn.Module):
    def __init__(self, embed_dim=32, depths=(2, 2), patch_size=(2, 4, 4), drop_rate=0.1, drop_path_rate=0.2,
                 patch_norm=True):
        super().__init__()
        self.patch_embed = nn.Conv3d(3, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.pos_drop = nn.Dropout(p=drop_rate)
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, sum(depths))]
        self.layers = nn.ModuleList(SwinTransformerBlock3D(embed_dim, drop_path=dpr[i], drop=drop_rate)
                                    for i in range(sum(depths)))
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.patch_embed(x)
        x = self.pos_drop(x.flatten(2).transpose(1, 2))
        for layer in self.layers:
            x = layer(x)
        return self.norm(x).transpose(1, 2)


# the Kinetics-400 checkpoint (backbone weights under 'backbone.')
checkpoint_path = os.path.join(tempfile.mkdtemp(), 'swin_tiny_patch244_window877_kinetics400_1k.pth')
torch.save({'state_dict': {'backbone.' + k: v for k, v in SwinTransformer3D().state_dict().items()}}, checkpoint_path)

model = SwinTransformer3D(embed_dim=32, depths=(2, 2), patch_size=(2, 4, 4), drop_path_rate=0.2, patch_norm=True)

# load the pretrained weights
checkpoint = torch.load(checkpoint_path)

new_state_dict = {}
for k, v in checkpoint['state_dict'].items():
    if 'backbone' in k:
        name = k[9:]
        new_state_dict[name] = v

model.load_state_dict(new_state_dict)

dummy_x = torch.rand(1, 3, 8, 32, 32)
with torch.no_grad():
    logits = model(dummy_x)
    feature = logits.mean(-1)
print(logits.shape, feature.shape)

# -- corpus check --
with torch.no_grad():
    again = model(dummy_x).mean(-1)
if not torch.equal(feature, again):
    print("BUG: the same clip gives different features on two runs")
