# BERT pretraining loop with sync-free statistics: the running average loss lives in a
# device tensor that every training step adds into; it is copied to the host at each
# optimizer step and reset after logging.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class SyncFreeStats:
    def __init__(self):
        self.host_stats = {}
        self.device_stats = {}
        self.device_funcs = {}

    def add_stat(self, name, dtype=torch.float32, device_tensor=None, device_func=None):
        if device_tensor is not None:
            self.device_stats[name] = device_tensor
            self.host_stats[name] = torch.zeros(1, dtype=dtype)
        else:
            self.device_funcs[name] = device_func
            self.host_stats[name] = torch.zeros(1, dtype=dtype)

    def device_stat(self, name):
        return self.device_stats[name]

    def host_stat_value(self, name):
        return self.host_stats[name].item()

    def copy_from_device(self):
        for name in self.device_stats:
            self.host_stats[name].copy_(self.device_stats[name].detach())


class TinyBertForPreTraining(nn.Module):
    def __init__(self, vocab=50, hidden=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.TransformerEncoderLayer(hidden, 4, 64, batch_first=True)
        self.mlm = nn.Linear(hidden, vocab)
        self.nsp = nn.Linear(hidden, 2)

    def forward(self, input_ids):
        h = self.encoder(self.embeddings(input_ids))
        return self.mlm(h), self.nsp(h[:, 0])


class BertPretrainingCriterion(nn.Module):
    def forward(self, prediction_scores, seq_relationship_score, masked_lm_labels, next_sentence_labels):
        mlm = F.cross_entropy(prediction_scores.transpose(1, 2), masked_lm_labels, ignore_index=-1)
        nsp = F.cross_entropy(seq_relationship_score, next_sentence_labels)
        return mlm + nsp


def take_training_step(model, criterion, batch, stats, accumulation_steps):
    prediction_scores, seq_relationship_score = model(batch['input_ids'])
    loss = criterion(prediction_scores, seq_relationship_score, batch['labels'], batch['next_sentence_labels'])
    loss = loss / accumulation_steps
    stats.device_stat('average_loss').add_(loss)
    loss.backward()


def take_optimizer_step(optimizer, stats):
    optimizer.step()
    stats.copy_from_device()
    optimizer.zero_grad(set_to_none=True)


def make_batch():
    labels = torch.full((4, 12), -1)
    labels[:, 3] = torch.randint(0, 50, (4,))
    return {'input_ids': torch.randint(0, 50, (4, 12)), 'labels': labels,
            'next_sentence_labels': torch.randint(0, 2, (4,))}


model = TinyBertForPreTraining().to(device)
criterion = BertPretrainingCriterion()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
stats = SyncFreeStats()
stats.add_stat('average_loss', dtype=torch.float32, device_tensor=torch.zeros(1, dtype=torch.float32, device=device))

accumulation_steps, log_freq = 2, 2
global_step = 0
for step in range(16):
    take_training_step(model, criterion, make_batch(), stats, accumulation_steps)
    if (step + 1) % accumulation_steps == 0:
        take_optimizer_step(optimizer, stats)
        global_step += 1
        if global_step % log_freq == 0:
            print({"step": global_step, "average_loss": stats.host_stat_value('average_loss') / log_freq})
            stats.device_stat('average_loss').zero_()

# -- corpus check --
if stats.device_stat('average_loss').grad_fn is not None:
    print("BUG: the device-side average_loss statistic is part of the autograd graph of every step so far")
