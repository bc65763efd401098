# mdl (EleutherAI, minimum description length probing): a QuadraticProbe is trained on flattened
# CIFAR-10 images with Probe.fit. The probe takes the device and dtype its layers are built with;
# the experiment builds it with the data's device and a reduced precision. Random features stand
# in for the images; float64 on the CPU stands in for the experiment's bfloat16 on the GPU.
import math
from abc import ABC, abstractmethod

import torch
from torch import Tensor, nn, optim
from torch.nn.functional import binary_cross_entropy_with_logits as bce_with_logits
from torch.nn.functional import cross_entropy

torch.manual_seed(0)
NUM_CLASSES = 10


class Probe(nn.Module, ABC):
    def __init__(self, num_features: int, num_classes: int = 2, device=None, dtype=None):
        super().__init__()

        self.dtype = dtype or torch.get_default_dtype()
        self.num_classes = num_classes
        self.num_features = num_features

    @abstractmethod
    def build_optimizer(self) -> optim.Optimizer:
        ...

    @torch.enable_grad()
    def fit(self, x: Tensor, y: Tensor, *, batch_size: int = 32, early_stop_epochs: int = 4, max_epochs: int = 3,
            seed: int = 42):
        assert len(x) == len(y), "Input and target must have the same number of samples"
        x = x.to(self.dtype)

        # Shuffle the data so we don't learn in a weirdly structured order
        rng = torch.Generator(device=x.device).manual_seed(seed)
        perm = torch.randperm(len(x), generator=rng, device=x.device)
        x, y = x[perm], y[perm]

        val_size = min(4096, len(x) // 5)
        x_train, y_train = x[val_size:], y[val_size:]
        x_val, y_val = x[:val_size], y[:val_size]

        opt = self.build_optimizer()
        schedule = optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=0.01)
        val_losses = []

        for _ in range(max_epochs):
            if opt.param_groups[0]["lr"] < opt.defaults["lr"] * 0.5**early_stop_epochs:
                break

            self.train()
            for x_batch, y_batch in zip(x_train.split(batch_size), y_train.split(batch_size)):
                opt.zero_grad()
                self.loss(x_batch, y_batch).backward()
                opt.step()

            with torch.no_grad():
                self.eval()
                loss = self.loss(x_val, y_val)
                schedule.step(loss)
            val_losses.append(loss.item())
        return val_losses

    def loss(self, x: Tensor, y: Tensor) -> Tensor:
        """Computes the loss of the probe on the given data."""
        loss_fn = bce_with_logits if self.num_classes == 2 else cross_entropy
        return loss_fn(self(x.to(self.dtype)).squeeze(-1), y) / math.log(2)


class QuadraticProbe(Probe):
    """Probe of the form `y_i = x.T @ A @ x + b.T @ x + c`."""

    def __init__(self, num_features: int, num_classes: int = 2, device=None, dtype=None):
        super().__init__(num_features, num_classes, device, dtype)

        self.norm = nn.BatchNorm1d(num_classes)
        self.bilinear = nn.Bilinear(num_features, num_features, num_classes, bias=False, device=device, dtype=dtype)
        self.linear = nn.Linear(num_features, num_classes, device=device, dtype=dtype)

    def build_optimizer(self) -> optim.Optimizer:
        return optim.AdamW(self.parameters())

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(self.bilinear(x, x)) + self.linear(x)


def train_model(cls, X_train: torch.Tensor, Y_train: torch.Tensor) -> Probe:
    model = cls(X_train.shape[1], num_classes=NUM_CLASSES, device=X_train.device, dtype=torch.float64)
    val_losses = model.fit(X_train, Y_train)
    print(cls.__name__, "validation losses", [round(v, 3) for v in val_losses])
    return model


X_train = torch.rand(320, 24)  # flattened images
Y_train = torch.randint(0, NUM_CLASSES, (320,))
train_model(QuadraticProbe, X_train, Y_train)
