# Testing an adversarially trained network: the test loop runs under torch.no_grad() and
# builds untargeted PGD examples for every batch before evaluating on them.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn):
    delta = torch.zeros_like(xvar)
    delta.requires_grad_()
    for ii in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        loss.backward()
        grad_sign = delta.grad.data.sign()
        delta.data = delta.data + eps_iter * grad_sign
        delta.data = torch.clamp(delta.data, -eps, eps)
        delta.data = torch.clamp(xvar.data + delta.data, 0.0, 1.0) - xvar.data
        delta.grad.data.zero_()
    return (xvar + delta).detach()


class LinfPGDAttack:
    def __init__(self, predict, eps=0.3, nb_iter=5, eps_iter=0.05):
        self.predict = predict
        self.eps, self.nb_iter, self.eps_iter = eps, nb_iter, eps_iter
        self.loss_fn = nn.CrossEntropyLoss(reduction="sum")

    def perturb(self, x, y):
        return perturb_iterative(x, y, self.predict, self.nb_iter, self.eps, self.eps_iter, self.loss_fn)


net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 64), nn.ReLU(), nn.Linear(64, 10))
net.eval()
adversary = LinfPGDAttack(net)
testloader = [(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(3)]


def test():
    correct = total = 0
    for batch_idx, (inputs, targets) in enumerate(testloader):
        adv_untargeted = adversary.perturb(inputs, targets)
        inputs = adv_untargeted

        outputs = net(inputs)
        correct += (outputs.argmax(1) == targets).sum().item()
        total += targets.numel()
    print(f"adversarial accuracy {correct / total:.3f}")


test()
