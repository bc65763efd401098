# Content-weighted image compression CNN: residual blocks whose left branch is conv -> ReLU(inplace)
# -> conv -> ReLU(inplace), with the shortcut added onto the branch output before a final ReLU.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super().__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 32, 3, 1, 1),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out += residual
        return F.relu(out, inplace=False)


class ContentWeightedCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 16, 8, 4, 2), nn.ReLU(inplace=True),
            ResidualBlock(16, 16),
            nn.Conv2d(16, 8, 1), nn.Sigmoid())
        self.decoder = nn.Sequential(
            nn.Conv2d(8, 16, 3, 1, 1), nn.ReLU(inplace=True),
            ResidualBlock(16, 16),
            nn.ConvTranspose2d(16, 3, 8, 4, 2))

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = ContentWeightedCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for ii in range(3):
    imgs = torch.rand(2, 3, 32, 32)
    rec_imgs = model(imgs)
    loss = F.mse_loss(rec_imgs, imgs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(ii, loss.item())
