# Watching the first-layer filters during training: each epoch the conv1 weights (through
# .data) are tiled with a make_grid helper that normalizes its input tensor in place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_grid(tensor, nrow=4, padding=1, normalize=False, scale_each=False):
    """Tile a batch of images (B x C x H x W) into one image, like torchvision.utils.make_grid."""
    if tensor.dim() == 4 and tensor.size(1) == 1:  # single-channel images
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        def norm_ip(img, min, max):
            img.clamp_(min=min, max=max)
            img.add_(-min).div_(max - min + 1e-5)

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_ip(t, float(t.min()), float(t.max()))
        else:
            norm_ip(tensor, float(tensor.min()), float(tensor.max()))

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = (nmaps + xmaps - 1) // xmaps
    height, width = tensor.size(2) + padding, tensor.size(3) + padding
    grid = tensor.new_full((3, height * ymaps + padding, width * xmaps + padding), 0.0)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = tensor[k]
            k += 1
    return grid


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=5)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=5)
        self.fc = nn.Linear(16 * 5 * 5, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
data = torch.randn(16, 3, 32, 32)
target = torch.randint(0, 10, (16,))

for epoch in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    filters = make_grid(model.conv1.weight.data, normalize=True, scale_each=True)
    print("epoch", epoch, "loss %.4f" % loss.item(), "filters", tuple(filters.shape))

# -- corpus check --
w = model.conv1.weight.detach()
if bool((w.amin(dim=(1, 2, 3)) == 0).all()) and bool((w <= 1).all()):
    print("BUG: visualizing the filters rescaled conv1.weight in place to [0, 1]")
