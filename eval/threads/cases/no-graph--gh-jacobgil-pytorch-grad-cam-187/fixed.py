# Grad-CAM heatmaps for a fine-tuned 23-class ResNet: the script loads the trained weights, builds
# GradCAM on the last block of layer4 and, for every image of a folder, preprocesses it, asks the
# CAM for the grayscale map of the top class and blends it over the image. A small ResNet-like
# network, a minimal GradCAM with the library's layout (forward hooks on the target layer, the
# class score's backward, channel weights from the mean gradient) and random images stand in for
# resnet152, pytorch_grad_cam and the png files.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
np.random.seed(0)


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model, self.activations, self.gradients = model, [], []
        for layer in target_layers:
            layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())
        if output.requires_grad:
            output.register_hook(lambda grad: self.gradients.insert(0, grad.detach()))

    def __call__(self, x):
        self.activations, self.gradients = [], []
        return self.model(x)


class GradCAM:
    def __init__(self, model, target_layers, use_cuda=False):
        self.model = model.eval()
        self.activations_and_grads = ActivationsAndGradients(model, target_layers)

    def __call__(self, input_tensor, targets=None):
        outputs = self.activations_and_grads(input_tensor)
        if targets is None:
            targets = outputs.argmax(dim=-1)
        self.model.zero_grad()
        loss = outputs.gather(1, targets[:, None]).sum()
        loss.backward(retain_graph=True)
        activations = self.activations_and_grads.activations[-1]
        grads = self.activations_and_grads.gradients[-1]
        weights = grads.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * activations).sum(dim=1))
        cam = cam - cam.amin(dim=(1, 2), keepdim=True)
        return (cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)).cpu().numpy()


def preprocess_image(img, mean, std):
    return ((torch.from_numpy(img.copy()).permute(2, 0, 1) - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None])[None].float()


def show_cam_on_image(img, mask):
    heatmap = np.stack([mask, mask * 0.5, 1 - mask], axis=-1).astype(np.float32)
    cam = heatmap + np.float32(img)
    return np.uint8(255 * cam / np.max(cam))


def block(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = block(3, 8, 2)
        self.layer3 = nn.Sequential(block(8, 16, 2))
        self.layer4 = nn.Sequential(block(16, 32, 2), block(32, 32, 1))
        self.fc = nn.Linear(32, 1000)

    def forward(self, x):
        x = self.layer4(self.layer3(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


resnet = ResNet()
resnet.fc = torch.nn.Linear(32, 23)
device = torch.device("cpu")
model = resnet
model.load_state_dict({k: v.clone() for k, v in model.state_dict().items()})  # stands for torch.load('79bestModel.pth')['net']
model.eval()
cam = GradCAM(model=model, target_layers=[model.layer4[-1]], use_cuda=False)

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

imgs = [np.random.rand(64, 64, 3) for _ in range(3)]  # stands for glob('*.png') + cv2.imread
for i, img in enumerate(imgs):
    img_ori = np.float32(img)
    input_tensor = preprocess_image(img_ori, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    grayscale_cam = cam(input_tensor=input_tensor, targets=None)
    grayscale_cam = grayscale_cam[0, :]
    small = img_ori[::8, ::8]
    visualization = show_cam_on_image(small, grayscale_cam)
    print(i, visualization.shape, visualization.mean())
