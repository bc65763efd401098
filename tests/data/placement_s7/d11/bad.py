import torch
from torch import nn


def build_model(device):
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    model.to(device)
    return model


def predict(model, images):
    batch = torch.stack(images)
    return model(batch).argmax(1)


device = torch.device("meta")
net = build_model(device)
print(predict(net, [torch.randn(1, 8, 8) for _ in range(3)]))
