# Stacked-hourglass pose estimation: a single make_train(batch_id, config, phase, **inputs) step
# function serves both the 'train' and the 'valid' phase; batchnorm is used throughout the net.
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class Hourglass(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(f, f, 3, padding=1), nn.BatchNorm2d(f), nn.ReLU())
        self.up = nn.Sequential(nn.Conv2d(f, f, 3, padding=1), nn.BatchNorm2d(f), nn.ReLU())

    def forward(self, x):
        low = self.down(nn.functional.max_pool2d(x, 2))
        return x + nn.functional.interpolate(self.up(low), scale_factor=2)


class PoseNet(nn.Module):
    def __init__(self, nstack=2, inp_dim=16, oup_dim=4):
        super().__init__()
        self.pre = nn.Sequential(nn.Conv2d(3, inp_dim, 3, padding=1), nn.BatchNorm2d(inp_dim), nn.ReLU())
        self.hgs = nn.ModuleList([Hourglass(inp_dim) for _ in range(nstack)])
        self.outs = nn.ModuleList([nn.Conv2d(inp_dim, oup_dim, 1) for _ in range(nstack)])

    def forward(self, imgs):
        x = self.pre(imgs)
        preds = []
        for hg, out in zip(self.hgs, self.outs):
            x = hg(x)
            preds.append(out(x))
        return torch.stack(preds, 1)

    def calc_loss(self, combined_hm_preds, heatmaps):
        return ((combined_hm_preds - heatmaps.unsqueeze(1)) ** 2).mean(dim=(1, 2, 3, 4))


def make_train(batch_id, config, phase, **inputs):
    net = config['inference']['net']
    config['batch_id'] = batch_id
    net = net.train()
    if phase != 'inference':
        combined_hm_preds = net(inputs['imgs'])
        loss = net.calc_loss(combined_hm_preds, inputs['heatmaps']).mean()
        if phase == 'train':
            optimizer = config['train']['optimizer']
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item(), combined_hm_preds.detach()


net = PoseNet()
config = {'inference': {'net': net}, 'train': {'optimizer': torch.optim.Adam(net.parameters(), lr=1e-3)}}
data = {phase: [{'imgs': torch.randn(4, 3, 16, 16), 'heatmaps': torch.rand(4, 4, 16, 16)} for _ in range(3)]
        for phase in ('train', 'valid')}

for epoch in range(2):
    for phase in ('train', 'valid'):
        losses, valid_preds = [], []
        for batch_id, inputs in enumerate(data[phase]):
            loss, preds = make_train(batch_id, config, phase, **inputs)
            losses.append(loss)
            if phase == 'valid':
                valid_preds.append(preds)
        print(epoch, phase, sum(losses) / len(losses))

# -- corpus check --
reference = copy.deepcopy(net).eval()
with torch.no_grad():
    ref = torch.cat([reference(inputs['imgs']) for inputs in data['valid']])
if not torch.allclose(torch.cat(valid_preds), ref, atol=1e-5):
    print("BUG: the valid phase ran the net in training mode (batchnorm uses and updates batch statistics)")
