# A classifier trained as a PyTorch Lightning module that logs a Grad-CAM of a validation image
# at the end of every validation epoch. Lightning runs the validation loop, epoch-end hook
# included, with gradients disabled; a small Trainer below stands for that loop. GradCAM mirrors
# pytorch-grad-cam's: hooks keep the target layer's activations and gradients, and the class
# score is back-propagated with loss.backward(retain_graph=True).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        return model_output[..., self.category]


class GradCAM:
    def __init__(self, model, target_layers):
        self.model = model.eval()
        self.activations, self.gradients = [], []
        for layer in target_layers:
            layer.register_forward_hook(self.save_activation)
            layer.register_forward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())

    def save_gradient(self, module, input, output):
        if not output.requires_grad:
            return
        output.register_hook(lambda grad: self.gradients.insert(0, grad.detach()))

    def __call__(self, input_tensor, targets):
        self.activations, self.gradients = [], []
        outputs = self.model(input_tensor)
        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward(retain_graph=True)
        weights = self.gradients[0].mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activations[0]).sum(dim=1))
        return cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)


class LitClassifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, num_classes))
        self.target_layers = [self.features[-1]]
        self.targets = [ClassifierOutputTarget(1)]
        self.val_images = []

    def forward(self, x):
        return self.head(self.features(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_images.append(x[:1])
        return F.cross_entropy(self(x), y)

    def _initialize_grad_cam(self, use_cuda):
        return GradCAM(model=self, target_layers=self.target_layers)

    def validation_epoch_end(self, outputs):
        img_tensor = self.val_images[-1]
        cam = self._initialize_grad_cam(False)
        grayscale_cam = cam(input_tensor=img_tensor, targets=self.targets)
        print("val loss {:.4f}, grad-cam peak at {}".format(
            torch.stack(outputs).mean().item(), divmod(grayscale_cam[0].argmax().item(), 16)))
        self.val_images.clear()


class Trainer:
    """Stands for pytorch_lightning.Trainer: fit() alternates a training and a validation epoch."""

    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def fit(self, module, train_loader, val_loader):
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
        for epoch in range(self.max_epochs):
            module.train()
            for batch_idx, batch in enumerate(train_loader):
                optimizer.zero_grad()
                module.training_step(batch, batch_idx).backward()
                optimizer.step()
            module.eval()
            with torch.no_grad():
                outputs = [module.validation_step(batch, i) for i, batch in enumerate(val_loader)]
                module.validation_epoch_end(outputs)


train_loader = [(torch.rand(4, 3, 16, 16), torch.randint(0, 4, (4,))) for _ in range(3)]
val_loader = [(torch.rand(4, 3, 16, 16), torch.randint(0, 4, (4,))) for _ in range(2)]
Trainer(max_epochs=2).fit(LitClassifier(), train_loader, val_loader)
