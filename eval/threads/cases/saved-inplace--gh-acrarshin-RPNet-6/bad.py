# R-peak detection in ECG with a 1-D Inception-residual U-Net: each encoder stage after the
# first opens with nn.LeakyReLU(0.2, inplace=True) applied to the previous stage's output,
# which is also kept for the decoder's skip connection.
import torch
import torch.nn as nn

torch.manual_seed(0)


class IncResBlock(nn.Module):
    def __init__(self, inplanes, planes, convsize=7, convpadding=3):
        super(IncResBlock, self).__init__()
        self.Inputconv1x1 = nn.Conv1d(inplanes, planes, kernel_size=1, bias=False)
        self.conv1_1 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 2, kernel_size=convsize, padding=convpadding),
            nn.BatchNorm1d(planes // 2))
        self.conv1_2 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 2, kernel_size=1, bias=False),
            nn.BatchNorm1d(planes // 2),
            nn.LeakyReLU(0.2,),
            nn.Conv1d(planes // 2, planes // 2, kernel_size=convsize + 2, padding=convpadding + 1),
            nn.BatchNorm1d(planes // 2))
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = self.Inputconv1x1(x)
        out = torch.cat([self.conv1_1(x), self.conv1_2(x)], 1)
        out = out + residual
        out = self.relu(out)
        return out


class IncUNet(nn.Module):
    def __init__(self, in_channels=1):
        super(IncUNet, self).__init__()
        self.e1 = nn.Sequential(
            nn.Conv1d(in_channels, 16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(16),
            nn.LeakyReLU(0.2,),
            IncResBlock(16, 16))
        self.e2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(16, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32),
            IncResBlock(32, 32))
        self.e3 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(32, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32))
        self.d1 = nn.Sequential(
            nn.LeakyReLU(0.2,),
            nn.ConvTranspose1d(32, 32, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(32))
        self.d2 = nn.Sequential(
            nn.LeakyReLU(0.2,),
            nn.ConvTranspose1d(64, 16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(16))
        self.out_l = nn.Sequential(
            nn.LeakyReLU(0.2,),
            nn.ConvTranspose1d(32, in_channels, kernel_size=4, stride=2, padding=1))

    def forward(self, x):
        en1 = self.e1(x)
        en2 = self.e2(en1)
        en3 = self.e3(en2)
        de1 = torch.cat([en2, self.d1(en3)], 1)
        de2 = torch.cat([en1, self.d2(de1)], 1)
        return self.out_l(de2)


model = IncUNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.SmoothL1Loss()
ecg = torch.randn(4, 1, 128)
distance_map = torch.rand(4, 1, 128)

for epoch in range(2):
    optimizer.zero_grad()
    pred = model(ecg)
    loss = criterion(pred, distance_map)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
