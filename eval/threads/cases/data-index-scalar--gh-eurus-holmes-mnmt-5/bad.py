# FlowNet-style training loop: the model wrapper returns a list of losses (the first one is
# trained on, all of them are logged), collected per batch into a statistics list.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class L1Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss_labels = ['L1', 'EPE']

    def forward(self, output, target):
        l1 = (output - target).abs().mean()
        epe = torch.norm(target - output, p=2, dim=1).mean()
        return [l1, epe]


class ModelAndLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(6, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2, 3, padding=1))
        self.loss = L1Loss()

    def forward(self, data, target):
        output = self.model(data)
        return self.loss(output, target)


def train(epoch, data_loader, model, optimizer, is_validate=False):
    statistics = []
    total_loss = 0
    model.eval() if is_validate else model.train()
    for batch_idx, (data, target) in enumerate(data_loader):
        data, target = [data], [target]
        optimizer.zero_grad() if not is_validate else None
        losses = model(data[0], target[0])
        losses = [torch.mean(loss_value) for loss_value in losses]
        loss_val = losses[0]  # Collect first loss for weight update
        total_loss += loss_val.data[0]
        loss_values = [v.data[0] for v in losses]
        loss_labels = list(model.loss.loss_labels)

        assert not np.isnan(total_loss)

        if not is_validate:
            loss_val.backward()
            optimizer.step()
        statistics.append(loss_values)
        print('{} Epoch {} {}'.format('Validating' if is_validate else 'Training', epoch,
                                      {label: float(s) for label, s in zip(loss_labels, statistics[-1])}))
    return total_loss / float(batch_idx + 1), (batch_idx + 1)


frames = torch.randn(12, 6, 16, 16)
flows = torch.randn(12, 2, 16, 16)
loader = DataLoader(TensorDataset(frames, flows), batch_size=4)
model_and_loss = ModelAndLoss()
optimizer = torch.optim.Adam(model_and_loss.parameters(), lr=1e-4)
for epoch in range(2):
    train(epoch, loader, model_and_loss, optimizer)
