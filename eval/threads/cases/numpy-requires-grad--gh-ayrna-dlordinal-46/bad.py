# dlordinal's PytorchEstimator: a scikit-learn style wrapper around an nn.Module for ordinal
# classification, with fit() over a DataLoader, predict_proba() returning softmax probabilities and
# predict() their argmax. The probabilities go to numpy for an ordinal metric (here a mean absolute
# error on expected classes). Random features stand in for the ordinal dataset.
from typing import Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class PytorchEstimator:  # a scikit-learn BaseEstimator in the original
    def __init__(self, model: torch.nn.Module, loss_fn: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 device: torch.device, max_iter: int, **kwargs):
        self.kwargs = kwargs
        self.model = model
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.device = device
        self.max_iter = max_iter

    def fit(self, X: Union[DataLoader, torch.Tensor], y: Optional[torch.Tensor] = None):
        self.model.train()
        for _ in range(self.max_iter):
            for X_batch, y_batch in X:
                X_batch, y_batch = X_batch.to(self.device), y_batch.to(self.device)
                loss = self.loss_fn(self.model(X_batch), y_batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return self

    def predict_proba(self, X: Union[DataLoader, torch.Tensor]):
        if isinstance(X, DataLoader):
            self.model.eval()
            predictions = []
            for _, (X_batch, _) in enumerate(X):
                predictions.append(self._predict_proba(X_batch))
            return torch.cat(predictions)
        elif isinstance(X, torch.Tensor):
            self.model.eval()
            return self._predict_proba(X)
        raise ValueError("X must be a DataLoader or a torch Tensor")

    def _predict_proba(self, X):
        X = X.to(self.device)
        pred = self.model(X)
        probabilities = F.softmax(pred, dim=1)
        return probabilities

    def predict(self, X: Union[DataLoader, torch.Tensor]):
        return torch.argmax(self.predict_proba(X), dim=1)


num_classes = 4
X = torch.randn(64, 10)
y = torch.randint(0, num_classes, (64,))
train_loader = DataLoader(TensorDataset(X[:48], y[:48]), batch_size=16, shuffle=True)
test_loader = DataLoader(TensorDataset(X[48:], y[48:]), batch_size=16)
model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(16, num_classes))
estimator = PytorchEstimator(model, torch.nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), lr=1e-2),
                             torch.device("cpu"), max_iter=3)
estimator.fit(train_loader)
probas = estimator.predict_proba(test_loader).numpy()
expected_class = (probas * np.arange(num_classes)).sum(axis=1)
print("MAE", np.abs(expected_class - y[48:].numpy()).mean())
