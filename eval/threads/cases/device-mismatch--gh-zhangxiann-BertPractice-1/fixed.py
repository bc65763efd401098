# Sentiment classification practice with a (small) BERT-style encoder: each batch of the
# DataLoader holds input_ids, attention_mask and label; training runs on the GPU (the meta
# device stands in for it here).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")


class BertClassifier(nn.Module):
    def __init__(self, vocab_size=1000, hidden=64, num_labels=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        layer = nn.TransformerEncoderLayer(hidden, nhead=4, dim_feedforward=128, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(self.embeddings(input_ids), src_key_padding_mask=attention_mask == 0)
        return self.classifier(self.dropout(hidden[:, 0]))


def train(model, train_loader, optimizer, criterion):
    model.train()
    for input_ids, attention_mask, label in train_loader:
        input_ids = input_ids.to(device)
        attention_mask = attention_mask.to(device)
        label = label.to(device)
        output = model(input_ids, attention_mask)
        loss = criterion(output, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


input_ids = torch.randint(1, 1000, (16, 24))
attention_mask = torch.ones(16, 24, dtype=torch.long)
labels = torch.randint(0, 2, (16,))
train_loader = DataLoader(TensorDataset(input_ids, attention_mask, labels), batch_size=8, shuffle=True)

model = BertClassifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    loss = train(model, train_loader, optimizer, criterion)
    print(epoch, loss.shape, loss.device)
