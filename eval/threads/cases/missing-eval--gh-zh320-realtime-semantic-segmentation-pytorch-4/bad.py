# A real-time semantic segmentation toolbox: a BaseTrainer builds the model from the config, the
# loaders (a test loader when config.is_testing) and loads a checkpoint; SegTrainer implements
# train_one_epoch / validate / predict, and predict saves the colour-mapped masks of the test images.
import os
import tempfile
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBNAct(nn.Sequential):
    def __init__(self, cin, cout, stride=1):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class FastSegNet(nn.Module):
    def __init__(self, num_class):
        super().__init__()
        self.stem = nn.Sequential(ConvBNAct(3, 8, 2), ConvBNAct(8, 16, 2))
        self.head = nn.Sequential(ConvBNAct(16, 16), nn.Dropout(0.1), nn.Conv2d(16, num_class, 1))

    def forward(self, x):
        return F.interpolate(self.head(self.stem(x)), size=x.shape[2:], mode='bilinear', align_corners=True)


def get_model(config):
    return FastSegNet(config.num_class)


def get_colormap(config):
    return np.random.RandomState(1).randint(0, 256, size=(config.num_class, 3))


def get_test_loader(config):
    g = torch.Generator().manual_seed(3)
    images = torch.rand(4, 3, 32, 32, generator=g) * 255
    images_aug = (images / 255 - 0.5) / 0.25
    return [(images[i:i + 2], images_aug[i:i + 2], [f'img{i}.png', f'img{i + 1}.png']) for i in range(0, 4, 2)]


class BaseTrainer:
    def __init__(self, config):
        self.device = torch.device(config.device)
        self.model = get_model(config).to(self.device)
        if config.is_testing:
            self.test_loader = get_test_loader(config)
        self.load_ckpt(config)

    def load_ckpt(self, config):
        if config.load_ckpt and os.path.isfile(config.load_ckpt_path):
            checkpoint = torch.load(config.load_ckpt_path, map_location=self.device)
            self.model.load_state_dict(checkpoint['state_dict'])
            del checkpoint
        elif config.is_testing:
            raise ValueError(f'Could not find any pretrained checkpoint at path: {config.load_ckpt_path}.')


class SegTrainer(BaseTrainer):
    def __init__(self, config):
        super().__init__(config)
        if config.is_testing:
            self.colormap = torch.tensor(get_colormap(config)).to(self.device)

    @torch.no_grad()
    def predict(self, config):
        for (images, images_aug, img_names) in self.test_loader:
            images_aug = images_aug.to(self.device, dtype=torch.float32)

            preds = self.model(images_aug)

            preds = self.colormap[preds.max(dim=1)[1]].cpu().numpy()

            for i in range(preds.shape[0]):
                save_path = os.path.join(config.save_dir, img_names[i])
                np.save(save_path.replace('.png', '.npy'), preds[i].astype(np.uint8))


def train_and_save_checkpoint(config):
    """stands in for an earlier training run of the toolbox that saved a checkpoint"""
    model = get_model(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(20):
        images = torch.randn(4, 3, 32, 32) * 1.5 + 0.3
        masks = (images[:, 0] > 0.3).long()
        loss = F.cross_entropy(model(images), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({'state_dict': model.state_dict()}, config.load_ckpt_path)


with tempfile.TemporaryDirectory() as tmp:
    config = SimpleNamespace(num_class=2, device='cpu', is_testing=True, load_ckpt=True,
                             load_ckpt_path=os.path.join(tmp, 'best.pth'), save_dir=tmp)
    train_and_save_checkpoint(config)
    trainer = SegTrainer(config)
    trainer.predict(config)
    saved = {name: np.load(os.path.join(tmp, name)) for name in sorted(os.listdir(tmp)) if name.endswith('.npy')}
    print('saved', list(saved))

    # -- corpus check --
    reference = get_model(config)
    reference.load_state_dict(torch.load(config.load_ckpt_path)['state_dict'])
    reference.eval()
    wrong = 0
    with torch.no_grad():
        for images, images_aug, img_names in get_test_loader(config):
            expected = trainer.colormap[reference(images_aug).max(dim=1)[1]].numpy().astype(np.uint8)
            wrong += sum(int(not np.array_equal(saved[n.replace('.png', '.npy')], e)) for n, e in zip(img_names, expected))
    if wrong:
        print(f"BUG: {wrong} saved masks were predicted with batch norm and dropout in training mode")
