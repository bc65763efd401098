# Zero-shot underwater image restoration (watermodel): an SKConv layer runs the per-channel InConv at
# three scales and fuses them with attention, an estimation network predicts the transmission map
# and the atmospheric light from it, and the restored image is (x - (1 - trans) * atm) / trans.
# The reporter already set the ReLUs to inplace=False; the zero-shot loop optimizes on one image.
import torch
import torch.nn as nn

torch.manual_seed(0)
C = 16


class InConv(nn.Module):
    def __init__(self):
        super(InConv, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, C, 7, stride=4, padding=3, bias=False, padding_mode="reflect"),
                                  nn.GroupNorm(num_channels=C, num_groups=8, affine=True), nn.ReLU(inplace=False))
        self.convf = nn.Sequential(nn.Conv2d(C, C, 3, padding=1, bias=False, padding_mode="reflect"),
                                   nn.GroupNorm(num_channels=C, num_groups=8, affine=True), nn.ReLU(inplace=False))

    def forward(self, x):
        xR = torch.unsqueeze(self.conv(x[:, 0:1]), 1)
        xG = torch.unsqueeze(self.conv(x[:, 1:2]), 1)
        xB = torch.unsqueeze(self.conv(x[:, 2:3]), 1)
        x, _ = torch.min(torch.cat([xR, xG, xB], 1), dim=1)
        return self.convf(x)


class SKConv(nn.Module):
    def __init__(self, outfeatures=C, M=3, L=8):
        super(SKConv, self).__init__()
        self.convs = nn.ModuleList([])
        in_conv = InConv()
        for i in range(M):
            if i == 0:
                self.convs.append(in_conv)
            else:
                self.convs.append(nn.Sequential(nn.Upsample(scale_factor=1 / (2 ** i), mode="bilinear", align_corners=True),
                                                in_conv,
                                                nn.Upsample(scale_factor=2 ** i, mode="bilinear", align_corners=True)))
        self.fc = nn.Linear(outfeatures, L)
        self.fcs = nn.ModuleList([nn.Linear(L, outfeatures) for _ in range(M)])
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).clone().unsqueeze_(dim=1)
            feas = fea if i == 0 else torch.cat([feas, fea], dim=1)
        fea_z = self.fc(torch.sum(feas, dim=1).mean(-1).mean(-1))
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z).unsqueeze_(dim=1)
            attention_vectors = vector if i == 0 else torch.cat([attention_vectors, vector], dim=1)
        attention_vectors = self.softmax(attention_vectors).unsqueeze(-1).unsqueeze(-1)
        return (feas * attention_vectors).sum(dim=1)


class estimation(nn.Module):
    def __init__(self):
        super(estimation, self).__init__()
        self.InConv = SKConv()
        self.OutConv = nn.Conv2d(C, 3, 3, padding=1, bias=False, padding_mode="reflect")
        self.up = nn.Upsample(scale_factor=4, mode="bilinear", align_corners=True)
        self.conv1 = nn.Sequential(nn.Conv2d(3, C, 9, stride=4, padding=4, bias=False, padding_mode="reflect"), nn.ReLU(inplace=False))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dense = nn.Linear(C, 3, bias=False)

    def forward(self, x):
        xmin = self.InConv(x)
        trans = torch.sigmoid(self.OutConv(self.up(xmin))) + 1e-12
        atm = self.pool(torch.mul(self.conv1(x), xmin)).view(-1, C)
        return trans, torch.sigmoid(self.dense(atm))


class MainModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.estimation = estimation()

    def forward(self, x):
        trans, atm = self.estimation(x)
        atm = torch.unsqueeze(torch.unsqueeze(atm, 2), 2).expand_as(x)
        out = (x - (1 - trans) * atm) / trans
        return trans, atm, out


model = MainModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
image = torch.rand(1, 3, 64, 64)
for it in range(3):
    trans, atm, out = model(image)
    loss = torch.mean((trans * out + (1 - trans) * atm - image) ** 2) + 0.1 * torch.mean(out.clamp(max=0) ** 2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
