# ImageNet-example style validate(): inputs and targets are wrapped with volatile=True to run the
# validation forward without autograd; memory grows during validation on 0.4.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


def validate(val_loader, model, criterion):
    losses, top1 = AverageMeter(), AverageMeter()
    model.eval()
    for i, (input, target) in enumerate(val_loader):
        input_var = torch.autograd.Variable(input, volatile=True)
        target_var = torch.autograd.Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        prec1, = accuracy(output.data, target, topk=(1,))
        losses.update(loss.item(), input.size(0))
        top1.update(prec1.item(), input.size(0))
    print(f" * Prec@1 {top1.avg:.3f} loss {losses.avg:.4f}")
    return top1.avg, output


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
val_loader = DataLoader(TensorDataset(torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))), batch_size=8)
prec1, last_output = validate(val_loader, model, nn.CrossEntropyLoss())

# -- corpus check --
if last_output.requires_grad:
    print("BUG: validation outputs still carry an autograd graph (volatile is ignored)")
