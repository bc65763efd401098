# Adversarial DeepFakes (attack.py -> attack_algos.robust_fgsm): the face crop is made a Variable
# that requires grad, each robust transform is applied to it, predict_with_model resizes it
# differentiably and normalizes it with the data set's Normalize transform (dataset/transform.py),
# and the detector's logits drive a signed-gradient step. A small CNN stands in for XceptionNet, a
# stand-in for transforms.Compose, and a random crop for the video frame.
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        """
        Args:
            tensor (Tensor): Tensor image of size (C, H, W) to be normalized.
        Returns:
            Tensor: Normalized image.
        """
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)
            # The normalize code -> t.sub_(m).div_(s)
        return tensor


xception_default_data_transforms = {
    'normalize': Compose([
        Normalize([0.5] * 3, [0.5] * 3)
    ]),
}


def predict_with_model(preprocessed_image, model, model_type, post_function=nn.Softmax(dim=1), cuda=True):
    if model_type == "xception":
        resized_image = nn.functional.interpolate(preprocessed_image, size=(32, 32), mode="bilinear", align_corners=True)
        norm_transform = xception_default_data_transforms['normalize']

    normalized_image = norm_transform(resized_image)

    logits = model(normalized_image)
    output = post_function(logits)

    _, prediction = torch.max(output, 1)
    prediction = float(prediction.cpu().numpy()[0])
    return int(prediction), output, logits


def robust_fgsm(input_img, model, model_type, cuda=False, max_iter=3, alpha=1 / 255.0, eps=16 / 255.0, desired_acc=0.95):
    transform_functions = [
        lambda x: x,
        lambda x: x + 0.01 * torch.randn_like(x),
    ]

    input_var = autograd.Variable(input_img, requires_grad=True)

    iter_no = 0
    while iter_no < max_iter:
        loss = 0
        all_fooled = True
        for transform_fn in transform_functions:
            transformed_img = transform_fn(input_var)
            prediction, output, logits = predict_with_model(transformed_img, model, model_type, cuda=cuda)
            if output[0][0] < desired_acc:
                all_fooled = False
            loss += torch.clamp(logits[0][1] - logits[0][0] + 10, min=0.0)
        if all_fooled:
            break

        loss /= (1. * len(transform_functions))
        if input_var.grad is not None:
            input_var.grad.data.zero_()
        loss.backward()

        step_adv = input_var.detach() - alpha * torch.sign(input_var.grad.detach())
        total_pert = torch.clamp(step_adv - input_img, -eps, eps)
        input_adv = torch.clamp(input_img + total_pert, 0.0, 1.0)
        input_var.data = input_adv.detach()
        iter_no += 1

    return input_var, {"iterations": iter_no}


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))
model.eval()
for p in model.parameters():
    p.requires_grad = False
processed_image = torch.rand(1, 3, 40, 40)
perturbed_image, attack_meta_data = robust_fgsm(processed_image, model, "xception")
print(attack_meta_data, float((perturbed_image.detach() - processed_image).abs().max()))
