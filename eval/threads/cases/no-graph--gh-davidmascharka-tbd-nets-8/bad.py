# The TbD-net training notebook (train-model.ipynb): train for an epoch, then check the accuracy on
# the validation set with a helper that turns gradients off, write the losses and accuracies to
# result files, repeat. A small module network stands in for TbDNet (its forward keeps the sum of
# its attention masks for an L1 penalty) and random features and programs for CLEVR.
import tempfile
from pathlib import Path

import torch
import torch.nn as nn

torch.manual_seed(0)
device = 'cuda' if torch.cuda.is_available() else 'cpu'


class TbDNet(nn.Module):
    def __init__(self, num_modules=4, feature_dim=(16, 7, 7), num_answers=28):
        super().__init__()
        channels, height, width = feature_dim
        self.stem = nn.Sequential(nn.Conv2d(channels, 8, 3, padding=1), nn.ReLU())
        self.attention_modules = nn.ModuleList(
            nn.Sequential(nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid()) for _ in range(num_modules))
        self.classifier = nn.Linear(8 * height * width, num_answers)
        self.attention_sum = 0

    def forward(self, feats, programs):
        feat_input = self.stem(feats)
        self.attention_sum = 0
        out = feat_input
        for step in range(programs.size(1)):
            attention = torch.stack([self.attention_modules[int(p)](f.unsqueeze(0))[0]
                                     for f, p in zip(out, programs[:, step])])
            self.attention_sum += attention.sum()
            out = feat_input * attention
        return self.classifier(out.flatten(1))


def make_loader(n_batches):
    return [(None, None, torch.randn(16, 16, 7, 7), torch.randint(4, 32, (16,)), torch.randint(0, 4, (16, 3)))
            for _ in range(n_batches)]


def map_ans(answers):
    ''' Map the answers from the format Justin Johnson et al. use to our own format. '''
    return (answers - 4) % 28


tbd_net = TbDNet().to(device)
train_loader = make_loader(3)
val_loader = make_loader(2)


def check_accuracy(loader):
    '''
    Convenience function for checking the accuracy of the model
    over all the data in a given `DataLoader`
    '''
    torch.set_grad_enabled(False)
    num_correct, num_samples = 0, 0
    for batch in loader:
        _, _, feats, answers, programs = batch
        feats = feats.to(device)
        programs = programs.to(device)

        outs = tbd_net(feats, programs)
        _, preds = outs.max(1)
        mapped_ans = map_ans(answers)
        num_correct += (preds.to('cpu') == mapped_ans).sum()
        num_samples += preds.size(0)

    return (num_correct, num_samples)


def write_acc(f, string, correct, total):
    ''' Convenience function to write the accuracy to a file '''
    percent = correct / total * 100 if total != 0 else 100
    f.write(string.format(correct, total, percent))


optimizer = torch.optim.Adam(tbd_net.parameters(), 1e-04)
xent_loss = torch.nn.CrossEntropyLoss().to(device)


def train_epoch():
    ''' Convenience function to train the model for one epoch. '''
    num_correct, num_samples = 0, 0
    for batch in train_loader:
        _, _, feats, answers, programs = batch
        feats = feats.to(device)
        programs = programs.to(device)

        optimizer.zero_grad()
        outs = tbd_net(feats, programs)
        _, preds = outs.max(1)
        mapped_ans = map_ans(answers)
        num_correct += (preds.to('cpu') == mapped_ans).sum()
        num_samples += preds.size(0)
        loss = xent_loss(outs, mapped_ans.to(device))
        loss += tbd_net.attention_sum * 2.5e-07

        loss_file.write('Loss: {}\n'.format(loss.item()))
        loss.backward()
        optimizer.step()

    val_correct, val_samples = check_accuracy(val_loader)

    write_acc(acc_file, 'Train Accuracy: {} / {} ({:.2f}%)\n', num_correct, num_samples)
    write_acc(acc_file, 'Val Accuracy: {} / {} ({:.2f}%)\n', val_correct, val_samples)
    acc_file.flush()


results = Path(tempfile.mkdtemp())
loss_file = open(results / 'example-loss.txt', 'a')
acc_file = open(results / 'example-acc.txt', 'a')
epoch = 0
while epoch < 3:
    epoch += 1
    print('starting epoch', epoch)
    train_epoch()
print((results / 'example-acc.txt').read_text())
