# DAWNBench CIFAR-10 training: run() trains or evaluates one epoch and tracks the loss and
# top-1/top-5 accuracy with AverageMeters; correct() counts top-k hits per batch.
import torch
from torch import nn, optim
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


class PreActNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(x.mean(dim=(2, 3)))


def correct(outputs, targets, top=(1, )):
    _, predictions = outputs.topk(max(top), dim=1, largest=True, sorted=True)
    targets = targets.view(-1, 1).expand_as(predictions)
    corrects = predictions.eq(targets).cpu().int().cumsum(1).sum(0)
    tops = list(map(lambda k: corrects[k - 1].item(), top))
    return tops


def run(epoch, model, loader, criterion=None, optimizer=None, top=(1, 5), train=True):
    accuracies = [AverageMeter() for _ in top]
    if train:
        model.train()
        losses = AverageMeter()
    else:
        model.eval()
    for batch_index, (inputs, targets) in enumerate(loader):
        batch_size = targets.size(0)
        outputs = model(inputs)
        if train:
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.update(loss.item(), batch_size)

        top_correct = correct(outputs, targets, top=top)
        for i, count in enumerate(top_correct):
            accuracies[i].update(count * (100. / batch_size), batch_size)

    message = 'Training accuracy of' if train else 'Validation accuracy of'
    for i, k in enumerate(top):
        message += ' top-{}: {}'.format(k, accuracies[i].avg)
    print(message)
    return accuracies[0].avg


model = PreActNet()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
train_loader = DataLoader(TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))), batch_size=16)
valid_loader = DataLoader(TensorDataset(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))), batch_size=16)
for epoch in range(1, 3):
    run(epoch, model, train_loader, criterion, optimizer, train=True)
    with torch.no_grad():
        run(epoch, model, valid_loader, train=False)
