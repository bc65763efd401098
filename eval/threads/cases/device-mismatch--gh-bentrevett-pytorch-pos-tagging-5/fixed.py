# Part-of-speech tagging with a BiLSTM (the tutorial notebook): embedding -> bidirectional LSTM ->
# linear tag scores, CrossEntropyLoss that ignores the pad tag, and a categorical_accuracy helper
# that divides the correct count by the number of non-pad tokens. The model and the batches are on
# `device` (the GPU in the notebook, the meta device stands in for it here); random token/tag
# batches stand in for the UD English treebank iterator.
import torch
import torch.nn as nn
import torch.optim as optim
import torch.fx.experimental._config

torch.manual_seed(0)
device = torch.device("meta")  # torch.device('cuda' if torch.cuda.is_available() else 'cpu')
# the meta device cannot count nonzero elements; let it assume every element is nonzero
torch.fx.experimental._config.meta_nonzero_assume_all_nonzero = True


class BiLSTMPOSTagger(nn.Module):
    def __init__(self, input_dim, embedding_dim, hidden_dim, output_dim, n_layers, bidirectional, dropout, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(input_dim, embedding_dim, padding_idx=pad_idx)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers, bidirectional=bidirectional,
                            dropout=dropout if n_layers > 1 else 0)
        self.fc = nn.Linear(hidden_dim * 2 if bidirectional else hidden_dim, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text):
        embedded = self.dropout(self.embedding(text))
        outputs, (hidden, cell) = self.lstm(embedded)
        return self.fc(self.dropout(outputs))


def categorical_accuracy(preds, y, tag_pad_idx):
    max_preds = preds.argmax(dim=1, keepdim=True)
    non_pad_elements = (y != tag_pad_idx).nonzero()
    correct = max_preds[non_pad_elements].squeeze(1).eq(y[non_pad_elements])
    return correct.sum() / torch.FloatTensor([y[non_pad_elements].shape[0]]).to(device)


def train(model, iterator, optimizer, criterion, tag_pad_idx):
    epoch_loss = 0
    epoch_acc = 0
    model.train()
    for text, tags in iterator:
        optimizer.zero_grad()
        predictions = model(text)
        predictions = predictions.view(-1, predictions.shape[-1])
        tags = tags.view(-1)
        loss = criterion(predictions, tags)
        acc = categorical_accuracy(predictions, tags, tag_pad_idx)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item() if loss.device.type != "meta" else 0.0
        epoch_acc += acc.item() if acc.device.type != "meta" else 0.0
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


INPUT_DIM, OUTPUT_DIM, PAD_IDX, TAG_PAD_IDX = 100, 18, 1, 0
model = BiLSTMPOSTagger(INPUT_DIM, 16, 16, OUTPUT_DIM, 2, True, 0.25, PAD_IDX).to(device)
optimizer = optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss(ignore_index=TAG_PAD_IDX).to(device)
train_iterator = [(torch.randint(2, INPUT_DIM, (9, 4)).to(device), torch.randint(1, OUTPUT_DIM, (9, 4)).to(device))
                  for _ in range(3)]
for epoch in range(2):
    train_loss, train_acc = train(model, train_iterator, optimizer, criterion, TAG_PAD_IDX)
    print(epoch, train_loss, train_acc)
