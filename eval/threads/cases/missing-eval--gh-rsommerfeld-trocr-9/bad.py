# TrOCR fine-tuning for handwritten text: a Context holds the VisionEncoderDecoder model, the
# processor and the loaders; train() runs the epochs and calls validate() after each, which decodes
# the validation images with model.generate() through predict() and reports accuracy (predict also
# returns per-example confidence scores). A tiny encoder-decoder with dropout and a character
# processor stand in for the pretrained TrOCR checkpoint; random images for the scans.
from dataclasses import dataclass
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = torch.device("cpu")
VOCAB = "<>_abcdefgh"
MAX_LEN = 4


class TrOCRProcessor:
    def batch_decode(self, sequences, skip_special_tokens=True):
        return ["".join(VOCAB[int(t)] for t in seq[1:] if int(t) > 2) for seq in sequences]


class VisionEncoderDecoderModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                                     nn.Linear(32, 32), nn.Dropout(0.1))
        self.embed = nn.Embedding(len(VOCAB), 32)
        self.decoder = nn.GRUCell(32, 32)
        self.dropout = nn.Dropout(0.1)
        self.lm_head = nn.Linear(32, len(VOCAB))

    def forward(self, pixel_values, labels):
        h = self.encoder(pixel_values)
        tokens = torch.zeros(labels.size(0), dtype=torch.long)
        loss = 0.0
        for t in range(labels.size(1)):
            h = self.decoder(self.embed(tokens), h)
            loss = loss + F.cross_entropy(self.lm_head(self.dropout(h)), labels[:, t])
            tokens = labels[:, t]
        return SimpleNamespace(loss=loss / labels.size(1))

    def generate(self, inputs, return_dict_in_generate=True, output_scores=True):
        h = self.encoder(inputs)
        tokens = torch.zeros(inputs.size(0), dtype=torch.long)
        sequences, scores = [tokens], []
        for _ in range(MAX_LEN):
            h = self.decoder(self.embed(tokens), h)
            logits = self.lm_head(self.dropout(h))
            tokens = logits.argmax(-1)
            sequences.append(tokens)
            scores.append(logits)
        return SimpleNamespace(sequences=torch.stack(sequences, 1), scores=tuple(scores))


class HCRDataset(Dataset):
    def __init__(self, n):
        self.images = torch.rand(n, 1, 16, 48)
        self.labels = torch.randint(3, len(VOCAB), (n, MAX_LEN))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return {"idx": idx, "input": self.images[idx], "label": self.labels[idx]}

    def get_label(self, idx):
        return "".join(VOCAB[int(t)] for t in self.labels[idx])


@dataclass
class Context:
    model: VisionEncoderDecoderModel
    processor: TrOCRProcessor
    train_dataset: HCRDataset
    train_dataloader: DataLoader
    val_dataset: HCRDataset
    val_dataloader: DataLoader


def predict(processor, model, dataloader):
    output = []
    confidence_scores = []

    with torch.no_grad():
        for i, batch in enumerate(dataloader):
            inputs = batch["input"].to(device)

            generated_ids = model.generate(inputs, return_dict_in_generate=True, output_scores=True)
            generated_text = processor.batch_decode(generated_ids.sequences, skip_special_tokens=True)

            ids = [t.item() for t in batch["idx"]]
            output.extend(zip(ids, generated_text))

            batch_confidence_scores = get_confidence_scores(generated_ids)
            confidence_scores.extend(zip(ids, batch_confidence_scores))

    return output, confidence_scores


def get_confidence_scores(generated_ids):
    logits = torch.stack(list(generated_ids.scores), dim=1)
    char_probs = F.softmax(logits, dim=2).max(dim=2)[0]
    return [v.item() for v in char_probs.cumprod(dim=1)[:, -1]]


def validate(context, print_wrong=False):
    predictions, _ = predict(context.processor, context.model, context.val_dataloader)
    assert len(predictions) > 0
    correct_count = sum(1 for id, prediction in predictions if prediction == context.val_dataset.get_label(id))
    return correct_count / len(predictions)


def train(context, num_epochs=5):
    model = context.model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    model.to(device)
    model.train()

    for epoch in range(num_epochs):
        for j, batch in enumerate(context.train_dataloader):
            inputs = batch["input"].to(device)
            labels = batch["label"].to(device)

            outputs = model(pixel_values=inputs, labels=labels)
            loss = outputs.loss
            loss.backward()

            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            del loss, outputs

        if len(context.val_dataloader) > 0:
            accuracy = validate(context)
            print(f"---- Epoch {1 + epoch} ---- Accuracy: {accuracy}")


processor = TrOCRProcessor()
train_dataset, val_dataset = HCRDataset(32), HCRDataset(16)
context = Context(VisionEncoderDecoderModel(), processor, train_dataset, DataLoader(train_dataset, 8, shuffle=True),
                  val_dataset, DataLoader(val_dataset, 8))
train(context, 2)

# -- corpus check --
_, first = predict(context.processor, context.model, context.val_dataloader)
_, second = predict(context.processor, context.model, context.val_dataloader)
if first != second:
    print("BUG: validation decodes with dropout active (the model is never put in eval mode)")
