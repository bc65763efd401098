# Tracker training framework: an Actor returns (loss, stats) for each batch and LTRTrainer
# feeds every stat into a per-loader AverageMeter that is printed and logged.
import time
from collections import OrderedDict

import torch
import torch.nn as nn

torch.manual_seed(0)


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class BBRegActor:
    def __init__(self, net, objective):
        self.net = net
        self.objective = objective

    def train(self, mode=True):
        self.net.train(mode)

    def __call__(self, data):
        iou_pred = self.net(data['train_images'], data['proposals'])
        loss = self.objective(iou_pred, data['proposal_iou'])
        stats = {'Loss/total': loss, 'Loss/iou': loss}
        return loss, stats


class Loader:
    def __init__(self, name, training, batch_size, n_batches):
        self.name, self.training, self.batch_size, self.n = name, training, batch_size, n_batches

    def __len__(self):
        return self.n

    def __iter__(self):
        for _ in range(self.n):
            yield {'train_images': torch.randn(self.batch_size, 16),
                   'proposals': torch.randn(self.batch_size, 4),
                   'proposal_iou': torch.rand(self.batch_size, 1)}


class IoUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, feat, proposals):
        return self.fc(torch.cat([feat, proposals], dim=1))


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer, print_interval=2):
        self.actor, self.loaders, self.optimizer = actor, loaders, optimizer
        self.print_interval = print_interval
        self.stats = OrderedDict({loader.name: None for loader in self.loaders})
        self.epoch = 0

    def cycle_dataset(self, loader):
        self.actor.train(loader.training)
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self._update_stats(stats, loader.batch_size, loader)
            self._print_stats(i, loader)
        torch.set_grad_enabled(True)

    def train(self, max_epochs):
        for self.epoch in range(1, max_epochs + 1):
            for loader in self.loaders:
                self.cycle_dataset(loader)

    def _update_stats(self, new_stats: OrderedDict, batch_size, loader):
        if loader.name not in self.stats.keys() or self.stats[loader.name] is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name].keys():
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val.item() if torch.is_tensor(val) else val, batch_size)

    def _print_stats(self, i, loader):
        if i % self.print_interval == 0 or i == len(loader):
            print_str = '[%s: %d, %d / %d] ' % (loader.name, self.epoch, i, len(loader))
            for name, val in self.stats[loader.name].items():
                print_str += '%s: %.5f  ,  ' % (name, val.avg)
            print(print_str[:-5])


net = IoUNet()
actor = BBRegActor(net, nn.MSELoss())
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
trainer = LTRTrainer(actor, [Loader('train', True, 8, 6), Loader('val', False, 8, 2)], optimizer)
trainer.train(2)

# -- corpus check --
meter = trainer.stats['train']['Loss/total']
if torch.is_tensor(meter.sum) and meter.sum.grad_fn is not None:
    print("BUG: the training loss meter's running sum still holds the autograd graph of every batch")
