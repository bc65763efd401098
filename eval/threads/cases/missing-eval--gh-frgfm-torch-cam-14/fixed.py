# torch-cam example script: a (pretrained) torchvision-style CNN classifies an image, and a class
# activation map is computed from the feature maps of its last conv block (captured by a forward hook)
# weighted by the classifier weights of the predicted class.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallResNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(self.avgpool(self.layer4(self.layer1(x))).flatten(1))


class CAM:
    def __init__(self, model, conv_layer, fc_layer):
        self.model, self.fc_layer = model, fc_layer
        self.hook_a = None
        getattr(model, conv_layer).register_forward_hook(self._hook_a)

    def _hook_a(self, module, input, output):
        self.hook_a = output.detach()

    def __call__(self, class_idx):
        weights = getattr(self.model, self.fc_layer).weight.data[class_idx]
        cam = (weights[:, None, None] * self.hook_a[0]).sum(0)
        return F.relu(cam) / cam.max().clamp(min=1e-8)


def pretrained_model():
    model = SmallResNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(5):
        loss = F.cross_entropy(model(torch.rand(8, 3, 32, 32) * 2), torch.randint(0, 5, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


model = pretrained_model().eval()
img_tensor = torch.rand(1, 3, 32, 32)
cam_extractor = CAM(model, 'layer4', 'fc')
scores = cam_extractor.model(img_tensor)
class_idx = scores.squeeze(0).argmax().item()
activation_map = cam_extractor(class_idx)
print('predicted class', class_idx, 'cam', tuple(activation_map.shape))

# -- corpus check --
reference = copy.deepcopy(model).eval()
with torch.no_grad():
    expected = reference(img_tensor)
if not torch.allclose(scores.detach(), expected, atol=1e-5):
    print("BUG: the example classified the image with BatchNorm in training mode")
