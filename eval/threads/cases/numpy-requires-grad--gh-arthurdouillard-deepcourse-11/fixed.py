# The autograd notebook of a deep-learning course: logistic regression written by hand with
# parameters w and b that require grad, gradients from loss.backward(), a manual SGD update
# under torch.no_grad(), and the loss and accuracy per epoch plotted side by side at the end.
# Random points stand in for the toy dataset; the plt class stands in for matplotlib.pyplot
# (plot converts its inputs with np.asarray).
import numpy as np
import torch

torch.manual_seed(0)


class plt:
    lines = []

    @staticmethod
    def subplot(*args):
        pass

    @staticmethod
    def plot(x, y):
        plt.lines.append((np.asarray(x), np.asarray(y)))

    @staticmethod
    def xlabel(label):
        pass

    @staticmethod
    def ylabel(label):
        pass


x = torch.randn(200, 2)
y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()

w = torch.randn(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
learning_rate = 0.5

epochs, losses, accuracies = [], [], []
for epoch in range(20):
    probs = torch.sigmoid(x @ w + b)
    loss = -(y * torch.log(probs) + (1 - y) * torch.log(1 - probs)).mean()
    loss.backward()
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
        w.grad.zero_()
        b.grad.zero_()
    accuracy = ((probs > 0.5).float() == y).float().mean().item()
    epochs.append(epoch)
    losses.append(loss.detach())
    accuracies.append(accuracy)

plt.subplot(1, 2, 1)
plt.plot(epochs, losses)
plt.xlabel("Epoch")
plt.ylabel("Loss")
plt.subplot(1, 2, 2)
plt.plot(epochs, accuracies)
plt.xlabel("Epoch")
plt.ylabel("Accuracy")
print("final loss", round(losses[-1].item(), 4), "accuracy", accuracies[-1])
