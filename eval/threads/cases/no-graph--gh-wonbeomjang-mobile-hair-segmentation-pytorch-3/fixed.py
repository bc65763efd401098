# mobile-hair-segmentation style training: a small encoder-decoder predicts two-channel hair
# logits; ImageGradientLoss asks the mask's edges to follow the image's edges (HairMatteNet's
# "image gradient consistency" term). The reporter's toy experiment trains with that term alone
# to see whether it can be optimised. Random images and masks stand in for the hair data set.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MobileHairNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.decode = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 2, 3, padding=1))

    def forward(self, x):
        return self.decode(self.encode(x))


class ImageGradientLoss(nn.Module):
    def __init__(self):
        super().__init__()
        sobel = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
        self.register_buffer("kernel_x", sobel.view(1, 1, 3, 3))
        self.register_buffer("kernel_y", sobel.t().contiguous().view(1, 1, 3, 3))

    def forward(self, pred, image):
        size = pred.size()
        pred = pred.softmax(1)[:, 1:2, :, :]
        gray = image.mean(1, keepdim=True)

        gray_x = F.conv2d(gray, self.kernel_x, padding=1)
        gray_y = F.conv2d(gray, self.kernel_y, padding=1)
        pred_x = F.conv2d(pred, self.kernel_x, padding=1)
        pred_y = F.conv2d(pred, self.kernel_y, padding=1)

        gray_mag = torch.sqrt(gray_x ** 2 + gray_y ** 2 + 1e-6)
        pred_mag = torch.sqrt(pred_x ** 2 + pred_y ** 2 + 1e-6)
        consistency = 1 - ((gray_x * pred_x + gray_y * pred_y) / (gray_mag * pred_mag)) ** 2
        return (consistency * pred_mag).sum() / (pred_mag.sum() + 1e-6)


net = MobileHairNet()
criterion = ImageGradientLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

images = torch.rand(4, 3, 16, 16)
for step in range(3):
    optimizer.zero_grad()
    pred = net(images)
    loss = criterion(pred, images)
    loss.backward()
    optimizer.step()
    print("step", step, "image gradient loss", round(loss.item(), 4))
