# Fitting a low-rank tensor decomposition to a picture with a generic optimize() helper that
# keeps a history of the total loss for its convergence test and progress printout.
import time
from functools import reduce

import torch

torch.manual_seed(0)


def optimize(tensors, loss_function, optimizer=torch.optim.Adam, tol=1e-4, max_iter=200, print_freq=50):
    parameters = [t for t in tensors if t.requires_grad]
    optimizer = optimizer(parameters, lr=0.05)
    losses = []
    start = time.time()
    iter = 0
    while True:
        optimizer.zero_grad()
        loss = loss_function(*tensors)
        if not isinstance(loss, (tuple, list)):
            loss = [loss]
        losses.append(reduce(lambda x, y: x + y, loss))
        if len(losses) >= 2:
            delta_loss = (losses[-1] - losses[-2])
        else:
            delta_loss = float('-inf')
        if iter >= 2 and tol is not None and (losses[-1] <= tol or -delta_loss / losses[-1] <= tol) and \
                losses[-2] - losses[-1] < losses[-3] - losses[-2]:
            break
        if iter == max_iter:
            break
        if iter % print_freq == 0:
            print('iter: {:4d} | loss: {} | total time: {:9.4f}'.format(
                iter, ' + '.join('{:10.6f}'.format(l.item()) for l in loss), time.time() - start))
        losses[-1].backward(retain_graph=True)
        optimizer.step()
        iter += 1
    return losses


picture = torch.rand(20, 20)
U = torch.randn(20, 4, requires_grad=True)
V = torch.randn(4, 20, requires_grad=True)


def loss_function(U, V):
    recon = U @ V
    return torch.mean((recon - picture) ** 2), 1e-4 * (U.norm() + V.norm())


losses = optimize([U, V], loss_function)

# -- corpus check --
if any(torch.is_tensor(l) and l.grad_fn is not None for l in losses):
    print("BUG: the loss history holds %d full autograd graphs" % len(losses))
