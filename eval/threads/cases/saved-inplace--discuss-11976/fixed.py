# A network that bifurcates after conv1: a side branch reads conv1's output, then the main
# branch adds another layer's output onto it with +=.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TwoBranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)      # main branch
        self.conv1_p = nn.Conv2d(16, 16, 3, padding=1)   # another branch
        self.skip = nn.Conv2d(3, 16, 1)
        self.head_main = nn.Linear(16, 4)
        self.head_p = nn.Linear(16, 4)

    def forward(self, input):
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        some_layer = self.skip(input)
        x = x + some_layer  # main branch
        out = self.head_main(x.mean(dim=(2, 3)))
        out_p = self.head_p(x_p.mean(dim=(2, 3)))
        return out, out_p


model = TwoBranchNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randn(6, 3, 12, 12)
target = torch.randn(6, 4)

for it in range(3):
    optimizer.zero_grad()
    out, out_p = model(data)
    loss = ((out - target) ** 2).mean() + 0.5 * ((out_p - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
