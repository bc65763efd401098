# nflows LULinear: an invertible linear transform parameterized by its LU decomposition
# (strictly lower entries, upper entries and a positive diagonal). The forward direction uses
# the weight, the inverse direction (sampling) solves two triangular systems against the
# identity. The transform is moved to a GPU (the meta device stands in for cuda:1) and then
# inverted; outputs are reported by shape (meta tensors hold no values).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")  # "cuda:1"


class LULinear(nn.Module):
    def __init__(self, features, eps=1e-3):
        super().__init__()
        self.features = features
        self.eps = eps
        self.lower_indices = np.tril_indices(features, k=-1)
        self.upper_indices = np.triu_indices(features, k=1)
        self.diag_indices = np.diag_indices(features)
        n_triangular_entries = ((features - 1) * features) // 2
        self.lower_entries = nn.Parameter(torch.zeros(n_triangular_entries))
        self.upper_entries = nn.Parameter(torch.zeros(n_triangular_entries))
        self.unconstrained_upper_diag = nn.Parameter(torch.zeros(features))
        self.bias = nn.Parameter(torch.zeros(features))
        constant = np.log(np.exp(1 - eps) - 1)
        nn.init.constant_(self.unconstrained_upper_diag, constant)
        nn.init.uniform_(self.lower_entries, -0.1, 0.1)
        nn.init.uniform_(self.upper_entries, -0.1, 0.1)

    def _create_lower_upper(self):
        lower = self.lower_entries.new_zeros(self.features, self.features)
        lower[self.lower_indices[0], self.lower_indices[1]] = self.lower_entries
        lower[self.diag_indices[0], self.diag_indices[1]] = 1.0
        upper = self.upper_entries.new_zeros(self.features, self.features)
        upper[self.upper_indices[0], self.upper_indices[1]] = self.upper_entries
        upper[self.diag_indices[0], self.diag_indices[1]] = self.upper_diag
        return lower, upper

    @property
    def upper_diag(self):
        return F.softplus(self.unconstrained_upper_diag) + self.eps

    def weight(self):
        lower, upper = self._create_lower_upper()
        return lower @ upper

    def weight_inverse(self):
        lower, upper = self._create_lower_upper()
        identity = torch.eye(self.features, self.features, device=self.lower_entries.device)
        lower_inverse, _ = torch.triangular_solve(identity, lower, upper=False, unitriangular=True)
        weight_inverse, _ = torch.triangular_solve(lower_inverse, upper, upper=True, unitriangular=False)
        return weight_inverse

    def forward(self, inputs):
        return F.linear(inputs, self.weight(), self.bias)

    def inverse(self, inputs):
        return F.linear(inputs - self.bias, self.weight_inverse())


lu = LULinear(4)
lu.to(device)
z = torch.randn(8, 4, device=device)
x = lu.inverse(z)
print(f"samples {tuple(x.shape)} on {x.device.type}")
