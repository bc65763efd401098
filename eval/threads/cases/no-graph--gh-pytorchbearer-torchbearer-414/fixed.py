# torchbearer's Trial (0.2.x): with criterion=None the loss starts as a zeros tensor that callbacks
# add their terms to in on_criterion, and the trial then calls backward() on it. A VAE is trained
# this way, the KL term being added by a callback that only joins after a warm-up epoch (the
# reconstruction term is a regularizer-style callback too). Random data stands in for MNIST.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
LOSS, Y_PRED, Y_TRUE, EPOCH, MODEL = "loss", "y_pred", "y_true", "epoch", "model"
DEVICE, DATA_TYPE = "device", "dtype"


class Callback:
    def on_criterion(self, state):
        pass


class Trial(object):
    def __init__(self, model, optimizer=None, criterion=None, callbacks=[]):
        if criterion is None:
            def criterion(_, __):
                return torch.zeros(1, device=self.state[DEVICE], dtype=self.state[DATA_TYPE], requires_grad=True)

        self.criterion = criterion
        self.callbacks = callbacks
        self.state = {MODEL: model, "optimizer": optimizer, DEVICE: torch.device("cpu"), DATA_TYPE: torch.float32}

    def run(self, loader, epochs=1):
        state = self.state
        for epoch in range(epochs):
            state[EPOCH] = epoch
            for x, y in loader:
                state["optimizer"].zero_grad()
                state[Y_PRED] = state[MODEL](x)
                state[Y_TRUE] = y
                state[LOSS] = self.criterion(state[Y_PRED], state[Y_TRUE])
                for callback in self.callbacks:
                    callback.on_criterion(state)
                state[LOSS].backward()
                state["optimizer"].step()
            print("epoch", epoch, state[LOSS].item())


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(784, 2 * 8)
        self.dec = nn.Linear(8, 784)

    def forward(self, x):
        self.mu, self.logvar = self.enc(x.view(-1, 784)).chunk(2, dim=1)
        z = self.mu + torch.randn_like(self.mu) * (0.5 * self.logvar).exp()
        return torch.sigmoid(self.dec(z)).view_as(x)


class KLDivergence(Callback):
    def __init__(self, warmup_epochs=1):
        self.warmup_epochs = warmup_epochs

    def on_criterion(self, state):
        if state[EPOCH] >= self.warmup_epochs:
            model = state[MODEL]
            kl = -0.5 * torch.mean(1 + model.logvar - model.mu.pow(2) - model.logvar.exp())
            state[LOSS] = state[LOSS] + kl


class Reconstruction(Callback):
    def __init__(self, start_epoch=1):
        self.start_epoch = start_epoch

    def on_criterion(self, state):
        if state[EPOCH] >= self.start_epoch:
            state[LOSS] = state[LOSS] + F.binary_cross_entropy(state[Y_PRED], state[Y_TRUE])


model = VAE()
data = torch.rand(64, 1, 28, 28)
loader = [(data[i:i + 16], data[i:i + 16]) for i in range(0, 64, 16)]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
trial = Trial(model, optimizer, criterion=None, callbacks=[KLDivergence(warmup_epochs=1), Reconstruction(start_epoch=1)])
trial.run(loader, epochs=2)
