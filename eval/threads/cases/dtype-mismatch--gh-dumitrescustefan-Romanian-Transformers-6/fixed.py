# Romanian-Transformers' token classification evaluation (evaluation/tools): load.py reads a
# CoNLL-style file, subtokenizes every token, encodes the string labels with a scikit-learn
# LabelEncoder and pads tokens, labels and masks into a TensorDataset; train.py fine-tunes a language
# model with a dense head under a weighted CrossEntropyLoss. A small embedding model stands in for
# the BERT model and its tokenizer, and a stand-in LabelEncoder returns the integer type numpy uses
# on Windows (int32), where the person ran it; the data file is written to a temporary folder.
import os
import tempfile

import numpy as np
import torch

torch.manual_seed(0)


class LabelEncoder:  # sklearn.preprocessing.LabelEncoder; transform gives np.intp: int32 on Windows
    def fit(self, y):
        self.classes_ = np.array(sorted(set(y)))
        return self

    def transform(self, y):
        return np.searchsorted(self.classes_, y).astype(np.int32)


class Tokenizer:  # stands in for AutoTokenizer: a word splits into one subtoken per 4 characters
    cls_token_id, sep_token_id, pad_token_id = 1, 2, 0

    def encode(self, token, add_special_tokens=False):
        return [3 + sum(map(ord, token[k:k + 4])) % 90 for k in range(0, len(token), 4)]


def load_data_from_file(path, batch_size, tokens_column, predict_column, max_len, separator,
                        pad_label, null_label, device, label_encoder=None, shuffle=True):
    tokenizer = Tokenizer()
    cls_token_id = tokenizer.cls_token_id
    sep_token_id = tokenizer.sep_token_id

    list_all_tokens = []
    list_all_labels = []
    list_all_masks = []

    with open(path, "r", encoding='utf-8') as file:
        list_tokens = []
        list_labels = []
        for line in file:
            if not line.startswith("#"):
                if line != "\n":
                    tokens = line.split(separator)
                    token = tokens[tokens_column]
                    label = tokens[predict_column].replace("\n", "")
                    subtokens = tokenizer.encode(token, add_special_tokens=False)
                    list_tokens += subtokens
                    list_labels += [label] + [null_label] * (len(subtokens) - 1)
                else:
                    if len(list_tokens) == 0:
                        continue
                    if len(list_tokens) + 2 <= max_len:
                        list_all_tokens.append(torch.tensor([cls_token_id] + list_tokens + [sep_token_id]))
                        list_all_labels.append([pad_label] + list_labels + [pad_label])
                        list_all_masks.append(torch.tensor([1] * (len(list_tokens) + 2)))
                    list_tokens = []
                    list_labels = []

    if label_encoder is None:
        label_encoder = LabelEncoder()
        label_encoder.fit(sum(list_all_labels, []))

    list_all_encoded_labels = [torch.tensor(label_encoder.transform([label if label in label_encoder.classes_ else
                                                                      null_label for label in list_labels]))
                               for list_labels in list_all_labels]

    X = torch.nn.utils.rnn.pad_sequence(list_all_tokens, batch_first=True, padding_value=tokenizer.pad_token_id).to(device)
    y = torch.nn.utils.rnn.pad_sequence(list_all_encoded_labels, batch_first=True, padding_value=label_encoder.transform([pad_label])[0]).long().to(device)
    masks = torch.nn.utils.rnn.pad_sequence(list_all_masks, batch_first=True, padding_value=0).to(device)

    dataset = torch.utils.data.TensorDataset(X, y, masks)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=shuffle)
    return loader, label_encoder


class LangModelWithDense(torch.nn.Module):
    def __init__(self, vocab_size, input_size, num_classes):
        super().__init__()
        self.lang_model = torch.nn.Embedding(vocab_size, input_size)  # AutoModel.from_pretrained(...)
        self.linear = torch.nn.Linear(input_size, num_classes)
        self.dropout = torch.nn.Dropout(0.2)

    def forward(self, x, mask):
        embeddings = self.lang_model(x) * mask.unsqueeze(-1)
        return self.linear(self.dropout(embeddings))


def train_model(model, train_loader, optimizer, criterion, num_classes, epochs, device):
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for i, (train_x, train_y, mask) in enumerate(train_loader):
            optimizer.zero_grad()
            logits = model.forward(train_x, mask)
            loss = criterion(logits.reshape(-1, num_classes).to(device), train_y.reshape(-1).to(device))
            loss.backward()
            optimizer.step()
            total += loss.item()
        print("epoch", epoch + 1, "loss", round(total / len(train_loader), 4))


words = ["Ion", "merge", "la", "Bucuresti", "cu", "trenul", "de", "dimineata", "Maria", "Cluj"]
tags = {"Ion": "B-PER", "Maria": "B-PER", "Bucuresti": "B-LOC", "Cluj": "B-LOC"}
rng = np.random.RandomState(0)
with tempfile.TemporaryDirectory() as tmp:
    train_path = os.path.join(tmp, "train.conllu")
    with open(train_path, "w", encoding="utf-8") as f:
        for _ in range(24):
            for w in rng.choice(words, size=rng.randint(3, 8)):
                f.write(f"{w}\t{tags.get(w, 'O')}\n")
            f.write("\n")
    device = torch.device("cpu")
    train_loader, label_encoder = load_data_from_file(train_path, 8, 0, 1, 64, "\t", "<pad>", "<X>", device)

num_classes = len(label_encoder.classes_)
model = LangModelWithDense(100, 32, num_classes).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
weights = torch.tensor([1 if label != "<pad>" and label != "<X>" else 0 for label in label_encoder.classes_],
                       dtype=torch.float32).to(device)
criterion = torch.nn.CrossEntropyLoss(weight=weights)
train_model(model, train_loader, optimizer, criterion, num_classes, 2, device)
