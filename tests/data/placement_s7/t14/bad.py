import math

import numpy as np
import torch
from torch import nn
from torch.nn.parameter import Parameter


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        stdv = 1.0 / math.sqrt(out_features)
        self.weight.data.uniform_(-stdv, stdv)

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.mm(adj, support)


def load_graph(n):
    features = np.eye(n)
    adj = np.ones((n, n)) / n
    return torch.from_numpy(features), torch.FloatTensor(adj)


features, adj = load_graph(5)
layer = GraphConvolution(5, 3)
print(layer(features, adj).shape)
