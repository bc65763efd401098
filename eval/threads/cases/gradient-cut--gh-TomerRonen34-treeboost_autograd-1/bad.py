# A gradient-boosting custom objective written as a PyTorch loss: the library turns the
# booster's predictions into a tensor that requires grad, calls the user's loss, and
# takes first and second derivatives with autograd. The user's loss is a correlation.
import numpy as np
import torch

rng = np.random.default_rng(0)


class TorchObjective:
    """What the library does for CatBoostRegressor(loss_function=...)."""

    def __init__(self, loss_function):
        self.loss_function = loss_function

    def calc_ders_range(self, approxes, targets, weights=None):
        preds = torch.tensor(np.asarray(approxes), dtype=torch.float64, requires_grad=True)
        targets = torch.tensor(np.asarray(targets), dtype=torch.float64)
        loss = self.loss_function(preds, targets)
        grad = torch.autograd.grad(loss, preds, create_graph=True)[0]
        hess = torch.autograd.grad(grad.sum(), preds, allow_unused=True)[0]
        hess = torch.zeros_like(grad) if hess is None else hess
        return list(zip((-grad).tolist(), (-hess).tolist()))


def spearman_loss(ypred, ytrue):
    lenypred = ypred.shape[0]
    lenytrue = ytrue.shape[0]
    ypred_th = torch.tensor(ypred.reshape(1, lenypred), requires_grad=True)
    ytrue_th = ytrue.reshape(1, lenytrue)
    pred_c = ypred_th - ypred_th.mean()
    true_c = ytrue_th - ytrue_th.mean()
    corr = (pred_c * true_c).sum() / (pred_c.norm() * true_c.norm() + 1e-12)
    return -corr


objective = TorchObjective(spearman_loss)
approxes = rng.normal(size=50)
targets = approxes * 0.5 + rng.normal(size=50)
ders = objective.calc_ders_range(approxes, targets)
print("first derivatives", [round(d[0], 4) for d in ders[:5]])
