# giotto-deep's Pipeline (2021): trains a model on the first dataloader and, after every epoch,
# runs a validation loop that logs the accuracy and precision-recall curves to tensorboard. The
# model benchmarked here is a small classifier with dropout. A stand-in SummaryWriter keeps the
# logged values in memory; random features stand in for the data set.
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
DEVICE = torch.device("cpu")


class SummaryWriter:
    def __init__(self):
        self.scalars, self.pr_curves = [], []

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, float(value), step))

    def add_pr_curve(self, tag, labels, predictions, global_step=0):
        self.pr_curves.append((tag, labels.sum().item(), predictions.mean().item()))

    def flush(self):
        pass


class Pipeline:
    def __init__(self, model, dataloaders, loss_fn, writer):
        self.model = model.to(DEVICE)
        assert len(dataloaders) > 0 and len(dataloaders) < 4, "Length of dataloaders must be 1, 2, or 3"
        self.dataloaders = dataloaders  # train and test
        self.train_epoch = 0
        self.val_epoch = 0
        self.loss_fn = loss_fn
        self.writer = writer

    def _train_loop(self, dl_tr, writer_tag=""):
        steps = len(dl_tr)
        loss = -100
        tik = time.time()
        for batch, (X, y) in enumerate(dl_tr):
            X = X.to(DEVICE)
            y = y.to(DEVICE)
            pred = self.model(X)
            loss = self.loss_fn(pred, y)
            self.writer.add_scalar(writer_tag + "/Loss/train", loss, self.train_epoch)
            self.train_epoch = self.train_epoch + 1
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            loss = loss.item()
            print(f"Training loss: {loss:>7f}  [{batch+1:>2d}/{steps:>2d}]")
        print("Time taken for this epoch: {}s".format(round(time.time() - tik)))
        self.writer.flush()
        return loss

    def _val_loop(self, dl_val, writer_tag=""):
        size = len(dl_val.dataset)
        val_loss, correct = 0, 0
        class_label = []
        class_probs = []
        with torch.no_grad():
            pred = 0
            for X, y in dl_val:
                X = X.to(DEVICE)
                y = y.to(DEVICE)
                pred = self.model(X)
                class_probs_batch = [F.softmax(el, dim=0) for el in pred]
                class_probs.append(class_probs_batch)
                val_loss += self.loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
                class_label.append(y)
            val_probs = torch.cat([torch.stack(batch) for batch in class_probs])
            val_label = torch.cat(class_label)
            for class_index in range(len(pred[0])):
                tensorboard_truth = val_label == class_index
                tensorboard_probs = val_probs[:, class_index]
                self.writer.add_pr_curve(str(class_index), tensorboard_truth, tensorboard_probs, global_step=0)
        self.writer.flush()
        val_loss /= size
        correct /= size
        self.writer.add_scalar(writer_tag + "/Accuracy/validation", correct, self.val_epoch)
        print(f"Validation results: Accuracy: {(100*correct):>0.1f}%, Avg loss: {val_loss:>8f}")
        self.writer.flush()
        return 100 * correct

    def train(self, optimizer, n_epochs=10, **kwargs):
        self.optimizer = optimizer(self.model.parameters(), **kwargs)
        dl_tr, dl_val = self.dataloaders[0], self.dataloaders[1]
        for t in range(n_epochs):
            print(f"Epoch {t+1}")
            self._train_loop(dl_tr)
            self.val_epoch = t
            self._val_loop(dl_val)


model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 3))
X, y = torch.randn(160, 20), torch.randint(0, 3, (160,))
dl_tr = DataLoader(TensorDataset(X[:96], y[:96]), batch_size=32, shuffle=True)
dl_val = DataLoader(TensorDataset(X[96:], y[96:]), batch_size=32)
pipe = Pipeline(model, (dl_tr, dl_val), nn.CrossEntropyLoss(), SummaryWriter())
pipe.train(torch.optim.SGD, 2, lr=0.01)

# -- corpus check --
first, second = pipe._val_loop(dl_val), pipe._val_loop(dl_val)
if first != second:
    print("BUG: the validation accuracy of the same model on the same data changes between two runs")
