# Fast Gradient Method attack helper: an unbatched image gets requires_grad, is then
# unsqueezed to a batch of one, and the perturbation is read from x.grad.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


def optimize_linear(grad, eps, ordr=np.inf):
    if ordr == np.inf:
        return eps * torch.sign(grad)
    raise NotImplementedError


def fgm(x, net: nn.Module, eps: float = 0.3, ordr=np.inf, y=None, targeted=False):
    # x needs to have requires_grad set to True
    # for its grad to be computed and stored properly in a backward call
    x = x.clone().detach().requires_grad_(True)
    if y is None:
        if len(x.shape) == 3: x = x.unsqueeze(0)
        _, y = torch.max(net(x), dim=1)

    crit = nn.CrossEntropyLoss()
    loss = crit(net(x), y)
    if targeted:
        loss = -loss

    loss.backward()
    opt_pert = optimize_linear(x.grad, eps, ordr)
    return x + opt_pert


class FGM:
    def __init__(self, net, **kwargs):
        self.net = net
        self.kwargs = kwargs

    def __call__(self, x):
        return fgm(x, self.net, **self.kwargs)


net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                    nn.Flatten(), nn.Linear(8, 10))
net.eval()
for p in net.parameters():
    p.requires_grad_(False)

img = torch.rand(3, 32, 32)
attack = FGM(net, eps=0.03)
adv = attack(img)
print("adversarial example", tuple(adv.shape))
