# Cross-view geo-localization net with a unit-subtraction attention module (USAM): with
# polish=True the border of the ReLU attention map is zeroed by slice assignment.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super(USAM, self).__init__()
        kernel = torch.ones((kernel_size, kernel_size)).unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)
        kernel2 = (torch.ones((1, 1)) * (kernel_size * kernel_size)).unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)
        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)

        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)

        if self.polish:
            att = att.clone()
            att[:, :, :, 0] = 0
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0

        output = x + att * x
        return output


class RKNet(nn.Module):
    def __init__(self, class_num=6):
        super(RKNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 2, 1)
        self.usam_1 = USAM()
        self.conv2 = nn.Conv2d(8, 16, 3, 2, 1)
        self.usam_2 = USAM()
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(16, class_num)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.usam_1(x)
        x = F.relu(self.conv2(x))
        x = self.usam_2(x)
        x = self.pool(x).flatten(1)
        return self.classifier(x)


model = RKNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
inputs = torch.randn(4, 3, 32, 32)
labels = torch.tensor([0, 1, 2, 3])

model.train()
for epoch in range(2):
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
