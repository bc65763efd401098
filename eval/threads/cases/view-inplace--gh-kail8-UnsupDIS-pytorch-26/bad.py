# Unsupervised deep image stitching: a homography estimator warps the second image with a
# spatial transformer that clamps tiny homogeneous coordinates by masked assignment.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def transformer(image2_tensor, H_tf):
    def _meshgrid(height, width):
        x_t = torch.mm(torch.ones(height, 1), torch.linspace(-1.0, 1.0, width).unsqueeze(0))
        y_t = torch.mm(torch.linspace(-1.0, 1.0, height).unsqueeze(1), torch.ones(1, width))
        x_t_flat = x_t.reshape(1, -1)
        y_t_flat = y_t.reshape(1, -1)
        ones = torch.ones_like(x_t_flat)
        return torch.cat([x_t_flat, y_t_flat, ones], dim=0)

    bs, nc, height, width = image2_tensor.shape
    H_tf = H_tf.reshape(-1, 3, 3).float()
    grid = _meshgrid(height, width).unsqueeze(0).expand(bs, -1, -1)

    # Transform A x (x_t, y_t, 1)^T -> (x_s, y_s)
    T_g = torch.bmm(H_tf, grid)  # [bs,3,3] x [bs,3,w*h] -> [bs,3,w*h]
    x_s, y_s, t_s = torch.chunk(T_g, 3, dim=1)
    t_s_flat = t_s.reshape(-1)
    eps = 1e-2
    t_s_flat[t_s_flat.abs() < eps] = eps

    x_s_flat = x_s.reshape(-1) / t_s_flat
    y_s_flat = y_s.reshape(-1) / t_s_flat
    sample_grid = torch.stack([x_s_flat, y_s_flat], dim=-1).reshape(bs, height, width, 2)
    return F.grid_sample(image2_tensor, sample_grid, align_corners=True)


class HEstimator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.regressor = nn.Linear(32, 8)

    def forward(self, image1, image2):
        offsets = 0.01 * self.regressor(self.features(torch.cat([image1, image2], dim=1)))
        H = torch.cat([offsets, torch.zeros(offsets.size(0), 1)], dim=1) + torch.eye(3).reshape(1, 9)
        return transformer(image2, H)


model = HEstimator()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
image1 = torch.rand(1, 1, 16, 16)    # the training script runs one image pair per batch
image2 = torch.roll(image1, shifts=1, dims=3)

for it in range(3):
    warped = model(image1, image2)
    loss = F.l1_loss(warped, image1)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
