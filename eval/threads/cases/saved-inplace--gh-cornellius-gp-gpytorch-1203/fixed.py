# gpytorch-style lazy tensor: _symeig eigendecomposes the dense matrix and clamps the
# eigenvalues at zero (small negative eigenvalues from round-off); root_decomposition builds
# V * sqrt(evals) from it. A GP's kernel hyperparameter is fit through that root.
import torch
import torch.nn as nn

torch.manual_seed(0)


class NonLazyTensor:
    def __init__(self, tsr):
        self.tensor = tsr

    def evaluate(self):
        return self.tensor

    def _symeig(self, eigenvectors=False):
        evals, evecs = torch.linalg.eigh(self.evaluate())
        evals = evals.clamp_min(0.0)
        return evals, (evecs if eigenvectors else None)

    def root_decomposition(self):
        evals, evecs = self._symeig(eigenvectors=True)
        return evecs * evals.sqrt().unsqueeze(-2)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        ls = nn.functional.softplus(self.raw_lengthscale)
        d2 = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
        return NonLazyTensor(torch.exp(-0.5 * d2 / ls ** 2))


train_x = torch.linspace(0, 1, 12).unsqueeze(-1)
train_y = torch.sin(6 * train_x).squeeze(-1)
kernel = RBFKernel()
optimizer = torch.optim.Adam(kernel.parameters(), lr=0.05)

for it in range(5):
    optimizer.zero_grad()
    K = kernel(train_x, train_x)
    root = K.root_decomposition()
    samples = root @ torch.randn(12, 4)
    loss = (samples.pow(2).mean(-1) - train_y.pow(2)).pow(2).mean()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
