"""Issue 41, session 9 (helper i): evaluation without ``model.eval()`` (TL414) and ``.numpy()`` on a
tensor that requires grad (TL415) in shapes the rules had not been tuned on: a model class
imported from another file of the project, a trainer object whose methods reach the model as
``self.net``, a dropout switched off through the constructor, a model built on one of several
branches; plots drawn on a matplotlib Axes, a list written out inside the numpy call, a dict a
method returns handed to another object, a list a helper fills and returns. Each bad program's
finding is on the line to change, and its fixed twin is clean. Real files through the real CLI."""

from __future__ import annotations

import pytest

from torchlint.analysis import torch_api

MODELS = '''\
import torch
from torch import nn


class LineRecognizer(nn.Module):
    def __init__(self, vocab=10, hidden=32, p_drop=0.3):
        super().__init__()
        self.embed = nn.Linear(16, hidden)
        self.drop = nn.Dropout(p_drop)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, pixels):
        return self.head(self.drop(torch.relu(self.embed(pixels))))
'''

IMPORTED_CLASS = '''\
import torch
from torch import nn
from models import LineRecognizer


def validate(model, batches):
    correct = 0
    with torch.no_grad():
        for pixels, labels in batches:
            correct += (model(pixels).argmax(-1) == labels).sum().item()
    return correct


def train(model, batches, optimizer, epochs=2):
    for epoch in range(epochs):
        model.train()
        for pixels, labels in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(pixels), labels).backward()
            optimizer.step()
        print(epoch, validate(model, batches))


model = LineRecognizer()
train(model, [(torch.randn(8, 16), torch.randint(0, 10, (8,)))], torch.optim.SGD(model.parameters(), lr=0.1))
'''


def test_a_model_class_imported_from_another_file_has_its_layers(project) -> None:
    project.write("models.py", MODELS)
    project.write("train.py", IMPORTED_CLASS)
    assert project.findings("--no-cache", "--select", "TL414", "train.py") == [("train.py", 21, 22, "TL414")]
    result = project.run("check", "--no-cache", "--select", "TL414", "train.py")
    assert "`nn.Dropout(p_drop)` (models.py:9)" in result.stdout
    project.write("train.py", IMPORTED_CLASS.replace("    correct = 0\n", "    model.eval()\n    correct = 0\n"))
    assert project.findings("--no-cache", "--select", "TL414", "train.py") == []


def test_an_imported_class_built_with_its_dropout_off_is_not_reported(project) -> None:
    project.write("models.py", MODELS)
    project.write("train.py", IMPORTED_CLASS.replace("model = LineRecognizer()", "model = LineRecognizer(p_drop=0.0)"))
    assert project.findings("--no-cache", "--select", "TL414", "train.py") == []
    project.write("train.py", IMPORTED_CLASS.replace("model = LineRecognizer()", "model = LineRecognizer(10, 8, 0)"))
    assert project.findings("--no-cache", "--select", "TL414", "train.py") == []
    # The same when the class is written in the file.
    local = IMPORTED_CLASS.replace("from models import LineRecognizer\n", MODELS.split("from torch import nn\n")[1])
    project.write("local.py", local)
    assert project.findings("--no-cache", "--select", "TL414", "local.py") == [("local.py", 31, 22, "TL414")]
    project.write("local.py", local.replace("model = LineRecognizer()", "model = LineRecognizer(p_drop=0.0)"))
    assert project.findings("--no-cache", "--select", "TL414", "local.py") == []


NETWORKS = '''\
import torch
from torch import nn


class CompletionNetwork(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(4, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, 3, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
'''

PREDICT = '''\
import json
from dataclasses import dataclass

import torch

from networks import CompletionNetwork


@dataclass
class PredictConfig:
    model_path: str
    config_path: str


def build_network(config_path):
    with open(config_path) as f:
        config = json.load(f)
    return CompletionNetwork(channels=config["channels"])


def main(cfg: PredictConfig):
    model = build_network(cfg.config_path)
    model.load_state_dict(torch.load(cfg.model_path, weights_only=True))
    x = torch.rand(1, 4, 16, 16)
    with torch.no_grad():
        output = model(x)
    return output
'''


def test_a_builder_of_this_file_returning_an_imported_class(project) -> None:
    project.write("networks.py", NETWORKS)
    project.write("predict.py", PREDICT)
    assert project.findings("--no-cache", "--select", "TL414", "predict.py") == [("predict.py", 26, 18, "TL414")]
    project.write("predict.py", PREDICT.replace("    x = torch.rand", "    model.eval()\n    x = torch.rand"))
    assert project.findings("--no-cache", "--select", "TL414", "predict.py") == []


