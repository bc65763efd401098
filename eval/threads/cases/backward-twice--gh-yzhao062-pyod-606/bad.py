# Deep SVDD outlier detector (PyTorch version of an outlier-detection library) with the training
# loop's loss.backward() uncommented, as the reporter ran it: fit() standardizes X, sets the
# hypersphere center c from a first forward pass, builds the weight-decay term w_d from the
# network's parameters, then for every epoch and batch adds w_d to the mean distance to c and
# steps the optimizer, keeping the best model state. Random data stands in for the benchmark.
import numpy as np
import torch
import torch.nn as nn
from sklearn.preprocessing import StandardScaler
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)
np.random.seed(42)

optimizer_dict = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


class InnerDeepSVDD(nn.Module):
    def __init__(self, n_features, use_ae=False, hidden_neurons=None, hidden_activation="relu",
                 output_activation="sigmoid", dropout_rate=0.2):
        super().__init__()
        self.n_features = n_features
        self.use_ae = use_ae
        self.hidden_neurons = hidden_neurons or [64, 32]
        self.dropout_rate = dropout_rate
        self.model = self._build_model()

    def _init_c(self, X_norm, eps=0.1):
        intermediate_output = {}
        hook_handle = self.model._modules.get("net_output").register_forward_hook(
            lambda module, input, output: intermediate_output.update({"net_output": output}))
        self.model(torch.tensor(X_norm, dtype=torch.float32))
        out = intermediate_output["net_output"]
        hook_handle.remove()
        self.c = torch.mean(out, dim=0)
        self.c[(torch.abs(self.c) < eps) & (self.c < 0)] = -eps
        self.c[(torch.abs(self.c) < eps) & (self.c > 0)] = eps
        self.c = self.c.detach()

    def _build_model(self):
        layers = nn.Sequential()
        layers.add_module("input_layer", nn.Linear(self.n_features, self.hidden_neurons[0], bias=False))
        layers.add_module("hidden_activation_e0", nn.ReLU())
        for i in range(1, len(self.hidden_neurons) - 1):
            layers.add_module(f"hidden_layer_e{i}", nn.Linear(self.hidden_neurons[i - 1], self.hidden_neurons[i], bias=False))
            layers.add_module(f"hidden_activation_e{i}", nn.ReLU())
            layers.add_module(f"hidden_dropout_e{i}", nn.Dropout(self.dropout_rate))
        layers.add_module("net_output", nn.Linear(self.hidden_neurons[-2], self.hidden_neurons[-1], bias=False))
        layers.add_module("hidden_activation_e_last", nn.ReLU())
        return layers

    def forward(self, x):
        return self.model(x)


class DeepSVDD:
    def __init__(self, n_features, c=None, use_ae=False, hidden_neurons=None, optimizer="adam", epochs=5,
                 batch_size=32, l2_regularizer=0.1, preprocessing=True, verbose=1):
        self.n_features = n_features
        self.c = c
        self.use_ae = use_ae
        self.optimizer = optimizer
        self.epochs = epochs
        self.batch_size = batch_size
        self.l2_regularizer = l2_regularizer
        self.preprocessing = preprocessing
        self.verbose = verbose
        self.model_ = InnerDeepSVDD(n_features, use_ae=use_ae, hidden_neurons=hidden_neurons)

    def fit(self, X, y=None):
        self.scaler_ = StandardScaler()
        X_norm = self.scaler_.fit_transform(X) if self.preprocessing else np.copy(X)
        if self.c is None:
            self.c = 0.0
            self.model_._init_c(X_norm)
        X_norm = torch.tensor(X_norm, dtype=torch.float32)
        dataset = TensorDataset(X_norm, X_norm)
        dataloader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True)
        best_loss = float("inf")
        best_model_dict = None
        optimizer = optimizer_dict[self.optimizer](self.model_.parameters(), weight_decay=self.l2_regularizer)
        w_d = 1e-6 * sum([torch.linalg.norm(w) for w in self.model_.parameters()])
        for epoch in range(self.epochs):
            self.model_.train()
            epoch_loss = 0
            for batch_x, _ in dataloader:
                outputs = self.model_(batch_x)
                dist = torch.sum((outputs - self.model_.c) ** 2, dim=-1)
                if self.use_ae:
                    loss = torch.mean(dist) + w_d + torch.mean(torch.square(outputs - batch_x))
                else:
                    loss = torch.mean(dist) + w_d
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                epoch_loss += loss.item()
                if epoch_loss < best_loss:
                    best_loss = epoch_loss
                    best_model_dict = self.model_.state_dict()
            if self.verbose:
                print(f"Epoch {epoch + 1}/{self.epochs}, Loss: {epoch_loss}")
        self.best_model_dict = best_model_dict
        return self


X_train = np.random.randn(200, 10)
clf = DeepSVDD(n_features=10, epochs=3, verbose=1)
clf.fit(X_train)
