# yolov5 tf-android branch, models/tf.py: the trained PyTorch model is rebuilt layer by layer as
# Keras layers whose initializers are filled from the PyTorch modules' weights, then the Keras
# model is exported. (Two tiny numpy layers stand in for keras.layers.Conv2D/BatchNormalization.)
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Constant:  # keras.initializers.Constant
    def __init__(self, value):
        self.value = np.asarray(value)


class KerasConv2D:  # 1x1, stride 1, NHWC, like keras.layers.Conv2D(filters, 1, 1, 'SAME')
    def __init__(self, filters, kernel_size, strides, padding, use_bias, kernel_initializer):
        self.kernel = kernel_initializer.value  # (kh, kw, c_in, c_out)

    def __call__(self, x):
        return np.einsum("nhwc,cd->nhwd", x, self.kernel[0, 0])


class KerasBatchNormalization:
    def __init__(self, beta_initializer, gamma_initializer, moving_mean_initializer,
                 moving_variance_initializer, epsilon):
        self.beta, self.gamma = beta_initializer.value, gamma_initializer.value
        self.mean, self.var = moving_mean_initializer.value, moving_variance_initializer.value
        self.eps = epsilon

    def __call__(self, x):
        return (x - self.mean) / np.sqrt(self.var + self.eps) * self.gamma + self.beta


class Conv(nn.Module):  # models/common.py
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class TFBN:
    def __init__(self, w=None):
        self.bn = KerasBatchNormalization(
            beta_initializer=Constant(w.bias.numpy()),
            gamma_initializer=Constant(w.weight.numpy()),
            moving_mean_initializer=Constant(w.running_mean.numpy()),
            moving_variance_initializer=Constant(w.running_var.numpy()),
            epsilon=w.eps)

    def __call__(self, inputs):
        return self.bn(inputs)


class TFConv:
    def __init__(self, c1, c2, k=1, s=1, w=None):
        self.conv = KerasConv2D(c2, k, s, "SAME", use_bias=False,
                                kernel_initializer=Constant(w.conv.weight.permute(2, 3, 1, 0).numpy()))
        self.bn = TFBN(w.bn)

    def __call__(self, inputs):
        x = self.bn(self.conv(inputs))
        return x / (1 + np.exp(-x))


model = nn.Sequential(Conv(3, 8), Conv(8, 4))
# a few training steps so the weights are the trained ones
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 3, 8, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()

tf_layers = [TFConv(m.conv.in_channels, m.conv.out_channels, w=m) for m in model]
img = torch.rand(1, 3, 8, 8)
y = img.permute(0, 2, 3, 1).numpy()
for layer in tf_layers:
    y = layer(y)
with torch.no_grad():
    ref = model(img).permute(0, 2, 3, 1).numpy()
print(np.abs(y - ref).max() < 1e-4)
