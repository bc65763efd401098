# Saving a generated image to disk and then scoring it: save_image (torchvision's helper of the
# time) goes through make_grid, which hands back a view for a single image, and scales it to
# 0..255 in place before writing.
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)


def make_grid(tensor, nrow=8, padding=2):
    if tensor.dim() == 4 and tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = (nmaps + xmaps - 1) // xmaps
    height, width = tensor.size(2) + padding, tensor.size(3) + padding
    grid = tensor.new_full((tensor.size(1), height * ymaps + padding, width * xmaps + padding), 0.0)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = tensor[k]
    return grid


def save_image(tensor, filename, nrow=8, padding=2):
    grid = make_grid(tensor, nrow=nrow, padding=padding)
    ndarr = grid.mul_(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to('cpu', torch.uint8).numpy()
    ndarr.tofile(filename)


generator = nn.Sequential(nn.Linear(16, 3 * 8 * 8), nn.Sigmoid())
target = torch.rand(1, 3, 8, 8)

with torch.no_grad():
    z = torch.randn(1, 16)
    sample = generator(z).view(1, 3, 8, 8)

with tempfile.TemporaryDirectory() as out_dir:
    save_image(sample, os.path.join(out_dir, "sample.raw"))
    mse = torch.mean((sample - target) ** 2).item()
    print("saved sample, mse to target %.4f" % mse)

# -- corpus check --
with torch.no_grad():
    expected = generator(z).view(1, 3, 8, 8)
if not torch.allclose(sample, expected):
    print("BUG: save_image scaled the caller's sample tensor in place")
