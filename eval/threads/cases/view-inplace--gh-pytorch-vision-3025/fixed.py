# Visualizing the first-layer conv kernels of a CNN as image grids between training epochs:
# make_grid (torchvision 0.8 style utils) normalizes each image of the batch in place while
# iterating over the batch.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.no_grad()
def make_grid(tensor, nrow=8, padding=2, normalize=False, range=None, scale_each=False, pad_value=0):
    if isinstance(tensor, list):
        tensor = torch.stack(tensor, dim=0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)

    if normalize is True:
        tensor = tensor.clone()  # avoid modifying tensor in-place

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t, range):
            if range is not None:
                norm_ip(t, range[0], range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:  # loop over mini-batch dimension
                norm_range(t, range)
        else:
            norm_range(tensor, range)

    if tensor.size(0) == 1:
        return tensor.squeeze(0)

    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
    k = 0
    for y in torch.arange(ymaps).tolist():
        for x in torch.arange(xmaps).tolist():
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


class AlexNetSmall(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=5, stride=2, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(2),
        )
        self.classifier = nn.Linear(16 * 2 * 2, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


model = AlexNetSmall()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.randn(8, 3, 16, 16)
labels = torch.randint(0, 10, (8,))

kernel_grids = []
for epoch in range(2):
    loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    for sub_module in model.modules():
        if isinstance(sub_module, nn.Conv2d):
            kernels = sub_module.weight
            c_out, c_int, k_w, k_h = tuple(kernels.shape)
            for o_idx in range(c_out):
                kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1)
                img_grid = make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3)
                kernel_grids.append(img_grid)
            break
    print(epoch, loss.item(), len(kernel_grids))
