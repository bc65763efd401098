# Training a convolutional autoencoder and watching its reconstructions in visdom: every epoch
# the batch of reconstructions is sent with viz.images(). The Visdom class below stands in for the
# client (no server): like visdom 0.1.8 its plotting methods are wrapped by pytorch_wrap, which
# converts torch arguments to numpy before building the request.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pytorch_wrap(fn):
    def result(*args, **kwargs):
        args = (a.cpu().detach().numpy() if type(a).__module__.startswith('torch') else a for a in args)

        for k in kwargs:
            if type(kwargs[k]).__module__.startswith('torch'):
                kwargs[k] = kwargs[k].cpu().detach().numpy()

        return fn(*args, **kwargs)
    return result


class Visdom:
    def __init__(self, env="main"):
        self.env = env
        self.windows = {}

    @pytorch_wrap
    def images(self, tensor, nrow=8, padding=2, win=None, opts=None):
        assert isinstance(tensor, np.ndarray) and tensor.ndim == 4
        self.windows[win] = tensor.clip(0, 1)
        return win

    @pytorch_wrap
    def line(self, Y, X=None, win=None, update=None):
        self.windows.setdefault(win, []).append((np.asarray(X).item(), np.asarray(Y).item()))
        return win


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(), nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


viz = Visdom(env="autoencoder")
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.rand(16, 1, 28, 28)

for epoch in range(3):
    recon = model(images)
    loss = F.binary_cross_entropy(recon, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    viz.line(Y=np.array([loss.item()]), X=np.array([epoch]), win="loss", update="append")
    viz.images(recon, nrow=4, win="reconstructions")
    print(epoch, round(loss.item(), 4))
