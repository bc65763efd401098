# POT's ot.bregman.barycenter_stabilized, cut down, called from PyTorch with log=True: the
# histograms are computed from learnable logits (they require grad), the function runs its
# log-stabilized Sinkhorn iterations through the backend (nx, the torch backend here) and fills the
# log dictionary at the end; the barycenter is then used in a loss. A small stand-in for POT's
# torch backend; random histograms on a 1-D grid stand in for the data.
import warnings

import numpy as np
import torch

torch.manual_seed(0)


class TorchBackend:
    def ones(self, shape, type_as=None):
        return torch.ones(shape, dtype=type_as.dtype, device=type_as.device)

    def zeros(self, shape, type_as=None):
        return torch.zeros(shape, dtype=type_as.dtype, device=type_as.device)

    def exp(self, a):
        return torch.exp(a)

    def log(self, a):
        return torch.log(a)

    def dot(self, a, b):
        return a @ b

    def max(self, a, axis=None):
        return torch.max(a) if axis is None else torch.max(a, axis)[0]

    def any(self, a):
        return torch.any(a)

    def abs(self, a):
        return torch.abs(a)

    def isnan(self, a):
        return torch.isnan(a)

    def isinf(self, a):
        return torch.isinf(a)


def get_backend(*args):
    return TorchBackend()


def geometricBar(weights, alldistribT):
    """return the weighted geometric mean of distributions"""
    return torch.exp(torch.log(alldistribT) @ weights)


def barycenter_stabilized(A, M, reg, tau=1e10, weights=None, numItermax=1000,
                          stopThr=1e-4, verbose=False, log=False, warn=True):
    nx = get_backend(A, M)

    dim, n_hists = A.shape
    if weights is None:
        weights = nx.ones((n_hists,), type_as=M) / n_hists
    else:
        assert (len(weights) == A.shape[1])

    if log:
        log = {'err': []}

    u = nx.ones((dim, n_hists), type_as=M) / dim
    v = nx.ones((dim, n_hists), type_as=M) / dim

    K = nx.exp(-M / reg)

    err = 1.
    alpha = nx.zeros((dim,), type_as=M)
    beta = nx.zeros((dim,), type_as=M)
    q = nx.ones((dim,), type_as=M) / dim
    for ii in range(numItermax):
        qprev = q
        Kv = nx.dot(K, v)
        u = A / Kv
        Ktu = nx.dot(K.T, u)
        q = geometricBar(weights, Ktu)
        Q = q[:, None]
        v = Q / Ktu
        absorbing = False
        if nx.any(u > tau) or nx.any(v > tau):
            absorbing = True
            alpha += reg * nx.log(nx.max(u, 1))
            beta += reg * nx.log(nx.max(v, 1))
            K = nx.exp((alpha[:, None] + beta[None, :] - M) / reg)
            v = nx.ones(tuple(v.shape), type_as=v)
        Kv = nx.dot(K, v)
        if (nx.any(Ktu == 0.)
                or nx.any(nx.isnan(u)) or nx.any(nx.isnan(v))
                or nx.any(nx.isinf(u)) or nx.any(nx.isinf(v))):
            warnings.warn('Numerical errors at iteration %s' % ii)
            q = qprev
            break
        if (ii % 10 == 0 and not absorbing) or ii == 0:
            err = nx.max(nx.abs(u * Kv - A))
            if log:
                log['err'].append(err)
            if err < stopThr:
                break
    if log:
        log['niter'] = ii
        log['logu'] = nx.log(u + 1e-16)
        log['logv'] = nx.log(v + 1e-16)
        return q, log
    else:
        return q


n = 30
x = torch.arange(n, dtype=torch.float64)
M = (x[:, None] - x[None, :]) ** 2
M = M / M.max()
logits = torch.randn(n, 3, dtype=torch.float64, requires_grad=True)
A = torch.softmax(logits, dim=0)
target = torch.softmax(torch.randn(n, dtype=torch.float64), dim=0)

bary, log = barycenter_stabilized(A, M, reg=1e-2, log=True)
loss = ((bary - target) ** 2).sum()
loss.backward()
print('iterations', log['niter'], 'loss', round(loss.item(), 6), 'grad norm', round(logits.grad.norm().item(), 6))
