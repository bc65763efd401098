# A mosec service that scores sentences with a small transformer encoder: the Worker loads the
# model on the GPU when there is one (the meta device stands in for it), and forward() gets a
# dynamic batch of tokenized requests, pads them into one tensor and runs the model. A minimal
# Worker base class and a whitespace tokenizer stand in for mosec and the Hugging Face one.
from typing import List

import torch
import torch.nn as nn

torch.manual_seed(0)
VOCAB = {w: i + 1 for i, w in enumerate("the a cat dog sat ran on mat fast slow".split())}


class Worker:
    def __init__(self):
        self.worker_id = 0

    def forward(self, data):
        raise NotImplementedError


class TinyEncoder(nn.Module):
    def __init__(self, vocab_size=16, dim=32, num_labels=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.classifier = nn.Linear(dim, num_labels)

    def forward(self, input_ids):
        mask = (input_ids != 0).unsqueeze(-1).float()
        hidden = self.encoder(self.embed(input_ids))
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1)  # mean over the real tokens
        return (self.classifier(pooled),)


def tokenize(text):
    return [VOCAB.get(w, 0) for w in text.split()]


class Inference(Worker):
    def __init__(self):
        super().__init__()
        self.device = torch.device("meta")  # torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = TinyEncoder().to(self.device)
        self.model.eval()

    def forward(self, data: List[str]) -> List[int]:
        tensors = [torch.tensor(tokenize(text)) for text in data]
        with torch.no_grad():
            result = self.model(
                torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True)
            )[0]
        return result.argmax(dim=-1)


worker = Inference()
labels = worker.forward(["the cat sat on the mat", "a dog ran fast", "the dog sat"])
print(f"labels {tuple(labels.shape)} on {labels.device.type}")
