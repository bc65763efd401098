# A shifted-window video transformer adds 3D sinusoidal positional encodings to its patch
# embeddings through the library's Summer wrapper. Trained with batches of 8; at test time a
# single clip (batch size 1) goes through on the GPU (the meta device stands in for it here).
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class PositionalEncoding3D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.org_channels = channels
        self.channels = int(math.ceil(channels / 6) * 2)

    def get_emb(self, pos):
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.channels, 2).float() / self.channels))
        sin_inp = torch.einsum("i,j->ij", pos, inv_freq)
        return torch.cat((sin_inp.sin(), sin_inp.cos()), dim=-1)

    def forward(self, tensor):
        batch_size, x, y, z, orig_ch = tensor.shape
        emb_x = self.get_emb(torch.arange(x).float())[:, None, None, :]
        emb_y = self.get_emb(torch.arange(y).float())[None, :, None, :]
        emb_z = self.get_emb(torch.arange(z).float())[None, None, :, :]
        emb = torch.zeros((x, y, z, self.channels * 3))
        emb[:, :, :, :self.channels] = emb_x
        emb[:, :, :, self.channels:2 * self.channels] = emb_y
        emb[:, :, :, 2 * self.channels:] = emb_z
        return emb[None, :, :, :, :orig_ch].repeat(batch_size, 1, 1, 1, 1)


class Summer(nn.Module):
    def __init__(self, penc):
        super().__init__()
        self.penc = penc

    def forward(self, tensor):
        penc = self.penc(tensor)
        return tensor + penc.to(tensor.device)


class VideoSwin(nn.Module):
    def __init__(self, dim=48, num_classes=5):
        super().__init__()
        self.patch_embed = nn.Conv3d(3, dim, kernel_size=(2, 4, 4), stride=(2, 4, 4))
        self.add_pos = Summer(PositionalEncoding3D(dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, clip):
        x = self.patch_embed(clip).permute(0, 2, 3, 4, 1)  # B, T, H, W, C
        x = self.norm(self.add_pos(x))
        return self.head(x.mean(dim=(1, 2, 3)))


model = VideoSwin().to(device)
model.eval()
with torch.no_grad():
    clip = torch.randn(1, 3, 8, 32, 32).to(device)
    logits = model(clip)
print("logits", tuple(logits.shape), logits.device)
