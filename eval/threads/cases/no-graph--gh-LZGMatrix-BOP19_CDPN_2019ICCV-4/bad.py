# Writing a train.py from the repository's test.py for a CDPN-style pose network: the
# coordinate head outputs 64 bins per axis, which test.py decodes with argmax; the
# training loss is computed on the decoded coordinates.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
COOR_BIN = 64


class CoorHead(nn.Module):
    def __init__(self, in_ch=8, bins=COOR_BIN):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, in_ch, 3, padding=1), nn.ReLU())
        self.x = nn.Conv2d(in_ch, bins + 1, 1)
        self.y = nn.Conv2d(in_ch, bins + 1, 1)
        self.z = nn.Conv2d(in_ch, bins + 1, 1)

    def forward(self, img):
        f = self.backbone(img)
        return self.x(f), self.y(f), self.z(f)


model = CoorHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
img = torch.rand(1, 3, 16, 16)
coor_gt = torch.rand(16, 16, 3) * 2 - 1                               # [-1, 1]
bins_gt = ((coor_gt + 1) / 2 * (COOR_BIN - 1)).round().long()          # per-axis bin

for it in range(3):
    output_coor_x_, output_coor_y_, output_coor_z_ = model(img)
    output_coor_x_ = output_coor_x_.squeeze()
    output_coor_y_ = output_coor_y_.squeeze()
    output_coor_z_ = output_coor_z_.squeeze()

    ####

    output_coor_ = torch.stack([torch.argmax(output_coor_x_, axis=0),
                                torch.argmax(output_coor_y_, axis=0),
                                torch.argmax(output_coor_z_, axis=0)], axis=2)
    output_coor_[output_coor_ == COOR_BIN] = 0
    output_coor_ = 2.0 * output_coor_.float() / (63.0 - 1.0) - 1.0      # [-1,1]

    loss = F.l1_loss(output_coor_, coor_gt)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
