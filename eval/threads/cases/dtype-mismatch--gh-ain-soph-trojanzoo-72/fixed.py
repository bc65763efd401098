# A backdoor-research toolbox: the GTSRB dataset object carries per-class loss weights (a numpy
# array computed from the label frequencies); the Model wrapper builds its criterion from them.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


class GTSRB:
    num_classes = 5

    def __init__(self):
        self.x = torch.randn(80, 3, 8, 8)
        self.y = torch.from_numpy(np.random.choice(self.num_classes, 80, p=[0.4, 0.3, 0.15, 0.1, 0.05]))
        counts = np.bincount(self.y.numpy(), minlength=self.num_classes)
        # inverse-frequency weights, as stored with the dataset
        self.loss_weights = counts.sum() / (self.num_classes * np.maximum(counts, 1))

    def get_dataloader(self, batch_size=16):
        for i in range(0, len(self.x), batch_size):
            yield self.x[i:i + batch_size], self.y[i:i + batch_size]


class _Net(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class Model:
    def __init__(self, dataset: GTSRB, loss_weights=None):
        self.dataset = dataset
        self._model = _Net(dataset.num_classes)
        if loss_weights is None:
            loss_weights = dataset.loss_weights
        weight = torch.as_tensor(loss_weights, dtype=torch.float) if loss_weights is not None else None
        self.criterion = self.define_criterion(weight=weight)

    def define_criterion(self, weight=None, **kwargs):
        return nn.CrossEntropyLoss(weight=weight, **kwargs)

    def loss(self, _input, _label):
        return self.criterion(self._model(_input), _label)

    def _train(self, epochs, optimizer):
        self._model.train()
        for epoch in range(epochs):
            total = 0.0
            for _input, _label in self.dataset.get_dataloader():
                loss = self.loss(_input, _label)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item()
            print("epoch", epoch, "loss", round(total, 4))


dataset = GTSRB()
model = Model(dataset)
model._train(2, torch.optim.SGD(model._model.parameters(), lr=0.05))
