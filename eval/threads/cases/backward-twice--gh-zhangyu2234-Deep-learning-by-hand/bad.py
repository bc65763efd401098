# Fully connected regression written from scratch: the synthetic labels Y are generated from a
# "true" weight and bias, and the training loop then fits W and b to them batch by batch.
import random

import torch

torch.manual_seed(0)
random.seed(0)


def relu(x):
    return torch.max(x, torch.zeros_like(x))


def loss(y_hat, y):
    return ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).mean()


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def DataLoader(X, Y, batch_size, shuffle=True):
    indices = list(range(len(X)))
    if shuffle:
        random.shuffle(indices)
    for i in range(0, len(X), batch_size):
        batch = torch.tensor(indices[i:i + batch_size])
        yield X[batch], Y[batch]


def fc(x, w, b):
    return relu(torch.mm(x, w) + b)


# Randomly generate our training samples and train labels
num_samples, num_features, num_hiddens = 400, 2, 2
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), requires_grad=True, dtype=torch.float32)
true_b = torch.randn(1, requires_grad=True, dtype=torch.float32)
Y = torch.mm(X, true_W) + true_b

# Randomly generate W and b and attach gradients
W = torch.normal(0, 0.01, size=(num_hiddens, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
batch_size, lr, num_epochs = 20, 0.01, 5

for epoch in range(num_epochs):
    for x, y in DataLoader(X, Y, batch_size, shuffle=True):
        l = loss(fc(x, W, b), y)
        l.backward()
        sgd([W, b], lr, batch_size)
    print('Epoch:{}, Loss:{:.4f}'.format(epoch + 1, l.item()))
