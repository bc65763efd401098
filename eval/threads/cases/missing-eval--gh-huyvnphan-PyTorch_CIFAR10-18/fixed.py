# Testing the repository's pretrained CIFAR-10 ResNet-18: the script builds the network with the
# repo's resnet18(pretrained=True, device=...) builder (folded in here from its model module),
# loads the released state dict, and computes the test accuracy from argmax predictions. The
# ResNet uses BatchNorm2d. (Weights written here stand in for state_dicts/resnet18.pt, random
# images for CIFAR-10.)
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
STATE_DICTS = tempfile.mkdtemp()


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + identity)


class ResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def _resnet(arch, pretrained, device):
    model = ResNet()
    if pretrained:
        model.load_state_dict(torch.load(os.path.join(STATE_DICTS, arch + '.pt'), map_location=device))
    return model


def resnet18(pretrained=False, device='cpu'):
    return _resnet('resnet18', pretrained, device)


def write_released_weights():
    """stands in for the released state dict: trained weights with their running statistics"""
    released = ResNet()
    with torch.no_grad():
        for bn in [m for m in released.modules() if isinstance(m, nn.BatchNorm2d)]:
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)
    torch.save(released.state_dict(), os.path.join(STATE_DICTS, 'resnet18.pt'))


if __name__ == '__main__':
    write_released_weights()
    net = resnet18(pretrained=True, device='cpu').eval()
    net.load_state_dict(torch.load(os.path.join(STATE_DICTS, 'resnet18.pt')))

    mean = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
    std = torch.tensor([0.2471, 0.2435, 0.2616]).view(3, 1, 1)
    images = (torch.rand(40, 3, 16, 16) - mean) / std
    dataset = TensorDataset(images, torch.randint(0, 10, (40,)))
    dataloader = DataLoader(dataset, batch_size=10, num_workers=0, shuffle=False)
    preds = []
    labels = []
    for i, (img, label) in enumerate(dataloader):
        pred = net(img).detach().cpu()
        pred_indices = pred.argmax(1)
        preds.append(pred_indices)
        labels.append(label.cpu())
    preds = torch.cat(preds)
    labels = torch.cat(labels)
    print(sum(preds == labels) / len(preds))

    # -- corpus check --
    reference = ResNet()
    reference.load_state_dict(torch.load(os.path.join(STATE_DICTS, 'resnet18.pt')))
    reference.eval()
    with torch.no_grad():
        expected = reference(img)
    if not torch.allclose(pred, expected, atol=1e-5):
        print("BUG: the test images were classified with BatchNorm in training mode (batch statistics)")
