# SimpleNet (PyTorch port) on CIFAR-10: a plain stack of conv/BN/ReLU blocks, global max pooling,
# channel dropout and a linear classifier; the evaluation routine switches the trained net to eval
# mode and scores the test set. Random images stand in for CIFAR-10.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class simplenet(nn.Module):
    def __init__(self, classes=10):
        super(simplenet, self).__init__()
        self.features = self._make_layers()
        self.classifier = nn.Linear(64, classes)
        self.drp = nn.Dropout(0.1)

    def forward(self, x):
        out = self.features(x)

        # Global Max Pooling
        out = F.max_pool2d(out, kernel_size=out.size()[2:])
        out = self.drp(out)

        out = out.view(out.size(0), -1)
        out = self.classifier(out)
        return out

    def _make_layers(self):
        cfg = [16, 32, 32, 'M', 64, 64, 'M']
        layers = []
        input_channel = 3
        for x in cfg:
            if x == 'M':
                layers += [nn.MaxPool2d(kernel_size=2, stride=2), nn.Dropout2d(p=0.1)]
            else:
                layers += [nn.Conv2d(input_channel, x, kernel_size=3, padding=1),
                           nn.BatchNorm2d(x, eps=1e-05, momentum=0.05, affine=True),
                           nn.ReLU(inplace=True)]
                input_channel = x
        return nn.Sequential(*layers)


def test(net, testloader):
    net.eval()
    correct, total, outputs_all = 0, 0, []
    with torch.no_grad():
        for inputs, targets in testloader:
            outputs = net(inputs)
            outputs_all.append(outputs)
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    print('Test Acc: %.3f%% (%d/%d)' % (100. * correct / total, correct, total))
    return torch.cat(outputs_all)


net = simplenet()
testset = torch.utils.data.TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))
testloader = torch.utils.data.DataLoader(testset, batch_size=32, shuffle=False)
first = test(net, testloader)

# -- corpus check --
second = test(net, testloader)
if not torch.equal(first, second):
    print("BUG: the trained network gives a different output on every run in eval mode (dropout still active)")
