# MixMatch-pytorch (train.py): semi-supervised training with an exponential moving average of
# the model kept by WeightEMA over the two models' state dicts, on a current PyTorch. A small
# conv net with BatchNorm stands in for the WideResNet-28-2, random images and soft targets for
# the mixed-up CIFAR-10 batches, and the unlabeled-loss terms are left out.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class args:
    lr = 0.002
    ema_decay = 0.999


class WideResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16, momentum=0.001)
        self.relu = nn.LeakyReLU(negative_slope=0.1, inplace=True)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = F.adaptive_avg_pool2d(out, 1).view(-1, 16)
        return self.fc(out)


def create_model(ema=False):
    model = WideResNet(num_classes=10)
    if ema:
        for param in model.parameters():
            param.detach_()
    return model


class WeightEMA(object):
    def __init__(self, model, ema_model, alpha=0.999):
        self.model = model
        self.ema_model = ema_model
        self.alpha = alpha
        self.params = list(model.state_dict().values())
        self.ema_params = list(ema_model.state_dict().values())
        self.wd = 0.02 * args.lr

        for param, ema_param in zip(self.params, self.ema_params):
            param.data.copy_(ema_param.data)

    def step(self):
        one_minus_alpha = 1.0 - self.alpha
        for param, ema_param in zip(self.params, self.ema_params):
            ema_param.mul_(self.alpha)
            ema_param.add_(param * one_minus_alpha)
            # customized weight decay
            param.mul_(1 - self.wd)


model = create_model()
ema_model = create_model(ema=True)
optimizer = optim.Adam(model.parameters(), lr=args.lr)
ema_optimizer = WeightEMA(model, ema_model, alpha=args.ema_decay)

model.train()
for batch_idx in range(2):
    mixed_input = torch.randn(8, 3, 16, 16)
    mixed_target = torch.softmax(torch.randn(8, 10), dim=1)
    logits = model(mixed_input)
    Lx = -torch.mean(torch.sum(F.log_softmax(logits, dim=1) * mixed_target, dim=1))
    optimizer.zero_grad()
    Lx.backward()
    optimizer.step()
    ema_optimizer.step()
    print(batch_idx, round(Lx.item(), 4))
