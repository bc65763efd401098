# NTS-Net style fine-grained classifier: a ResNet backbone (resnet.py) returns logits and pooled
# features, the attention net wraps it; test.py switches the net to eval mode and scores the test
# images under no_grad.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = BasicBlock(16, 32, 2)
        self.layer2 = BasicBlock(32, 64, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(p=0.5)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        feature1 = self.layer2(self.layer1(x))
        x = self.avgpool(feature1)
        x = x.view(x.size(0), -1)
        x = self.drop(x)
        feature2 = x
        x = self.fc(x)
        return x, feature1, feature2


class attention_net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.pretrained_model = ResNet(num_classes)
        self.concat_net = nn.Linear(64 + num_classes, num_classes)

    def forward(self, x):
        resnet_out, rpn_feature, feature = self.pretrained_model(x)
        concat_logits = self.concat_net(torch.cat([feature, resnet_out], dim=1))
        return resnet_out, concat_logits


net = attention_net()
test_images = torch.randn(8, 3, 32, 32)
test_labels = torch.randint(0, 10, (8,))

net.eval()
with torch.no_grad():
    _, concat_logits = net(test_images)
    pred = concat_logits.max(1)[1]
    print("test acc: {:.3f}".format(pred.eq(test_labels).float().mean().item()))

# -- corpus check --
with torch.no_grad():
    _, again = net(test_images)
if not torch.allclose(concat_logits, again):
    print("BUG: dropout is still active after net.eval(): the test predictions are random")