TRAINER = '''\
import torch
import torch.nn as nn


class HyperspectralNet(nn.Module):
    def __init__(self, bands=20, classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(bands, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.4))
        self.classifier = nn.Linear(32, classes)

    def forward(self, x):
        return self.classifier(self.features(x))


class Trainer:
    def __init__(self, net, device="cpu"):
        self.net = net.to(device)
        self.device = device
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.criterion = nn.CrossEntropyLoss()

    def train_epoch(self, loader):
        self.net.train()
        for data, target in loader:
            data, target = data.to(self.device), target.to(self.device)
            self.optimizer.zero_grad()
            self.criterion(self.net(data), target).backward()
            self.optimizer.step()

    @torch.no_grad()
    def evaluate(self, loader):
        self.outputs = []
        for data, target in loader:
            data = data.to(self.device)
            output = self.net(data)
            self.outputs.append(output)
        return torch.cat(self.outputs)

    def fit(self, train_loader, val_loader, epochs=2):
        for _ in range(epochs):
            self.train_epoch(train_loader)
            self.evaluate(val_loader)


batches = [(torch.randn(16, 20), torch.randint(0, 5, (16,)))]
Trainer(HyperspectralNet()).fit(batches, batches)
'''


def test_a_trainer_keeps_its_model_through_moves_and_lists_of_its_own(project) -> None:
    """`data.to(self.device)` moves a tensor and `self.outputs.append(..)` fills a list: neither
    can switch `self.net`, which `train_epoch()` left in training mode."""
    project.write("trainer.py", TRAINER)
    assert project.findings("--no-cache", "--select", "TL414") == [("trainer.py", 35, 22, "TL414")]
    project.write("trainer.py", TRAINER.replace("        self.outputs = []\n",
                                                "        self.net.eval()\n        self.outputs = []\n"))
    assert project.findings("--no-cache", "--select", "TL414") == []


BRANCHES = '''\
import torch
import torch.nn as nn


class GeneratorBN(nn.Module):
    def __init__(self, nz=8):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.main(z)


class GeneratorNoBN(nn.Module):
    def __init__(self, nz=8):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, z):
        return self.main(z)


def generate(no_bn, weights):
    if no_bn:
        net = GeneratorNoBN()
    else:
        net = GeneratorBN()
    net.load_state_dict(weights)
    with torch.no_grad():
        return net(torch.ones(4, 8))
'''


def test_a_model_built_on_another_branch_without_such_a_layer_is_not_reported(project) -> None:
    project.write("generate.py", BRANCHES)
    assert project.findings("--no-cache", "--select", "TL414") == []
    project.write("generate.py", BRANCHES.replace("        net = GeneratorNoBN()", "        net = GeneratorBN(4)"))
    assert project.findings("--no-cache", "--select", "TL414") == [("generate.py", 30, 16, "TL414")]


AXES = '''\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn

model = nn.GRU(8, 16, batch_first=True)
head = nn.Linear(16, 12)
optimizer = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
train_losses = []
for epoch in range(2):
    epoch_loss = 0
    for x, y in [(torch.randn(4, 5, 8), torch.randint(0, 12, (4, 5)))]:
        out, _ = model(x)
        loss = nn.functional.cross_entropy(head(out).reshape(-1, 12), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss
    train_losses.append(epoch_loss)
fig, axs = plt.subplots(2, 2)
axs[0, 0].plot(range(2), train_losses, label="Train")
'''


def test_a_plot_on_an_axes_converts_the_list(project) -> None:
    project.write("plot.py", AXES)
    assert project.findings("--no-cache", "--select", "TL415") == [("plot.py", 20, 5, "TL415")]
    project.write("plot.py", AXES.replace("train_losses.append(epoch_loss)", "train_losses.append(epoch_loss.item())"))
    assert project.findings("--no-cache", "--select", "TL415") == []
    # `ax` of `fig.add_subplot(..)` and of a loop over `axs.flat` is an Axes too; a `plot` method of
    # anything else is not known to convert.
    project.write("plot.py", AXES.replace("fig, axs = plt.subplots(2, 2)\naxs[0, 0]",
                                          "fig = plt.figure()\nax = fig.add_subplot(111)\nax"))
    assert project.findings("--no-cache", "--select", "TL415") == [("plot.py", 20, 5, "TL415")]
    project.write("plot.py", AXES.replace("axs[0, 0].plot", "for ax in axs.flat:\n    ax.plot"))
    assert project.findings("--no-cache", "--select", "TL415") == [("plot.py", 20, 5, "TL415")]
    project.write("plot.py", AXES.replace("fig, axs = plt.subplots(2, 2)", "axs = {(0, 0): object()}"))
    assert project.findings("--no-cache", "--select", "TL415") == []


def test_the_axes_methods_convert_what_they_are_given() -> None:
    """What the table says, measured: each method raises on a tensor that requires grad."""
    matplotlib = pytest.importorskip("matplotlib")
    torch = pytest.importorskip("torch")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = torch.randn(5, requires_grad=True) * 2
    image = torch.randn(4, 4, requires_grad=True) * 2
    fig, axs = plt.subplots(1, 2)
    try:
        for method in sorted(torch_api.AXES_ARRAY_METHODS):
            given = (image,) if method in ("imshow", "matshow", "pcolormesh", "contourf") else \
                (values,) if method in ("hist", "boxplot") else (range(5), values)
            with pytest.raises(RuntimeError, match="Can't call numpy"):
                getattr(axs[0], method)(*given)
    finally:
        plt.close(fig)


