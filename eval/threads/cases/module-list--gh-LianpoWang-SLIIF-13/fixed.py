# Implicit image function with ten residual sub-MLPs mixed by weights from an expansion net; the
# sub-MLPs are created in a list comprehension in __init__. A checkpoint is saved and reloaded.
import io

import torch
import torch.nn as nn

torch.manual_seed(0)


class RES_MLP(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden_list[0])
        self.hidden = nn.Linear(hidden_list[0], hidden_list[0])
        self.out = nn.Linear(hidden_list[0], out_dim)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        return self.out(h + torch.relu(self.hidden(h)))


class COOD_MLP(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden_list[0]), nn.ReLU(), nn.Linear(hidden_list[0], out_dim))

    def forward(self, coord):
        return self.net(coord)


class ExpansionNet(nn.Module):
    def __init__(self, in_dim, n_out, hidden_list):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden_list[0]), nn.ReLU(), nn.Linear(hidden_list[0], n_out))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


class RESMLPS(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list, coord_hidden_list):
        super().__init__()
        self.mlps = nn.ModuleList([RES_MLP(in_dim, out_dim, coord_hidden_list) for _ in range(10)])
        self.cood_mlp = COOD_MLP(2, 16, hidden_list)
        self.expansionNet = ExpansionNet(in_dim + 16, 10, hidden_list)

    def forward(self, feat, coord):
        weights = self.expansionNet(torch.cat([feat, self.cood_mlp(coord)], dim=-1))
        outs = torch.stack([mlp(feat) for mlp in self.mlps], dim=-1)
        return (outs * weights.unsqueeze(-2)).sum(-1)


model = RESMLPS(in_dim=8, out_dim=3, hidden_list=[32], coord_hidden_list=[16])
feat, coord = torch.randn(4, 8), torch.rand(4, 2) * 2 - 1
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
restored = RESMLPS(in_dim=8, out_dim=3, hidden_list=[32], coord_hidden_list=[16])
restored.load_state_dict(torch.load(buffer))
print("parameters:", sum(p.numel() for p in model.parameters()))

# -- corpus check --
if not torch.allclose(model(feat, coord), restored(feat, coord)):
    print("BUG: the reloaded checkpoint gives different outputs (the sub-MLPs are not in the state_dict)")
