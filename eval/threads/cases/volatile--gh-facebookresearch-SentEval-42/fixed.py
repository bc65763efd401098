# SentEval-style PyTorch classifier on top of sentence embeddings: fit() trains a small MLP with
# early stopping, score() evaluates dev batches wrapped in Variable(..., volatile=True).
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)


class PyTorchClassifier:
    def __init__(self, inputdim, nclasses, batch_size=16):
        self.batch_size = batch_size
        self.model = nn.Sequential(nn.Linear(inputdim, 32), nn.Tanh(), nn.Linear(32, nclasses))
        self.loss_fn = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters())

    def trainepoch(self, X, y):
        self.model.train()
        permutation = np.random.permutation(len(X))
        for i in range(0, len(X), self.batch_size):
            idx = torch.from_numpy(permutation[i:i + self.batch_size]).long()
            Xbatch, ybatch = Variable(X[idx]), Variable(y[idx])
            loss = self.loss_fn(self.model(Xbatch), ybatch)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self, X, y, validation_data, max_epoch=3):
        devX, devy = validation_data
        bestaccuracy, best_model = -1, None
        for epoch in range(max_epoch):
            self.trainepoch(torch.FloatTensor(X), torch.LongTensor(y))
            accuracy = self.score(devX, devy)
            if accuracy > bestaccuracy:
                bestaccuracy, best_model = accuracy, copy.deepcopy(self.model)
        self.model = best_model
        return bestaccuracy

    def score(self, devX, devy):
        self.model.eval()
        correct = 0
        devX, devy = torch.FloatTensor(devX), torch.LongTensor(devy)
        with torch.no_grad():
            for i in range(0, len(devX), self.batch_size):
                Xbatch = devX[i:i + self.batch_size]
                ybatch = devy[i:i + self.batch_size]
                output = self.model(Xbatch)
                pred = output.data.max(1)[1]
                correct += pred.long().eq(ybatch.data.long()).sum().item()
        return 1.0 * correct / len(devX)


X, y = np.random.randn(64, 10).astype(np.float32), np.random.randint(0, 3, 64)
devX, devy = np.random.randn(32, 10).astype(np.float32), np.random.randint(0, 3, 32)
clf = PyTorchClassifier(inputdim=10, nclasses=3)
print("dev accuracy", clf.fit(X, y, validation_data=(devX, devy)))
