# Rocket launching (a light net trained together with a booster net that shares its lower
# layers) driven by a torchnet-style Engine whose on_forward hook feeds a loss meter.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Engine:
    """Small stand-in for torchnet.engine.Engine: hooks around a closure-driven step."""

    def __init__(self):
        self.hooks = {}

    def hook(self, name, state):
        if name in self.hooks:
            self.hooks[name](state)

    def train(self, network, iterator, maxepoch, optimizer):
        state = {'network': network, 'iterator': iterator, 'maxepoch': maxepoch,
                 'optimizer': optimizer, 'epoch': 0, 't': 0, 'train': True}
        while state['epoch'] < state['maxepoch']:
            self.hook('on_start_epoch', state)
            for sample in state['iterator']:
                state['sample'] = list(sample)
                self.hook('on_sample', state)

                def closure():
                    loss, output = state['network'](state['sample'])
                    state['output'] = output
                    state['loss'] = loss
                    loss.backward()
                    self.hook('on_forward', state)
                    state['output'] = None
                    state['loss'] = None
                    return loss

                state['optimizer'].zero_grad()
                state['optimizer'].step(closure)
                state['t'] += 1
            state['epoch'] += 1
            self.hook('on_end_epoch', state)
        return state


class AverageValueMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum, self.n = 0.0, 0

    def add(self, value):
        self.sum += value
        self.n += 1

    def value(self):
        return self.sum / max(self.n, 1), 0.0


class RocketNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.light = nn.Linear(32, 5)
        self.booster = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 5))

    def forward(self, x):
        h = self.shared(x)
        return self.light(h), self.booster(h)


model = RocketNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
train_loader = DataLoader(TensorDataset(torch.randn(64, 20), torch.randint(0, 5, (64,))), batch_size=16)
meter_loss = AverageValueMeter()


def h(sample):
    inputs, targets, training = sample
    light_out, boost_out = model(inputs)
    hint = F.mse_loss(light_out, boost_out.detach())
    loss = F.cross_entropy(light_out, targets) + F.cross_entropy(boost_out, targets) + hint
    return loss, light_out


def on_sample(state):
    state['sample'].append(state['train'])


def on_forward(state):
    meter_loss.add(state['loss'].data[0])


def on_start_epoch(state):
    meter_loss.reset()


def on_end_epoch(state):
    print('[Epoch %d] Training Loss: %.4f' % (state['epoch'], meter_loss.value()[0]))


engine = Engine()
engine.hooks['on_sample'] = on_sample
engine.hooks['on_forward'] = on_forward
engine.hooks['on_start_epoch'] = on_start_epoch
engine.hooks['on_end_epoch'] = on_end_epoch
engine.train(h, train_loader, 2, optimizer)
