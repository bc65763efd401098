# anomalib's PaDiM: a FeatureExtractor wraps a pretrained timm backbone (features_only) and the
# PadimModel runs it under no_grad to collect patch embeddings of the normal training images, fits
# a Gaussian per patch to them, then scores test images by their Mahalanobis distance. The
# backbone uses BatchNorm2d. (create_backbone() with weights written here stands in for
# timm.create_model(backbone, pretrained=True, features_only=True, out_indices=...), which is not
# installed; random images stand in for MVTec.)
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
WEIGHTS = os.path.join(tempfile.mkdtemp(), 'resnet18_features.pth')


class TinyResNetFeatures(nn.Module):
    def __init__(self, out_indices=(1, 2)):
        super().__init__()
        self.out_indices = out_indices
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())

    def forward(self, x):
        outs = []
        for i, stage in enumerate([self.stem, self.layer1, self.layer2]):
            x = stage(x)
            if i in self.out_indices:
                outs.append(x)
        return outs


def create_backbone(backbone, pretrained=True, out_indices=(1, 2)):
    model = TinyResNetFeatures(out_indices)
    if pretrained:
        model.load_state_dict(torch.load(WEIGHTS))
    return model


class FeatureExtractor(nn.Module):
    def __init__(self, backbone, layers, pre_trained=True):
        super().__init__()
        self.backbone = backbone
        self.layers = layers
        self.idx = [int(layer[-1]) for layer in layers]
        self.feature_extractor = create_backbone(backbone, pretrained=pre_trained, out_indices=self.idx).eval()

    def forward(self, input_tensor):
        return dict(zip(self.layers, self.feature_extractor(input_tensor)))


class PadimModel(nn.Module):
    def __init__(self, layers, backbone="resnet18", pre_trained=True):
        super().__init__()
        self.layers = layers
        self.feature_extractor = FeatureExtractor(backbone=backbone, layers=layers, pre_trained=pre_trained)
        self.mean, self.inv_covariance = None, None

    def generate_embedding(self, features):
        embeddings = features[self.layers[0]]
        for layer in self.layers[1:]:
            layer_embedding = F.interpolate(features[layer], size=embeddings.shape[-2:], mode="nearest")
            embeddings = torch.cat((embeddings, layer_embedding), 1)
        return embeddings

    def forward(self, input_tensor):
        with torch.no_grad():
            features = self.feature_extractor(input_tensor)
            embeddings = self.generate_embedding(features)
        if self.training:
            return embeddings
        delta = (embeddings - self.mean).permute(2, 3, 0, 1)  # H x W x B x C
        return torch.einsum('hwbc,hwcd,hwbd->bhw', delta, self.inv_covariance, delta).sqrt()

    def fit(self, embeddings):
        b, c, h, w = embeddings.shape
        self.mean = embeddings.mean(0)
        flat = embeddings.permute(2, 3, 0, 1) - self.mean.permute(1, 2, 0)[:, :, None]
        covariance = torch.einsum('hwbc,hwbd->hwcd', flat, flat) / (b - 1) + 0.01 * torch.eye(c)
        self.inv_covariance = torch.linalg.inv(covariance)


stand_in = TinyResNetFeatures()
with torch.no_grad():  # stands in for the ImageNet weights: trained running statistics
    for bn in [m for m in stand_in.modules() if isinstance(m, nn.BatchNorm2d)]:
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
torch.save(stand_in.state_dict(), WEIGHTS)

train_images = [torch.rand(4, 3, 16, 16) for _ in range(3)]
test_images = torch.rand(4, 3, 16, 16)

model = PadimModel(layers=["layer1", "layer2"], backbone="resnet18")
embeddings = torch.cat([model(batch) for batch in train_images])  # training: collect the embeddings
model.fit(embeddings)
model.eval()
with torch.no_grad():
    anomaly_maps = model(test_images)
print("image scores:", anomaly_maps.amax((1, 2)))

# -- corpus check --
reference = create_backbone("resnet18", out_indices=[1, 2]).eval()
with torch.no_grad():
    expected = torch.cat([model.generate_embedding(dict(zip(["layer1", "layer2"], reference(b))))
                          for b in train_images])
if not torch.allclose(embeddings, expected, atol=1e-5):
    print("BUG: the pretrained backbone extracted the training embeddings in training mode (batch statistics)")
