# VGCN-BERT style text classifier: class weights for the imbalanced labels are computed with
# numpy from the training label counts and passed to F.cross_entropy in the training loop.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)

vocab_size, gcn_embedding_dim, num_classes, seq_len = 50, 16, 3, 12


class VGCNBertLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, gcn_embedding_dim)
        self.vocab_adj = nn.Parameter(torch.eye(vocab_size) + 0.1 * torch.rand(vocab_size, vocab_size))
        self.gcn = nn.Linear(gcn_embedding_dim, gcn_embedding_dim)
        self.dropout = nn.Dropout(0.2)
        self.classifier = nn.Linear(gcn_embedding_dim, num_classes)

    def forward(self, input_ids):
        words = self.word_embeddings(input_ids)                    # (B, T, D)
        graph = torch.relu(self.gcn(self.vocab_adj @ self.word_embeddings.weight))
        pooled = words.mean(1) + graph[input_ids].mean(1)
        return self.classifier(self.dropout(pooled))


train_ids = torch.randint(0, vocab_size, (64, seq_len))
train_y = torch.from_numpy(np.random.choice(num_classes, 64, p=[0.7, 0.2, 0.1]))

# class weights from the label distribution
train_classes_num = np.bincount(train_y.numpy(), minlength=num_classes)
class_weight = train_classes_num.sum() / (num_classes * np.maximum(train_classes_num, 1))
loss_weight = torch.tensor(class_weight)

model = VGCNBertLike()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def train_epoch(model, optimizer, batch_size=16):
    model.train()
    tr_loss = 0.0
    for start in range(0, len(train_ids), batch_size):
        input_ids = train_ids[start:start + batch_size]
        label_ids = train_y[start:start + batch_size]
        logits = model(input_ids)
        loss = F.cross_entropy(logits.view(-1, num_classes), label_ids, loss_weight.float())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        tr_loss += loss.item()
    return tr_loss


for epoch in range(2):
    print("epoch", epoch, "train loss", train_epoch(model, optimizer))
