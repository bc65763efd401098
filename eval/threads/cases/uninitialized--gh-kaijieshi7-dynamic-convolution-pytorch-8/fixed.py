# Dynamic convolution: K candidate kernels (and biases) are mixed per sample by an attention
# branch, then applied as one grouped convolution; used inside a small CIFAR-style classifier.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)


class attention2d(nn.Module):
    def __init__(self, in_planes, ratios, K, temperature):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        hidden_planes = int(in_planes * ratios) if in_planes != 3 else K
        self.fc1 = nn.Conv2d(in_planes, hidden_planes, 1, bias=False)
        self.fc2 = nn.Conv2d(hidden_planes, K, 1, bias=False)
        self.temperature = temperature
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')

    def forward(self, x):
        x = F.relu(self.fc1(self.avgpool(x)))
        x = self.fc2(x).view(x.size(0), -1)
        return F.softmax(x / self.temperature, 1)


class Dynamic_conv2d(nn.Module):
    def __init__(self, in_planes, out_planes, kernel_size, ratio=0.25, stride=1, padding=0, groups=1, bias=True, K=4, temperature=34):
        super().__init__()
        self.in_planes, self.out_planes, self.kernel_size = in_planes, out_planes, kernel_size
        self.stride, self.padding, self.groups, self.K = stride, padding, groups, K
        self.attention = attention2d(in_planes, ratio, K, temperature)
        self.weight = nn.Parameter(torch.Tensor(K, out_planes, in_planes // groups, kernel_size, kernel_size), requires_grad=True)
        if bias:
            self.bias = nn.Parameter(torch.zeros(K, out_planes))
        else:
            self.bias = None
        self._initialize_weights()

    def _initialize_weights(self):
        for i in range(self.K):
            nn.init.kaiming_uniform_(self.weight[i])

    def forward(self, x):
        softmax_attention = self.attention(x)
        batch_size, in_planes, height, width = x.size()
        x = x.view(1, -1, height, width)
        weight = self.weight.view(self.K, -1)
        aggregate_weight = torch.mm(softmax_attention, weight).view(-1, self.in_planes, self.kernel_size, self.kernel_size)
        if self.bias is not None:
            aggregate_bias = torch.mm(softmax_attention, self.bias).view(-1)
            output = F.conv2d(x, weight=aggregate_weight, bias=aggregate_bias, stride=self.stride,
                              padding=self.padding, groups=self.groups * batch_size)
        else:
            output = F.conv2d(x, weight=aggregate_weight, bias=None, stride=self.stride,
                              padding=self.padding, groups=self.groups * batch_size)
        return output.view(batch_size, self.out_planes, output.size(-2), output.size(-1))


class DyNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = Dynamic_conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


model = DyNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
inputs, targets = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.item()))

# -- corpus check --
if torch.isnan(loss):
    print("BUG: the loss is nan: the dynamic convolution's bias was never initialized")
