# A graph-convolutional GRU cell (GConvGRU-style) for traffic forecasting: when no hidden state is
# passed, _set_hidden_state creates a zero one. The model and the snapshots are moved to the GPU
# (the meta device stands in for it here).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class GraphConv(nn.Module):
    """Stand-in for ChebConv: one hop of normalized adjacency, then a linear map."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x, adj):
        return self.lin(adj @ x)


class GConvGRU(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.out_channels = out_channels
        self.conv_x_z, self.conv_h_z = GraphConv(in_channels, out_channels), GraphConv(out_channels, out_channels)
        self.conv_x_r, self.conv_h_r = GraphConv(in_channels, out_channels), GraphConv(out_channels, out_channels)
        self.conv_x_h, self.conv_h_h = GraphConv(in_channels, out_channels), GraphConv(out_channels, out_channels)

    def _set_hidden_state(self, X, H):
        if H is None:
            H = torch.zeros(X.shape[0], self.out_channels)
        return H

    def forward(self, X, adj, H=None):
        H = self._set_hidden_state(X, H)
        Z = torch.sigmoid(self.conv_x_z(X, adj) + self.conv_h_z(H, adj))
        R = torch.sigmoid(self.conv_x_r(X, adj) + self.conv_h_r(H, adj))
        H_tilde = torch.tanh(self.conv_x_h(X, adj) + self.conv_h_h(H * R, adj))
        return Z * H + (1 - Z) * H_tilde


class RecurrentGCN(nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = GConvGRU(node_features, 16)
        self.linear = nn.Linear(16, 1)

    def forward(self, x, adj):
        h = self.recurrent(x, adj)
        return self.linear(torch.relu(h))


num_nodes, node_features = 20, 4
adj = torch.rand(num_nodes, num_nodes)
adj = adj / adj.sum(1, keepdim=True)
snapshots = [(torch.randn(num_nodes, node_features), torch.randn(num_nodes, 1)) for _ in range(3)]

model = RecurrentGCN(node_features).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
adj = adj.to(device)
for epoch in range(2):
    cost = 0
    for time, (x, y) in enumerate(snapshots):
        x, y = x.to(device), y.to(device)
        y_hat = model(x, adj)
        cost = cost + torch.mean((y_hat - y) ** 2)
    cost = cost / (time + 1)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(epoch, cost.shape, cost.device)
