"""The runtime check on code as a fresh clone has it (issue 19): package modules with
relative imports, tests that import the project from its root, scripts that need
required options, torchvision datasets, pretrained weights, Python 2 syntax, unittest
set-up, and functions whose tensors must be images.  One CLI run over one project, then
the pieces in-process."""

from __future__ import annotations

import argparse
import json
import os
import textwrap
from importlib.util import find_spec
from pathlib import Path

import pytest

from torchlint.runtime import stand_ins

from test_runtime_check import CONFIRMED, by_finding, cli, needs_torch

pytestmark = needs_torch

FILES = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": """
        def doubled(x):
            return x * 2
    """,
    # Run as `python -m pkg.model` runs it: its relative import works.
    "pkg/model.py": """
        import torch
        from .helpers import doubled

        def total():
            loss = doubled(torch.ones(3)).sum()
            return loss.data[0]
    """,
    # A package with a module of its own name: `from .models import` finds the package's.
    "models/__init__.py": "",
    "models/models.py": """
        def create():
            return 1
    """,
    "models/net.py": """
        import torch
        from .models import create

        def total():
            create()
            loss = torch.ones(3).sum()
            return loss.data[0]
    """,
    # An embedding's input: token ids are tried.
    "embed.py": """
        import torch
        import torch.nn as nn

        class Tagger(nn.Module):
            def __init__(self, vocab_size, d_model, depth):
                super().__init__()
                assert (depth - 2) % 6 == 0
                self.embed = nn.Embedding(vocab_size, d_model)

            def forward(self, tokens):
                vectors = self.embed(tokens)
                vectors.data.mul_(2)
                return vectors
    """,
    # A test beside the package imports it from the repository's root.
    "tests/test_total.py": """
        import torch
        from pkg.helpers import doubled

        def test_total():
            loss = doubled(torch.ones(3)).sum()
            assert loss.data[0] == 6
    """,
    "tests/test_case.py": """
        import unittest
        import torch

        class TestStep(unittest.TestCase):
            def setUp(self):
                self.w = torch.ones(3, requires_grad=True)

            def test_step(self):
                loss = (self.w * 3).sum()
                loss.backward()
                print(loss.data[0])
    """,
    # Climbs out of its folder: its author ran it from there.
    "lib/scale.py": """
        def tripled(x):
            return x * 3
    """,
    "examples/run.py": """
        import sys
        sys.path.append("../lib")
        import torch
        from scale import tripled

        loss = torch.ones(3).sum()
        print(tripled(loss), loss.data[0])
    """,
    # Runs in a folder inside the one examples/run.py runs in: both folders are writable.
    "examples/more/deeper.py": """
        import sys
        sys.path.append("../../lib")
        import torch
        from scale import tripled

        loss = torch.ones(3).sum()
        print(tripled(loss), loss.data[0])
    """,
    # Python 2: runs as torchlint reads it.
    "old_py2.py": """
        import torch
        x = torch.ones(3, requires_grad=True)
        loss = (x * 2).sum()
        for i in xrange(2):
            print "step", i
        print loss.data[0]
        print "again", loss.data[0]
    """,
    # Its code unpacks four dimensions: a batch of images is tried.
    "shapes.py": """
        import torch

        def brighten_(images: torch.Tensor):
            b, c, h, w = images.size()
            images.data.mul_(2)
            return b * c * h * w
    """,
    # Only ever tested for truth: a flag, not a tensor.
    "flags.py": """
        import torch

        def prepare(x: torch.Tensor, use_gpu):
            if use_gpu:
                x = x.cuda()
            x.data.zero_()
            return x
    """,
    # A rate by its name, an array for `from_numpy`, a flag kept on `self` and tested there.
    "encoder.py": """
        import torch
        import torch.nn as nn

        class CharEncoder(nn.Module):
            def __init__(self, vocab_size, embedding, dropout, gpu):
                super().__init__()
                self.drop = nn.Dropout(dropout)
                self.embed = nn.Embedding(vocab_size, 4)
                self.embed.weight.data.copy_(torch.from_numpy(embedding))
                self.gpu = gpu
                if self.gpu:
                    self.embed = self.embed.cuda()
    """,
    # Its workers' processes would hide the read from the monitor: it loads in the job's.
    "loader.py": """
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Noisy(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, index):
                sample = torch.Tensor(3)
                return sample + 1

        for batch in DataLoader(Noisy(), batch_size=4, num_workers=2, persistent_workers=True):
            print(batch.shape)
    """,
    # Unpacks its sizes, the last a list of widths: a list of sizes.
    "dims.py": """
        import torch.nn as nn

        class AutoEncoder(nn.Module):
            def __init__(self, dims):
                super().__init__()
                [x_dim, z_dim, h_dim] = dims
                neurons = [x_dim, *h_dim]
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(neurons, neurons[1:])])
                for layer in self.layers:
                    layer.weight.data.normal_(0, 0.01)
    """,
    # Reaches into a VGG's features by index, as pruning code does: it gets a VGG.
    "prune.py": """
        import torch

        def prune_first(model, layer_index, filter_index):
            conv = model.features[layer_index]
            weights = conv.weight.data.cpu().numpy()
            conv.weight.data = torch.from_numpy(weights[filter_index:])
            return model.classifier
    """,
    # No argument gets it through: the call that got furthest says why.
    "furthest.py": """
        import torch

        def double_(x: torch.Tensor):
            assert x.dim() == 2, "wants a matrix"
            x.data.mul_(2)
            raise ValueError("the real caller passes more")
    """,
    # Its `layers` must be a list: the project's own call gives one; a size stays the one
    # made here, which the tensors made here fit.
    "blocks.py": """
        import torch.nn as nn

        class Stack(nn.Module):
            def __init__(self, layers, num_classes):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for count in layers for _ in range(count)])
                self.head = nn.Linear(4, num_classes)
                self.head.weight.data.normal_(0, 0.01)

        def stack50():
            return Stack([3, 4, 6, 3], 1000)
    """,
    # Called from another file with a constant that file binds once.
    "glimpse.py": """
        import torch

        class Glimpse:
            def __init__(self, g, k):
                assert isinstance(g, int) and g > 4
                self.patch = torch.zeros(g, k)
                self.patch.data.fill_(1)
    """,
    "demo.py": """
        import glimpse

        PATCH = 8

        def main():
            return glimpse.Glimpse(PATCH, 3)
    """,
    # No synthesized argument is a pair of loaders with a sampler: the project's script
    # that builds them drives the method, and runs again past the error it confirms in ops.py.
    "driven/ops.py": """
        import torch

        def total(x):
            loss = torch.as_tensor(x).sum()
            return loss.data[0]
    """,
    "driven/trainer.py": """
        import torch
        from ops import total

        class Trainer:
            def __init__(self, loaders):
                self.train_loader, self.valid_loader = loaders
                self.count = len(self.train_loader.sampler.indices)

            def train(self):
                for (x,) in self.train_loader:
                    print(total(x))
                    loss = torch.as_tensor(x).sum()
                    print(loss.data[0])
    """,
    "driven/main.py": """
        import torch
        from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset
        from trainer import Trainer

        def main():
            loader = DataLoader(TensorDataset(torch.ones(8, 3)), batch_size=4, sampler=SubsetRandomSampler(range(8)))
            Trainer((loader, loader)).train()

        if __name__ == "__main__":
            main()
    """,
    # The sampler draws its order as the loop starts: not at the line in the loop's body,
    # which never runs.
    "unreached_body.py": """
        import torch
        from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

        loader = DataLoader(TensorDataset(torch.ones(8, 3)), batch_size=4, sampler=SubsetRandomSampler(range(8)))
        for (x,) in loader:
            assert x.shape == (5, 3), "the data is not what the script wants"
            loss = torch.ones(3).sum()
            print(loss.data[0])
    """,
    # Read for its attributes: an object of the project's class that has them all.
    "vocab.py": """
        class Vocabulary:
            def __init__(self):
                self.words = ["<pad>", "a", "b", "c"]
                self.embedding_dim = 4

            def size(self):
                return len(self.words)
    """,
    "lookup.py": """
        import torch.nn as nn

        class Lookup(nn.Module):
            def __init__(self, vocab):
                super().__init__()
                self.embed = nn.Embedding(vocab.size(), vocab.embedding_dim)
                self.embed.weight.data.uniform_(-0.1, 0.1)
    """,
    # A ladder's latent sizes are a list too.
    "ladder.py": """
        import torch.nn as nn

        class Ladder(nn.Module):
            def __init__(self, dims):
                super().__init__()
                [x_dim, z_dim, h_dim] = dims
                self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip([x_dim, *h_dim], [*h_dim, z_dim[0]])])
                for layer in self.layers:
                    layer.weight.data.normal_(0, 0.01)
    """,
    # A flow's `objective` is its running log-likelihood, not a criterion.
    "flow.py": """
        import torch

        def forward_(x, objective):
            objective = objective + torch.zeros(x.shape[-1]).sum()
            x.data.mul_(2)
            return x, objective
    """,
    # Top-5 accuracy needs more than 4 outputs: a classification's model, loss and batches.
    "classify.py": """
        import torch.nn.functional as F

        def accuracy(output, target, topk=(1,)):
            _, pred = output.topk(max(topk), 1, True, True)
            return pred.eq(target.view(-1, 1)).float().sum(0)

        def validate(val_loader, model):
            for images, labels in val_loader:
                output = model(images)
                accuracy(output, labels, topk=(1, 5))
                loss = F.cross_entropy(output, labels)
                print(loss.data[0])
    """,
    # A mask marks positions: one per position of the batch, no features, booleans.
    "masks.py": """
        import torch

        def attend(x, x_mask):
            scores = x.sum(2)
            scores.data.masked_fill_(x_mask.data, -float('inf'))
            return scores.softmax(1)
    """,
    # Python 2's `gen.next()`.
    "old_next_py2.py": """
        import torch

        def batches():
            while True:
                yield torch.ones(3)

        gen = batches()
        first = gen.next()
        loss = torch.ones(3).sum()
        print first.sum(), loss.data[0]
    """,
    # Visits the layers of a network it never calls: it gets one of each usual kind.
    "init.py": """
        import torch.nn as nn

        def init_weights(net):
            for m in net.modules():
                if isinstance(m, nn.ConvTranspose2d):
                    m.weight.data.normal_(0, 0.02)
    """,
    # Building the instance runs the flagged lines; calling the method again then fails.
    "built.py": """
        import torch.nn as nn

        class Norm(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module
                self._make_params()

            def _make_params(self):
                w = self.module.weight
                del self.module._parameters["weight"]
                self.module.register_parameter("weight_bar", nn.Parameter(w.data))
                w.data.normal_(0, 1)
    """,
    # `mean` fills a tensor: a number, not a tensor.
    "init_scale.py": """
        import torch.nn as nn

        def normal_init(m, mean, std):
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                m.weight.data.normal_(mean, std)
    """,
    # A script without a `__main__` guard: its training loop is not run to call its function.
    "loop_script.py": """
        import torch

        w = torch.ones(3, requires_grad=True)


        def rescale(m):
            m.data.mul_(2)


        for step in range(3):
            (w * 2).sum().backward()
            raise RuntimeError("the real data is missing")
    """,
    # Its top-level code stops at a confirmed finding: the call runs on the fixed text.
    "stops_first.py": """
        import torch

        loss = torch.ones(3).sum()
        print(loss.data[0])


        def rescale(m):
            m.data.mul_(2)
    """,
    # A call that stops at a finding of another file (whose own call cannot reach it) confirms
    # it there, and runs again with that file fixed.
    "elsewhere/scoring.py": """
        import torch

        def score(batch):
            total = torch.stack(batch["losses"]).sum()
            return total.data[0]
    """,
    "elsewhere/trainer.py": """
        import torch
        from scoring import score

        def train(model):
            out = torch.relu(model(torch.ones(2, 4)))
            loss = out.sum()
            print(score({"losses": [loss, loss]}))
            print(loss.data[0])
    """,
    # A beam step whose float quotient (TL220) stops its call where it is used as an index,
    # in its own file and in a test that calls it: both run again with the division fixed.
    "beam/step.py": """
        import torch

        def step(scores, states, vocab_size):
            top, candidates = scores.topk(2, dim=1)
            rows = (candidates / vocab_size).view(-1)
            states = states.index_select(0, rows)
            states.data.mul_(2)
            return states
    """,
    "beam/test_step.py": """
        import torch
        from step import step

        def test_step():
            total = step(torch.randn(4, 4), torch.randn(4, 4), 4).sum()
            print(total.data[0])
    """,
    # Detections indexed in three dimensions, the class scores past column 5 of an item, and
    # a threshold only ever compared: a [4, 4, 7] tensor and a number.
    "detect.py": """
        import torch

        def keep(prediction, confidence):
            mask = (prediction[:, :, 4] > confidence).float().unsqueeze(2)
            boxes = torch.FloatTensor(prediction.shape)
            boxes.copy_(prediction * mask)
            best = prediction[0]
            return best[:, 5:5 + 2].max(1), boxes
    """,
    # A network given its layers, which it visits by type: it gets a layer of each kind.
    "visited.py": """
        import torch.nn as nn

        class VGG(nn.Module):
            def __init__(self, features):
                super().__init__()
                self.features = features
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.weight.data.fill_(1)

            def forward(self, x):
                return self.features(x)
    """,
    # `*models`: one of them, as the loop uses it.
    "varargs.py": """
        import torch.nn as nn

        def initialize_weights(*models):
            for model in models:
                for module in model.modules():
                    if isinstance(module, nn.Conv2d):
                        module.bias.data.zero_()
    """,
    # A script imports the root's package `nets`, whose module climbs above it to the root
    # (research code written inside a package of its author's): taken from the root.
    "nets/__init__.py": "from .fcn import scale",
    "nets/fcn.py": """
        from ..toolbox import doubled

        def scale(x):
            return doubled(x)
    """,
    "experiments/train.py": """
        import torch
        from nets import scale

        def train():
            loss = torch.ones(3).sum()
            print(scale(loss))
            return loss.data[0]
    """,
    "toolbox.py": """
        def doubled(x):
            return x * 2
    """,
    # A script that loads its data before it defines its model: imported for a call, the
    # load that fails is left out and the class is still defined.
    "needs_data.py": """
        "A baseline, after its data."
        from __future__ import print_function
        import numpy as np
        import torch.nn as nn
        features = np.load("data/features_train.npy")

        class Baseline(nn.Module):
            def __init__(self, n_in):
                super().__init__()
                self.fc = nn.Linear(n_in, 2)
                self.fc.weight.data.normal_(0, 0.1)
    """,
    # A training loop that checks its outputs against its dataset's class count: the
    # synthesized classification has that many classes.
    "segment/voc_data.py": "num_classes = 21\n",
    "segment/train_seg.py": """
        import torch
        import voc_data

        def train(train_loader, net, criterion, optimizer):
            for inputs, labels in train_loader:
                outputs = net(inputs)
                assert outputs.size()[1] == voc_data.num_classes
                loss = criterion(outputs, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print(loss.data[0])
    """,
    # A parameter without a default, given a value, keeps the branch a None takes from
    # running: the last call gives it None.
    "pretrained.py": """
        import torch
        import torch.nn as nn

        class Embedder(nn.Module):
            def __init__(self, vocab_size, pretrained):
                super().__init__()
                self.embedding = nn.Embedding(vocab_size, 4)
                if pretrained is not None:
                    self.embedding.weight.data.copy_(pretrained)
                else:
                    self.embedding.weight.data.uniform_(-0.1, 0.1)
    """,
    # The data a script of the project makes, from a fresh clone without it: the maker runs
    # first, its own loops cut short (a full run would take minutes), its writes kept in memory.
    "made/data/generate.py": """
        import argparse
        import time
        import numpy as np

        parser = argparse.ArgumentParser()
        parser.add_argument('--num-train', type=int, default=50000)
        args = parser.parse_args()
        suffix = '_springs' + str(3)


        def simulate(count):
            runs = []
            for i in range(count):
                time.sleep(0.01)
                runs.append(np.ones((6, 2)))
            return np.stack(runs)


        np.save('loc_train' + suffix + '.npy', simulate(args.num_train))
    """,
    "made/train.py": """
        import numpy as np
        import torch

        data = torch.from_numpy(np.load('made/data/loc_train_springs3.npy')).float()
        weight = torch.ones(2, requires_grad=True)


        def train(epoch):
            loss = (data * weight).sum()
            loss.backward()
            return loss.data[0]


        def test():
            loss = (data * weight).sum()
            print(loss.data[0])


        for epoch in range(2):
            train(epoch)
        test()
    """,
    # A script whose option default names files the project's maker does not write: run with
    # the value that names the ones it writes, as its user must.
    "named/data/generate.py": """
        import argparse
        import numpy as np

        parser = argparse.ArgumentParser()
        parser.add_argument('--n-balls', type=int, default=5)
        args = parser.parse_args()
        suffix = '_springs' + str(args.n_balls)
        np.save('pos_train' + suffix + '.npy', np.ones((4, 2)))
    """,
    "named/train.py": """
        import argparse
        import numpy as np
        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument('--suffix', type=str, default='_springs')
        args = parser.parse_args()
        data = torch.from_numpy(np.load('named/data/pos_train' + args.suffix + '.npy')).float()
        weight = torch.ones(2, requires_grad=True)
        loss = (data * weight).sum()
        print(loss.data[0])
    """,
    # A periodic branch left unrun where the run stopped at a finding it confirmed: its rerun
    # goes past that finding with its fix, as the first run's rerun did.
    "periodic_next.py": """
        import torch

        weight = torch.ones(3, requires_grad=True)
        batches = iter(torch.utils.data.DataLoader(torch.ones(8, 3), batch_size=2))
        for step in range(1, 4):
            batch = batches.next()
            loss = (weight * batch).sum()
            loss.backward()
            if step % 1000 == 0:
                print(loss.data[0])
    """,
    # A module whose gradients are read has been through a backward pass; a clipping bound is a number.
    "clipping.py": """
        import torch


        def clip_gradients(model, clip):
            for name, p in model.named_parameters():
                if p.grad is not None:
                    p.grad.data.mul_(clip)
    """,
    # A call past the file's own confirmed stops, then past its own: one list of fixes.
    "rerun_notes.py": """
        import torch

        weight = torch.ones(2, requires_grad=True)


        def train():
            loss = (weight * 2).sum()
            loss.backward()
            return loss.data[0]


        def test():
            loss = (weight * 3).sum()
            print(loss.data[0])
            print(loss.data[0] + 1)


        train()
    """,
    # A default None made for the branch it keeps from running: the project's one class with the method called.
    "noisy/noise.py": """
        import numpy as np


        class Jitter:
            def __init__(self, action_dimension):
                self.state = np.zeros(action_dimension)

            def noise(self):
                return self.state + 1.0
    """,
    "noisy/agent.py": """
        import torch


        def act(mu, action_noise=None):
            mu = mu.detach()
            if action_noise is not None:
                mu += torch.Tensor(action_noise.noise())
            return mu
    """,
    # A periodic branch a short run never reaches is taken on its first pass; the rest of its test holds.
    "periodic.py": """
        import torch

        weight = torch.ones(3, requires_grad=True)
        verbose = False
        for step in range(1, 4):
            loss = (weight * step).sum()
            loss.backward()
            if step % 1000 == 0:
                print(loss.data[0])
            if verbose and step % 1000 == 0:
                print(loss.data[0] + 1)
    """,
    # A shape the constructor keeps and a method unpacks: sizes.
    "prior.py": """
        import torch


        class Prior:
            def __init__(self, input_shape):
                self.input_shape = input_shape

            def sample(self):
                bs, c, h, w = self.input_shape
                noise = torch.Tensor(bs, c, h, w)
                return noise + 1
    """,
    # A script that adds a folder beside it to its import path runs from its own folder.
    "pathed/helpers/scale.py": """
        def double(x):
            return x * 2
    """,
    "pathed/train.py": """
        import sys
        import torch

        sys.path.append('helpers')
        from scale import double

        loss = torch.as_tensor(double(3.0)).sum()
        print(loss.data[0])
    """,
    # A generator's body runs as its items are taken.
    "generated.py": """
        import torch


        def losses(values):
            for value in values:
                loss = torch.as_tensor(value).sum()
                yield loss.data[0]
    """,
    # Defaults that keep the flagged branches from running are turned.
    "flags_default.py": """
        import torch


        def move(x, use_cuda=False, noise=None):
            if use_cuda:
                x.data = x.data.cuda()
            if noise is not None:
                x.data.add_(noise)
            return x
    """,
}

# The same driver in Python 2: its script runs as rewritten, as a flagged file's run does.
FILES.update({
    "driven_py2/ops.py": FILES["driven/ops.py"],
    "driven_py2/trainer.py": FILES["driven/trainer.py"],
    "driven_py2/main.py": FILES["driven/main.py"].replace("def main():\n", 'def main():\n            print "training"\n'),
    # Seven stops, one after another: each run gets one line further.
    "driven_long/ops.py": FILES["driven/ops.py"],
    "driven_long/trainer.py": FILES["driven/trainer.py"].rstrip() + "".join(
        f"\n                    print(loss.data[0] + {n})" for n in range(1, 6)),
    "driven_long/main.py": FILES["driven/main.py"],
})


# Needs torchvision to be missing: its datasets are then synthetic.
TRAIN = """
    import argparse
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torchvision import datasets, transforms

    parser = argparse.ArgumentParser()
    parser.add_argument('--dataset', required=True, help='mnist | cifar10')
    parser.add_argument('--dataroot', required=True, help='path to dataset')
    opt = parser.parse_args()
    assert opt.dataset == 'mnist'

    data = datasets.MNIST(opt.dataroot, train=True, download=True,
                          transform=transforms.Compose([transforms.Resize(32), transforms.ToTensor(),
                                                        transforms.Normalize((0.5,), (0.5,))]))
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True, num_workers=2)
    model = nn.Linear(32 * 32, 10)
    model.load_state_dict(torch.load('pretrained/linear.pth'))
    for images, labels in loader:
        assert images.shape == (16, 1, 32, 32)
        loss = F.cross_entropy(model(images.view(16, -1)), labels)
        loss.backward()
        print(loss.data[0])
"""


@pytest.fixture(scope="module")
def reach(tmp_path_factory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("clone")
    files = dict(FILES)
    if find_spec("torchvision") is None:
        files["train.py"] = TRAIN
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    (root / ".git").mkdir()  # the repository's root
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL102,TL103,TL203,TL204,TL213,TL220",
                 "--output-format", "json", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return by_finding(json.loads(result.stdout), root), root


# (file, finding, verdict, a phrase of its evidence)
REACHED = [
    # run as `python -m pkg.model` runs it: its relative import works
    ("pkg/model.py", "6:12 TL203", CONFIRMED, "`total()` called with synthesized arguments"),
    ("models/net.py", "7:12 TL203", CONFIRMED, "`total()` called with synthesized arguments"),
    ("embed.py", "12:9 TL102", "NOT REPRODUCED",
     "tokens=tensor of shape [2, 4], dtype=int64, on a `Tagger(vocab_size=4, d_model=4, depth=20)`"),
    # a test beside the package imports it from the repository's root
    ("tests/test_total.py", "6:12 TL203", CONFIRMED, "`test_total()` called with synthesized arguments: none"),
    # a script that climbs out of its folder runs from it, its sibling folder found (not stood in for)
    ("examples/run.py", "7:22 TL203", CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
    ("examples/more/deeper.py", "7:22 TL203", CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
    # a unittest method runs after its set-up
    ("tests/test_case.py", "11:15 TL203", CONFIRMED, "`TestStep.test_step()` called with synthesized arguments: none"),
    ("old_py2.py", "6:7 TL203", CONFIRMED, "ran the Python 2 code as Python 3 (rewritten: print statement;"),
    # the rerun past a confirmed stop fixes the Python 3 rewrite of Python 2 code
    ("old_py2.py", "7:16 TL203", CONFIRMED, "(after fixing line 6; ran the Python 2 code as Python 3"),
    # code that unpacks four dimensions gets a batch of images
    ("shapes.py", "5:5 TL102", "NOT REPRODUCED", "images=tensor of shape [2, 4, 4, 4]"),
    # a parameter only tested for truth is a flag
    ("flags.py", "6:5 TL102", "NOT REPRODUCED", "use_gpu=True"),
    ("encoder.py", "9:9 TL102", "NOT REPRODUCED",
     "vocab_size=4, embedding=array of shape [4], dropout=0.5, gpu=True"),
    ("loader.py", "9:18 TL204", CONFIRMED, "`sample + 1` (line 10) read 3 of 3 values"),
    ("dims.py", "10:13 TL102", "NOT REPRODUCED", "on a `AutoEncoder(dims=[4, 4, [4, 4]])`"),
    ("prune.py", "6:5 TL103", "NOT REPRODUCED", "model=VGG(...), layer_index=0, filter_index=0"),
    ("furthest.py", "5:5 TL102", "COULD NOT RUN",
     "(x=tensor of shape [4, 4]) raised ValueError: the real caller passes more"),
    # the project's own calls give the values their text fixes; sizes stay the ones made here
    ("blocks.py", "8:9 TL102", "NOT REPRODUCED",
     "on a `Stack(layers=[3, 4, 6, 3] as blocks.py:11 passes it, num_classes=4)`"),
    ("glimpse.py", "7:9 TL102", "NOT REPRODUCED", "on a `Glimpse(g=8 as demo.py:6 passes it, k=2)`"),
    ("old_next_py2.py", "10:20 TL203", CONFIRMED, "ran the Python 2 code as Python 3"),
    # the project's script that calls it drives it, past the finding it confirms in another file
    ("driven/trainer.py", "13:19 TL203", CONFIRMED, "reached by running driven/main.py after fixing ops.py:5"),
    ("driven_py2/trainer.py", "13:19 TL203", CONFIRMED,
     "reached by running driven_py2/main.py after fixing ops.py:5"),
    ("made/train.py", "11:12 TL203", CONFIRMED, "(with made/data/loc_train_springs3.npy made by running "
     "made/data/generate.py first, its own loops cut to 4 passes (a fresh clone has no such file))"),
    ("made/train.py", "16:11 TL203", CONFIRMED, "made by running made/data/generate.py first"),
    ("noisy/agent.py", "7:15 TL204", "NOT REPRODUCED", "action_noise=a `Jitter` of noisy/noise.py"),
    ("named/train.py", "11:7 TL203", CONFIRMED, "run with `--suffix _springs5`: the name the project's own "
     "script gives the files it makes (the default names files it does not); with "
     "named/data/pos_train_springs5.npy made by running named/data/generate.py first"),
    ("periodic_next.py", "6:13 TL213", CONFIRMED, "object has no attribute 'next'"),
    ("rerun_notes.py", "14:11 TL203", CONFIRMED, "(after fixing line 9)"),
    ("clipping.py", "7:13 TL102", "NOT REPRODUCED", "model=Linear(in_features=4, out_features=4, bias=True) "
     "after one backward pass on a random batch, clip=0.5"),
    ("rerun_notes.py", "15:11 TL203", CONFIRMED, "(after fixing line 9, line 14)"),
    ("periodic_next.py", "10:15 TL203", CONFIRMED, "(after fixing line 6; with the periodic `if` at line 9 taken"),
    ("periodic.py", "9:15 TL203", CONFIRMED, "(with the periodic `if` at line 8 taken on its first pass (a run "
     "this short never reaches its period))"),
    ("periodic.py", "11:15 TL203", "COULD NOT RUN", "line 11 never executed"),
    ("prior.py", "10:17 TL204", CONFIRMED, "on a `Prior(input_shape=[4, 4, 4, 4])`"),
    ("pathed/train.py", "8:7 TL203", CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
    ("generated.py", "7:15 TL203", CONFIRMED, "called with synthesized arguments: values=tensor of shape [4, 4]; "
     "then up to 3 of its items taken, as a `for` takes them"),
    ("driven_long/trainer.py", "18:19 TL203", CONFIRMED, "reached by running driven_long/main.py after fixing "
     "ops.py:5, trainer.py:13, trainer.py:14, trainer.py:15, trainer.py:16, trainer.py:17"),
    ("unreached_body.py", "8:11 TL203", "COULD NOT RUN", "line 8 never executed (the run stopped at line 6"),
    ("lookup.py", "7:9 TL102", "NOT REPRODUCED", "on a `Lookup(vocab=a `Vocabulary` of vocab.py)`"),
    ("ladder.py", "9:13 TL102", "NOT REPRODUCED", "on a `Ladder(dims=[4, [4, 4], [4, 4]])`"),
    ("flow.py", "5:5 TL102", "NOT REPRODUCED", "objective=tensor of shape"),
    ("classify.py", "12:15 TL203", CONFIRMED, "model=Linear(in_features=4, out_features=10, bias=True)"),
    ("masks.py", "5:5 TL102", "NOT REPRODUCED", "x_mask=tensor of shape [2, 4, 4], dtype=bool"),
    # a network whose layers are visited has one of each kind
    ("init.py", "6:13 TL102", "NOT REPRODUCED", "net=Sequential("),
    ("built.py", "13:9 TL102", "NOT REPRODUCED",
     "(ran while the instance was built: none, on a `Norm(module=Linear("),
    ("init_scale.py", "5:9 TL102", "NOT REPRODUCED", "m=Conv2d(4, 4, kernel_size=(3, 3)"),
    ("loop_script.py", "7:5 TL102", "NOT REPRODUCED", "`rescale()` called with synthesized arguments"),
    ("stops_first.py", "4:7 TL203", CONFIRMED, "IndexError"),
    ("visited.py", "9:17 TL102", "NOT REPRODUCED", "VGG(features=Sequential("),
    ("varargs.py", "7:17 TL102", "NOT REPRODUCED", "model=Sequential("),
    ("flags_default.py", "6:9 TL103", "NOT REPRODUCED", "x=tensor of shape [4, 4], use_cuda=True, noise=tensor"),
    ("flags_default.py", "8:9 TL102", "NOT REPRODUCED", "use_cuda=True, noise=tensor of shape [4, 4])"),
    ("pretrained.py", "11:13 TL102", "NOT REPRODUCED", "vocab_size=4, pretrained=None"),
    ("segment/train_seg.py", "12:15 TL203", CONFIRMED, "net=Linear(in_features=4, out_features=21, bias=True)"),
    ("needs_data.py", "11:9 TL102", "NOT REPRODUCED", "the file imported without its line 5, which raised "
                                                      "FileNotFoundError: [Errno 2] No such file or directory"),
    ("experiments/train.py", "7:12 TL203", CONFIRMED,
     "with `from ..toolbox import` taken from the project's root (it climbs"),
    ("elsewhere/scoring.py", "5:12 TL203", CONFIRMED,
     "raised there when `train()` of trainer.py was called with synthesized arguments: model=Linear("),
    ("elsewhere/trainer.py", "8:11 TL203", CONFIRMED, "(after fixing scoring.py:5)"),
    ("stops_first.py", "8:5 TL102", "NOT REPRODUCED", "`rescale()` called with synthesized arguments: m=tensor"
                                                       " of shape [4, 4]) (after fixing line 4)"),
    # a tensor gets the shape its indexing needs, a threshold only compared is a number
    ("detect.py", "5:13 TL204", "NOT REPRODUCED", "prediction=tensor of shape [4, 4, 7], confidence=0.5)"),
    # a call stopped at a finding of its own file that it confirmed runs again with it fixed
    ("beam/step.py", "5:13 TL220", CONFIRMED, "Expected dtype int32 or int64 for index (raised at line 6)"),
    ("beam/step.py", "7:5 TL102", "NOT REPRODUCED", "(after fixing line 5)"),
    # ... and one stopped where another file uses that finding's value, with that file fixed
    ("beam/test_step.py", "6:11 TL203", CONFIRMED, "(after fixing step.py:5)"),
]


@pytest.mark.parametrize(("path", "key", "verdict", "phrase"), REACHED, ids=[item[0] for item in REACHED])
def test_code_as_a_fresh_clone_has_it_is_reached(reach, path, key, verdict, phrase) -> None:
    found, _root = reach
    runtime = found[path][key]
    assert runtime["verdict"] == verdict and phrase in runtime["evidence"], runtime
    assert "stand-ins" not in runtime["evidence"], runtime


def test_what_the_project_makes_stays_in_memory(reach) -> None:
    _found, root = reach
    assert not (root / "made" / "data" / "loc_train_springs3.npy").exists()  # made, read, never written
    assert sorted(path.name for path in (root / "made" / "data").iterdir()) == ["generate.py"]


def test_no_runtime_scripts_runs_only_the_flagged_files(reach) -> None:
    _found, root = reach
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--no-runtime-scripts", "--select", "TL203",
                 "--output-format", "json", "driven", cwd=root)
    assert result.returncode == 1, result.stderr
    verdicts = {f"{Path(item['filename']).name}:{item['location']['row']}": item["runtime"]
                for item in json.loads(result.stdout)}
    assert verdicts["ops.py:5"]["verdict"] == CONFIRMED
    assert verdicts["trainer.py:13"]["verdict"] == "COULD NOT RUN", verdicts
    assert "reached by running" not in verdicts["trainer.py:13"]["evidence"]


@pytest.mark.skipif(find_spec("torchvision") is not None, reason="torchvision is installed: its datasets are real")
def test_a_script_runs_on_synthetic_images_with_made_up_options_and_no_weights(reach) -> None:
    found, _root = reach
    runtime = found["train.py"]["23:11 TL203"]
    assert runtime["verdict"] == CONFIRMED, runtime
    evidence = runtime["evidence"]
    assert "with made-up values for the required options --dataset mnist, --dataroot data" in evidence
    assert "with synthetic torchvision.datasets.MNIST (1x28x28 random images)" in evidence
    assert "with the initial weights in place of the missing files pretrained/linear.pth" in evidence
    assert "ran with stand-ins for the missing modules torchvision" in evidence


# --- the pieces, in-process -------------------------------------------------------------------


def test_synthetic_transforms_give_torchvisions_shapes() -> None:
    import torch

    from torchlint.runtime import synthetic

    transforms = synthetic.module("torchvision.transforms", [])
    pipeline = transforms.Compose([transforms.Scale(64), transforms.CenterCrop(48), transforms.Grayscale(3),
                                   transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                                   transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
                                   transforms.Pad(2), transforms.Lambda(lambda x: x * 2)])
    image = torch.rand(3, 218, 178)
    assert pipeline(image).shape == (3, 52, 52)
    assert transforms.RandomCrop(32, padding=4)(torch.rand(3, 32, 32)).shape == (3, 32, 32)
    assert transforms.Resize((20, 30))(image).shape == (3, 20, 30)
    assert "not a tensor" == transforms.ToTensor()("not a tensor")


def test_a_synthetic_dataset_is_a_dataset_of_its_shape() -> None:
    import torch

    from torchlint.runtime import synthetic

    used: list[str] = []
    datasets = synthetic.module("torchvision.datasets", used)
    cifar = datasets.CIFAR100("data", train=False, download=True,
                              target_transform=lambda label: label + 1000)
    image, label = cifar[3]
    assert image.shape == (3, 32, 32) and 1000 <= label < 1100
    assert torch.equal(cifar[3][0], image)  # the same image for the same index
    folder = datasets.ImageFolder("photos", synthetic.module("torchvision.transforms", []).Resize(16))
    assert folder[0][0].shape == (3, 16, 16) and len(folder.imgs) == len(folder) > 16
    batch, labels = next(iter(torch.utils.data.DataLoader(cifar, batch_size=8)))
    assert batch.shape == (8, 3, 32, 32) and labels.dtype == torch.int64
    assert used == ["synthetic torchvision.datasets.CIFAR100 (3x32x32 random images)",
                    "synthetic torchvision.datasets.ImageFolder (3x64x64 random images)"]
    assert cifar.train_labels.shape == (len(cifar),) and cifar.train_data.shape == (len(cifar), 32, 32)


def test_synthetic_models_have_torchvisions_layers() -> None:
    import torch

    from torchlint.runtime import synthetic

    used: list[str] = []
    models = synthetic.module("torchvision.models", used)
    vgg = models.vgg11_bn(pretrained=True)
    assert len(list(vgg.features.children())) == 29 and vgg.classifier[-1].out_features == 1000
    resnet = models.resnet50(num_classes=10)
    assert resnet.fc.in_features == 2048 and len(resnet.layer3) == 6
    assert resnet(torch.rand(1, 3, 64, 64)).shape == (1, 10)
    assert models.alexnet()(torch.rand(1, 3, 224, 224)).shape == (1, 1000)
    assert type(models.inception_v3).__name__ == "StandIn"
    assert used == ["synthetic torchvision.models.vgg11_bn (random weights)",
                    "synthetic torchvision.models.resnet50 (random weights)",
                    "synthetic torchvision.models.alexnet (random weights)"]


def test_required_options_get_made_up_values_and_are_recorded() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True, help="cifar10 | lsun | imagenet")
    parser.add_argument("--mode", required=True, choices=["train", "test"])
    parser.add_argument("--epochs", required=True, type=int)
    parser.add_argument("--root", required=True)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("config")
    used: list[str] = []
    with stand_ins.required_options(used):
        options = parser.parse_args([])
        given = parser.parse_args(["--dataset", "lsun", "my.yaml", "--mode=test", "--epochs", "3", "--root", "r"])
    assert vars(options) == {"dataset": "cifar10", "mode": "train", "epochs": 1, "root": "data", "lr": 0.1,
                             "config": "data"}
    assert used == ["option --dataset cifar10", "option --mode train", "option --epochs 1", "option --root data",
                    "option config data"]
    assert vars(given) == {"dataset": "lsun", "mode": "test", "epochs": 3, "root": "r", "lr": 0.1, "config": "my.yaml"}
    with pytest.raises(SystemExit):
        parser.parse_args([])  # gone once the block ends


def test_given_options_reach_only_the_parsers_that_declare_them() -> None:
    declares, other = argparse.ArgumentParser(), argparse.ArgumentParser()
    declares.add_argument("--suffix", type=str, default="_springs")
    other.add_argument("--lr", type=float, default=0.1)
    used: list[str] = []
    with stand_ins.required_options(used, {"--suffix": "_springs5"}):
        assert declares.parse_args([]).suffix == "_springs5"
        assert declares.parse_args(["--suffix", "_mine"]).suffix == "_mine"  # the command line's own value stays
        assert vars(other.parse_args([])) == {"lr": 0.1}  # no "unrecognized arguments" exit
    assert used == ["given --suffix _springs5"]
    assert declares.parse_args([]).suffix == "_springs"


def test_a_missing_checkpoint_leaves_the_model_as_built(tmp_path) -> None:
    import torch

    from torchlint.runtime import synthetic

    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    saved = tmp_path / "real.pth"
    torch.save({"w": torch.ones(1)}, saved)
    used: list[str] = []
    with synthetic.missing_checkpoints(used):
        checkpoint = torch.load(str(tmp_path / "absent.pth"))
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        assert torch.load(saved)["w"].item() == 1  # a file that exists loads as always
    assert torch.equal(model.weight, before)
    assert used == [f"checkpoint {tmp_path / 'absent.pth'}"]
    with pytest.raises(FileNotFoundError):
        torch.load(str(tmp_path / "absent.pth"))


def test_a_call_that_runs_out_of_time_is_judged_on_what_it_reached(tmp_path) -> None:
    (tmp_path / "spin.py").write_text(textwrap.dedent("""
        import torch

        def spin(w: torch.Tensor):
            while w.sum() < float("inf"):
                w.data.mul_(1.0)
            w.data.zero_()
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--runtime-timeout", "3", "--select", "TL102",
                 "--output-format", "json", "spin.py", cwd=tmp_path)
    found = by_finding(json.loads(result.stdout), tmp_path)["spin.py"]
    in_the_loop, after_it = found["5:9 TL102"], found["6:5 TL102"]
    assert in_the_loop["verdict"] == "NOT REPRODUCED", in_the_loop
    assert "`spin()` called with synthesized arguments: w=tensor of shape [4, 4]" in in_the_loop["evidence"]
    assert after_it["verdict"] == "COULD NOT RUN" and "line 6 never executed" in after_it["evidence"], after_it
    assert "time limit" in after_it["evidence"]


