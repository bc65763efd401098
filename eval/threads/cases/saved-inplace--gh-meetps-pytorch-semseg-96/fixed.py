# Training a PSPNet for semantic segmentation: the final conv-bn-relu feeds an in-place
# Dropout2d before the 1x1 classification conv.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(conv2DBatchNormRelu, self).__init__()
        self.cbr_unit = nn.Sequential(
            nn.Conv2d(in_channels, n_filters, k_size, stride, padding, bias=bias),
            nn.BatchNorm2d(n_filters),
            nn.ReLU(inplace=True),
        )

    def forward(self, inputs):
        return self.cbr_unit(inputs)


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes):
        super(pyramidPooling, self).__init__()
        self.paths = nn.ModuleList(
            [conv2DBatchNormRelu(in_channels, in_channels // len(pool_sizes), 1, 1, 0, False)
             for _ in pool_sizes])
        self.pool_sizes = pool_sizes

    def forward(self, x):
        h, w = x.shape[2:]
        out = [x]
        for module, pool_size in zip(self.paths, self.pool_sizes):
            y = F.adaptive_avg_pool2d(x, pool_size)
            y = module(y)
            out.append(F.interpolate(y, size=(h, w), mode="bilinear", align_corners=True))
        return torch.cat(out, dim=1)


class pspnet(nn.Module):
    def __init__(self, n_classes=5):
        super(pspnet, self).__init__()
        self.convbnrelu1_1 = conv2DBatchNormRelu(3, 16, 3, 2, 1, False)
        self.convbnrelu1_2 = conv2DBatchNormRelu(16, 32, 3, 2, 1, False)
        self.pyramid_pooling = pyramidPooling(32, [4, 2, 1, 1])
        self.cbr_final = conv2DBatchNormRelu(64, 16, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=False)
        self.classification = nn.Conv2d(16, n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1_2(self.convbnrelu1_1(x))
        x = self.pyramid_pooling(x)
        x = self.cbr_final(x)
        x = self.dropout(x)
        x = self.classification(x)
        return F.interpolate(x, size=inp_shape, mode="bilinear", align_corners=True)


model = pspnet(n_classes=5)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.99, weight_decay=5e-4)
images = torch.randn(2, 3, 32, 32)
labels = torch.randint(0, 5, (2, 32, 32))

model.train()
for i in range(2):
    optimizer.zero_grad()
    outputs = model(images)
    loss = F.cross_entropy(outputs, labels)
    loss.backward()
    optimizer.step()
    print("Iter %d Loss: %.4f" % (i + 1, loss.item()))
