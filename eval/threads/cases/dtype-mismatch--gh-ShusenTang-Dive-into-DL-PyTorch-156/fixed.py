# Dive into DL (PyTorch), 3.9 "MLP from scratch": the weights are drawn with numpy and made into
# tensors by hand, net() multiplies the flattened images by them, and d2l.train_ch3 trains with the
# book's hand-written sgd. Small stand-ins for the d2lzh_pytorch helpers; random images stand in
# for Fashion-MNIST.
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)


class d2l:
    @staticmethod
    def load_data_fashion_mnist(batch_size):
        images, labels = torch.rand(512, 1, 28, 28), torch.randint(0, 10, (512,))
        train = DataLoader(TensorDataset(images[:384], labels[:384]), batch_size=batch_size, shuffle=True)
        test = DataLoader(TensorDataset(images[384:], labels[384:]), batch_size=batch_size)
        return train, test

    @staticmethod
    def sgd(params, lr, batch_size):
        for param in params:
            param.data -= lr * param.grad / batch_size

    @staticmethod
    def evaluate_accuracy(data_iter, net):
        acc_sum, n = 0.0, 0
        for X, y in data_iter:
            acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            n += y.shape[0]
        return acc_sum / n

    @staticmethod
    def train_ch3(net, train_iter, test_iter, loss, num_epochs, batch_size, params=None, lr=None, optimizer=None):
        for epoch in range(num_epochs):
            train_l_sum, train_acc_sum, n = 0.0, 0.0, 0
            for X, y in train_iter:
                y_hat = net(X)
                l = loss(y_hat, y).sum()

                if params is not None and params[0].grad is not None:
                    for param in params:
                        param.grad.data.zero_()

                l.backward()
                d2l.sgd(params, lr, batch_size)

                train_l_sum += l.item()
                train_acc_sum += (y_hat.argmax(dim=1) == y).sum().item()
                n += y.shape[0]
            test_acc = d2l.evaluate_accuracy(test_iter, net)
            print('epoch %d, loss %.4f, train acc %.3f, test acc %.3f'
                  % (epoch + 1, train_l_sum / n, train_acc_sum / n, test_acc))


batch_size = 64
train_iter, test_iter = d2l.load_data_fashion_mnist(batch_size)

num_inputs, num_outputs, num_hiddens = 784, 10, 256

W1 = torch.tensor(np.random.normal(0, 0.01, (num_inputs, num_hiddens)), dtype=torch.float)
b1 = torch.zeros(num_hiddens, dtype=torch.float)
W2 = torch.tensor(np.random.normal(0, 0.01, (num_hiddens, num_outputs)), dtype=torch.float)
b2 = torch.zeros(num_outputs, dtype=torch.float)

params = [W1, b1, W2, b2]
for param in params:
    param.requires_grad_(requires_grad=True)


def relu(X):
    return torch.max(input=X, other=torch.tensor(0.0))


def net(X):
    X = X.view((-1, num_inputs))
    H = relu(torch.matmul(X, W1) + b1)
    return torch.matmul(H, W2) + b2


loss = torch.nn.CrossEntropyLoss()

num_epochs, lr = 2, 100.0
d2l.train_ch3(net, train_iter, test_iter, loss, num_epochs, batch_size, params, lr)
