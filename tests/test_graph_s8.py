"""Issue 41, session 8: backward without a graph (TL408), .numpy() on a tensor that requires
grad (TL415) and the gradient cut by a round trip (TL410), on programs in the shapes people post
("element 0 of tensors does not require grad", "Can't call numpy() on Tensor that requires grad",
"the weights never change"). Each bad program runs under torch and shows the bug; the finding is
on the line to change; its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

import pytest

from torchlint.analysis import torch_api
from twin_cases import Case, run_program, twin, twin_tests

CODES = "TL408,TL410,TL415"


def _case(why: str, bad: str, edit: tuple[str, str], shows: str, expect: str,
          found: tuple[tuple[int, int, str], ...]) -> Case:
    """A case whose twin is the bad program with one edit (the thread's fix)."""
    return twin(why, CODES, bad, edit, shows, expect, found)


NG01_TRAINER_NOGRAD_METHOD = _case(
    'a method decorated @torch.no_grad() computes the loss: reported at the decorator',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    @torch.no_grad()
    def compute_loss(self, inputs, targets):
        logits = self.model(inputs)
        return self.criterion(logits, targets)

    def train_step(self, inputs, targets):
        self.optimizer.zero_grad()
        loss = self.compute_loss(inputs, targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()


trainer = Trainer(nn.Linear(10, 3))
x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
print(trainer.train_step(x, y))
''',
    (
        '    @torch.no_grad()\n',
        '\n',
    ),
    'raises', 'does not require grad', ((13, 5, 'TL408'),),
)

NG02_INFERENCE_MODE_FORWARD = _case(
    'the forward runs under inference_mode, the target comes from a list of batches',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()
data = [(torch.randn(4, 8), torch.randn(4, 1)) for _ in range(3)]

for epoch in range(2):
    for xb, yb in data:
        with torch.inference_mode():
            pred = model(xb)
        loss = loss_fn(pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
''',
    (
        '        with torch.inference_mode():\n'
        '            pred = model(xb)\n',
        '        pred = model(xb)\n',
    ),
    'raises', 'does not require grad', ((12, 14, 'TL408'),),
)

NG03_FREEZE_IN_INIT = _case(
    "the model's __init__ freezes every parameter of self after building its layers",
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, hidden=32, n_labels=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, hidden), nn.Tanh())
        self.classifier = nn.Linear(hidden, n_labels)
        for param in self.parameters():
            param.requires_grad = False

    def forward(self, x):
        return self.classifier(self.encoder(x))


model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
x, y = torch.randn(8, 20), torch.randint(0, 2, (8, 4)).float()
loss = criterion(model(x), y)
loss.backward()
optimizer.step()
''',
    (
        '        for param in self.parameters():\n',
        '        for param in self.encoder.parameters():\n',
    ),
    'raises', 'does not require grad', ((12, 22, 'TL408'),),
)

NG06_DETACH_IN_FORWARD = _case(
    'forward detaches its output: reported at the detach in forward',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
        self.head = nn.Linear(12, 1)

    def forward(self, x):
        features = self.body(x).detach()
        return self.head(features).detach()


model = Regressor()
opt = torch.optim.Adam(model.parameters())
x, y = torch.randn(10, 6), torch.randn(10, 1)
out = model(x)
loss = ((out - y) ** 2).mean()
loss.backward()
opt.step()
''',
    (
        '        features = self.body(x).detach()\n'
        '        return self.head(features).detach()\n',
        '        features = self.body(x)\n'
        '        return self.head(features)\n',
    ),
    'raises', 'does not require grad', ((15, 16, 'TL408'),),
)

