# Multiresolution neural network layer: a fixed dyadic filterbank splits the signal into J+1
# levels and a learnable Conv1d per level (kept in a list built in a loop) filters each level.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MuReNNDirect(nn.Module):
    def __init__(self, *, J, Q, T, in_channels):
        super().__init__()
        self.J, self.Q, self.T = J, Q, T
        self.in_channels = in_channels
        psis = []
        for j in range(1 + J):
            psis.append(nn.Conv1d(in_channels, Q * in_channels, T, padding=T // 2, groups=in_channels, bias=False))
        self.psis = nn.ModuleList(psis)

    def filterbank(self, x):
        levels = []
        for j in range(1 + self.J):
            low = F.avg_pool1d(x, 2)
            levels.append(x[..., : 2 * low.shape[-1]] - F.interpolate(low, scale_factor=2.0))
            x = low
        return levels

    def forward(self, x):
        Ux, N_j = [], None
        for j_psi, x_level in enumerate(self.filterbank(x)):
            Wx = self.psis[j_psi](x_level)
            Ux_j = F.avg_pool1d(Wx * Wx, 2 ** (self.J - j_psi + 1))
            N_j = Ux_j.shape[-1] if N_j is None else N_j
            Ux.append(Ux_j[..., :N_j])
        return torch.cat(Ux, dim=1)


B, C, L = 2, 3, 2 ** 6
x = torch.randn(B, C, L)
layer = MuReNNDirect(J=3, Q=2, T=5, in_channels=C)
optimizer = torch.optim.Adam(layer.parameters(), lr=1e-3)
for step in range(3):
    loss = layer(x).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: {loss.item():.5f}")
