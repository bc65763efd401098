# Visualizing a Score-CAM saliency map: the input image tensor was made with
# requires_grad=True, and the plotting helper denormalizes it channel by channel in place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def apply_transforms(image):
    means = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
    stds = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    tensor = ((image - means) / stds).unsqueeze(0)
    tensor.requires_grad = True
    return tensor


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    denormalized = tensor.clone()

    count = 0
    for channel, mean, std in zip(denormalized[0], means, stds):
        denormalized[0][count] = denormalized[0][count].mul(std)
        denormalized[0][count] = denormalized[0][count].add(mean)
        count += 1

    return denormalized


def format_for_plotting(tensor):
    return tensor.squeeze(0).permute(1, 2, 0).detach()


def basic_visualize(input_, saliency_map):
    image = format_for_plotting(denormalize(input_))
    overlay = image * saliency_map.squeeze().unsqueeze(-1)
    print("image", tuple(image.shape), "overlay mean %.4f" % overlay.mean().item())


class ScoreCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = {}
        target_layer.register_forward_hook(self._save)

    def _save(self, module, inp, out):
        self.activations["value"] = out

    def __call__(self, input_):
        b, _, h, w = input_.shape
        logit = self.model(input_)
        class_idx = logit.argmax(dim=1).item()
        activations = self.activations["value"]
        score_saliency_map = torch.zeros((1, 1, h, w))
        with torch.no_grad():
            for i in range(activations.size(1)):
                saliency_map = F.interpolate(activations[:, i:i + 1], size=(h, w), mode="bilinear",
                                             align_corners=False)
                norm = (saliency_map - saliency_map.min()) / (saliency_map.max() - saliency_map.min() + 1e-8)
                score = F.softmax(self.model(input_ * norm), dim=1)[0, class_idx]
                score_saliency_map += score * saliency_map
        score_saliency_map = F.relu(score_saliency_map)
        return (score_saliency_map - score_saliency_map.min()) / (
            score_saliency_map.max() - score_saliency_map.min() + 1e-8)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).eval()
input_image = torch.rand(3, 16, 16)
input_ = apply_transforms(input_image)
scorecam = ScoreCAM(model, target_layer=model[2])
scorecam_map = scorecam(input_)
basic_visualize(input_.cpu(), scorecam_map.type(torch.FloatTensor).cpu())
