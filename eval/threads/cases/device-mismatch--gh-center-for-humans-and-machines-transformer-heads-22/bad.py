# A transformer with several heads (a language-model head and a classification head) and the
# library's evaluation helper: evaluate_head_wise() formats the dataset as torch tensors, batches
# it with a DataLoader and calls model(**batch) to get the loss of every head. The model lives on
# the GPU (the meta device stands in for it here); a small list of tokenized examples stands in for
# the Hugging Face dataset, and the losses are reported by shape (meta tensors hold no values).
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = torch.device("meta")  # "cuda"


class TorchFormattedDataset(Dataset):
    """What ds.with_format(type="torch") yields: each row as a dict of CPU tensors."""

    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return {k: torch.tensor(v) for k, v in self.rows[i].items()}


class HeadedModel(nn.Module):
    def __init__(self, vocab=100, hidden=32, num_labels=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(hidden, 4, 64, batch_first=True), 1)
        self.heads = nn.ModuleDict({"lm_head": nn.Linear(hidden, vocab), "sentiment": nn.Linear(hidden, num_labels)})

    def forward(self, input_ids, attention_mask, lm_head, sentiment):
        h = self.encoder(self.embed(input_ids) * attention_mask.unsqueeze(-1))
        lm_logits = self.heads["lm_head"](h[:, :-1])
        cls_logits = self.heads["sentiment"](h[:, -1])
        loss_by_head = {
            "lm_head": F.cross_entropy(lm_logits.reshape(-1, lm_logits.shape[-1]), lm_head[:, 1:].reshape(-1)),
            "sentiment": F.cross_entropy(cls_logits, sentiment),
        }
        return sum(loss_by_head.values()), loss_by_head


@torch.inference_mode()
def evaluate_head_wise(model, ds, collator=None, batch_size=8, epochs=1):
    loader = DataLoader(ds, batch_size=batch_size, collate_fn=collator)
    losses_by_head = defaultdict(list)
    losses = []
    for i, batch in enumerate(loader):
        loss, loss_by_head = model(**batch)
        for key in loss_by_head:
            losses_by_head[key].append(tuple(loss_by_head[key].shape))
        losses.append(tuple(loss.shape))
        if i >= len(loader) * epochs:
            break
    return losses, dict(losses_by_head)


rows = []
for n in range(16):
    ids = torch.randint(1, 100, (12,)).tolist()
    rows.append({"input_ids": ids, "attention_mask": [1] * 12, "lm_head": ids, "sentiment": n % 3})
model = HeadedModel().to(device)
model.eval()
print(evaluate_head_wise(model, TorchFormattedDataset(rows), batch_size=8))
