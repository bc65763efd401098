# Fine-tuning a lane-detection network on a small custom dataset: after loading the
# pretrained backbone weights (cfg.finetune), the backbone is meant to be frozen.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ParsingNet(nn.Module):
    def __init__(self, griding_num=20, cls_dim=(21, 4)):
        super().__init__()
        self.cls_dim = cls_dim
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())  # backbone
        self.pool = nn.Conv2d(8, 4, 1)
        self.cls = nn.Sequential(nn.Linear(4 * 8 * 8, 64), nn.ReLU(),
                                 nn.Linear(64, (griding_num + 1) * cls_dim[0] * cls_dim[1]))

    def forward(self, x):
        fea = self.pool(self.model(x)).flatten(1)
        return self.cls(fea).view(-1, 21, *self.cls_dim)


class Cfg:
    finetune = "pretrained.pth"


cfg = Cfg()
net = ParsingNet()
model = net
state_all = {"model": {k: v.clone() for k, v in net.state_dict().items()}}  # stands for torch.load(cfg.finetune)

if cfg.finetune is not None:
    print("finetune from ", cfg.finetune)
    state_clip = {}  # only use backbone parameters
    for k, v in state_all["model"].items():
        if "model" in k:
            state_clip[k] = v
    net.load_state_dict(state_clip, strict=False)
    for param in model.parameters():
        param.requires_grad = False

optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
imgs = torch.rand(4, 3, 32, 32)
cls_label = torch.randint(0, 21, (4, 21, 4))
for it in range(3):
    cls_out = net(imgs)
    loss = F.cross_entropy(cls_out, cls_label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
