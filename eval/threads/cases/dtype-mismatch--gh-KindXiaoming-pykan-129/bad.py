# pykan (Kolmogorov-Arnold Networks), May 2024: spline.py evaluates the B-spline bases of the inputs
# and KANLayer sums them with its learnable coefficients (coef2curve); KAN.train fits a dataset
# dict. The user's dataset is built from numpy arrays. The coefficients are initialised with small
# random values here instead of curve2coef's least-squares fit, and KAN.train is cut down to an
# Adam loop on the MSE.
import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)


def B_batch(x, grid, k=0, extend=True, device='cpu'):
    # x shape: (size, x); grid shape: (size, grid)
    def extend_grid(grid, k_extend=0):
        h = (grid[:, [-1]] - grid[:, [0]]) / (grid.shape[1] - 1)
        for i in range(k_extend):
            grid = torch.cat([grid[:, [0]] - h, grid], dim=1)
            grid = torch.cat([grid, grid[:, [-1]] + h], dim=1)
        grid = grid.to(device)
        return grid

    if extend == True:
        grid = extend_grid(grid, k_extend=k)
    grid = grid.unsqueeze(dim=2).to(device)
    x = x.unsqueeze(dim=1).to(device)
    if k == 0:
        value = (x >= grid[:, :-1]) * (x < grid[:, 1:])
    else:
        B_km1 = B_batch(x[:, 0], grid=grid[:, :, 0], k=k - 1, extend=False, device=device)
        value = (x - grid[:, :-(k + 1)]) / (grid[:, k:-1] - grid[:, :-(k + 1)]) * B_km1[:, :-1] + (grid[:, k + 1:] - x) / (grid[:, k + 1:] - grid[:, 1:(-k)]) * B_km1[:, 1:]
    return value


def coef2curve(x_eval, grid, coef, k, device="cpu"):
    # x_eval: (size, batch), grid: (size, grid), coef: (size, coef)
    # coef: (size, coef), B_batch: (size, coef, batch), summer over coef
    y_eval = torch.einsum('ij,ijk->ik', coef, B_batch(x_eval, grid, k, device=device))
    return y_eval


class KANLayer(torch.nn.Module):
    def __init__(self, in_dim=3, out_dim=2, num=5, k=3, noise_scale=0.1, scale_base=1.0, scale_sp=1.0,
                 base_fun=torch.nn.SiLU(), grid_range=[-1, 1], device='cpu'):
        super(KANLayer, self).__init__()
        self.size = size = out_dim * in_dim
        self.out_dim = out_dim
        self.in_dim = in_dim
        self.num = num
        self.k = k
        self.grid = torch.einsum('i,j->ij', torch.ones(size, device=device), torch.linspace(grid_range[0], grid_range[1], steps=num + 1, device=device))
        self.grid = torch.nn.Parameter(self.grid).requires_grad_(False)
        self.coef = torch.nn.Parameter((torch.rand(size, num + k) - 1 / 2) * noise_scale)
        self.scale_base = torch.nn.Parameter(torch.ones(size, device=device) * scale_base)
        self.scale_sp = torch.nn.Parameter(torch.ones(size, device=device) * scale_sp)
        self.base_fun = base_fun
        self.mask = torch.nn.Parameter(torch.ones(size, device=device)).requires_grad_(False)
        self.weight_sharing = torch.arange(size)
        self.device = device

    def forward(self, x):
        batch = x.shape[0]
        # x: shape (batch, in_dim) => shape (size, batch) (size = out_dim * in_dim)
        x = torch.einsum('ij,k->ikj', x, torch.ones(self.out_dim, device=self.device)).reshape(batch, self.size).permute(1, 0)
        preacts = x.permute(1, 0).clone().reshape(batch, self.out_dim, self.in_dim)
        base = self.base_fun(x).permute(1, 0)  # shape (batch, size)
        y = coef2curve(x_eval=x, grid=self.grid[self.weight_sharing], coef=self.coef[self.weight_sharing], k=self.k, device=self.device)  # shape (size, batch)
        y = y.permute(1, 0)  # shape (batch, size)
        postspline = y.clone().reshape(batch, self.out_dim, self.in_dim)
        y = self.scale_base.unsqueeze(dim=0) * base + self.scale_sp.unsqueeze(dim=0) * y
        y = self.mask[None, :] * y
        postacts = y.clone().reshape(batch, self.out_dim, self.in_dim)
        y = torch.sum(y.reshape(batch, self.out_dim, self.in_dim), dim=2)  # shape (batch, out_dim)
        return y, preacts, postacts, postspline


class KAN(torch.nn.Module):
    def __init__(self, width, grid=5, k=3, device='cpu'):
        super(KAN, self).__init__()
        self.act_fun = torch.nn.ModuleList([KANLayer(width[l], width[l + 1], num=grid, k=k, device=device)
                                            for l in range(len(width) - 1)])

    def forward(self, x):
        for layer in self.act_fun:
            x, preacts, postacts, postspline = layer(x)
        return x

    def train(self, dataset, steps=20, lr=1e-2, batch=-1):
        optimizer = torch.optim.Adam(self.parameters(), lr=lr)
        for step in range(steps):
            pred = self.forward(dataset['train_input'])
            train_loss = torch.mean((pred - dataset['train_label']) ** 2)
            optimizer.zero_grad()
            train_loss.backward()
            optimizer.step()
        return {'train_loss': [train_loss.item()]}


# the user's own data, made with numpy
X = np.random.uniform(-1, 1, size=(200, 2))
y = np.exp(np.sin(np.pi * X[:, [0]]) + X[:, [1]] ** 2)
dataset = {'train_input': torch.from_numpy(X), 'train_label': torch.from_numpy(y)}

model = KAN(width=[2, 5, 1], grid=5, k=3)
results = model.train(dataset, steps=20)
print("train loss", round(results['train_loss'][-1], 4))
