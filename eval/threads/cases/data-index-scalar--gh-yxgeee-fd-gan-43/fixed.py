# Person re-identification baseline: a BaseTrainer drives a Siamese verification model and
# keeps AverageMeters of the loss and the top-1 precision for its progress line.
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    ret = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).float().sum(dim=0, keepdim=True)
        ret.append(correct_k.mul_(1. / batch_size))
    return ret


class SiameseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Flatten(), nn.Linear(3 * 16 * 8, 32), nn.ReLU())
        self.verif = nn.Linear(32, 2)

    def forward(self, x1, x2):
        f1, f2 = self.base(x1), self.base(x2)
        return f1, f2, self.verif((f1 - f2).pow(2))


class BaseTrainer(object):
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def train(self, epoch, data_loader, optimizer, print_freq=2):
        self.model.train()
        batch_time = AverageMeter()
        losses = AverageMeter()
        precisions = AverageMeter()
        end = time.time()
        for i, inputs in enumerate(data_loader):
            inputs, targets = self._parse_data(inputs)
            loss, prec1 = self._forward(inputs, targets)

            losses.update(loss.item(), targets.size(0))
            precisions.update(prec1, targets.size(0))

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            batch_time.update(time.time() - end)
            end = time.time()
            if (i + 1) % print_freq == 0:
                print('Epoch: [{}][{}/{}]\tLoss {:.3f} ({:.3f})\tPrec {:.2%} ({:.2%})'.format(
                    epoch, i + 1, len(data_loader), losses.val, losses.avg, precisions.val, precisions.avg))

    def _parse_data(self, inputs):
        raise NotImplementedError

    def _forward(self, inputs, targets):
        raise NotImplementedError


class SiameseTrainer(BaseTrainer):
    def _parse_data(self, inputs):
        imgs1, pids1, imgs2, pids2 = inputs
        targets = (pids1 == pids2).long()
        return [imgs1, imgs2], targets

    def _forward(self, inputs, targets):
        _, _, outputs = self.model(*inputs)
        loss = self.criterion(outputs, targets)
        prec1, = accuracy(outputs.data, targets.data)
        return loss, prec1[0]


pids = torch.randint(0, 3, (32,))
pairs = TensorDataset(torch.randn(32, 3, 16, 8), pids, torch.randn(32, 3, 16, 8), pids.roll(1))
model = SiameseNet()
trainer = SiameseTrainer(model, nn.CrossEntropyLoss())
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    trainer.train(epoch, DataLoader(pairs, batch_size=8), optimizer)
