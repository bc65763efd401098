# Grad-CAM++ on a small CNN in eval mode, in the style of torchcam: the CAM extractor hooks the
# target layer, the scores come from a `_forward` helper, and calling the extractor with a class
# index back-propagates that class score to the hooked activations. A random tensor stands in
# for the normalized image.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.layer4(self.layer1(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class GradCAMpp:
    def __init__(self, model, target_layer):
        self.model = model
        self.hook_a = None
        self.hook_g = None
        getattr(model, target_layer).register_forward_hook(self._hook_a)

    def _hook_a(self, module, inputs, output):
        self.hook_a = output.detach()
        if output.requires_grad:
            output.register_hook(self._hook_g)

    def _hook_g(self, grad):
        self.hook_g = grad.detach()

    def __call__(self, class_idx, scores):
        self.model.zero_grad()
        loss = scores[:, class_idx].sum()
        loss.backward(retain_graph=True)
        grad_2 = self.hook_g.pow(2)
        grad_3 = self.hook_g.pow(3)
        alpha = grad_2 / (2 * grad_2 + (grad_3 * self.hook_a).sum(dim=(2, 3), keepdim=True) + 1e-7)
        weights = (alpha * F.relu(self.hook_g)).sum(dim=(2, 3))
        cam = F.relu((weights[:, :, None, None] * self.hook_a).sum(1))
        return cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)


def _forward(model, input_tensor):
    if model.training:
        scores = model(input_tensor)
    else:
        with torch.no_grad():
            scores = model(input_tensor)
    return scores


model = SmallNet().eval()
cam = GradCAMpp(model, "layer4")
img_tensor = torch.randn(3, 32, 32)
_ = _forward(model, torch.stack((img_tensor, img_tensor)))
scores = _forward(model, img_tensor.unsqueeze(0))
activation_map = cam(class_idx=1, scores=scores)
print(tuple(activation_map.shape))