NG09_SET_GRAD_ENABLED_TOP = _case(
    'set_grad_enabled(False) at the top of the script: reported at the statement',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_grad_enabled(False)

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs, labels = torch.randn(6, 4), torch.randint(0, 2, (6,))
loss = nn.functional.cross_entropy(model(inputs), labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
''',
    (
        'torch.set_grad_enabled(False)\n',
        '\n',
    ),
    'raises', 'does not require grad', ((5, 1, 'TL408'),),
)

NG10_STEP_METHOD_NO_GRAD_BLOCK = _case(
    "the loss is kept on self under the evaluation's no_grad",
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Learner:
    def __init__(self, model, loss_func, opt):
        self.model, self.loss_func, self.opt = model, loss_func, opt

    def one_batch(self, xb, yb):
        with torch.no_grad():
            self.pred = self.model(xb)
            self.loss = self.loss_func(self.pred, yb)
        self.loss.backward()
        self.opt.step()
        self.opt.zero_grad()

    def fit(self, batches):
        for xb, yb in batches:
            self.one_batch(xb, yb)


model = nn.Linear(5, 2)
learn = Learner(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1))
learn.fit([(torch.randn(4, 5), torch.randint(0, 2, (4,)))])
''',
    (
        '        with torch.no_grad():\n'
        '            self.pred = self.model(xb)\n'
        '            self.loss = self.loss_func(self.pred, yb)\n',
        '        self.pred = self.model(xb)\n'
        '        self.loss = self.loss_func(self.pred, yb)\n',
    ),
    'raises', 'does not require grad', ((12, 14, 'TL408'),),
)

NG15_FLOAT_ROUNDTRIP = _case(
    'a total of float(out) values made a tensor again',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 3)

total = 0.0
for row in x:
    out = model(row)
    total += float(out.pow(2).sum())
loss = torch.tensor(total / len(x))
optimizer.zero_grad()
loss.backward()
optimizer.step()
''',
    (
        '    total += float(out.pow(2).sum())\n'
        'loss = torch.tensor(total / len(x))\n',
        '    total = total + out.pow(2).sum()\n'
        'loss = total / len(x)\n',
    ),
    'raises', 'does not require grad', ((13, 8, 'TL408'),),
)

NG18_MODULE_STEP_NO_GRAD = _case(
    'a training_step computes self(x) under no_grad, its batch from a DataLoader',
    '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class LitRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch):
        x, y = batch
        with torch.no_grad():
            y_hat = self(x)
        return nn.functional.mse_loss(y_hat, y)


module = LitRegressor()
optimizer = torch.optim.Adam(module.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randn(16, 3), torch.randn(16, 1)), batch_size=4)
for batch in loader:
    loss = module.training_step(batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
''',
    (
        '        with torch.no_grad():\n'
        '            y_hat = self(x)\n',
        '        y_hat = self(x)\n',
    ),
    'raises', 'does not require grad', ((18, 14, 'TL408'),),
)

NG20_NOISY_LOOP = _case(
    'dict batches of a Dataset class, moved with .to(device), output under no_grad',
    '''\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = torch.device("cpu")


class PairDataset(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 6)
        self.y = torch.randint(0, 3, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return {"features": self.x[index], "label": self.y[index]}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(x)


model = Net().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = DataLoader(PairDataset(16), batch_size=4, shuffle=True)

for epoch in range(2):
    model.train()
    for i, batch in enumerate(train_loader):
        features = batch["features"].to(device)
        labels = batch["label"].to(device)
        with torch.no_grad():
            outputs = model(features)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
''',
    (
        '        with torch.no_grad():\n'
        '            outputs = model(features)\n',
        '\n'
        '        outputs = model(features)\n',
    ),
    'raises', 'does not require grad', ((40, 14, 'TL408'),),
)

