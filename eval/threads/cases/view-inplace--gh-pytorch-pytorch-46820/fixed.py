# Unsupervised optical flow: the predicted flow is split into its u and v components, which
# are rescaled in place to normalized grid units before warping the second frame.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(6, 16, 3, padding=1), nn.LeakyReLU(0.1),
            nn.Conv2d(16, 2, 3, padding=1),
        )

    def forward(self, im1, im2):
        return self.body(torch.cat([im1, im2], dim=1))


def warp(img, flow):
    b, _, h, w = img.shape
    u_scale = 2.0 / (w - 1)
    v_scale = 2.0 / (h - 1)
    u, v = flow.chunk(2, dim=1)
    u = u_scale * u
    v = v_scale * v
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
    grid_x = xs.expand(b, h, w) + u.squeeze(1)
    grid_y = ys.expand(b, h, w) + v.squeeze(1)
    grid = torch.stack([grid_x, grid_y], dim=-1)
    return F.grid_sample(img, grid, align_corners=True)


net = FlowNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
im1 = torch.rand(2, 3, 16, 16)
im2 = torch.roll(im1, shifts=1, dims=3)

for it in range(3):
    flow = net(im1, im2)
    im2_warped = warp(im2, flow)
    loss = (im2_warped - im1).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
