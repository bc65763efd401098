# Self-supervised depth training with a Horovod-style trainer: each training_step output dict
# is appended to a list that the module reduces in training_epoch_end().
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AvgMeter:
    def __init__(self, n_max=50):
        self.values, self.n_max = [], n_max

    def __call__(self, value):
        self.values = (self.values + [value])[-self.n_max:]
        return sum(self.values) / len(self.values)


class SelfSupModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth_net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
        self.current_epoch = 0

    def configure_optimizers(self):
        self.optimizer = torch.optim.Adam(self.parameters(), lr=2e-4)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=30, gamma=0.5)

    def train_dataloader(self):
        return [{'rgb': torch.randn(2, 3, 16, 16), 'rgb_context': torch.randn(2, 3, 16, 16)} for _ in range(6)]

    def training_step(self, batch, *args):
        inv_depth = torch.sigmoid(self.depth_net(batch['rgb']))
        warped = batch['rgb_context'] * inv_depth
        photometric = F.l1_loss(warped, batch['rgb'])
        smoothness = (inv_depth[..., 1:] - inv_depth[..., :-1]).abs().mean()
        loss = photometric + 1e-3 * smoothness
        return {'loss': loss, 'metrics': {'photometric_loss': photometric.item()}}

    def training_epoch_end(self, output_batches):
        self.avg_train_loss = torch.stack([output['loss'] for output in output_batches]).mean()
        return {'avg_train-loss': self.avg_train_loss}


class HorovodTrainer:
    def __init__(self, max_epochs=2):
        self.max_epochs = max_epochs
        self.avg_loss = AvgMeter(50)

    def fit(self, module):
        module.configure_optimizers()
        optimizer, scheduler = module.optimizer, module.scheduler
        train_dataloader = module.train_dataloader()
        for epoch in range(module.current_epoch, self.max_epochs):
            self.train(train_dataloader, module, optimizer)
            module.current_epoch += 1
            scheduler.step()

    def train(self, dataloader, module, optimizer):
        module.train()
        outputs = []
        for i, batch in enumerate(dataloader):
            optimizer.zero_grad()
            output = module.training_step(batch, i)
            output['loss'].backward()
            optimizer.step()
            outputs.append(output)
            print('Epoch {} | Avg.Loss {:.4f}'.format(module.current_epoch, self.avg_loss(output['loss'].item())))
        return module.training_epoch_end(outputs)


model = SelfSupModel()
HorovodTrainer().fit(model)

# -- corpus check --
if model.avg_train_loss.grad_fn is not None:
    print("BUG: the epoch's output list kept every batch loss with its autograd graph until epoch end")
