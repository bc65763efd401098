# skorch (a notebook building a binary classifier for an explainer dashboard): the data are cast
# for the network in get_skorch_classifier (features float32, labels int64, as for a multiclass
# classifier) and given to a binary classifier whose criterion is BCEWithLogitsLoss. A minimal
# NeuralNetBinaryClassifier (fit -> train_step -> get_loss) stands in for skorch's, a random
# table for the person's 298 features.
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)

X = pd.DataFrame(np.random.randn(256, 20), columns=[f"f{i}" for i in range(20)])
y = (X["f0"] + X["f1"] > 0).astype(int).values
X_train, y_train = X.values[:200], y[:200]


class NeuralNetBinaryClassifier:
    def __init__(self, module, criterion=nn.BCEWithLogitsLoss, optimizer=torch.optim.Adam,
                 lr=0.01, max_epochs=5, batch_size=32):
        self.module_ = module
        self.criterion_ = criterion()
        self.optimizer_ = optimizer(self.module_.parameters(), lr=lr)
        self.max_epochs = max_epochs
        self.batch_size = batch_size

    def get_loss(self, y_pred, y_true):
        return self.criterion_(y_pred, y_true)

    def train_step(self, Xi, yi):
        self.module_.train()
        self.optimizer_.zero_grad()
        y_pred = self.module_(Xi).squeeze(-1)
        loss = self.get_loss(y_pred, yi)
        loss.backward()
        self.optimizer_.step()
        return loss

    def fit(self, X, y):
        dataset = TensorDataset(torch.as_tensor(X), torch.as_tensor(y))
        for epoch in range(self.max_epochs):
            for Xi, yi in DataLoader(dataset, batch_size=self.batch_size, shuffle=True):
                loss = self.train_step(Xi, yi)
            print(f"epoch {epoch + 1}: train_loss {loss.item():.4f}")
        return self


def get_skorch_classifier():
    X_train_m = X_train.astype(np.float32)
    y_train_m = y_train.astype(np.float32)

    class MyModule(nn.Module):
        def __init__(self, input=20, l1=60, l2=60, dropout=0.1):
            super().__init__()
            self.layer_1 = nn.Linear(input, l1)
            self.layer_2 = nn.Linear(l1, l2)
            self.layer_out = nn.Linear(l2, 1)
            self.relu = nn.ReLU()
            self.dropout = nn.Dropout(dropout)
            self.batchnorm1 = nn.BatchNorm1d(l1, momentum=0.2)
            self.batchnorm2 = nn.BatchNorm1d(l2, momentum=0.2)

        def forward(self, inputs):
            x = self.dropout(self.batchnorm1(self.relu(self.layer_1(inputs))))
            x = self.dropout(self.batchnorm2(self.relu(self.layer_2(x))))
            return self.layer_out(x)

    net = NeuralNetBinaryClassifier(MyModule(), max_epochs=5, lr=0.01)
    return net.fit(X_train_m, y_train_m)


clf = get_skorch_classifier()
