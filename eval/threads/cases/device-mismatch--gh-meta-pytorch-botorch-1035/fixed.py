# A surrogate model for Bayesian optimization with an input transform: Normalize maps inputs from
# known bounds to the unit cube and keeps the offsets and ranges as tensor attributes; the model
# applies its input_transform before a small network. The model is moved to the GPU with
# model.to(device) (the meta device stands in for it here) and fitted on training points there.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda")


class InputTransform(nn.Module):
    def forward(self, X):
        return self.transform(X)


class Normalize(InputTransform):
    def __init__(self, d, bounds=None):
        super().__init__()
        if bounds is None:
            bounds = torch.stack([torch.zeros(d), torch.ones(d)])
        self.register_buffer("mins", bounds[0:1, :])
        self.register_buffer("ranges", bounds[1:2, :] - bounds[0:1, :])

    def transform(self, X):
        return (X - self.mins) / self.ranges


class SurrogateModel(nn.Module):
    def __init__(self, d, input_transform=None):
        super().__init__()
        self.input_transform = input_transform
        self.net = nn.Sequential(nn.Linear(d, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, X):
        if self.input_transform is not None:
            X = self.input_transform(X)
        return self.net(X)


d = 3
bounds = torch.tensor([[-5.0, 0.0, 10.0], [5.0, 15.0, 20.0]])
model = SurrogateModel(d, input_transform=Normalize(d, bounds=bounds))
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
train_X = (bounds[0] + (bounds[1] - bounds[0]) * torch.rand(20, d)).to(device)
train_Y = torch.randn(20, 1).to(device)
for step in range(2):
    loss = ((model(train_X) - train_Y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, tuple(loss.shape), loss.device.type)
