# A dense graph convolution (DenseGraphConv-style: lin_rel on the neighbour sum, lin_root on the
# node itself) over a batch of small graphs; the 0/1 adjacency is built as an integer tensor.
import torch
import torch.nn as nn

torch.manual_seed(0)


class DenseGraphConv(nn.Module):
    def __init__(self, in_channels, out_channels, aggr="add"):
        super().__init__()
        self.aggr = aggr
        self.lin_rel = nn.Linear(in_channels, out_channels)
        self.lin_root = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, adj):
        B, N, _ = adj.size()
        out = self.lin_rel(torch.matmul(adj, x))
        if self.aggr == "mean":
            out = out / adj.sum(dim=-1, keepdim=True).clamp(min=1)
        return out + self.lin_root(x)


class GraphMemory(nn.Module):
    def __init__(self, feat, hidden):
        super().__init__()
        self.conv1 = DenseGraphConv(feat, hidden)
        self.conv2 = DenseGraphConv(hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, adj):
        h = torch.relu(self.conv1(x, adj))
        h = torch.relu(self.conv2(h, adj))
        return self.head(h.mean(1)).squeeze(-1)


def build_adjacency(edges, batch, num_nodes):
    adj = torch.zeros(batch, num_nodes, num_nodes, dtype=torch.float)
    for b, src, dst in edges:
        adj[b, src, dst] = 1
        adj[b, dst, src] = 1
    return adj


batch, num_nodes, feat = 3, 4, 5
edges = [(b, i, (i + 1) % num_nodes) for b in range(batch) for i in range(num_nodes)]
x = torch.ones(batch, num_nodes, feat)
adj = build_adjacency(edges, batch, num_nodes)
target = torch.randn(batch)

model = GraphMemory(feat, 8)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    loss = (model(x, adj) - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
