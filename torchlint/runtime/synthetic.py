"""Synthetic images and models for a training script whose torchvision is missing, and a
stand-in for the checkpoint files a fresh clone lacks.

A 2018 GAN or classifier script builds ``datasets.MNIST(root, transform=...)`` or
``ImageFolder(opt.dataroot, transform=transforms.Compose([Resize(64), CenterCrop(64),
ToTensor(), Normalize(...)]))`` and trains on its loader: without torchvision or the
images, the run never reaches the training loop where the flagged lines are.  Inside a
job where torchvision is missing, ``torchvision.datasets`` and ``torchvision.transforms``
come from here (stand_ins.py routes them):

- a dataset class is a real ``torch.utils.data.Dataset`` of random images of the shape
  the dataset has (MNIST 1x28x28, CIFAR 3x32x32, STL10 3x96x96, a folder of photos
  3x64x64) and class labels, put through the transform the script built;
- a transform does to a ``C x H x W`` tensor what torchvision's does to an image, as far as
  shapes go: ``Resize``/``Scale``, the crops, ``Grayscale``, ``Pad``, ``Normalize``,
  ``Lambda``; random flips, colour changes and conversions leave it as it is;
- ``models.vgg16(pretrained=True)``, the other VGGs, the ResNets and AlexNet are those
  architectures (the layers and attribute names code reaches into: ``vgg.features``,
  ``resnet.layer4``, ``fc``) with random weights.

Each dataset built is recorded (``used``) and every verdict of the run says so: the
images are invented, so no evidence rests on their values; they only carry the program
to its real lines with tensors of a plausible shape.  No image requires grad.

Likewise ``torch.load`` of pretrained weights that are not on this machine
(``torch.load('/media/me/vgg16.pth')``) gives a stand-in that ``load_state_dict`` ignores:
the model keeps the weights it was built with, and each verdict names the missing file.
"""

from __future__ import annotations

import contextlib
import os
import types
import zlib
from typing import Any, Callable, Iterator, Optional

import torch
import torch.nn.functional as F

from torchlint.runtime.stand_ins import CHECKPOINT, SYNTHETIC, StandIn, record

SAMPLES = 256  # per dataset: a few batches of any usual size

# (channels, height, width, classes) of each dataset a script may name; any other class
# of torchvision.datasets is a folder of photos.
SHAPES = {
    "MNIST": (1, 28, 28, 10), "FashionMNIST": (1, 28, 28, 10), "KMNIST": (1, 28, 28, 10),
    "EMNIST": (1, 28, 28, 26), "QMNIST": (1, 28, 28, 10), "Omniglot": (1, 105, 105, 964),
    "USPS": (1, 16, 16, 10), "CIFAR10": (3, 32, 32, 10), "CIFAR100": (3, 32, 32, 100),
    "SVHN": (3, 32, 32, 10), "STL10": (3, 96, 96, 10), "CelebA": (3, 218, 178, 2),
}
PHOTOS = (3, 64, 64, 2)


def _size(value: Any) -> Optional[tuple[int, int]]:
    if isinstance(value, int):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return value[0], value[1]
    if isinstance(value, (tuple, list)) and len(value) == 1 and isinstance(value[0], int):
        return value[0], value[0]
    return None


