# Fine-tuning an embedding model with a finetuner-style helper: `to_embedding_model` freezes the
# pretrained backbone when asked (freeze=True) and attaches a trainable projection head only when
# an output dimension is given. The tuner trains with a triplet loss on (anchor, positive,
# negative) batches; random tensors stand in for the images.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(self.layer1(self.stem(x))).flatten(1)


def to_embedding_model(model, freeze=False, output_dim=None):
    if freeze:
        for param in model.parameters():
            param.requires_grad = False
    if output_dim:
        model = nn.Sequential(model, nn.Linear(32, output_dim))
    return model


def fit(embed_model, train_data, epochs=1, lr=1e-3):
    optimizer = torch.optim.Adam(embed_model.parameters(), lr=lr)
    for epoch in range(epochs):
        for anchor, pos, neg in DataLoader(train_data, batch_size=8):
            optimizer.zero_grad()
            loss = F.triplet_margin_loss(embed_model(anchor), embed_model(pos), embed_model(neg))
            loss.backward()
            optimizer.step()
        print("epoch", epoch, round(loss.item(), 4))


train_data = TensorDataset(torch.randn(32, 3, 32, 32), torch.randn(32, 3, 32, 32), torch.randn(32, 3, 32, 32))
embed_model = to_embedding_model(ResNetLike(), freeze=True, output_dim=64)
fit(embed_model, train_data)
