# Generating synthetic regression data from randomly initialised rotation-equivariant conv
# layers (a steerable-CNN library's R2Conv: the filter is a learned combination of a fixed
# basis). The data script re-draws each layer's basis coefficients with the library's
# generalized He initialisation before generating targets.
import math
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter

torch.manual_seed(0)


class BasisExpansion(nn.Module):
    def __init__(self, in_fields, out_fields, size=3, per_pair=2):
        super().__init__()
        self.in_fields, self.out_fields, self.per_pair = in_fields, out_fields, per_pair
        self.register_buffer("basis", torch.randn(out_fields * in_fields * per_pair, size, size))

    def dimension(self):
        return self.basis.shape[0]

    def get_basis_info(self):
        for o in range(self.out_fields):
            for i in range(self.in_fields):
                for b in range(self.per_pair):
                    yield {"in_irreps_position": i, "out_irreps_position": o, "in_irrep": i % 2, "out_irrep": o % 2}

    def forward(self, weights):
        k = (weights[:, None, None] * self.basis)
        k = k.view(self.out_fields, self.in_fields, self.per_pair, *self.basis.shape[1:]).sum(2)
        return k


def generalized_he_init(tensor, basisexpansion):
    assert tensor.shape == (basisexpansion.dimension(),)
    vars = torch.ones_like(tensor)
    inputs_count = defaultdict(lambda: set())
    basis_count = defaultdict(int)
    for attr in basisexpansion.get_basis_info():
        o, in_irrep = attr["out_irreps_position"], attr["in_irrep"]
        inputs_count[o].add(in_irrep)
        basis_count[(in_irrep, o)] += 1
    for o in inputs_count.keys():
        inputs_count[o] = len(inputs_count[o])
    for w, attr in enumerate(basisexpansion.get_basis_info()):
        o, in_irrep = attr["out_irreps_position"], attr["in_irrep"]
        vars[w] = 1. / math.sqrt(inputs_count[o] * basis_count[(in_irrep, o)])
    tensor[:] = vars * torch.randn_like(tensor)


class R2Conv(nn.Module):
    def __init__(self, in_fields, out_fields, kernel_size=3):
        super().__init__()
        self.basisexpansion = BasisExpansion(in_fields, out_fields, kernel_size)
        self.weights = Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        generalized_he_init(self.weights.data, self.basisexpansion)

    def forward(self, x):
        return F.conv2d(x, self.basisexpansion(self.weights), padding=1)


def generate_data(num_tasks=3, num_examples=4, in_fields=2, out_fields=2):
    inputs, targets = [], []
    for task in range(num_tasks):
        conv = R2Conv(in_fields, out_fields)
        generalized_he_init(conv.weights, conv.basisexpansion)
        x = torch.randn(num_examples, in_fields, 8, 8)
        with torch.no_grad():
            y = conv(x)
        inputs.append(x)
        targets.append(y)
    return torch.stack(inputs), torch.stack(targets)


xs, ys = generate_data()
print(xs.shape, ys.shape)
