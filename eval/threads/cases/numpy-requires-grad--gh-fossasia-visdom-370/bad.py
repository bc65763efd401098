# visdom's Python client (2018): every plotting method is wrapped so that torch tensors can be
# passed directly; the wrapper turns them into numpy arrays before the plot is sent. A training
# script plots its loss curve and the autoencoder's reconstructions as it goes. The server is
# replaced by a dict of windows (no network); random images stand in for the data set.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def pytorch_wrap(fn):
    def result(*args, **kwargs):
        args = (a.cpu().numpy() if type(a).__module__.startswith('torch') else a for a in args)

        for k in kwargs:
            if type(kwargs[k]).__module__.startswith('torch'):
                kwargs[k] = kwargs[k].cpu().numpy()

        return fn(*args, **kwargs)
    return result


class Visdom(object):
    def __init__(self, env='main'):
        self.env = env
        self.windows = {}

    def _send(self, win, data, update=None):
        if update == 'append' and win in self.windows:
            self.windows[win] = np.concatenate([self.windows[win], data])
        else:
            self.windows[win] = np.asarray(data)
        return win

    @pytorch_wrap
    def line(self, Y, X=None, win=None, update=None, opts=None):
        return self._send(win, np.stack([np.asarray(X, dtype=float).ravel(), np.asarray(Y).ravel()], 1), update)

    @pytorch_wrap
    def images(self, tensor, win=None, nrow=8, opts=None):
        return self._send(win, np.clip(tensor, 0, 1))


class AutoEncoder(nn.Module):
    def __init__(self):
        super(AutoEncoder, self).__init__()
        self.encoder = nn.Sequential(nn.Linear(64, 16), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(16, 64), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x.view(-1, 64))).view_as(x)


vis = Visdom()
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = torch.rand(32, 1, 8, 8)
for it in range(4):
    batch = images[it * 8:(it + 1) * 8]
    output = model(batch)
    loss = ((output - batch) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    vis.line(Y=loss.view(1), X=np.array([it]), win='loss', update='append')
    vis.images(output, win='reconstructions')
print({name: value.shape for name, value in vis.windows.items()})
