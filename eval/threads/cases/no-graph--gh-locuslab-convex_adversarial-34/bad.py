# Evaluating a robustly trained MNIST model: evaluate_robust() turns gradients off for the
# whole evaluation, and the PGD error line (_pgd) is uncommented to also report it.
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


# --- attacks.py -----------------------------------------------------------------------
def _pgd(model, X, y, epsilon, niters=5, alpha=0.05):
    out = model(X)
    ce = nn.CrossEntropyLoss()(out, y)
    err = (out.max(1)[1] != y).float().sum() / X.size(0)

    X_pgd = X.clone().requires_grad_(True)
    for i in range(niters):
        opt = optim.Adam([X_pgd], lr=1e-3)
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()
        eta = alpha * X_pgd.grad.sign()
        X_pgd = (X_pgd.detach() + eta).requires_grad_(True)
        eta = torch.clamp(X_pgd.detach() - X, -epsilon, epsilon)
        X_pgd = (X + eta).requires_grad_(True)

    err_pgd = (model(X_pgd).max(1)[1] != y).float().sum() / X.size(0)
    return err, err_pgd


# --- trainer.py -----------------------------------------------------------------------
def evaluate_robust(loader, model, epsilon, epoch, verbose):
    torch.set_grad_enabled(False)
    model.eval()
    all_err, all_pgd_err = [], []
    for i, (X, y) in enumerate(loader):
        out = model(X)
        err = (out.max(1)[1] != y).float().sum() / X.size(0)
        _, pgd_err = _pgd(model, X, y, epsilon)
        all_err.append(err.item())
        all_pgd_err.append(pgd_err.item())
        if verbose and i % verbose == 0:
            print(epoch, i, err.item(), pgd_err.item())
    torch.set_grad_enabled(True)
    return sum(all_err) / len(all_err), sum(all_pgd_err) / len(all_pgd_err)


model = nn.Sequential(nn.Flatten(), nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 10))
test_loader = [(torch.rand(20, 1, 28, 28), torch.randint(0, 10, (20,))) for _ in range(2)]
err = evaluate_robust(test_loader, model, 0.1, 0, verbose=1)
print("robust err", err)
