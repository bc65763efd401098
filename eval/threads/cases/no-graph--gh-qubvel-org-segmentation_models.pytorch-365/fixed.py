# A segmentation model built like segmentation_models.pytorch's SegmentationModel (encoder,
# decoder, segmentation head; `predict()` is the library's inference helper), trained by the
# user, then explained with a Captum-style saliency: the attribution wraps the model in a
# function that aggregates the logits of one class over the pixels predicted as that class and
# takes the gradient of that score with respect to the input image.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SegmentationModel(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU())
        self.segmentation_head = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        features = self.encoder(x)
        decoder_output = self.decoder(features)
        masks = self.segmentation_head(decoder_output)
        return F.interpolate(masks, size=x.shape[-2:], mode="bilinear", align_corners=False)

    def predict(self, x):
        """Inference method. Switch model to `eval` mode, call `.forward(x)` with `torch.no_grad()`"""
        if self.training:
            self.eval()
        with torch.no_grad():
            x = self.forward(x)
        return x


class Saliency:
    """Stands for captum.attr.Saliency: the gradient of forward_func's target output w.r.t. the input."""

    def __init__(self, forward_func):
        self.forward_func = forward_func

    def attribute(self, inputs, target):
        inputs = inputs.clone().requires_grad_(True)
        outputs = self.forward_func(inputs)
        score = outputs[:, target].sum()
        grads = torch.autograd.grad(score, inputs)[0]
        return grads.abs()


model = SegmentationModel(classes=3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images, masks = torch.rand(8, 3, 32, 32), torch.randint(0, 3, (8, 32, 32))
for epoch in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), masks)
    loss.backward()
    optimizer.step()

image = images[:1]
out_max = model.predict(image).argmax(dim=1, keepdim=True)


def agg_segmentation_wrapper(inp):
    model_out = model(inp)
    # creates binary matrix with 1 for original argmax class for each pixel and 0 otherwise
    selected_inds = torch.zeros_like(model_out[0:1]).scatter_(1, out_max, 1)
    return (model_out * selected_inds).sum(dim=(2, 3))


saliency = Saliency(agg_segmentation_wrapper)
attributions = saliency.attribute(image, target=int(out_max[0, 0, 16, 16]))
print("attribution map", tuple(attributions.shape), attributions.sum().item())
