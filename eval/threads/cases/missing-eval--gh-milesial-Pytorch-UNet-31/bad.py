# U-Net training script (train.py with eval.py's eval_net folded in): each epoch trains on the
# image/mask pairs, then eval_net() scores the validation pairs one image at a time with the Dice
# coefficient. The U-Net's double convolutions use BatchNorm2d. (Random images with masks made
# from them stand in for the Carvana data.)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class double_conv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes):
        super().__init__()
        self.inc = double_conv(n_channels, 8)
        self.down1 = double_conv(8, 16)
        self.up1 = double_conv(24, 8)
        self.outc = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x = self.up1(torch.cat([x1, F.interpolate(x2, scale_factor=2)], dim=1))
        return torch.sigmoid(self.outc(x))


def dice_coeff(pred, target):
    eps = 0.0001
    inter = torch.dot(pred.view(-1), target.view(-1))
    union = torch.sum(pred) + torch.sum(target) + eps
    return (2 * inter.float() + eps) / union.float()


def eval_net(net, dataset, gpu=False):
    """Evaluation without the densecrf with the dice coefficient"""
    tot = 0
    for i, b in enumerate(dataset):
        img = b[0].unsqueeze(0)
        true_mask = b[1]
        mask_pred = net(img)[0]
        mask_pred = (mask_pred > 0.5).float()
        tot += dice_coeff(mask_pred, true_mask).item()
    return tot / (i + 1)


def get_imgs_and_masks(n):
    imgs = torch.randn(n, 3, 16, 16)
    masks = (imgs.mean(1, keepdim=True) > 0).float()
    return list(zip(imgs, masks))


def batch(iterable, batch_size):
    for start in range(0, len(iterable), batch_size):
        yield iterable[start:start + batch_size]


def train_net(net, epochs=2, batch_size=4, lr=0.1):
    train = get_imgs_and_masks(16)
    val = get_imgs_and_masks(4)
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=0.0005)
    criterion = nn.BCELoss()
    for epoch in range(epochs):
        print('Starting epoch {}/{}.'.format(epoch + 1, epochs))
        epoch_loss = 0
        for i, b in enumerate(batch(train, batch_size)):
            imgs = torch.stack([x[0] for x in b])
            true_masks = torch.stack([x[1] for x in b])
            masks_pred = net(imgs)
            loss = criterion(masks_pred.view(-1), true_masks.view(-1))
            epoch_loss += loss.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print('Epoch finished ! Loss: {}'.format(epoch_loss / (i + 1)))
        val_dice = eval_net(net, val)
        print('Validation Dice Coeff: {}'.format(val_dice))
    return val, val_dice


net = UNet(n_channels=3, n_classes=1)
val, val_dice = train_net(net)

# -- corpus check --
reference = UNet(n_channels=3, n_classes=1)
reference.load_state_dict(net.state_dict())
reference.eval()
with torch.no_grad():
    expected = eval_net(reference, val)
if abs(expected - val_dice) > 1e-6:
    print("BUG: the validation Dice was computed with BatchNorm in training mode")