RESTORE = '''\
import numpy as np
import torch
import torch.nn as nn


class CharbonnierLoss(nn.Module):
    def forward(self, x, y):
        return torch.mean(torch.sqrt((x - y) ** 2 + 1e-6))


class MultiStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Conv2d(3, 3, 3, padding=1)
        self.stage2 = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        s1 = self.stage1(x)
        return [self.stage2(s1), s1]


model = MultiStage()
criterion = CharbonnierLoss()
target, input_ = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
restored = model(input_)
loss = np.sum([criterion(restored[j], target) for j in range(len(restored))])
loss.backward()
'''


def test_a_list_written_in_the_numpy_call(project) -> None:
    project.write("restore.py", RESTORE)
    assert project.findings("--no-cache", "--select", "TL415") == [("restore.py", 26, 8, "TL415")]
    project.write("restore.py", RESTORE.replace("np.sum([criterion", "sum([criterion"))
    assert project.findings("--no-cache", "--select", "TL415") == []


DECODER = '''\
import numpy as np
import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, n_code=8, n_verts=20):
        super().__init__()
        self.shapedirs = nn.Linear(n_code, n_verts * 3)
        self.n_verts = n_verts

    def decode(self, codes):
        verts = self.shapedirs(codes["shape"]).view(-1, self.n_verts, 3)
        return {"verts": verts, "landmarks": verts[:, :5]}


class Visualizer:
    def render_points(self, outputs):
        verts = outputs["verts"][0].cpu().numpy()
        return np.clip(verts, -1, 1)


decoder = Decoder()
outputs = decoder.decode({"shape": torch.randn(1, 8)})
image = Visualizer().render_points(outputs)
'''


def test_a_dict_a_method_returns_handed_to_another_object(project) -> None:
    project.write("visualize.py", DECODER)
    assert project.findings("--no-cache", "--select", "TL415") == [("visualize.py", 19, 17, "TL415")]
    project.write("visualize.py", DECODER.replace('["verts"][0].cpu()', '["verts"][0].detach().cpu()'))
    assert project.findings("--no-cache", "--select", "TL415") == []


HELPER_LIST = '''\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch.nn as nn


class Flow(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.head = nn.Linear(dim, dim)

    def log_likelihood(self, x, scale):
        return -(self.head(x) ** 2).sum(1).mean() * scale


def evaluate_scales(net, data, scales):
    results = []
    for scale in scales:
        results.append(-net.log_likelihood(data, scale))
    return results


net = Flow()
scales = [1, 2, 3]
nll = evaluate_scales(net, torch.randn(32, 4), scales)
plt.plot(scales, nll)
'''


def test_a_list_a_helper_fills_and_returns(project) -> None:
    project.write("depths.py", HELPER_LIST)
    found = project.findings("--no-cache", "--select", "TL415")
    assert found == [("depths.py", 20, 9, "TL415")]
    result = project.run("check", "--no-cache", "--select", "TL415", "depths.py")
    assert "append `(-net.log_likelihood(data, scale)).detach()`" in result.stdout
    project.write("depths.py", HELPER_LIST.replace("scale))\n", "scale).item())\n"))
    assert project.findings("--no-cache", "--select", "TL415") == []


REGRESSOR = '''\
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)
'''

FIT = '''\
import numpy as np
import torch
from net import Regressor

model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
pred = model(x)
loss = ((pred - y) ** 2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(np.corrcoef(pred.numpy().ravel(), y.numpy().ravel()))
'''


def test_the_output_of_a_model_class_imported_from_another_file(project) -> None:
    project.write("net.py", REGRESSOR)
    project.write("fit.py", FIT)
    assert project.findings("--no-cache", "--select", "TL415", "fit.py") == [("fit.py", 13, 19, "TL415")]
    project.write("fit.py", FIT.replace("pred.numpy()", "pred.detach().numpy()"))
    assert project.findings("--no-cache", "--select", "TL415", "fit.py") == []
    # A class of that file without parameters, or one whose file freezes them, is not known to make
    # an output that requires grad.
    project.write("fit.py", FIT)
    project.write("net.py", REGRESSOR.replace("nn.Linear(4, 1)", "nn.Identity()"))
    assert project.findings("--no-cache", "--select", "TL415", "fit.py") == []
    project.write("net.py", REGRESSOR.replace("        self.fc = nn.Linear(4, 1)\n",
                                              "        self.fc = nn.Linear(4, 1)\n        self.fc.requires_grad_(False)\n"))
    assert project.findings("--no-cache", "--select", "TL415", "fit.py") == []
