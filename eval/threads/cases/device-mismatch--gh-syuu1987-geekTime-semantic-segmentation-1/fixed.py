# U-Net style semantic segmentation from a course example: each Block applies conv -> batch norm ->
# ReLU twice; the model is moved to the GPU (the meta device stands in for it) and run on a batch.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class Block(nn.Module):
    def __init__(self, in_channels, features):
        super().__init__()
        self.features = features
        self.conv1 = nn.Conv2d(in_channels, features, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(num_features=features)
        self.bn2 = nn.BatchNorm2d(num_features=features)

    def forward(self, input):
        x = self.conv1(input)
        x = self.bn1(x)
        x = nn.ReLU(inplace=True)(x)
        x = self.conv2(x)
        x = self.bn2(x)
        x = nn.ReLU(inplace=True)(x)
        return x


class UNet(nn.Module):
    def __init__(self, in_channels=3, out_channels=2, init_features=8):
        super().__init__()
        f = init_features
        self.encoder1 = Block(in_channels, f)
        self.pool1 = nn.MaxPool2d(2)
        self.bottleneck = Block(f, 2 * f)
        self.upconv1 = nn.ConvTranspose2d(2 * f, f, kernel_size=2, stride=2)
        self.decoder1 = Block(2 * f, f)
        self.conv = nn.Conv2d(f, out_channels, kernel_size=1)

    def forward(self, x):
        enc1 = self.encoder1(x)
        bottleneck = self.bottleneck(self.pool1(enc1))
        dec1 = self.decoder1(torch.cat((self.upconv1(bottleneck), enc1), dim=1))
        return self.conv(dec1)


model = UNet().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
images = torch.randn(2, 3, 32, 32).to(device)
masks = torch.randint(0, 2, (2, 32, 32)).to(device)
output = model(images)
loss = criterion(output, masks)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(output.shape, loss.device)
