# 2-D point-cloud registration: the network predicts a batch of 2x2 rotation matrices and the loss
# compares their SO(2) logarithms with the ground truth, using a small Lie-group helper class whose
# from_matrix() validates the matrices with numpy (determinant / orthogonality checks).
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class SO2:
    def __init__(self, mat):
        self.mat = mat

    @classmethod
    def is_valid_matrix(cls, mat):
        mat_np = mat.cpu().numpy()
        det_check = np.allclose(np.linalg.det(mat_np), 1.0, atol=1e-5)
        eye = np.eye(2)[None]
        orth_check = np.allclose(mat_np @ mat_np.transpose(0, 2, 1), eye, atol=1e-5)
        return det_check and orth_check

    @classmethod
    def from_matrix(cls, mat, normalize=False):
        if mat.dim() < 3:
            mat = mat.unsqueeze(0)
        if not cls.is_valid_matrix(mat) and not normalize:
            raise ValueError("Invalid rotation matrix. Use normalize=True to handle rounding errors.")
        return cls(mat)

    def log(self):
        return torch.atan2(self.mat[:, 1, 0], self.mat[:, 0, 0])


class RotationNet(nn.Module):
    def __init__(self, n_points):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4 * n_points, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, src, tgt):
        theta = self.net(torch.cat([src, tgt], dim=1).flatten(1)).squeeze(1)
        c, s = torch.cos(theta), torch.sin(theta)
        return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def rotation_loss(rotation_ab_pred, rotation_ab):
    rvec_ab_pred = SO2.from_matrix(rotation_ab_pred).log()
    rvec_ab = SO2.from_matrix(rotation_ab).log()
    return (rvec_ab_pred - rvec_ab).pow(2).mean()


batch, n_points = 32, 10
net = RotationNet(n_points)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
angles = torch.rand(batch) * 2 - 1
rotation_ab = torch.stack([torch.stack([angles.cos(), -angles.sin()], -1),
                           torch.stack([angles.sin(), angles.cos()], -1)], -2)
src = torch.randn(batch, n_points, 2)
tgt = src @ rotation_ab.transpose(1, 2)

for step in range(3):
    rotation_ab_pred = net(src, tgt)
    print('rotation_ab_pred size = {} type = {}'.format(rotation_ab_pred.size(), rotation_ab_pred.type()))
    loss = rotation_loss(rotation_ab_pred, rotation_ab)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
