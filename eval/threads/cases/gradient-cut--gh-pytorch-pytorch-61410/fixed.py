# Per-branch mixing weights kept as separate nn.Parameters; forward gathers the list of
# parameters into one weight vector with torch.Tensor([...]) before mixing the branches.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BranchMixer(nn.Module):
    def __init__(self, n_branches=3, dim=8):
        super().__init__()
        self.branches = nn.ModuleList(nn.Linear(dim, dim) for _ in range(n_branches))
        self.mix = nn.ParameterList(nn.Parameter(torch.tensor(1.0 / n_branches)) for _ in range(n_branches))

    def forward(self, x):
        weights = torch.stack([p for p in self.mix], dim=0)
        outs = torch.stack([branch(x) for branch in self.branches])
        return (weights.view(-1, 1, 1) * outs).sum(0)


model = BranchMixer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randn(64, 8)
start = [p.item() for p in model.mix]
for epoch in range(10):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
print("mix weights", [round(p.item(), 4) for p in model.mix], "loss", round(loss.item(), 4))

# -- corpus check --
if [p.item() for p in model.mix] == start:
    print("BUG: the mixing parameters never changed (their .grad stays None)")
