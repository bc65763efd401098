# Deep Reinforcement Learning in Action, Appendix A.4: a two-layer network written as a function of
# its weight tensors is trained on MNIST with plain gradient descent, the loss of every step is kept
# in a list, and the list is plotted. Random images stand in for MNIST; the plt class stands in for
# matplotlib.pyplot (plot converts its data with np.asarray, as matplotlib does).
import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)


class plt:
    lines = []

    @staticmethod
    def figure(figsize=None):
        pass

    @staticmethod
    def xlabel(label, fontsize=None):
        pass

    @staticmethod
    def ylabel(label, fontsize=None):
        pass

    @staticmethod
    def plot(y):
        plt.lines.append(np.asarray(y))


def nn(x, w1, w2):
    l1 = x @ w1
    l1 = torch.relu(l1)
    l2 = l1 @ w2
    return l2


w1 = torch.randn(784, 200, requires_grad=True)
w2 = torch.randn(200, 10, requires_grad=True)

train_data = (torch.rand(2000, 28, 28) * 255).round()
train_labels = torch.randint(0, 10, (2000,))

lr = 0.0001
epochs = 50
batch_size = 100
losses = []
lossfn = torch.nn.CrossEntropyLoss()
for i in range(epochs):
    rid = np.random.randint(0, train_data.shape[0], size=batch_size)
    x = train_data[rid].float().flatten(start_dim=1)
    x /= x.max()
    pred = nn(x, w1, w2)
    target = train_labels[rid]
    loss = lossfn(pred, target)
    losses.append(loss.detach())
    loss.backward()
    with torch.no_grad():
        w1 -= lr * w1.grad
        w2 -= lr * w2.grad

plt.figure(figsize=(10, 7))
plt.xlabel("Training Time", fontsize=22)
plt.ylabel("Loss", fontsize=22)
plt.plot(losses)
print(plt.lines[0].shape)
