# LipFD-style training: a Trainer object builds the model (a frozen-able image encoder and a
# region-aware head over lip crops), picks the parameters to optimize (fix_encoder freezes the
# encoder), and optimize_parameters() runs one step on a weighted region loss plus a BCE-style
# classification loss. Random frames and crops stand in for the lip-sync dataset.
from argparse import Namespace

import torch
import torch.nn as nn

torch.manual_seed(0)


class RegionAwareLoss(nn.Module):
    def forward(self, weights_max, weights_org):
        return torch.mean(torch.relu(weights_org - weights_max + 0.1))


class LipFD(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.region_head = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.weight_fc = nn.Linear(16, 1)
        self.fc = nn.Linear(16, 1)

    def get_features(self, x):
        return self.encoder(x)

    def forward(self, crops, features):
        parts = [torch.cat([self.region_head(c), features], dim=1) for c in crops]
        weights = torch.stack([torch.sigmoid(self.weight_fc(p)) for p in parts], dim=1)
        fused = (weights * torch.stack(parts, dim=1)).sum(dim=1)
        return self.fc(fused), weights.max(dim=1).values, weights.mean(dim=1)


class Trainer(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.device = torch.device("cpu")
        self.model = LipFD()
        if opt.fix_encoder:
            for name, p in self.model.named_parameters():
                if name.split(".")[0] in ["encoder"]:
                    p.requires_grad = False
                else:
                    p.requires_grad = True
            params = self.model.parameters()
        self.optimizer = torch.optim.AdamW(params, lr=opt.lr, betas=(opt.beta1, 0.999), weight_decay=opt.weight_decay)
        self.criterion = RegionAwareLoss()
        self.criterion1 = nn.BCEWithLogitsLoss()

    def set_input(self, input):
        self.input = input[0].to(self.device)
        self.crops = [t.to(self.device) for t in input[1]]
        self.label = input[2].to(self.device).float()

    def forward(self):
        self.features = self.model.get_features(self.input)
        self.output, self.weights_max, self.weights_org = self.model(self.crops, self.features)
        self.output = self.output.view(-1)
        self.loss = self.criterion(self.weights_max, self.weights_org) + self.criterion1(self.output, self.label)

    def optimize_parameters(self):
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()


opt = Namespace(fix_encoder=True, lr=2e-4, beta1=0.9, weight_decay=0.0)
trainer = Trainer(opt)
for step in range(3):
    batch = (torch.rand(4, 3, 32, 32), [torch.rand(4, 3, 16, 16) for _ in range(3)], torch.randint(0, 2, (4,)))
    trainer.set_input(batch)
    trainer.forward()
    trainer.optimize_parameters()
    print(step, trainer.loss.item())
