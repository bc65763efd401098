# Training a DeepTDA collective variable with dropout switched on: the FeedForward builder
# appends an in-place Dropout after each in-place ReLU activation.
import torch

torch.manual_seed(0)


def get_activation(activation):
    if activation == "relu":
        return torch.nn.ReLU(True)
    if activation == "tanh":
        return torch.nn.Tanh()
    raise ValueError(activation)


class FeedForward(torch.nn.Module):
    """Linear -> activation -> dropout -> batchnorm for each hidden layer."""

    def __init__(self, layers, activation="relu", dropout=None, batchnorm=False):
        super().__init__()
        n_layers = len(layers) - 1
        dropout_list = dropout if isinstance(dropout, list) else [dropout] * n_layers
        modules = []
        for i in range(n_layers):
            modules.append(torch.nn.Linear(layers[i], layers[i + 1]))
            last = i == n_layers - 1
            if activation is not None and not last:
                modules.append(get_activation(activation))
            if dropout_list[i] is not None and not last:
                modules.append(torch.nn.Dropout(p=dropout_list[i], inplace=False))
            if batchnorm and not last:
                modules.append(torch.nn.BatchNorm1d(layers[i + 1]))
        self.nn = torch.nn.Sequential(*modules)

    def forward(self, x):
        return self.nn(x)


class DeepTDA(torch.nn.Module):
    def __init__(self, layers, target_centers, target_sigmas, dropout=None):
        super().__init__()
        self.nn = FeedForward(layers, dropout=dropout)
        self.target_centers = torch.tensor(target_centers)
        self.target_sigmas = torch.tensor(target_sigmas)

    def loss(self, cv, labels):
        loss = 0.0
        for i, (mu, sigma) in enumerate(zip(self.target_centers, self.target_sigmas)):
            cv_i = cv[labels == i]
            loss = loss + (cv_i.mean() - mu) ** 2 + (cv_i.std() - sigma) ** 2
        return loss


descriptors = torch.cat([torch.randn(32, 4) - 1.0, torch.randn(32, 4) + 1.0])
labels = torch.cat([torch.zeros(32), torch.ones(32)]).long()
model = DeepTDA([4, 16, 8, 1], target_centers=[-7.0, 7.0], target_sigmas=[0.2, 0.2],
                dropout=[0.2, 0.4, 0.6])
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

model.train()
for epoch in range(3):
    cv = model.nn(descriptors).squeeze(-1)
    loss = model.loss(cv, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, float(loss))
