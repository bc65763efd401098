# Super-resolution network (TSAN) with a cross-scale block: CSB mixes the four quadrants of
# its input and writes the result back quadrant by quadrant into `out`, an alias of its input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DRB(nn.Module):
    def __init__(self, n_feats):
        super(DRB, self).__init__()
        self.conv_1 = nn.Conv2d(n_feats, n_feats, 3, padding=1)
        self.conv_2 = nn.Conv2d(n_feats, n_feats, 3, padding=2, dilation=2)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.conv_1(x))
        out = self.conv_2(out)
        return x + out


class CSB(nn.Module):
    def __init__(self, n_feats):
        super(CSB, self).__init__()
        self.conv1 = nn.Conv2d(n_feats * 4, n_feats * 4, kernel_size=1, padding=0, bias=False)

    def forward(self, x):
        h, w = x.size(2) // 2, x.size(3) // 2
        f1 = x[:, :, 0:h, 0:w]
        f2 = x[:, :, h:, 0:w]
        f3 = x[:, :, 0:h, w:]
        f4 = x[:, :, h:, w:]
        f_all = self.conv1(torch.cat([f1, f2, f3, f4], 1))
        c = f_all.size(1) // 4
        out = x
        out[:, :, 0:h, 0:w] = f_all[:, 0:c]
        out[:, :, h:, 0:w] = f_all[:, c:2 * c]
        out[:, :, 0:h, w:] = f_all[:, 2 * c:3 * c]
        out[:, :, h:, w:] = f_all[:, 3 * c:]
        return out


class MCAB(nn.Module):
    def __init__(self, n_feats):
        super(MCAB, self).__init__()
        self.drb = DRB(n_feats)
        self.csb = CSB(n_feats)
        self.conv3 = nn.Conv2d(n_feats, n_feats, kernel_size=3, padding=1, bias=False)

    def forward(self, x):
        down_b = self.drb(x)
        top_b = self.csb(x)
        top_b = torch.sigmoid(self.conv3(top_b))
        return down_b * top_b


class TSAN(nn.Module):
    def __init__(self, n_feats=16, scale=2):
        super(TSAN, self).__init__()
        self.first_conv = nn.Conv2d(3, n_feats, 1)
        self.relu = nn.ReLU(inplace=True)
        self.body1 = MCAB(n_feats)
        self.body2 = MCAB(n_feats)
        self.up = nn.Sequential(nn.Conv2d(n_feats, 3 * scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, x):
        first_out = self.relu(self.first_conv(x))
        out = self.body2(self.body1(first_out))
        return self.up(out + first_out)


model = TSAN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
lr_img = torch.rand(2, 3, 16, 16)
hr_img = torch.rand(2, 3, 32, 32)

for it in range(2):
    sr = model(lr_img)
    loss = F.l1_loss(sr, hr_img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