def _resized(image: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    return F.interpolate(image.unsqueeze(0), size=size, mode="bilinear", align_corners=False).squeeze(0)


def _cropped(image: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    height, width = image.shape[-2:]
    if height < size[0] or width < size[1]:
        return _resized(image, size)
    top, left = (height - size[0]) // 2, (width - size[1]) // 2
    return image[..., top:top + size[0], left:left + size[1]]


class Transform:
    """A torchvision transform, for the shapes it gives (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __call__(self, image, *more):
        if not isinstance(image, torch.Tensor):
            return image
        return self.apply(image)

    def apply(self, image: torch.Tensor) -> torch.Tensor:
        return image

    def __repr__(self) -> str:
        return f"{type(self).__name__}(synthetic)"


class Compose(Transform):
    def __call__(self, image, *more):
        for transform in (self.args[0] if self.args else self.kwargs.get("transforms", ())):
            image = transform(image)
        return image


class Resize(Transform):
    def apply(self, image):
        size = _size(self.args[0] if self.args else self.kwargs.get("size"))
        return _resized(image, size) if size else image


class Crop(Transform):
    def apply(self, image):
        size = _size(self.args[0] if self.args else self.kwargs.get("size"))
        return _cropped(image, size) if size else image


class Grayscale(Transform):
    def apply(self, image):
        channels = self.args[0] if self.args else self.kwargs.get("num_output_channels", 1)
        return image.mean(0, keepdim=True).expand(channels, *image.shape[1:]).clone()


class Pad(Transform):
    def apply(self, image):
        padding = self.args[0] if self.args else self.kwargs.get("padding", 0)
        if isinstance(padding, int):
            padding = (padding,) * 4
        elif len(padding) == 2:
            padding = (padding[0], padding[0], padding[1], padding[1])
        return F.pad(image, tuple(padding))


class Normalize(Transform):
    def apply(self, image):
        mean = self.args[0] if self.args else self.kwargs.get("mean")
        std = self.args[1] if len(self.args) > 1 else self.kwargs.get("std")
        try:
            mean = torch.as_tensor(mean, dtype=image.dtype).reshape(-1, 1, 1)
            std = torch.as_tensor(std, dtype=image.dtype).reshape(-1, 1, 1)
            return (image - mean) / std
        except (RuntimeError, TypeError, ValueError):
            return image


class ToTensor(Transform):
    def apply(self, image):
        return image.float()


class Lambda(Transform):
    def __call__(self, image, *more):
        return self.args[0](image)


def _transform_class(name: str) -> type:
    if name in ("Resize", "Scale"):
        return Resize
    if name.endswith("Crop") and "Five" not in name and "Ten" not in name or name == "RandomSizedCrop":
        return Crop
    special = {"Compose": Compose, "Grayscale": Grayscale, "Pad": Pad, "Normalize": Normalize,
               "ToTensor": ToTensor, "Lambda": Lambda}
    if name in special:
        return special[name]
    return type(name, (Transform,), {})


class _Image:
    """What a dataset's ``loader`` returns: a random image, the same for the same path."""

    def __init__(self, shape: tuple[int, int, int]):
        self.shape = shape

    def __call__(self, path: Any) -> torch.Tensor:
        generator = torch.Generator().manual_seed(zlib.crc32(str(path).encode()))
        return torch.rand(*self.shape, generator=generator)


def dataset_class(name: str, used: list[str]) -> type:
    """A ``Dataset`` standing in for ``torchvision.datasets.<name>``."""
    owner = "torchvision.datasets"
    channels, height, width, classes = SHAPES.get(name, PHOTOS)

    def __init__(self, *args, **kwargs):
        self.root = args[0] if args else kwargs.get("root", "")
        self.transform = kwargs.get("transform")
        self.target_transform = kwargs.get("target_transform")
        if self.transform is None and len(args) > 1 and callable(args[1]) and not isinstance(args[1], (str, bool)):
            self.transform = args[1]  # `ImageFolder(root, transform)`
        self.train = kwargs.get("train", True)
        self.loader = _Image((channels, height, width))
        self.classes = [f"class{i}" for i in range(classes)]
        self.class_to_idx = {label: i for i, label in enumerate(self.classes)}
        self.samples = [(f"{self.root}/synthetic/{i}.png", i % classes) for i in range(SAMPLES)]
        self.imgs = self.samples
        self.targets = [label for _path, label in self.samples]
        # torchvision's older names for the whole set, which 2017-2019 scripts read.
        labels = torch.tensor(self.targets)
        images = (torch.rand(SAMPLES, height, width, generator=torch.Generator().manual_seed(0)) * 255).to(torch.uint8)
        self.data = self.train_data = self.test_data = images
        self.train_labels = self.test_labels = labels
        record(used, f"{SYNTHETIC}{owner}.{name} ({channels}x{height}x{width} random images)")

    def __getitem__(self, index):
        path, label = self.samples[index]
        image = self.loader(path)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def __len__(self):
        return len(self.samples)

    return type(name, (torch.utils.data.Dataset,), {
        "__init__": __init__, "__getitem__": __getitem__, "__len__": __len__,
        "__module__": owner, "__doc__": f"Synthetic {channels}x{height}x{width} images standing in for {owner}.{name}."})


class _Module(types.ModuleType):
    """``torchvision.datasets``, ``transforms`` or ``models``: what ``make`` gives for a
    name is made on first use and kept."""

    torchlint_synthetic = True

    def __init__(self, name: str, make: Callable[[str], Any]):
        super().__init__(name)
        self._make = make
        self.__path__ = []  # a package: `torchvision.datasets.folder` comes here too

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        value = self._make(attribute)
        setattr(self, attribute, value)
        return value


def _classes(make: Callable[[str], Any], owner: str) -> Callable[[str], Any]:
    """``make`` for class names; any other name (``transforms.functional``,
    ``datasets.folder.default_loader``) is a stand-in."""
    return lambda attribute: make(attribute) if attribute[:1].isupper() else StandIn(f"{owner}.{attribute}")


# -- torchvision.models: the architectures a script builds on, with random weights ----------

_VGG = {"vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
        "vgg13": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
        "vgg16": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
        "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512,
                  "M"]}
_RESNET = {"resnet18": ("basic", [2, 2, 2, 2]), "resnet34": ("basic", [3, 4, 6, 3]),
           "resnet50": ("bottleneck", [3, 4, 6, 3]), "resnet101": ("bottleneck", [3, 4, 23, 3]),
           "resnet152": ("bottleneck", [3, 8, 36, 3])}


class VGG(torch.nn.Module):
    def __init__(self, layers: list, batch_norm: bool, num_classes: int = 1000):
        super().__init__()
        nn = torch.nn
        features: list = []
        channels = 3
        for width in layers:
            if width == "M":
                features.append(nn.MaxPool2d(kernel_size=2, stride=2))
                continue
            features.append(nn.Conv2d(channels, width, kernel_size=3, padding=1))
            features += [nn.BatchNorm2d(width)] if batch_norm else []
            features.append(nn.ReLU(inplace=True))
            channels = width
        self.features = nn.Sequential(*features)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(), nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class AlexNet(torch.nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        nn = torch.nn
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(384, 256, 3, padding=1),
            nn.ReLU(inplace=True), nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(nn.Dropout(), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
                                        nn.Dropout(), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
                                        nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class _Block(torch.nn.Module):
    """ResNet's basic block (two 3x3 convolutions) or bottleneck (1x1, 3x3, 1x1, four times wider)."""

    def __init__(self, kind: str, inplanes: int, planes: int, stride: int):
        super().__init__()
        nn = torch.nn
        self.expansion = 1 if kind == "basic" else 4
        if kind == "basic":
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
        else:
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        out = planes * self.expansion
        self.downsample = None if stride == 1 and inplanes == out else nn.Sequential(
            nn.Conv2d(inplanes, out, 1, stride=stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.expansion == 4:
            out = self.bn3(self.conv3(self.relu(out)))
        return self.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(torch.nn.Module):
    def __init__(self, kind: str, counts: list, num_classes: int = 1000):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        inplanes = 64
        for index, (planes, count) in enumerate(zip((64, 128, 256, 512), counts)):
            blocks = []
            for number in range(count):
                block = _Block(kind, inplanes, planes, 2 if number == 0 and index > 0 else 1)
                blocks.append(block)
                inplanes = planes * block.expansion
            setattr(self, f"layer{index + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def vgg11() -> torch.nn.Module:
    """A VGG-11 with random weights, torchvision's own where it is installed."""
    try:
        from torchvision.models import vgg11 as torchvision_vgg11
    except ImportError:
        return VGG(_VGG["vgg11"], False)
    return torchvision_vgg11()


def model_function(name: str, used: list[str]) -> Any:
    """``torchvision.models.<name>``: a builder of the architecture with random weights
    (``pretrained=``/``weights=`` are taken and ignored), or a stand-in for a name not here."""
    base = name[:-3] if name.endswith("_bn") else name
    if base not in _VGG and name not in _RESNET and name != "alexnet":
        return StandIn(f"torchvision.models.{name}")

    def build(*args, pretrained=False, weights=None, progress=True, num_classes=1000, **kwargs):
        record(used, f"{SYNTHETIC}torchvision.models.{name} (random weights)")
        if name in _RESNET:
            return ResNet(*_RESNET[name], num_classes=num_classes)
        if name == "alexnet":
            return AlexNet(num_classes)
        return VGG(_VGG[base], name.endswith("_bn"), num_classes)

    build.__name__ = name
    return build


def module(name: str, used: list[str]) -> types.ModuleType:
    """The synthetic module for ``name``: torchvision's datasets, transforms or models, or
    a submodule of one (stand_ins routes them here)."""
    if name.startswith("torchvision.datasets"):
        return _Module(name, _classes(lambda attribute: dataset_class(attribute, used), name))
    if name.startswith("torchvision.models"):
        return _Module(name, lambda attribute: model_function(attribute, used))
    return _Module(name, _classes(_transform_class, name))


class MissingCheckpoint(StandIn):
    """What ``torch.load`` gives for a file this machine lacks (pretrained weights, a
    checkpoint to resume from): a stand-in, which ``load_state_dict`` takes as "nothing to
    load", so the model keeps the weights it was built with."""


@contextlib.contextmanager
def missing_checkpoints(used: list[str]) -> Iterator[None]:
    """While the block runs, ``torch.load`` of a file that does not exist returns a
    MissingCheckpoint and records it in ``used``, and the ``load_state_dict`` of modules and
    optimizers leaves them as they are when given one (or a part of one)."""
    original_load = torch.load
    originals = {owner: owner.load_state_dict for owner in (torch.nn.Module, torch.optim.Optimizer)}

    def load(f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
            record(used, f"{CHECKPOINT}{os.fspath(f)}")
            return MissingCheckpoint(f"torch.load({os.fspath(f)!r})")
        return original_load(f, *args, **kwargs)

    def keeping(original):
        def load_state_dict(self, state_dict, *args, **kwargs):
            if isinstance(state_dict, StandIn):
                return torch.nn.modules.module._IncompatibleKeys([], []) if isinstance(self, torch.nn.Module) else None
            return original(self, state_dict, *args, **kwargs)
        return load_state_dict

    torch.load = load
    for owner, original in originals.items():
        owner.load_state_dict = keeping(original)
    try:
        yield
    finally:
        torch.load = original_load
        for owner, original in originals.items():
            owner.load_state_dict = original
