# A network whose depth is a constructor argument: one fixed layer plus num_layers layers created
# in a list comprehension and stored as an attribute, applied in sequence in forward().
import torch
import torch.nn as nn

torch.manual_seed(0)


class net(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.layer = nn.Linear(1, 1)
        self.list_of_layers = nn.ModuleList([nn.Linear(1, 1) for i in range(num_layers)])

    def forward(self, x):
        x = torch.tanh(self.layer(x))
        for layer in self.list_of_layers:
            x = torch.tanh(layer(x))
        return x


n = net(4)
print(n)
x = torch.linspace(-1, 1, 16).unsqueeze(1)
optimizer = torch.optim.Adam(n.parameters(), lr=1e-2)
for step in range(20):
    loss = ((n(x) - x.sin()) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

# -- corpus check --
registered = len(list(n.parameters()))
if registered != 2 * (1 + len(n.list_of_layers)):
    print(f"BUG: only {registered} parameter tensors registered, the list's layers are missing")
