# An income classifier on three categorical columns (education, workclass, marital status),
# each coded 0..3. The person put one nn.Embedding per column into an nn.Sequential, so the
# second embedding receives the float vectors the first one returned instead of the codes of
# its own column. A random table stands in for the census CSV.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

x = torch.randint(0, 4, (512, 3))
y = (x.sum(dim=1) > 4).long()
proportion = int(0.8 * len(x))
x_train, y_train = x[:proportion], y[:proportion]
x_test, y_test = x[proportion:], y[proportion:]

BATCH_SIZE = 64
train_dataset = TensorDataset(torch.LongTensor(x_train.type(torch.int64)), torch.LongTensor(y_train.type(torch.int64)))
train_dataloader = DataLoader(dataset=train_dataset, batch_size=BATCH_SIZE, shuffle=True)


class IncomeModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedded_layer = nn.Sequential(
            nn.Embedding(num_embeddings=4, embedding_dim=8),
            nn.Embedding(num_embeddings=4, embedding_dim=8),
            nn.Embedding(num_embeddings=4, embedding_dim=8),
        )
        self.stacked_layer = nn.Sequential(
            nn.Linear(in_features=24, out_features=64),
            nn.ReLU(),
            nn.BatchNorm1d(64),
            nn.Linear(in_features=64, out_features=2),
        )

    def forward(self, x):
        x = self.embedded_layer(x)
        x = x.flatten(1)
        return self.stacked_layer(x)


model = IncomeModel()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    model.train()
    for X, labels in train_dataloader:
        y_pred = model(X)
        loss = loss_fn(y_pred, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
