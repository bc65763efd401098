# Ultra-fine entity typing: one model trained on batches from several supervision sources
# (crowd, wiki, headword) in turn; _train() sums the loss and logs it every few batches.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
NUM_TYPES = 30
LOG_PERIOD = 3


class TypingModel(nn.Module):
    def __init__(self, vocab=100, dim=24):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(2 * dim, NUM_TYPES)

    def forward(self, batch, type_name):
        ctx, _ = self.lstm(self.emb(batch['context']))
        mention = self.emb(batch['mention']).mean(dim=1)
        logits = self.out(torch.cat([ctx[:, -1], mention], dim=1))
        loss = F.binary_cross_entropy_with_logits(logits, batch['y'])
        return loss, logits


def make_gen(n_batches):
    for _ in range(n_batches):
        yield {'context': torch.randint(0, 100, (8, 10)),
               'mention': torch.randint(0, 100, (8, 3)),
               'y': (torch.rand(8, NUM_TYPES) < 0.1).float()}


def _train(model, steps=4):
    train_gen_list = [('crowd', make_gen(steps)), ('wiki', make_gen(steps)), ('head', make_gen(steps))]
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    total_loss = 0.
    batch_num = 0
    start_time = time.time()
    while True:
        batch_num += 1
        for (type_name, data_gen) in train_gen_list:
            try:
                batch = next(data_gen)
            except StopIteration:
                print(type_name + " finished at " + str(batch_num))
                return total_loss
            optimizer.zero_grad()
            loss, output_logits = model(batch, type_name)
            loss.backward()
            total_loss += loss.data.cpu().item()
            optimizer.step()

            if batch_num % LOG_PERIOD == 0 and batch_num > 0:
                cur_loss = float(1.0 * loss.data.cpu().item())
                elapsed = time.time() - start_time
                print('|loss {0:3f} | at {1:d}step | @ {2:.2f} ms/batch'.format(cur_loss, batch_num, elapsed * 1000))
                start_time = time.time()


_train(TypingModel())
