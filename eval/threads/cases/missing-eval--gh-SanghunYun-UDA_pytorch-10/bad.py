# Unsupervised data augmentation for text classification: a Trainer object holds the classifier,
# optimizer and data iterators; train() takes steps and every check_steps calls self.eval() with
# the model it trains; eval() loads a checkpoint first when it is given a model file (the
# evaluation-only mode of main.py).
import os
import tempfile
from copy import deepcopy
from types import SimpleNamespace

import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=30, dim=16, n_labels=2, p_drop_hidden=0.5):
        super().__init__()
        self.transformer = nn.Sequential(nn.Embedding(vocab, dim), nn.Dropout(p_drop_hidden))
        self.fc = nn.Linear(dim, dim)
        self.drop = nn.Dropout(p_drop_hidden)
        self.classifier = nn.Linear(dim, n_labels)

    def forward(self, input_ids):
        h = self.transformer(input_ids).mean(1)
        return self.classifier(self.drop(torch.tanh(self.fc(h))))


class Trainer(object):
    """Training Helper class"""
    def __init__(self, cfg, model, data_iter, optimizer, device):
        self.cfg = cfg
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.sup_iter = self.repeat_dataloader(data_iter[0])
        self.eval_iter = data_iter[1]

    def train(self, get_loss, get_acc):
        self.model.train()
        model = self.model.to(self.device)
        global_step = 0
        accuracies = []
        for i in range(self.cfg.total_steps):
            sup_batch = [t.to(self.device) for t in next(self.sup_iter)]
            self.optimizer.zero_grad()
            final_loss = get_loss(model, sup_batch)
            final_loss.backward()
            self.optimizer.step()
            global_step += 1
            if get_acc and global_step % self.cfg.check_steps == 0:
                results = self.eval(get_acc, None, model)
                total_accuracy = torch.cat(results).mean().item()
                accuracies.append(total_accuracy)
                print('Accuracy : %5.3f' % total_accuracy)
        self.save(global_step)
        return accuracies

    def eval(self, evaluate, model_file, model):
        """ evaluation function """
        if model_file:
            self.model.eval()
            self.load(model_file)
            model = self.model.to(self.device)

        results = []
        for batch in deepcopy(self.eval_iter):
            batch = [t.to(self.device) for t in batch]
            with torch.no_grad():
                accuracy, result = evaluate(model, batch)
            results.append(result)
        return results

    def load(self, model_file):
        self.model.load_state_dict(torch.load(model_file, map_location='cpu'))

    def save(self, i):
        torch.save(self.model.state_dict(), os.path.join(self.cfg.results_dir, 'model_steps_' + str(i) + '.pt'))

    def repeat_dataloader(self, iterable):
        while True:
            for x in iterable:
                yield x


def get_loss(model, sup_batch):
    input_ids, label_id = sup_batch
    return nn.functional.cross_entropy(model(input_ids), label_id)


def get_acc(model, batch):
    input_ids, label_id = batch
    logits = model(input_ids)
    result = (logits.argmax(-1) == label_id).float()
    return result.mean().item(), result


def make_batches(n_batches, batch_size=8):
    batches = []
    for _ in range(n_batches):
        ids = torch.randint(0, 30, (batch_size, 12))
        batches.append([ids, (ids[:, 0] > 14).long()])
    return batches


cfg = SimpleNamespace(total_steps=6, check_steps=3, results_dir=tempfile.mkdtemp())
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
eval_data = make_batches(6, batch_size=32)
trainer = Trainer(cfg, model, [make_batches(4), eval_data], optimizer, torch.device('cpu'))
accuracies = trainer.train(get_loss, get_acc)

# -- corpus check --
final = Classifier()
final.load_state_dict(torch.load(os.path.join(cfg.results_dir, 'model_steps_6.pt')))
final.eval()
with torch.no_grad():
    expected = torch.cat([get_acc(final, batch)[1] for batch in eval_data]).mean().item()
if abs(accuracies[-1] - expected) > 1e-6:
    print("BUG: the periodic evaluation ran the classifier in training mode (dropout active)")
