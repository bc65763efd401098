# DM-Count's test.py with the person's backbone: the counting network (a VGG-style feature
# extractor, here with BatchNorm as in the person's ResNet50 variant, then the regression and
# density layers) is loaded from a checkpoint and run over the test images one at a time; the
# script prints each image's count error and the MAE/MSE. A small network and random images stand
# in for the crowd data sets; the checkpoint is written to a temporary folder first.
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class VGG(nn.Module):
    def __init__(self, features):
        super(VGG, self).__init__()
        self.features = features
        self.reg_layer = nn.Sequential(
            nn.Conv2d(64, 32, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, 16, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
        )
        self.density_layer = nn.Sequential(nn.Conv2d(16, 1, 1), nn.ReLU())

    def forward(self, x):
        x = self.features(x)
        x = F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=True)
        x = self.reg_layer(x)
        mu = self.density_layer(x)
        B, C, H, W = mu.size()
        mu_sum = mu.view([B, -1]).sum(1).unsqueeze(1).unsqueeze(2).unsqueeze(3)
        mu_normed = mu / (mu_sum + 1e-6)
        return mu, mu_normed


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


def backbone():
    return VGG(make_layers([16, 'M', 32, 'M', 64], batch_norm=True))


# a trained checkpoint (what train.py saved)
checkpoint_dir = tempfile.mkdtemp()
trained = backbone()
for _ in range(5):
    trained(torch.rand(4, 3, 32, 32) * 2)
torch.save(trained.state_dict(), os.path.join(checkpoint_dir, 'best_model.pth'))

parser = argparse.ArgumentParser(description='Test ')
parser.add_argument('--device', default='0', help='assign device')
parser.add_argument('--model-path', type=str, default=os.path.join(checkpoint_dir, 'best_model.pth'),
                    help='saved model path')
args = parser.parse_args([])
device = torch.device('cpu')

model_path = args.model_path
dataset = [(torch.rand(1, 3, 32, 32), torch.tensor([float(n)]), 'IMG_{}'.format(n)) for n in range(1, 6)]
dataloader = dataset

model = backbone()
model.to(device)
model.load_state_dict(torch.load(model_path, device))
loaded = {k: v.clone() for k, v in model.state_dict().items()}
image_errs = []
for inputs, count, name in dataloader:
    inputs = inputs.to(device)
    assert inputs.size(0) == 1, 'the batch size should equal to 1'
    with torch.set_grad_enabled(False):
        outputs, _ = model(inputs)
    img_err = count[0].item() - torch.sum(outputs).item()

    print(name, img_err, count[0].item(), torch.sum(outputs).item())
    image_errs.append(img_err)

image_errs = np.array(image_errs)
mse = np.sqrt(np.mean(np.square(image_errs)))
mae = np.mean(np.abs(image_errs))
print('{}: mae {}, mse {}\n'.format(os.path.basename(model_path), mae, mse))

# -- corpus check --
changed = [k for k, v in model.state_dict().items() if not torch.equal(v, loaded[k])]
if changed:
    print("BUG: testing changed the loaded model's BatchNorm statistics: " + ", ".join(changed[:2]))
