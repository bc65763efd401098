# Inverting network embeddings: an Optimizer object holds the free entries of a symmetric
# matrix as a torch tensor (self.elts) and fits them with scipy's L-BFGS-B; the objective
# converts scipy's numpy vector to torch, uses autograd for the gradient, and hands both back
# as numpy.
import numpy as np
import scipy.optimize
import torch

torch.manual_seed(0)


def pmi_loss_10_elt_param(elts, n, target, vol, verbose):
    x = torch.tensor(elts, dtype=torch.float64, requires_grad=True)
    iu = torch.triu_indices(n, n)
    A = torch.zeros(n, n, dtype=torch.float64)
    A = A.index_put((iu[0], iu[1]), x)
    A = A + A.T - torch.diag(torch.diag(A))
    pmi = torch.log(vol * torch.sigmoid(A) + 1.0)
    loss = ((pmi - target) ** 2).sum()
    loss.backward()
    if verbose:
        print(loss.item())
    return loss.item(), x.grad.numpy()


class Optimizer:
    def __init__(self, adjacency, embedding, filename, rank):
        self.n = adjacency.shape[0]
        self.adj = adjacency
        self.target = torch.log(embedding @ embedding.T + 2.0)
        self.vol = float(adjacency.sum())
        self.filename = filename
        self.rank = rank
        self.elts = torch.zeros(self.n * (self.n + 1) // 2, dtype=torch.float64, requires_grad=True)
        self.iter_num = 0

    def learnNetwork(self, max_iter=20, method="autoshift"):
        self.iter_num = 0

        def callback_elt_param(xk):
            self.iter_num += 1

        res = scipy.optimize.minimize(pmi_loss_10_elt_param, x0=self.elts,
                                      args=(self.n, self.target, self.vol, False), jac=True, method="L-BFGS-B",
                                      callback=callback_elt_param, tol=np.finfo(float).eps,
                                      options={"maxiter": max_iter})
        return res


n = 6
adj = (torch.rand(n, n, dtype=torch.float64) > 0.5).double()
adj = torch.triu(adj, 1) + torch.triu(adj, 1).T
emb = torch.randn(n, 2, dtype=torch.float64)
P = Optimizer(adj, emb, "toy", str(2))
res = P.learnNetwork()
print(res.fun, P.iter_num)