FRESH_CLONE_SCRIPT = """
import os

import numpy as np
import torch

os.mkdir("logs/exp1")
log = open("logs/exp1/log.txt", "w")
scale = np.ones(3, dtype=np.float)
loss = (torch.from_numpy(scale) * 2).sum()
torch.save(loss, "checkpoints/loss.pt")
print(loss.data[0], file=log)
"""


def test_a_script_writing_in_folders_a_fresh_clone_lacks_runs_and_leaves_the_tree_alone(tmp_path) -> None:
    from torchlint.runtime.sandbox import Limits, Sandbox

    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(FRESH_CLONE_SCRIPT)
    with Sandbox(Limits(timeout=10), preload=(), writable=[str(tmp_path)]) as box:
        copy_on_write = box.isolation.copy_on_write
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL203", "--output-format", "json",
                 ".", cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    runtime = finding["runtime"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [".git", "train.py"]  # nothing made here
    if not copy_on_write:
        # Where writes would reach the user's tree, no folder is made: the run stops at the first.
        assert runtime["verdict"] == "COULD NOT RUN" and "No such file or directory: 'logs/exp1'" in runtime["evidence"]
        pytest.skip("no copy-on-write layer on this machine: the folders could not be made")
    assert runtime["verdict"] == CONFIRMED, runtime
    assert "with the missing output folders logs/, checkpoints/ made" in runtime["evidence"]
    assert "with `np.float` as the builtin it meant (numpy 1.24 removed it" in runtime["evidence"]


def test_output_folders_are_made_only_for_writes(tmp_path, monkeypatch) -> None:
    import torch

    monkeypatch.chdir(tmp_path)
    used: list[str] = []
    with stand_ins.output_folders(used):
        os.mkdir("logs/exp1")
        with open("runs/a/loss.txt", "w") as out:
            out.write("0.5")
        torch.save(torch.ones(1), "checkpoints/w.pt")
        with pytest.raises(FileNotFoundError):
            open("data/train.txt")  # a missing input stays missing
        with pytest.raises(FileNotFoundError):
            os.listdir("images")
    assert used == ["folder logs", "folder runs/a", "folder checkpoints"]
    assert (tmp_path / "logs" / "exp1").is_dir() and (tmp_path / "checkpoints" / "w.pt").is_file()
    with pytest.raises(FileNotFoundError):
        os.mkdir("other/exp")  # gone once the block ends


def test_numpys_removed_aliases_are_the_builtins_they_meant_and_recorded() -> None:
    import numpy as np

    used: list[str] = []
    with stand_ins.numpy_aliases(used):
        assert np.float is float and np.array([1.7]).astype(np.int)[0] == 1
        assert np.float64 is not float  # what numpy has is numpy's
    assert used == ["numpy np.float", "numpy np.int"]
    if tuple(int(part) for part in np.__version__.split(".")[:2]) >= (1, 24):
        with pytest.raises(AttributeError):
            np.float


def test_the_summary_names_the_missing_data_files_that_stopped_the_runs(tmp_path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import numpy as np
        import torch

        features = torch.from_numpy(np.load("data/features_train.npy"))
        loss = features.sum()
        print(loss.data[0])
    """))
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL203", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert ("1 finding stopped at a missing file (data/features_train.npy): run where the data is, with --entry"
            in result.stdout), result.stdout
