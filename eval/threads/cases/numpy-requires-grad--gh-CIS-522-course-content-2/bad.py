# CIS-522 W2D1 tutorial, Section 3.5 "Training": linear regression written from scratch, with the
# parameters w and b as leaf tensors, a gradient_descent() helper that updates them under no_grad,
# a `losses` list recorded every epoch, and the loss curve plotted at the end next to the fitted
# line. A stand-in for matplotlib.pyplot converts what it plots with numpy, as matplotlib does.
import numpy as np
import torch

torch.manual_seed(0)


class _Pyplot:  # matplotlib is not installed here: plot/scatter turn their data into arrays like it
    def plot(self, x, y, **kwargs):
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)

    scatter = plot

    def __getattr__(self, name):  # figure, subplot, xlabel, ylabel, title, legend, show
        return lambda *args, **kwargs: None


plt = _Pyplot()


def synthetic_dataset(w, b, num_examples=100, sigma=0.5):
    X = torch.rand(num_examples) * 2 - 1
    y = w * X + b + sigma * torch.randn(num_examples)
    return X, y.reshape(-1, 1)


def linear_regression(X, w, b):
    return X * w + b


def squared_error(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def gradient_descent(w, b, lr):
    with torch.no_grad():
        w -= w.grad * lr
        b -= b.grad * lr
        # Set gradient to zero to flush the cache
        w.grad.zero_()
        b.grad.zero_()
    return (w, b)


N = 100
X, y = synthetic_dataset(1.2, 0.3, num_examples=N)

lr = 1e-2  # learning rate
num_epochs = 200  # number of epochs (updates)
net = linear_regression
loss = squared_error

y_train = y.squeeze()  # to avoid wrong broadcasting

w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

losses = []

for epoch in range(num_epochs):
    if losses and epoch % 50 == 0:
        print("loss: {:.6f}".format(losses[-1]))

    y_hat = net(X, w, b)
    l = loss(y_hat, y_train).mean()  # Loss in `X` and `y`

    # Compute gradient on `l` with respect to `w`, `b`
    l.backward()
    w, b = gradient_descent(w, b, lr)  # Update parameters using their gradient

    losses.append(l)

w_train = w
b_train = b
y_hat = net(X, w_train, b_train).reshape(-1, 1)

plt.figure(figsize=(14, 5))
plt.subplot(1, 2, 1)
plt.plot(range(num_epochs), losses)
plt.xlabel("epoch")
plt.ylabel("loss (a.u.)")

plt.subplot(1, 2, 2)
plt.scatter(X, y_train, label="original data")
plt.plot(X.reshape(-1, 1), y_hat.detach(), label="regression", color="red", linewidth=3.0)
plt.title(f"Toy dataset with {N} samples")
plt.show()
print("w", w_train.item(), "b", b_train.item())
