"""Issue 41, session 10 (helper k): facts about train/eval mode (TL414) and about what requires
grad (TL415) that hold whatever the code's names and shapes:

- a function handed the model whose loop calls ``model.train()`` leaves it in training mode
  when it was in training mode before (the loop may run zero times: the caller's mode or
  training mode, training mode either way);
- a module built by a function of another module of the project (``create_model(cfg)`` of
  ``from model import create_model``) starts in training mode, as one built here;
- ``train()`` (no argument, or ``True``) leaves a module in training mode: a class, or a
  script, that only ever calls ``train()`` keeps its modules in training mode;
- ``net = train(Net(), data)``: the module built in the arguments of a function that returns
  it;
- ``list(t)``/``tuple(t)`` of a tensor, of a dict's ``.values()`` or of ``model.parameters()``
  hold tensors that require grad; ``for key in d: d[key]`` reads every entry;
- a method named like a distribution's (``log_prob``) of a module class of the file;
- ``for name, p in model.named_parameters()``; ``t.requires_grad = True`` after ``t`` is bound.

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import DROPOUT_NET, twin, twin_tests


_MODE_CHECK = '''
# -- check --
seen = []
'''

TRAIN_IN_HELPER = twin(
    "the model is trained by a helper whose epoch loop calls model.train(), then classified by a "
    "function whose name says nothing about evaluating",
    "TL414",
    DROPOUT_NET + '''\
model = Net()
seen = []
model.body[2].register_forward_hook(lambda m, i, o: seen.append(m.training))


def fit(net, batches, epochs):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(epochs):
        net.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()


def classify(sample):
    return model(sample).argmax(1).item()


fit(model, [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], 2)
seen.clear()
label = classify(torch.randn(1, 4))
if any(seen):
    print("BUG: classified with dropout on")
''',
    ("def classify(sample):\n", "def classify(sample):\n    model.eval()\n"),
    "wrong-value", "BUG: classified with dropout on",
    ((31, 12, "TL414"),),
)

IMPORTED_FACTORY = twin(
    "the model comes from create_model() of the project's model.py and is loaded, then run under "
    "no_grad",
    "TL414",
    '''\
import os
import tempfile

import torch

from model import create_model

cfg = {"width": 8, "dropout": 0.3}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "weights.pt")
    torch.save(create_model(cfg).state_dict(), path)
    model = create_model(cfg)
    model.load_state_dict(torch.load(path))
    seen = []
    model.drop.register_forward_hook(lambda m, i, o: seen.append(m.training))
    with torch.no_grad():
        out = model(torch.randn(5, 4))
    if any(seen):
        print("BUG: the demo ran with dropout on")
''',
    ("    model.load_state_dict(torch.load(path))\n",
     "    model.load_state_dict(torch.load(path))\n    model.eval()\n"),
    "wrong-value", "BUG: the demo ran with dropout on",
    ((17, 15, "TL414"),),
    files=(("model.py", '''\
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, width, dropout):
        super().__init__()
        self.proj = nn.Linear(4, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.proj(x))


def create_model(cfg):
    model = Head(cfg["width"], cfg["dropout"])
    return model
'''),),
)

CLASS_ONLY_TRAINS = twin(
    "an agent builds its network, switches it to train() in its learning step and never to eval(); "
    "its act() predicts under no_grad",
    "TL414",
    DROPOUT_NET + '''\
class Agent:
    def __init__(self):
        self.net = Net()
        self.opt = torch.optim.Adam(self.net.parameters())

    def learn(self, x, y):
        self.net.train()
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def act(self, x):
        with torch.no_grad():
            return self.net(x).argmax(1)


agent = Agent()
seen = []
agent.net.body[2].register_forward_hook(lambda m, i, o: seen.append(m.training))
agent.learn(torch.randn(4, 4), torch.randint(0, 2, (4,)))
seen.clear()
agent.act(torch.randn(2, 4))
if any(seen):
    print("BUG: the agent acted with dropout on")
''',
    ("        with torch.no_grad():\n            return self.net(x)",
     "        self.net.eval()\n        with torch.no_grad():\n            return self.net(x)"),
    "wrong-value", "BUG: the agent acted with dropout on",
    ((29, 20, "TL414"),),
)

BUILT_IN_THE_CALL = twin(
    "net = train(Net(), data): the function trains the module it is handed and returns it",
    "TL414",
    DROPOUT_NET + '''\
def train(model, data):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in data:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return model


def generate(model, x):
    with torch.no_grad():
        return model(x).softmax(-1)


net = train(Net(), [(torch.randn(8, 4), torch.randint(0, 2, (8,)))])
seen = []
net.body[2].register_forward_hook(lambda m, i, o: seen.append(m.training))
generate(net, torch.randn(2, 4))
if any(seen):
    print("BUG: generated with dropout on")
''',
    ("generate(net, torch.randn(2, 4))\n", "net.eval()\ngenerate(net, torch.randn(2, 4))\n"),
    "wrong-value", "BUG: generated with dropout on",
    ((32, 1, "TL414"),),
)

GRID_OF_DICT = twin(
    "a visualizer tiles every entry of a dict of images (one of them a model output) with "
    "torch.cat(list(...)) and converts the grid with numpy",
    "TL415",
    '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Conv2d(3, 3, 1)


def grid_of(visdict):
    rows = {}
    for key in visdict:
        rows[key] = torch.cat(list(visdict[key]), dim=1)
    grid = torch.cat(list(rows.values()), dim=2)
    return (grid.cpu().numpy().transpose(1, 2, 0) * 255).astype("uint8")


images = torch.rand(2, 3, 8, 8)
print(grid_of({"inputs": images, "rendered": torch.sigmoid(net(images))}).shape)
''',
    ("grid.cpu().numpy()", "grid.detach().cpu().numpy()"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((13, 13, "TL415"),),
)

FLOW_LOG_PROB = twin(
    "a flow's own log_prob method (named like a distribution's) computes from its parameters; "
    "its values are collected and plotted",
    "TL415",
    '''\
import numpy as np
import torch
import torch.nn as nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(2))

    def log_prob(self, x):
        return -(x * torch.exp(-self.log_scale)).pow(2).sum(-1) - self.log_scale.sum()


flow = Flow()
values = []
for shift in range(3):
    values.append(flow.log_prob(torch.randn(10, 2) + shift).mean())
print(np.mean(values))
''',
    (".mean())\n", ".mean().item())\n"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((18, 5, "TL415"),),
)

PARAMETERS_AND_FLAGS = twin(
    "weights logged by named_parameters(), and a tensor made a leaf that requires grad by "
    "`t.requires_grad = True` after a no_grad computation",
    "TL415",
    '''\
import numpy as np
import torch
import torch.nn as nn

net = nn.Linear(3, 2)
for name, p in net.named_parameters():
    print(name, p.numpy().shape)
''',
    ("p.numpy()", "p.detach().numpy()"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((7, 17, "TL415"),),
)

FLAGGED_AFTER = twin(
    "`y.requires_grad = True` after y was computed under no_grad: y is a leaf that requires grad",
    "TL415",
    '''\
import numpy as np
import torch

x = torch.linspace(0, 1, 5)
with torch.no_grad():
    y = x * 2
y.requires_grad = True
loss = (y ** 2).sum()
loss.backward()
print(np.exp(y), y.grad)
''',
    ("np.exp(y)", "np.exp(y.detach())"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((10, 7, "TL415"),),
)

CASES = {
    "train_in_helper": TRAIN_IN_HELPER,
    "imported_factory": IMPORTED_FACTORY,
    "class_only_trains": CLASS_ONLY_TRAINS,
    "built_in_the_call": BUILT_IN_THE_CALL,
    "grid_of_dict": GRID_OF_DICT,
    "flow_log_prob": FLOW_LOG_PROB,
    "parameters_and_flags": PARAMETERS_AND_FLAGS,
    "flagged_after": FLAGGED_AFTER,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


EVAL_IN_HELPER = DROPOUT_NET + '''\
model = Net()


def fit(net, batches, epochs, evaluate_after):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(epochs):
        net.train()
        for x, y in batches:
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
    if evaluate_after:
        net.eval()


def classify(sample):
    return model(sample).argmax(1).item()


fit(model, [(torch.randn(8, 4), torch.randint(0, 2, (8,)))], 2, True)
label = classify(torch.randn(1, 4))
'''


def test_a_helper_that_may_switch_to_eval_keeps_the_finding_away(project) -> None:
    """The helper's exit is training mode or eval mode: not known, so nothing is said."""
    project.write("helper.py", EVAL_IN_HELPER)
    assert project.findings("--no-cache", "--select", "TL414", "helper.py") == []


def test_a_dict_read_under_a_key_test_is_not_every_entry(project) -> None:
    project.write("keys.py", '''\
import torch
import torch.nn as nn

net = nn.Linear(2, 2)
visdict = {"inputs": torch.rand(2, 2), "out": net(torch.rand(2, 2))}
for key in visdict:
    if key == "inputs":
        print(visdict[key].numpy())
''')
    assert project.findings("--no-cache", "--select", "TL415", "keys.py") == []


HF_EMBEDDINGS = '''\
import torch
from transformers import AutoModel, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
inputs = tokenizer(["a sentence"], return_tensors="pt")
embeddings = model(**inputs).last_hidden_state.mean(1).numpy()
with torch.no_grad():
    kept = model(**inputs).last_hidden_state.mean(1).numpy()
'''


def test_a_hugging_face_model_has_parameters_and_its_outputs_fields_require_grad(project) -> None:
    """(transformers need not be installed: the loader's name says what it loads.) A model
    `from_pretrained` is in eval mode: nothing for TL414."""
    project.write("embed.py", HF_EMBEDDINGS)
    assert project.findings("--no-cache", "--select", "TL415,TL414", "embed.py") == [("embed.py", 7, 14, "TL415")]
