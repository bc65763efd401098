# Voice style transfer with a random (untrained) CNN: the generated spectrogram a_G_var starts as
# small noise, requires grad, is moved to the GPU, and is optimized so that its features match the
# content spectrogram's and its Gram matrices match the style spectrogram's.
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
cuda = True
dtype = torch.float64  # the .cuda() copy of the thread is shown by a float64 copy


class RandomCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=(3, 1), stride=1, padding=0)
        self.LeakyReLU = nn.LeakyReLU(0.2)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x_delta):
        return self.LeakyReLU(self.conv1(x_delta))


def gram(x):
    f = x.view(x.size(1), -1)
    return f @ f.t() / f.size(1)


model = RandomCNN().to(dtype)
a_content_torch = torch.rand(1, 1, 64, 40).to(dtype)
a_style_torch = torch.rand(1, 1, 64, 40).to(dtype)
a_C = model(a_content_torch)
a_S = model(a_style_torch)

a_G_var = Variable(torch.randn(a_content_torch.shape) * 1e-3)
if cuda:
    a_G_var = a_G_var.to(dtype)
a_G_var.requires_grad = True
optimizer = torch.optim.Adam([a_G_var], lr=0.002)

style_param, content_param = 1, 100
for epoch in range(5):
    optimizer.zero_grad()
    a_G = model(a_G_var)
    content_loss = content_param * (a_C - a_G).pow(2).mean()
    style_loss = style_param * (gram(a_S) - gram(a_G)).pow(2).mean()
    loss = content_loss + style_loss
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
