# Portrait segmentation with U^2-Net: a streamlit demo loads the chosen checkpoint (a training
# checkpoint dict or bare weights) into a fresh network, predicts the alpha matte of a sample
# image under no_grad and blends the foreground onto a green background.
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class REBNCONV(nn.Module):
    def __init__(self, in_ch=3, out_ch=3, dirate=1):
        super().__init__()
        self.conv_s1 = nn.Conv2d(in_ch, out_ch, 3, padding=1 * dirate, dilation=1 * dirate)
        self.bn_s1 = nn.BatchNorm2d(out_ch)
        self.relu_s1 = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu_s1(self.bn_s1(self.conv_s1(x)))


class U2NET_full(nn.Module):
    def __init__(self, in_ch=3, out_ch=1):
        super().__init__()
        self.stage1 = nn.Sequential(REBNCONV(in_ch, 8), REBNCONV(8, 8, dirate=2))
        self.pool12 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.stage2 = nn.Sequential(REBNCONV(8, 8), REBNCONV(8, 8, dirate=2))
        self.side1 = nn.Conv2d(8, out_ch, 3, padding=1)
        self.side2 = nn.Conv2d(8, out_ch, 3, padding=1)
        self.outconv = nn.Conv2d(2 * out_ch, out_ch, 1)

    def forward(self, x):
        hx1 = self.stage1(x)
        hx2 = self.stage2(self.pool12(hx1))
        d1 = self.side1(hx1)
        d2 = nn.functional.interpolate(self.side2(hx2), size=d1.shape[2:], mode='bilinear', align_corners=False)
        d0 = self.outconv(torch.cat((d1, d2), 1))
        return torch.sigmoid(d0), (torch.sigmoid(d1), torch.sigmoid(d2))


def get_transform():
    def transform(image):
        x = torch.from_numpy(image).permute(2, 0, 1).float() / 255
        return (x - 0.5) / 0.5
    return transform


def blend(foreground, background, alpha):
    alpha = alpha[:, :, None]
    return alpha * foreground + (1 - alpha) * background


# a checkpoint as the trainer writes it (the network after a few training steps)
folder = tempfile.mkdtemp()
trained = U2NET_full()
optimizer = torch.optim.Adam(trained.parameters(), lr=1e-3)
for _ in range(3):
    optimizer.zero_grad()
    y, _ = trained(torch.randn(4, 3, 32, 32))
    nn.functional.binary_cross_entropy(y, (torch.rand(4, 1, 32, 32) > 0.5).float()).backward()
    optimizer.step()
torch.save({'model': trained.state_dict()}, os.path.join(folder, 'checkpoint.pth'))

device = 'cpu'
model_select = 'checkpoint'
checkpoint = torch.load(os.path.join(folder, f'{model_select}.pth'), map_location=device)
model = U2NET_full().to(device=device)

if 'model' in checkpoint:
    model.load_state_dict(checkpoint['model'])
else:
    model.load_state_dict(checkpoint)

rng = np.random.default_rng(0)
image = rng.integers(0, 256, (32, 32, 3)).astype(np.uint8)

transforms = get_transform()

model.eval()
with torch.no_grad():
    x = transforms(image)
    x = x.to(device=device).unsqueeze(dim=0)
    y_hat, _ = model(x)
    alpha_image = y_hat.mul(255)

background = np.zeros(image.shape)
background[:, :] = [0, 177 / 255, 64 / 255]
alpha = np.asarray(y_hat.squeeze().cpu().detach())
new_image = blend(image.astype(np.float32) / 255, background, alpha)
print(new_image.shape, float(alpha.mean()))

# -- corpus check --
reference = U2NET_full()
reference.load_state_dict(checkpoint['model'])
reference.eval()
with torch.no_grad():
    expected, _ = reference(transforms(image).unsqueeze(0))
if not torch.allclose(y_hat, expected, atol=1e-5):
    print("BUG: the matte was predicted with BatchNorm in training mode")
