# DCLS (dilated convolution with learnable spacings), gauss version, used in place of a Conv2d in a
# small classifier: the kernel constructor builds its index grid and limits the first time it runs,
# on the device of the weight it sees, and keeps them. The training script first runs a sanity check
# of the model on the CPU, then moves it to the GPU (the meta device stands in for it) and trains.
# Random images stand in for the data set.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Module, Parameter

torch.manual_seed(0)
device = torch.device("meta")


class ConstructKernel2d(Module):
    def __init__(self, out_channels, in_channels, groups, kernel_count, dilated_kernel_size):
        super().__init__()
        self.out_channels = out_channels
        self.in_channels = in_channels
        self.groups = groups
        self.dilated_kernel_size = dilated_kernel_size
        self.kernel_count = kernel_count
        I = torch.arange(0, self.dilated_kernel_size[1]).expand(self.dilated_kernel_size[0], -1)
        J = torch.arange(0, self.dilated_kernel_size[0]).expand(self.dilated_kernel_size[1], -1).t()
        IDX = torch.cat((I.unsqueeze(0), J.unsqueeze(0)), 0)
        IDX = IDX.expand(self.out_channels, self.in_channels // self.groups, self.kernel_count,
                         -1, -1, -1).permute(4, 5, 3, 0, 1, 2)
        lim = torch.tensor(self.dilated_kernel_size)
        lim = lim.expand(self.out_channels, self.in_channels // self.groups, self.kernel_count,
                         -1).permute(3, 0, 1, 2)
        self.register_buffer("IDX", IDX)
        self.register_buffer("lim", lim)

    def forward_vgauss(self, W, P, SIG):
        P = P + self.lim // 2
        SIG = SIG.abs() + 0.27
        X = ((self.IDX - P) / SIG).norm(2, dim=2)
        X = (-0.5 * X**2).exp()
        X = X / (X.sum((0, 1)) + 1e-7)  # normalization
        K = (X * W).sum(-1)
        return K.permute(2, 3, 0, 1)

    def forward(self, W, P, SIG):
        return self.forward_vgauss(W, P, SIG)


class Dcls2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_count, dilated_kernel_size, padding=0):
        super().__init__()
        self.padding = padding
        self.weight = Parameter(torch.randn(out_channels, in_channels, kernel_count) * 0.1)
        self.bias = Parameter(torch.zeros(out_channels))
        lim = dilated_kernel_size[0] // 2
        self.P = Parameter(torch.rand(2, out_channels, in_channels, kernel_count) * 2 * lim - lim)
        self.SIG = Parameter(torch.full((2, out_channels, in_channels, kernel_count), 0.23))
        self.DCK = ConstructKernel2d(out_channels, in_channels, 1, kernel_count, dilated_kernel_size)

    def forward(self, input):
        kernel = self.DCK(self.weight, self.P, self.SIG)
        return F.conv2d(input, kernel, self.bias, padding=self.padding)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = Dcls2d(3, 8, kernel_count=4, dilated_kernel_size=(5, 5), padding=2)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.head(x.mean(dim=(2, 3)))


model = Net()
with torch.no_grad():  # sanity check before training
    print("sanity", tuple(model(torch.randn(2, 3, 16, 16)).shape))
model.to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    images, labels = torch.randn(4, 3, 16, 16).to(device), torch.randint(0, 10, (4,)).to(device)
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.device.type)
