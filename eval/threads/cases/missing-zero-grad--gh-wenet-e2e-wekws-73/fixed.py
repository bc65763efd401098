# Keyword spotting toolkit: an Executor class runs one training epoch of a small GRU
# keyword model with a max-pooling loss, clipping the gradient norm before each step.
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

torch.manual_seed(0)


def max_pooling_loss(logits, target, lengths):
    probs = torch.sigmoid(logits)
    max_probs = probs.max(dim=1).values
    loss = F.binary_cross_entropy(max_probs, F.one_hot(target, logits.size(-1)).float())
    acc = ((max_probs > 0.5).long().argmax(-1) == target).float().mean().item()
    return loss, acc


def criterion(loss_type, logits, target, lengths):
    if loss_type == 'max_pooling':
        return max_pooling_loss(logits, target, lengths)
    raise ValueError(loss_type)


class KWSModel(nn.Module):
    def __init__(self, idim=40, hdim=32, num_keywords=2):
        super().__init__()
        self.gru = nn.GRU(idim, hdim, batch_first=True)
        self.classifier = nn.Linear(hdim, num_keywords)

    def forward(self, feats):
        h, _ = self.gru(feats)
        return self.classifier(h)


class Executor:
    def __init__(self):
        self.step = 0

    def train(self, model, optimizer, data_loader, device, writer, args):
        ''' Train one epoch
        '''
        model.train()
        clip = args.get('grad_clip', 50.0)
        log_interval = args.get('log_interval', 10)
        epoch = args.get('epoch', 0)
        for batch_idx, batch in enumerate(data_loader):
            key, feats, target, feats_lengths = batch
            feats = feats.to(device)
            target = target.to(device)
            feats_lengths = feats_lengths.to(device)
            num_utts = feats_lengths.size(0)
            if num_utts == 0:
                continue
            logits = model(feats)
            loss_type = args.get('criterion', 'max_pooling')
            loss, acc = criterion(loss_type, logits, target, feats_lengths)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = clip_grad_norm_(model.parameters(), clip)
            if torch.isfinite(grad_norm):
                optimizer.step()
            if batch_idx % log_interval == 0:
                logging.warning('TRAIN Batch {}/{} loss {:.8f} acc {:.8f}'.format(epoch, batch_idx, loss.item(), acc))


def make_batch():
    return (["utt"] * 4, torch.randn(4, 20, 40), torch.randint(0, 2, (4,)), torch.full((4,), 20))


device = torch.device('cpu')
model = KWSModel().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
executor = Executor()
train_data_loader = [make_batch() for _ in range(6)]
for epoch in range(2):
    executor.train(model, optimizer, train_data_loader, device, None, {'epoch': epoch, 'log_interval': 3})

# -- corpus check --
for group in optimizer.param_groups:
    group["lr"] = 0.0
batch = make_batch()
grads = []
for _ in range(2):
    executor.train(model, optimizer, [batch], device, None, {'epoch': -1})
    grads.append(model.classifier.weight.grad.clone())
if not torch.allclose(grads[0], grads[1]):
    print("BUG: the same batch at the same weights left different .grad: gradients are never zeroed between batches")
