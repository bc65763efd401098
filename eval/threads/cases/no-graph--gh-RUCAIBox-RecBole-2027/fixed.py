# A "dummy" recommender that scores user/item pairs with pre-trained embeddings loaded through
# nn.Embedding.from_pretrained, trained by a small Trainer with a BPR loss. Random matrices stand
# in for the embedding files, random triples (user, positive item, negative item) for the data.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

N_USERS, N_ITEMS, DIM = 50, 80, 16


class DummyModel(nn.Module):
    def __init__(self, user_weights, item_weights):
        super().__init__()
        self.user_embedding = nn.Embedding.from_pretrained(user_weights, freeze=False)
        self.item_embedding = nn.Embedding.from_pretrained(item_weights, freeze=False)

    def forward(self, user, item):
        return (self.user_embedding(user) * self.item_embedding(item)).sum(dim=-1)

    def calculate_loss(self, user, pos_item, neg_item):
        pos_score = self.forward(user, pos_item)
        neg_score = self.forward(user, neg_item)
        return -torch.log(torch.sigmoid(pos_score - neg_score) + 1e-10).mean()


class Trainer:
    def __init__(self, model, lr=1e-3):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def _train_epoch(self, train_data):
        self.model.train()
        total = 0.0
        for user, pos, neg in train_data:
            self.optimizer.zero_grad()
            loss = self.model.calculate_loss(user, pos, neg)
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total

    def fit(self, train_data, epochs=2):
        for epoch in range(epochs):
            print("epoch", epoch, "loss", round(self._train_epoch(train_data), 4))


user_w = torch.randn(N_USERS, DIM)
item_w = torch.randn(N_ITEMS, DIM)
triples = TensorDataset(torch.randint(0, N_USERS, (256,)), torch.randint(0, N_ITEMS, (256,)),
                        torch.randint(0, N_ITEMS, (256,)))
trainer = Trainer(DummyModel(user_w, item_w))
trainer.fit(DataLoader(triples, batch_size=64, shuffle=True))