NG21_WEIGHTED_LOSS_CLASS = _case(
    'a loss class with a layer of its own detaches its input; its weight is a number',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class WeightedLoss(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight
        self.base = nn.MSELoss()

    def forward(self, pred, target):
        return self.base(pred.detach(), target) * self.weight


model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = WeightedLoss(0.5)
x, y = torch.randn(4, 3), torch.randn(4, 1)
loss = criterion(model(x), y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
''',
    (
        '        return self.base(pred.detach(), target) * self.weight\n',
        '        return self.base(pred, target) * self.weight\n',
    ),
    'raises', 'does not require grad', ((14, 26, 'TL408'),),
)

NP07_DICT_OUTPUTS = _case(
    'the entry of a dict that forward returns',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(6, 6)
        self.cls = nn.Linear(6, 3)
        self.reg = nn.Linear(6, 1)

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return {"logits": self.cls(h), "value": self.reg(h)}


net = MultiHead()
outputs = net(torch.randn(4, 6))
values = outputs["value"].squeeze(-1).numpy()
print(values)
''',
    (
        'values = outputs["value"].squeeze(-1).numpy()\n',
        'values = outputs["value"].squeeze(-1).detach().numpy()\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((21, 10, 'TL415'),),
)

NP08_FORWARD_HOOK_ACTIVATIONS = _case(
    "a forward hook stores the layer's output in a dict",
    '''\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
activations = {}


def save_activation(name):
    def hook(module, inputs, output):
        activations[name] = output
    return hook


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
model[0].register_forward_hook(save_activation("fc1"))
model(torch.randn(3, 4))
print(np.abs(activations["fc1"].numpy()).mean())
''',
    (
        '        activations[name] = output\n',
        '        activations[name] = output.detach()\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((18, 14, 'TL415'),),
)

NP22_HOOK_LIST = _case(
    "a forward hook appends the layer's output to a list converted by numpy",
    '''\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
features = []


def hook_fn(module, inputs, output):
    features.append(output)


net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
handle = net[0].register_forward_hook(hook_fn)
net(torch.randn(2, 4))
handle.remove()
print(np.stack(features).shape)
''',
    (
        '    features.append(output)\n',
        '    features.append(output.detach())\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((10, 5, 'TL415'),),
)

NP10_CUSTOM_PARAM = _case(
    'an nn.Parameter of a module of the file (used to crash TL415)',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(3))
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x) * self.alpha


model = Scaler()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(2, 3)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("alpha:", model.alpha.numpy())
''',
    (
        'print("alpha:", model.alpha.numpy())\n',
        'print("alpha:", model.alpha.detach().numpy())\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((24, 17, 'TL415'),),
)

NP23_METRIC_SUBCLASS = _case(
    "a metric's update, inherited by a subclass, keeps the outputs; compute converts them",
    '''\
import numpy as np
import torch
import torch.nn as nn


torch.manual_seed(0)

class Metric:
    def __init__(self):
        self.preds = []

    def update(self, pred):
        self.preds.append(pred)

    def compute(self):
        return np.mean(np.concatenate([p.numpy() for p in self.preds]))


class MeanPrediction(Metric):
    pass


model = nn.Linear(3, 1)
metric = MeanPrediction()
for _ in range(2):
    out = model(torch.randn(4, 3))
    out.sum().backward()
    metric.update(out)
print(metric.compute())
''',
    (
        '        self.preds.append(pred)\n',
        '        self.preds.append(pred.detach())\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((16, 40, 'TL415'),),
)

NP25_CALLABLE_INSTANCE = _case(
    'an instance called runs its __call__ on a tensor that requires grad',
    '''\
import numpy as np
import torch

torch.manual_seed(0)


class Scatter:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return torch.cumsum(x, 0) * self.scale


transform = Scatter(2.0)
target = transform(torch.randn(16))
y = torch.randn(16, requires_grad=True)
err = torch.norm(target - transform(y))
print(np.asarray(err))
''',
    (
        'print(np.asarray(err))\n',
        'print(np.asarray(err.detach()))\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((19, 7, 'TL415'),),
)

GC04_LOSS_REQUIRES_GRAD_FLAG = _case(
    'torch.tensor(1 - acc.item()) made to require grad to silence backward',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(9, 4), torch.randint(0, 3, (9,))

out = model(x)
accuracy_loss = torch.tensor(1.0 - (out.argmax(1) == y).float().mean().item())
accuracy_loss.requires_grad = True
optimizer.zero_grad()
accuracy_loss.backward()
optimizer.step()
# -- corpus check --
if model[0].weight.grad is None:
    print("BUG: the weights got no gradient")
''',
    (
        'accuracy_loss = torch.tensor(1.0 - (out.argmax(1) == y).float().mean().item())\n'
        'accuracy_loss.requires_grad = True\n',
        'accuracy_loss = nn.functional.cross_entropy(out, y)\n',
    ),
    'wrong-value', 'BUG:', ((10, 17, 'TL410'),),
)

GC07_FORWARD_TOLIST = _case(
    'forward rebuilds a tensor from a comprehension over h.tolist()',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        scores = self.proj(x)
        clipped = torch.tensor([[min(max(v, -1.0), 1.0) for v in row] for row in scores.tolist()])
        return self.out(clipped)


head = Head()
head(torch.randn(3, 4)).sum().backward()
# -- corpus check --
if head.proj.weight.grad is None:
    print("BUG: proj got no gradient")
''',
    (
        '        clipped = torch.tensor([[min(max(v, -1.0), 1.0) for v in row] for row in scores.tolist()])\n',
        '        clipped = scores.clamp(-1.0, 1.0)\n',
    ),
    'wrong-value', 'BUG:', ((15, 82, 'TL410'),),
)

GC09_DETACH_THEN_REQUIRES_GRAD = Case(
    'a loss of model(x).detach() made to require grad', CODES,
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
x, y = torch.randn(6, 4), torch.randn(6, 1)

prediction = model(x).detach()
loss = criterion(prediction, y)
loss.requires_grad = True
optimizer.zero_grad()
loss.backward()
optimizer.step()
# -- corpus check --
if model[0].weight.grad is None:
    print("BUG: the weights got no gradient")
''',
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()
x, y = torch.randn(6, 4), torch.randn(6, 1)

prediction = model(x)
loss = criterion(prediction, y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
# -- corpus check --
if model[0].weight.grad is None:
    print("BUG: the weights got no gradient")
''',
    'wrong-value', 'BUG:', ((10, 14, 'TL410'),),
)

NP26_VARIABLE_ERA = _case(
    'Variable(x, requires_grad=False) makes a new tensor: it freezes no parameter of the model',
    '''\
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(2, 10), nn.Tanh(), nn.Linear(10, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
loss_func = nn.MSELoss()
x = Variable(torch.linspace(-1, 1, 20).view(-1, 2), requires_grad=False)
y = Variable(x.data.pow(2).sum(1, keepdim=True), requires_grad=False)
for t in range(3):
    prediction = net(x)
    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(np.round(prediction.numpy()[:3], 3))
''',
    (
        'print(np.round(prediction.numpy()[:3], 3))\n',
        'print(np.round(prediction.data.numpy()[:3], 3))\n',
    ),
    'raises', "Can't call numpy() on Tensor that requires grad", ((18, 16, 'TL415'),),
)

CASES = {
    'variable_era': NP26_VARIABLE_ERA,
    'trainer_nograd_method': NG01_TRAINER_NOGRAD_METHOD,
    'inference_mode_forward': NG02_INFERENCE_MODE_FORWARD,
    'freeze_in_init': NG03_FREEZE_IN_INIT,
    'detach_in_forward': NG06_DETACH_IN_FORWARD,
    'set_grad_enabled_top': NG09_SET_GRAD_ENABLED_TOP,
    'step_method_no_grad_block': NG10_STEP_METHOD_NO_GRAD_BLOCK,
    'float_roundtrip': NG15_FLOAT_ROUNDTRIP,
    'module_step_no_grad': NG18_MODULE_STEP_NO_GRAD,
    'noisy_loop': NG20_NOISY_LOOP,
    'weighted_loss_class': NG21_WEIGHTED_LOSS_CLASS,
    'dict_outputs': NP07_DICT_OUTPUTS,
    'forward_hook_activations': NP08_FORWARD_HOOK_ACTIVATIONS,
    'hook_list': NP22_HOOK_LIST,
    'custom_param': NP10_CUSTOM_PARAM,
    'metric_subclass': NP23_METRIC_SUBCLASS,
    'callable_instance': NP25_CALLABLE_INSTANCE,
    'loss_requires_grad_flag': GC04_LOSS_REQUIRES_GRAD_FLAG,
    'forward_tolist': GC07_FORWARD_TOLIST,
    'detach_then_requires_grad': GC09_DETACH_THEN_REQUIRES_GRAD,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


@pytest.mark.parametrize("name, verdict", [
    ("trainer_nograd_method", "CONFIRMED: RuntimeError: element 0 of tensors does not require grad"),
    ("detach_in_forward", "CONFIRMED: RuntimeError: element 0 of tensors does not require grad"),
    ("freeze_in_init", "CONFIRMED: RuntimeError: element 0 of tensors does not require grad"),
    ("dict_outputs", "CONFIRMED: RuntimeError: Can't call numpy() on Tensor that requires grad"),
])
def test_the_runtime_check_confirms_the_finding_away_from_the_backward(project, name: str, verdict: str) -> None:
    pytest.importorskip("torch")
    project.write("bad.py", CASES[name].bad)
    result = project.run("check", "--no-cache", "--select", CODES, "--runtime", "bad.py")
    assert verdict in result.stdout


ZOO_FEATURES = '''\
import torch
import torchvision

backbone = torchvision.models.resnet18(weights=None)
backbone.fc = torch.nn.Identity()
embeddings = backbone(torch.randn(2, 3, 32, 32))
print(embeddings.numpy().shape)
with torch.no_grad():
    print(backbone(torch.randn(2, 3, 32, 32)).numpy().shape)
'''


def test_a_model_zoo_model_has_parameters(project) -> None:
    project.write("zoo.py", ZOO_FEATURES)
    assert project.findings("--no-cache", "--select", "TL415") == [("zoo.py", 7, 7, "TL415")]
    project.write("zoo.py", ZOO_FEATURES.replace("backbone.fc = torch.nn.Identity()",
                                                 "backbone.requires_grad_(False)"))
    assert project.findings("--no-cache", "--select", "TL415") == []


@pytest.mark.parametrize("qualname, builds", [
    ("torchvision.models.resnet18", True),
    ("torchvision.models.vit_b_16", True),
    ("torchvision.models.get_model", True),
    ("timm.create_model", True),
    ("torchvision.models.ResNet18_Weights", False),
    ("torchvision.models.get_weight", False),
    ("torchvision.models.detection.fasterrcnn_resnet50_fpn", False),
    ("torchvision.transforms.ToTensor", False),
    (None, False),
])
def test_which_builders_make_models_with_parameters(qualname, builds: bool) -> None:
    assert torch_api.builds_model_with_parameters(qualname) is builds


def test_a_model_zoo_model_has_parameters_under_torch() -> None:
    torchvision = pytest.importorskip("torchvision")
    torch = pytest.importorskip("torch")
    assert torchvision.models.resnet18(weights=None)(torch.randn(1, 3, 32, 32)).requires_grad


HOOK_UNDER_NO_GRAD = CASES["forward_hook_activations"].bad.replace(
    "model(torch.randn(3, 4))", "with torch.no_grad():\n    model(torch.randn(3, 4))")


def test_a_hooked_model_called_only_under_no_grad_gives_outputs_without_grad(project) -> None:
    project.write("hooks.py", HOOK_UNDER_NO_GRAD)
    assert project.findings("--no-cache", "--select", "TL415") == []
    assert run_program(project, "hooks.py").returncode == 0


DETACH_BESIDE_THE_BACKWARD = '''\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
logits = model(torch.randn(3, 4))
predictions = logits.detach()
loss = nn.functional.cross_entropy(predictions, torch.tensor([0, 1, 0]))
loss.backward()
'''


def test_a_detach_beside_the_backward_leaves_the_finding_on_the_backward(project) -> None:
    project.write("train.py", DETACH_BESIDE_THE_BACKWARD)
    assert project.findings("--no-cache", "--select", "TL408") == [("train.py", 8, 1, "TL408")]


GRADIENT_CHECK_WITH_DETACHED_COPIES = '''\
import torch

weights = torch.randn(3, 3, requires_grad=True)
vector = torch.randn(3, requires_grad=True)
weights_copy = weights.clone().detach().requires_grad_(True)
vector_copy = vector.clone().detach()
vector_copy.requires_grad = True
expected = weights_copy.matmul(vector_copy)
expected.backward(gradient=torch.ones(3))
print(weights_copy.grad.shape, vector_copy.grad.shape)
'''


def test_detached_copies_made_to_learn_are_leaves_not_a_cut_graph(project) -> None:
    project.write("check.py", GRADIENT_CHECK_WITH_DETACHED_COPIES)
    assert project.findings("--no-cache", "--select", CODES) == []
    assert run_program(project, "check.py").returncode == 0
