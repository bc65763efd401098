# torchsample-style ModuleTrainer (Keras-like fit for PyTorch): compile() takes the optimizer and the
# criterion, fit() loops over batches and records each batch's loss in the batch logs.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModuleTrainer:
    def __init__(self, model):
        self.model = model
        self.history = []

    def compile(self, optimizer, loss):
        self._optimizer = optimizer
        self._loss_fn = loss

    def fit(self, inputs, targets, num_epoch=2, batch_size=16, verbose=1):
        self.model.train(mode=True)
        num_batches = (len(inputs) + batch_size - 1) // batch_size
        for epoch_idx in range(num_epoch):
            epoch_logs = {'loss': 0.0}
            for batch_idx in range(num_batches):
                batch_logs = {'batch_idx': batch_idx}
                input_batch = inputs[batch_idx * batch_size:(batch_idx + 1) * batch_size]
                target_batch = targets[batch_idx * batch_size:(batch_idx + 1) * batch_size]
                self._optimizer.zero_grad()
                output_batch = self.model(input_batch)
                loss = self._loss_fn(output_batch, target_batch)
                loss.backward()
                self._optimizer.step()
                batch_logs['loss'] = loss.data.item()
                epoch_logs['loss'] += batch_logs['loss'] / num_batches
            self.history.append(epoch_logs)
            if verbose:
                print('Epoch %d/%d loss=%.4f' % (epoch_idx + 1, num_epoch, epoch_logs['loss']))


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3)
        self.fc1 = nn.Linear(8 * 13 * 13, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        return F.log_softmax(self.fc1(x.view(x.size(0), -1)), dim=1)


x_train, y_train = torch.randn(48, 1, 28, 28), torch.randint(0, 10, (48,))
trainer = ModuleTrainer(Network())
trainer.compile(optimizer=torch.optim.Adadelta(trainer.model.parameters(), lr=1.0), loss=nn.NLLLoss())
trainer.fit(x_train, y_train, num_epoch=2, batch_size=16, verbose=1)
