# Extracting hidden-unit activations from an AlexNet-style network with forward hooks: the
# hook stores output.detach() for each module, and the next layer is an in-place ReLU.
import torch
import torch.nn as nn

torch.manual_seed(0)

activations = {}


class Model():
    def __init__(self):
        self.model = nn.Sequential()
        self.model.add_module("features", nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
        ))
        self.model.add_module("avgpool", nn.AdaptiveAvgPool2d(1))
        self.model.add_module("flatten", nn.Flatten())
        self.model.add_module("classifier", nn.Linear(16, 10))
        self.model.eval()

    def get_activation(self, name):
        """Store hidden unit activations at each layer of model."""
        def hook(model, input, output):
            try:
                activations[name] = output.clone().detach()
            except AttributeError:
                activations[name] = output.clone()
        return hook

    def extract_features(self, images, module_name):
        for name, module in self.model.named_modules():
            if name == module_name:
                module.register_forward_hook(self.get_activation(name))
        with torch.no_grad():
            self.model(images)
        return activations[module_name]


images = torch.randn(4, 3, 32, 32)
model = Model()
features = model.extract_features(images, module_name="features.0")
print("features.0", tuple(features.shape), "mean %.4f" % features.mean().item())

# -- corpus check --
with torch.no_grad():
    reference = model.model.features[0](images)
if not torch.equal(features, reference):
    print("BUG: the stored conv activations were overwritten by the in-place ReLU that follows")
