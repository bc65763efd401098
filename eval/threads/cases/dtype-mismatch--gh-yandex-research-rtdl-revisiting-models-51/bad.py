# FT-Transformer on a tabular regression task (rtdl style): the numerical features are read and
# standardized with numpy, turned into tensors per split, and a feature tokenizer + transformer
# predicts the target.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(0)
device = torch.device("cpu")


class NumericalFeatureTokenizer(nn.Module):
    def __init__(self, n_features, d_token):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_features, d_token) / d_token ** 0.5)
        self.bias = nn.Parameter(torch.zeros(n_features, d_token))

    def forward(self, x):
        return x[..., None] * self.weight + self.bias


class FTTransformer(nn.Module):
    def __init__(self, n_features, d_token=32, n_blocks=2, d_out=1):
        super().__init__()
        self.tokenizer = NumericalFeatureTokenizer(n_features, d_token)
        self.cls = nn.Parameter(torch.randn(1, 1, d_token) / d_token ** 0.5)
        block = nn.TransformerEncoderLayer(d_token, nhead=4, dim_feedforward=64, batch_first=True)
        self.blocks = nn.TransformerEncoder(block, n_blocks)
        self.head = nn.Sequential(nn.LayerNorm(d_token), nn.ReLU(), nn.Linear(d_token, d_out))

    def forward(self, x_num):
        x = self.tokenizer(x_num)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1)
        return self.head(self.blocks(x)[:, 0]).squeeze(-1)


def load_split(n, n_features=8):
    X = rng.normal(2.0, 3.0, size=(n, n_features))  # float64, as stored in the dataset files
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(0, 0.1, size=n)
    return X, y


data = {part: load_split(n) for part, n in [("train", 256), ("val", 64)]}
mean, std = data["train"][0].mean(0), data["train"][0].std(0)
X = {part: (x - mean) / std for part, (x, _) in data.items()}
X = {part: torch.as_tensor(x, device=device) for part, x in X.items()}
Y = {part: torch.as_tensor(y, device=device, dtype=torch.float32) for part, (_, y) in data.items()}

model = FTTransformer(n_features=8).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-5)
for epoch in range(2):
    for idx in torch.randperm(len(X["train"])).split(64):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X["train"][idx]), Y["train"][idx])
        loss.backward()
        optimizer.step()
    print(epoch, "train loss", round(loss.item(), 4))
