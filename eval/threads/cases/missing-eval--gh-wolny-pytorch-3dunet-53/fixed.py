# A 3D U-Net trainer class (fit / train / validate) for volumetric segmentation; a dropout layer was
# added after the bottleneck and batch normalization is used in the conv blocks.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv3d(cin, cout, 3, padding=1), nn.BatchNorm3d(cout), nn.ReLU(inplace=True))


class UNet3D(nn.Module):
    def __init__(self, in_channels=1, out_channels=2, f=4):
        super().__init__()
        self.enc1, self.enc2 = conv_block(in_channels, f), conv_block(f, 2 * f)
        self.bottleneck_dropout = nn.Dropout3d(0.3)
        self.dec1 = conv_block(3 * f, f)
        self.final_conv = nn.Conv3d(f, out_channels, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.bottleneck_dropout(self.enc2(F.max_pool3d(e1, 2)))
        d1 = self.dec1(torch.cat([F.interpolate(e2, scale_factor=2), e1], dim=1))
        return self.final_conv(d1)


class UNet3DTrainer:
    def __init__(self, model, optimizer, loss_criterion, loaders, max_num_epochs=2):
        self.model, self.optimizer, self.loss_criterion = model, optimizer, loss_criterion
        self.loaders, self.max_num_epochs = loaders, max_num_epochs
        self.last_val_output = None

    def fit(self):
        for epoch in range(self.max_num_epochs):
            self.train(self.loaders['train'])
            print('epoch', epoch, 'val loss', self.validate(self.loaders['val']))

    def train(self, train_loader):
        self.model.train()
        for input, target in train_loader:
            output = self.model(input)
            loss = self.loss_criterion(output, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self, val_loader):
        val_losses, outputs = [], []
        self.model.eval()
        with torch.no_grad():
            for input, target in val_loader:
                output = self.model(input)
                val_losses.append(self.loss_criterion(output, target).item())
                outputs.append(output)
        self.model.train()
        self.last_val_output = torch.cat(outputs)
        return sum(val_losses) / len(val_losses)


def batches(n):
    return [(torch.randn(2, 1, 8, 8, 8), torch.randint(0, 2, (2, 8, 8, 8))) for _ in range(n)]


model = UNet3D()
loaders = {'train': batches(3), 'val': batches(2)}
trainer = UNet3DTrainer(model, torch.optim.Adam(model.parameters(), lr=1e-3), nn.CrossEntropyLoss(), loaders)
trainer.fit()

# -- corpus check --
reference = copy.deepcopy(model).eval()
with torch.no_grad():
    ref = torch.cat([reference(input) for input, _ in loaders['val']])
if not torch.allclose(trainer.last_val_output, ref, atol=1e-5):
    print("BUG: validation ran with the model in training mode (dropout/batchnorm active)")
