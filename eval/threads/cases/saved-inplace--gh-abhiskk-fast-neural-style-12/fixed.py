# fast-neural-style training with a Tanh added as the last layer of the TransformerNet (the
# person's change). The training loop subtracts the ImageNet mean from the stylized batch with a
# helper in utils before it goes through the loss network (a small frozen conv stack stands in
# for VGG16); random images stand in for MS-COCO and the style image.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.optim import Adam
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


# ---- utils.py ----
def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def subtract_imagenet_mean_batch(batch):
    tensortype = type(batch.data)
    mean = tensortype(batch.data.size())
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch = batch.sub(Variable(mean))
    return batch


def preprocess_batch(batch):
    batch = batch.transpose(0, 1)
    (r, g, b) = torch.chunk(batch, 3)
    batch = torch.cat((b, g, r))
    return batch.transpose(0, 1)


# ---- transformer_net.py ----
class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        self.reflection_pad = nn.ReflectionPad2d(int(np.floor(kernel_size / 2)))
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=5, stride=1)
        self.in1 = nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
        self.in2 = nn.InstanceNorm2d(16, affine=True)
        self.up = nn.Upsample(scale_factor=2)
        self.deconv1 = ConvLayer(16, 8, kernel_size=3, stride=1)
        self.in3 = nn.InstanceNorm2d(8, affine=True)
        self.deconv2 = ConvLayer(8, 3, kernel_size=5, stride=1)
        self.relu = nn.ReLU()
        self.tanh = nn.Tanh()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.deconv1(self.up(y))))
        y = self.deconv2(y)
        y = self.tanh(y)
        return y


# ---- vgg16.py (stand-in) ----
class Vgg16(nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.slice2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, X):
        h1 = self.slice1(X)
        h2 = self.slice2(h1)
        return [h1, h2]


# ---- neural_style.py: train() ----
batch_size, content_weight, style_weight = 4, 1.0, 5.0
train_loader = DataLoader(TensorDataset(torch.rand(8, 3, 32, 32) * 255, torch.zeros(8)), batch_size=batch_size)

transformer = TransformerNet()
optimizer = Adam(transformer.parameters(), 1e-3)
mse_loss = nn.MSELoss()
vgg = Vgg16()

style = preprocess_batch((torch.rand(1, 3, 32, 32) * 255).repeat(batch_size, 1, 1, 1))
style = subtract_imagenet_mean_batch(style)
features_style = vgg(style)
gram_style = [gram_matrix(y) for y in features_style]

for e in range(2):
    transformer.train()
    for batch_id, (x, _) in enumerate(train_loader):
        n_batch = len(x)
        optimizer.zero_grad()
        x = preprocess_batch(x)
        y = transformer(x)

        xc = x.data.clone()

        y = subtract_imagenet_mean_batch(y)
        xc = subtract_imagenet_mean_batch(xc)

        features_y = vgg(y)
        features_xc = vgg(xc)

        content_loss = content_weight * mse_loss(features_y[1], features_xc[1].detach())
        style_loss = 0.
        for m in range(len(features_y)):
            gram_y = gram_matrix(features_y[m])
            style_loss += style_weight * mse_loss(gram_y, gram_style[m][:n_batch].detach())

        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()
    print(e, total_loss.item())
