import torch
from torch import nn


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.fc(self.emb(tokens))


def encode(sentences, vocab):
    return torch.Tensor([[vocab[w] for w in s.split()] for s in sentences])


vocab = {"a": 0, "good": 1, "bad": 2, "movie": 3}
model = TextClassifier(4, 8, 2)
print(model(encode(["a good movie", "a bad movie"], vocab)).shape)
