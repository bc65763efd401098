"""The tensor-ness inference: a `.data` read is reported exactly when there is evidence
that its object is a tensor.  Each case is a small program; `# <-` marks the lines
that must be reported (as TL101, TL102, TL103 or TL203), and no other line may be."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.rules import all_rules
from torchlint.engine.linter import lint_text

RULES = list(all_rules().values())


def reported_lines(source: str, codes=("TL101", "TL102", "TL103", "TL203")) -> tuple[list[int], list[int]]:
    source = textwrap.dedent(source).lstrip("\n")
    report = lint_text(source, rules=RULES)
    assert report.internal_error is None, report.internal_error
    marked = [i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith("# <-")]
    found = sorted({d.row for d in report.diagnostics if d.code in codes})
    return found, marked


POSITIVE = {
    "torch factory": """
        import torch
        x = torch.randn(3)
        x.data  # <-
    """,
    "alias import": """
        import torch as T
        x = T.zeros(2)
        x.data  # <-
    """,
    "from import of a function": """
        from torch import ones
        x = ones(2)
        x.data  # <-
    """,
    "nn.Parameter": """
        import torch
        from torch import nn
        w = nn.Parameter(torch.empty(3))
        w.data.normal_()  # <-
    """,
    "requires_grad=True on an unknown call": """
        import torch
        w = make_weight(3, requires_grad=True)
        w.data  # <-
    """,
    "parameters loop": """
        import torch
        def step(model: torch.nn.Module):
            for p in model.parameters():
                p.data.zero_()  # <-
            for name, q in model.named_parameters():
                q.data  # <-
    """,
    "filtered parameters": """
        import torch
        def clip(model: torch.nn.Module):
            params = list(filter(lambda p: p.requires_grad, model.parameters()))
            for p in params:
                p.data.clamp_(-1, 1)  # <-
    """,
    "module output and loss criterion": """
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(2, 2))
        criterion = nn.MSELoss()
        out = net(x)
        loss = criterion(out, y)
        out.data  # <-
        loss.data[0]  # <-
    """,
    "annotated parameter and return": """
        import torch
        from typing import Optional
        def f(x: torch.Tensor, y: Optional[torch.Tensor]) -> torch.Tensor:
            y.data  # <-
            return x.data  # <-
        def g():
            return f(a, b).data  # <-
    """,
    "local function returning a tensor": """
        import torch
        def make():
            return torch.zeros(3)
        make().data  # <-
    """,
    "self attributes of a module, across methods": """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return x * self.scale.data  # <-
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.ones(1))
                self.register_buffer("mask", torch.ones(3))
                self.fc = nn.Linear(3, 3)
            def reset(self):
                self.mask.data.fill_(1)  # <-
                self.fc.weight.data.zero_()  # <-
                self.fc(self.mask).data  # <-
    """,
    "subclass of a local module": """
        import torch.nn as nn
        class Base(nn.Module):
            pass
        class Child(Base):
            def init(self):
                for m in self.modules():
                    if isinstance(m, nn.Linear):
                        m.weight.data.normal_()  # <-
    """,
    "optimizer param_groups": """
        import torch
        class MySGD(torch.optim.Optimizer):
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.data.add_(p.grad.data, alpha=-group["lr"])  # <-
    """,
    "function given to .apply()": """
        import torch.nn as nn
        def init(m):
            m.weight.data.fill_(0.0)  # <-
        net = nn.Linear(2, 2)
        net.apply(init)
    """,
    "usage: backward() on it": """
        import torch
        def train(model, batch):
            loss = model(batch)
            loss.backward()
            return loss.data[0]  # <-
    """,
    "usage: module methods on it": """
        import torch
        def evaluate(model, batch):
            model.eval()
            for p in model.parameters():
                pass
            return model(batch).data  # <-
    """,
    "tuple unpacking of an LSTM": """
        import torch.nn as nn
        lstm = nn.LSTM(3, 4)
        output, (h, c) = lstm(x)
        h.data  # <-
        output.data  # <-
    """,
    "augmented accumulation": """
        import torch
        total = 0
        for _ in range(3):
            total += torch.ones(1)
        total.data  # <-
    """,
    "chains and arithmetic": """
        import torch
        x = torch.ones(2, 2, requires_grad=True)
        (x * 2 + 1).t().data  # <-
        x[0].view(-1).data  # <-
        torch.cat([x, x]).sum().data[0]  # <-
    """,
    "star import of Variable": """
        import torch
        from torch.autograd import *
        v = Variable(torch.ones(1))
        v.data  # <-
    """,
    "global used inside a function": """
        import torch
        def show():
            print(weights.data)  # <-
        weights = torch.ones(3)
    """,
    "comprehension over parameters": """
        import torch
        def norms(model: torch.nn.Module):
            return [p.grad.data.norm() for p in model.parameters()]  # <-
    """,
    "walrus": """
        import torch
        if (w := torch.ones(1)) is not None:
            w.data  # <-
    """,
    "a parameter every call of the file passes a module for": """
        import torch.nn as nn
        class Net(nn.Module):
            def forward(self, x):
                return x * 2
        def train(model, loader):
            for batch in loader:
                output = model(batch)
                print(output.data.max(1))  # <-
        def evaluate(model, loader):
            return [model(batch).data for batch in loader]  # <-
        net = Net()
        train(net, [])
        train(model=net, loader=[])
        evaluate(net, [])
    """,
    "the body of a tensor check, and after it": """
        import torch
        def f(x):
            if torch.is_tensor(x):
                return x.data  # <-
            elif not torch.is_tensor(x):
                return None
    """,
    "a method's parameter passed by its class's calls": """
        import torch
        class Trainer:
            def run(self):
                self.step(torch.zeros(3))
            def step(self, x):
                x.data.zero_()  # <-
    """,
    "a parameter asked the size of one dimension": """
        import torch
        def nll(preds, target):
            print(target.data)  # <-
            return preds.sum() / target.size(0)
    """,
    "a parameter viewed with sizes": """
        import torch
        def flatten(w, height):
            print(w.data)  # <-
            return w.view(height, -1)
    """,
    "x.data passed to Variable, nn.Parameter, a torch op, torch.cat, isinstance": """
        import torch
        from torch.autograd import Variable
        def f(a, b, c, d, e, f):
            Variable(a.data)  # <-
            torch.nn.Parameter(b.data)  # <-
            torch.dist(c.data, c2)  # <-
            torch.cat([d.data, d2], 1)  # <-
            isinstance(e.data, torch.cuda.FloatTensor)  # <-
            torch.tensor(f.data)
    """,
    "another x.data of the same variable is used as a tensor": """
        import torch
        def power_iteration(u, w):
            u.data = normalize(w)  # <-
            return torch.mv(w, u.data)  # <-
    """,
    "a layer's weight and bias": """
        import torch
        def init(net):
            net.fc.weight.data.normal_(0, 0.01)  # <-
            print(net.fc.bias.data)  # <-
    """,
    "a name passed where torch takes only a tensor": """
        import torch
        import torch.nn.functional as F
        def evaluate(classifier, points, target):
            pred, _ = classifier(points)
            loss = F.nll_loss(pred, target)
            return pred.data.max(1)[1], target.data  # <-
    """,
    "a name passed to a function of the file that uses its parameter as a tensor": """
        import torch
        def kl_divergence(mu, logvar):
            batch_size = mu.size(0)
            return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum() / batch_size
        def train(net, x):
            recon, mu, logvar = net(x)
            kld = kl_divergence(mu, logvar)
            print(mu.mean(0).data)  # <-
            print(logvar.data)
    """,
    "the data of what detach() returns": """
        import torch
        def ema(student, teacher, m):
            for q, k in zip(student.parameters(), teacher.parameters()):
                print((1 - m) * q.detach().data)  # <-
    """,
    "the roles torch gives: autograd Function gradients, saved tensors, hooks": """
        import torch
        class Clamp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, low):
                ctx.save_for_backward(x)
                return x.clamp(min=low)
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                print(x.data)  # <-
                return grad_output.data, None  # <-
        class OldStyle(torch.autograd.Function):
            def backward(self, grad_output):
                return grad_output.data  # <-
        def keep(grad):
            print(grad.data)  # <-
        def watch(module, grad_input, grad_output):
            print(grad_output[0].data)  # <-
        w = torch.zeros(3, requires_grad=True)
        w.register_hook(keep)
        w.register_hook(lambda g: g.data)  # <-
        torch.nn.Linear(2, 2).register_full_backward_hook(watch)
    """,
}


NEGATIVE = {
    "unknown parameter": """
        import torch
        def f(x):
            return x.data
    """,
    "numpy array": """
        import numpy as np
        a = np.zeros(3)
        a.data
    """,
    "rebound to something else": """
        import torch
        import numpy as np
        x = torch.zeros(3)
        x = np.asarray(x)
        x.data
    """,
    "dataset attribute": """
        import torch
        class Frames(torch.utils.data.Dataset):
            def __init__(self, data):
                self.data = data
            def get(self, i):
                return self.data[i], self.data[0]
    """,
    "PackedSequence field": """
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence
        lstm = nn.LSTM(3, 4)
        packed = pack_padded_sequence(x, lengths)
        out, _ = lstm(packed)
        packed.data, out.data
    """,
    "module attribute chain": """
        import torch.utils.data
        import allennlp.data
        torch.utils.data.DataLoader
        allennlp.data.Vocabulary
    """,
    "shadowed torch": """
        import torch
        def f(torch):
            x = torch.zeros(3)
            return x.data
    """,
    "Variable from elsewhere": """
        from tensorflow import Variable
        v = Variable(1.0)
        v.data
    """,
    "class scope names are not visible in methods": """
        import torch
        class C:
            x = torch.zeros(1)
            def f(self, x):
                return x.data
    """,
    "no torch import: usage evidence does not count": """
        def train(model, batch):
            loss = model(batch)
            loss.backward()
            return loss.data
    """,
    "criterion name without torch": """
        def f(criterion, a, b):
            return criterion(a, b).data
    """,
    "string annotations are not evaluated": """
        import torch
        def f(x: "torch.Tensor"):
            return x.data
    """,
    "tuple results are not tensors": """
        import torch
        x = torch.randn(3, 4)
        torch.max(x, 1).data
        x.sort().data
    """,
    "data of a tuple element with unknown type": """
        import torch
        batch = next(iter(loader))
        batch[0].data
    """,
    "the else branch of a tensor check": """
        import torch
        def f(x: torch.Tensor):
            if torch.is_tensor(x):
                return x.sum()
            else:
                return x.data
    """,
    "a negated tensor check": """
        import torch
        def f(x: torch.Tensor):
            if not isinstance(x, torch.Tensor):
                return x.data
    """,
    "calls that pass different kinds": """
        import torch
        def show(x):
            print(x.data)
        show(torch.zeros(2))
        show([1, 2])
    """,
    "a call that passes something unknown": """
        import torch
        def show(x):
            print(x.data)
        show(torch.zeros(2))
        show(make())
    """,
    "a call hidden behind *args": """
        import torch
        def show(x):
            print(x.data)
        show(torch.zeros(2))
        show(*things)
    """,
    "what a function returns does not take other calls' arguments": """
        import torch
        def nll(preds, target):
            diff = preds - target
            return (diff ** 2).sum()
        nll(torch.zeros(2), torch.ones(2))
        loss = nll(dataset_a, dataset_b)
        loss.data
    """,
    "size() without a dimension, view with a dtype": """
        import torch
        def f(a, b):
            a.size()
            b.view(numpy.float32)
            print(a.data, b.data)
    """,
    "torch.tensor / from_numpy take arrays too": """
        import torch
        torch.from_numpy(dataset.data)
        torch.as_tensor(frame.data)
    """,
    "torch.cat of .data in a file of packed sequences": """
        import torch
        from torch.nn.utils.rnn import PackedSequence
        def merge(a, b, lengths):
            return PackedSequence(torch.cat((a.data, b.data), 1), lengths)
    """,
    "the weight of something known not to be a layer": """
        import torch
        config = {"weight": 1}
        record = Record()
        record.weight = [1.0]
        print(args.weight.data, config.weight.data)
    """,
    "a number passed after the tensor of a torch operation is no tensor": """
        import torch
        def scale(x, alpha, frame):
            y = torch.mul(x, alpha)
            print(alpha.data, frame.data)
            torch.from_numpy(frame)
    """,
    "a hook of something that is not torch's": """
        import torch
        def on_batch(batch):
            print(batch.data)
        trainer = Trainer()
        trainer.register_hook(on_batch)
        class Plain:
            def backward(self, grad):
                return grad.data
    """,
}


@pytest.mark.parametrize("source", POSITIVE.values(), ids=POSITIVE.keys())
def test_evidence_is_found(source) -> None:
    found, marked = reported_lines(source)
    assert found == marked


@pytest.mark.parametrize("source", NEGATIVE.values(), ids=NEGATIVE.keys())
def test_no_evidence_no_finding(source) -> None:
    found, marked = reported_lines(source)
    assert marked == [] and found == []


def test_evidence_chain_names_every_hop() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()
        def step(model: nn.Module, x, y):
            loss = criterion(model(x), y)
            return loss.data[0]
    """).lstrip()
    report = lint_text(source, rules=RULES)
    (finding,) = report.diagnostics
    assert finding.code == "TL203"
    messages = [note.message for note in finding.evidence]
    assert messages[0] == "`loss` = `criterion(model(x), y)`, which is the result of a loss criterion"
    assert "`criterion` = `nn.CrossEntropyLoss()`, which is a torch.nn.CrossEntropyLoss module" in messages
    assert [note.row for note in finding.evidence][:2] == [4, 2]


def test_a_parameter_from_call_sites_says_which_call() -> None:
    source = textwrap.dedent("""
        import torch
        def show(x):
            print(x.data)
        show(torch.zeros(2))
        show(torch.ones(2))
    """).lstrip()
    (finding,) = lint_text(source, rules=RULES).diagnostics
    assert finding.evidence[0].message == "a call of `show` passes `torch.zeros(2)` for its parameter `x`, and so does 1 more"
    assert finding.evidence[0].row == 4


def test_a_caller_passing_a_non_tensor_overrides_the_parameter_annotation() -> None:
    source = textwrap.dedent("""
        import torch

        class M(torch.nn.Module):
            def _pad(self, x: torch.Tensor, n: torch.Tensor):
                return torch.tensor(n)

            def forward(self, x: torch.Tensor):
                return self._pad(x, n=x.size()[-1])

        def loose(t: torch.Tensor):
            return torch.tensor(t)

        def strict(t: torch.Tensor):
            return torch.tensor(t)

        loose([1, 2])
        strict(torch.ones(2))
    """).lstrip()
    report = lint_text(source, rules=RULES)
    assert [(d.row, d.code) for d in report.diagnostics] == [(14, "TL403")]


# --- 0-dim values (TL203) -------------------------------------------------------------
# `# <-` marks the `.data[0]` lines reported as TL203; no other line may be. A `.data[0]`
# on a tensor that is not shown to be 0-dim is a read (TL101) and may be reported as one.

SCALAR = {
    "an operand of a sum that is back-propagated": """
        import torch
        def step(features, prior):
            content = torch.log(features).sum(1)
            style = torch.exp(prior) * 2
            total = content + 0.5 * style
            total.backward()
            print(content.data[0], style.data[0])  # <-
    """,
    "an operand of a matrix product that is back-propagated": """
        import torch
        def step(a, b):
            left = torch.log(a)
            total = left @ b
            total.backward()
            print(left.data[0])
    """,
    "a total of losses that starts from a number": """
        import torch.nn as nn
        criterion = nn.MSELoss()
        def epoch(model, batches):
            total = 0.0
            for x, y in batches:
                total += criterion(model(x), y)
            return total.data[0]  # <-
    """,
    "a total that starts from an unknown value": """
        import torch.nn as nn
        criterion = nn.MSELoss()
        def epoch(model, batches, total):
            for x, y in batches:
                total += criterion(model(x), y)
            return total.data[0]
    """,
    "a total of values that are not 0-dim": """
        import torch.nn as nn
        model = nn.Linear(3, 2)
        def epoch(batches):
            total = 0
            for x in batches:
                total += model(x)
            return total.data[0]
    """,
    "what is added to a back-propagated total": """
        import torch
        def train(objective, steps):
            total = 0
            for x in steps:
                loss = objective(x)
                total += loss
                print(loss.data[0])  # <-
            total.backward()
    """,
    "what is added to a total back-propagated with a gradient": """
        import torch
        def train(objective, steps):
            total = 0
            for x in steps:
                loss = objective(x)
                total += loss
                print(loss.data[0])
            total.backward(torch.ones(3))
    """,
    "what is added to a total that starts as a tensor": """
        import torch
        def train(objective, steps):
            total = torch.zeros(1, requires_grad=True)
            for x in steps:
                loss = objective(x)
                total += loss
                print(loss.data[0])
            total.backward()
    """,
    "a method that returns its back-propagated total": """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 1)
            def loss(self, batches, optimizer=None):
                batch_loss = 0
                for x in batches:
                    loss = self.fc(x).squeeze()
                    if optimizer is not None:
                        loss.backward()
                    batch_loss += loss
                return batch_loss
            def valid_loss(self, batches):
                return self.loss(batches).data[0]  # <-
        net = Net()
        value = net.loss([torch.randn(1, 3)])
        print(value.data[0])  # <-
    """,
    "a 0-dim loss returned inside a tuple": """
        import torch.nn as nn
        class Trainer:
            def __init__(self, model, criterion):
                self.model = model
                if isinstance(criterion, nn.Module):
                    self._criterion = criterion
            @property
            def criterion(self):
                return self._criterion
            @criterion.setter
            def criterion(self, value):
                self._criterion = value
            def step(self, x, y, backward=True):
                prediction = self.model(x)
                loss = self.criterion(prediction, y)
                if backward:
                    loss.backward()
                return prediction, loss
            def validate(self, x, y):
                output, loss = self.step(x, y, backward=False)
                return loss.data[0]  # <-
    """,
    "self.loss(..) back-propagated elsewhere in its class": """
        import torch.nn as nn
        class Model(nn.Module):
            def loss(self, output, data):
                raise NotImplementedError
            def train_batch(self, batch, optimizer):
                loss = self.loss(self(batch), batch)
                loss.backward()
            def metric(self, output, sample):
                loss = self.loss(output, sample)
                return loss.data[0]  # <-
            def direct(self, output, sample):
                return self.loss(output, sample).data[0]  # <-
    """,
    "self.loss(..) never back-propagated": """
        import torch.nn as nn
        class Model(nn.Module):
            def loss(self, output, data):
                raise NotImplementedError
            def metric(self, output, sample):
                loss = self.loss(output, sample)
                return loss.data[0]
    """,
    "self.loss(..) back-propagated in another class": """
        import torch.nn as nn
        class Model(nn.Module):
            def loss(self, output, data):
                raise NotImplementedError
            def metric(self, output, sample):
                return self.loss(output, sample).data[0]
        class Other(nn.Module):
            def train_batch(self, batch):
                loss = self.loss(self(batch), batch)
                loss.backward()
    """,
    "self.loss(..) whose method returns no tensor": """
        import torch.nn as nn
        class Model(nn.Module):
            def loss(self, output, data):
                return output, data
            def train_batch(self, batch):
                loss = self.loss(self(batch), batch)
                loss.backward()
            def metric(self, output, sample):
                return self.loss(output, sample).data[0]
    """,
    "a module whose forward returns a full reduction": """
        import torch
        import torch.nn as nn
        class Dice(nn.Module):
            def forward(self, input, target):
                if self.flat:
                    loss = -2 * ((input * target).sum() / (input * input).sum().clamp(min=1e-6))
                else:
                    loss = (input * target).mean()
                return loss
        dice = Dice()
        x = torch.rand(3)
        print(dice(x, x).data[0], (dice(x, x) + dice(x, x)).data[0])  # <-
    """,
    "dot, vdot and dist are always 0-dim (torch_facts)": """
        import torch
        a, b = torch.rand(3), torch.rand(3)
        print(torch.dot(a, b).data[0], a.vdot(b).data[0], torch.dist(a, b).data[0])  # <-
    """,
    "elementwise methods keep 0-dim (torch_facts)": """
        import torch
        x = torch.rand(3)
        print(x.sum().round().data[0])  # <-
        print(x.mean().floor().data[0])  # <-
        print(x.sum().requires_grad_().data[0])  # <-
    """,
    "frobenius_norm needs a dim: not 0-dim by default (torch_facts)": """
        import torch
        print(torch.frobenius_norm(torch.rand(2, 2), 1).data[0])
    """,
    "linear_cross_entropy is a reduced loss; NLLLoss2d a loss module (torch_facts)": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        x, w, y = torch.rand(2, 3), torch.rand(4, 3), torch.tensor([0, 1])
        print(F.linear_cross_entropy(x, w, y).data[0])  # <-
        print(nn.NLLLoss2d()(x, y).data[0])  # <-
    """,
    "a module whose forward keeps a dimension on one path": """
        import torch
        import torch.nn as nn
        class Norms(nn.Module):
            def forward(self, x):
                if x.dim() > 2:
                    return x.sum()
                return x.sum(dim=1)
        print(Norms()(torch.rand(2, 3)).data[0])
    """,
    "the same call back-propagated in the training loop": """
        import torch
        def train(prob, y):
            loss_kl = kl(prob, 3)
            loss = nll(prob, y) + loss_kl
            loss.backward()
        def validate(prob):
            loss_kl = kl(prob, 3)
            print(loss_kl.data[0])  # <-
            print(kl(prob, 3, reduce=False).data[0])
            print(kl(prob).data[0])
    """,
    "an operand of a back-propagated sum": """
        import torch
        def step(x, elbo, c):
            L = -elbo(x)
            J = L + c.sum()
            J.backward()
            print(L.data[0])  # <-
    """,
    "a helper returning a full reduction, divided by sizes": """
        import torch
        def nll(preds, target):
            return ((preds - target) ** 2).sum() / (target.size(0) * target.size(1))
        def validate(output, target):
            print(nll(output, target).data[0])  # <-
    """,
    "a criterion another library made says nothing by its name": """
        import torch
        from warpctc_pytorch import CTCLoss
        criterion = CTCLoss()
        def validate(out, targets, sizes, target_sizes):
            loss = criterion(out, targets, sizes, target_sizes)
            return loss.data[0]
    """,
    "a criterion torch made is 0-dim by its name": """
        import torch
        criterion = torch.nn.CrossEntropyLoss()
        def validate(out, target, loss_fn):
            loss = criterion(out, target)
            print(loss.data[0], loss_fn(out, target).data[0])  # <-
    """,
    # How many dimensions a tensor has at most: sizes given, `t()`, `nonzero()`; each integer
    # index, iteration and one-dimension reduction takes one away.
    "an element of a tensor whose sizes are given": """
        import torch
        def f(n):
            grid = torch.zeros(3, 4)
            flat = grid.view(12)
            for i in range(3):
                print(grid[i, 1].data[0], flat[i].data[0], (grid[:, 0] * 2)[i].data[0])  # <-
            print(grid[1].data[0], grid[n, 1].data[0], grid[None, 1, 2].data[0])
            print(grid.view(flat.size())[0].data[0], grid[torch.arange(2), 0][0].data[0])
    """,
    "iterating twice over a transposed matrix": """
        import torch
        def check(batch: torch.Tensor):
            for column in batch.t():
                for token in column:
                    print(token.data[0])  # <-
    """,
    "the rows of nonzero()": """
        import torch
        def centre(mask: torch.Tensor):
            where = mask.nonzero()
            middle = where[where.size(0) // 2, :]
            print(middle[0].data[0], middle.data[0])  # <-
    """,
    "reductions over one dimension of a reshaped tensor": """
        import torch
        def reinforce(log_pi: torch.Tensor, reward: torch.Tensor, baseline: torch.Tensor):
            log_pi = torch.mean(log_pi.view(4, -1, 6), dim=0)
            reward = reward.unsqueeze(1).repeat(1, 6)
            loss = torch.sum(-log_pi * (reward - baseline.view(-1, 6)), dim=1)
            loss = torch.mean(loss, dim=0)
            kept = log_pi.sum(1, keepdim=True)
            print(loss.data[0], log_pi.max(1)[1][0].data[0])  # <-
            print(kept[0].data[0], log_pi.sum(1)[0][0].data[0])
    """,
    "dimensions a docstring gives, through a helper's elementwise arithmetic": """
        import torch
        class Glimpse:
            def extract(self, x, l, size):
                \"\"\"Crop one patch per image.

                Args
                ----
                - x: a 4D Tensor of shape (B, C, H, W).
                - l: a 2D Tensor of shape (B, 2).
                - size: a scalar, the width of the patch.
                \"\"\"
                coords = self.denormalize(x.shape[2], l)
                left = coords[:, 0] - size // 2
                for i in range(x.shape[0]):
                    print(left[i].data[0], (left[i] + size).data[0], x[i].data[0])  # <-
            def denormalize(self, T, coords):
                return (0.5 * ((coords + 1.0) * T)).long()
    """,
    "Google and numpy docstrings": """
        import torch
        def google(mask, n):
            \"\"\"Args:
                mask (torch.Tensor): the mask, of shape (B, T).
                n (int): how many.
            \"\"\"
            print(mask[0, 1].data[0], mask[0].data[0])  # <-
        def numpy_style(points):
            \"\"\"
            Parameters
            ----------
            points : torch.Tensor
                of shape (N, 3)
            \"\"\"
            print(points[0, 0].data[0])  # <-
    """,
}


@pytest.mark.parametrize("source", SCALAR.values(), ids=SCALAR.keys())
def test_zero_dim_values(source) -> None:
    source = textwrap.dedent(source).lstrip("\n")
    report = lint_text(source, rules=RULES)
    assert report.internal_error is None, report.internal_error
    marked = [i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith("# <-")]
    assert sorted({d.row for d in report.diagnostics if d.code == "TL203"}) == marked


def test_zero_dim_evidence_says_why() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn
        class Model(nn.Module):
            def train_batch(self, steps):
                total = 0
                for step in steps:
                    loss = self.objective(self(step), step)
                    total += loss
                total.backward()
            def evaluate(self, step):
                return self.objective(self(step), step).data[0]
    """).lstrip()
    report = lint_text(source, rules=RULES)
    (finding,) = [d for d in report.diagnostics if d.code == "TL203"]
    messages = [note.message for note in finding.evidence]
    assert messages == [
        "`self.objective(self(step), step)` calls `self.objective(..)`, whose result class `Model` "
        "back-propagates elsewhere",
        "`total += loss` adds `loss` to a total that is back-propagated",
        "`total.backward()` without a gradient argument needs a one-element tensor: a loss, 0-dim since PyTorch 0.4",
    ]
    assert [note.row for note in finding.evidence] == [10, 7, 8]


DOCSTRINGS_DECLARE_NOTHING = {
    "a container, alternatives, a failed type check": """
        import torch
        def f(xs, y, z, w):
            \"\"\"Args:
                xs: a list of 1D tensors.
                y: Tensor or list of shape (B,).
                z (Tensor): a 1D tensor
            \"\"\"
            print(xs[0].data[0], y[0].data[0])
            if not isinstance(z, torch.Tensor):
                print(torch.tensor(z))
    """,
    "a caller passes a number where the docstring says tensor": """
        import torch
        def f(z):
            \"\"\"- z: a 1D Tensor.\"\"\"
            print(z[0].data[0])
        f(3)
    """,
    "a number by docstring may be a tensor: it never cancels a tensor": """
        import torch
        def clip(norm=None):
            \"\"\"Args:
                norm (float): the norm.
            \"\"\"
            if norm is None:
                norm = torch.ones(3).norm()
            print(torch.tensor(norm))  # <-
    """,
    "the elements of a guarded list are not tensors": """
        import torch
        def load(audio: torch.Tensor):
            if not isinstance(audio[0], torch.Tensor):
                audio = [torch.tensor(a) for a in audio]
            elif len(audio) > 1 and not isinstance(audio, torch.Tensor):
                audio = torch.tensor(audio)
            return audio
    """,
}


@pytest.mark.parametrize("source", DOCSTRINGS_DECLARE_NOTHING.values(), ids=DOCSTRINGS_DECLARE_NOTHING.keys())
def test_what_docstrings_do_not_declare(source) -> None:
    found, marked = reported_lines(source, codes=("TL101", "TL203", "TL403"))
    assert found == marked


def test_a_docstring_is_quoted_in_the_evidence() -> None:
    source = textwrap.dedent("""
        import torch
        def first(l, size):
            \"\"\"- l: a 2D Tensor of shape (B, 2).
            - size: a scalar.\"\"\"
            return (l[0, 1] + size).data[0]
    """).lstrip()
    report = lint_text(source, rules=RULES)
    (finding,) = [d for d in report.diagnostics if d.code == "TL203"]
    assert [note.message for note in finding.evidence] == [
        'the docstring of `first` says `size` is "a scalar"',
        'the docstring of `first` says `l` is "a 2D Tensor of shape (B, 2)"; integer indices, iterations and '
        'reductions over one dimension took away each, leaving none',
    ]


def test_a_dimension_bound_says_where_it_comes_from() -> None:
    source = textwrap.dedent("""
        import torch
        def check(batch: torch.Tensor):
            for column in batch.t():
                for token in column:
                    print(token.data[0])
    """).lstrip()
    report = lint_text(source, rules=RULES)
    (finding,) = [d for d in report.diagnostics if d.code == "TL203"]
    assert finding.evidence[-1].message == (
        "`batch.t()` has at most 2 dimensions: `t()` accepts no more; integer indices, iterations and "
        "reductions over one dimension took away each, leaving none")
    assert finding.evidence[-1].row == 3


def test_tl101_shows_but_does_not_apply_detach_for_an_index_zero_of_unknown_shape() -> None:
    source = textwrap.dedent("""
        import torch.nn as nn
        model = nn.Linear(3, 2)
        def first(x):
            output = model(x)
            print(output.data[0], output.data[0].cpu().numpy())
    """).lstrip()
    report = lint_text(source, rules=RULES)
    fixes = {d.column: d.fix.applicability.value for d in report.diagnostics if d.code == "TL101"}
    assert fixes == {11: "display-only", 27: "safe"}


def test_a_0_dim_value_from_another_file_says_why(tmp_path) -> None:
    from torchlint.analysis.project import Project
    from torchlint.engine.files import lint_path

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cache.py").write_text(textwrap.dedent("""
        from typing import List
        import torch

        class Cache:
            def __init__(self):
                self.keys: List[torch.Tensor] = []

            def length(self, i):
                return self.keys[i].sum()

        class Trainer:
            def loss(self, model, batches):
                total = 0
                for x in batches:
                    loss = model(x)
                    loss.backward()
                    total += loss
                return total
    """).lstrip())
    user = package / "use.py"
    user.write_text(textwrap.dedent("""
        from pkg.cache import Cache, Trainer

        def report(model, batches):
            print(Cache().length(0).data[0])
            print(Trainer().loss(model, batches).data[0])
    """).lstrip())
    report = lint_path(str(user), str(user), RULES, Project())
    assert report.internal_error is None, report.internal_error
    findings = [d for d in report.diagnostics if d.code == "TL203"]
    assert [d.row for d in findings] == [4, 5]
    assert findings[1].evidence[-1].message.startswith(
        "`Trainer().loss(model, batches)` is 0-dimensional: `loss.backward()` without a gradient argument")


def test_a_test_folder_without_init_imports_the_package_from_the_project_root(tmp_path) -> None:
    """`tests/` has no __init__.py: `import pkg` resolves from the folder with setup.py /
    pyproject.toml, as pytest runs it; without such a marker, nothing is guessed."""
    from torchlint.analysis.project import Project
    from torchlint.engine.files import lint_path

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "losses.py").write_text(textwrap.dedent("""
        import torch.nn as nn

        class Dice(nn.Module):
            def forward(self, prediction, target):
                return (prediction * target).sum()
    """).lstrip())
    (tmp_path / "tests").mkdir()
    test = tmp_path / "tests" / "test_losses.py"
    test.write_text(textwrap.dedent("""
        import torch
        from pkg.losses import Dice

        def test_dice():
            loss = Dice()(torch.ones(3), torch.ones(3))
            assert loss.data[0] == 3
    """).lstrip())

    def tl203_rows() -> list[int]:
        report = lint_path(str(test), str(test), RULES, Project())
        assert report.internal_error is None, report.internal_error
        return [d.row for d in report.diagnostics if d.code == "TL203"]

    assert tl203_rows() == []  # no project marker: `pkg` is not looked up above tests/
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    assert tl203_rows() == [6]


def test_a_helper_without_torch_is_known_by_the_torch_code_that_imports_it(tmp_path) -> None:
    """A test helper that never imports torch: its parameter's `x.data.t_()` is a tensor's
    only where a module of the package that imports torch takes the helper."""
    from torchlint.analysis.project import Project
    from torchlint.engine.files import lint_path

    for folder in ("common", "data"):
        (tmp_path / "test" / folder).mkdir(parents=True)
        (tmp_path / "test" / folder / "__init__.py").write_text("")
    helper = tmp_path / "test" / "common" / "helpers.py"
    helper.write_text(textwrap.dedent("""
        def verify(expected, numericalized, batch_first=False):
            if batch_first:
                numericalized.data.t_()
            for i, row in enumerate(numericalized.t()):
                for j, token in enumerate(row):
                    assert token.data[0] == expected[i][j]
    """).lstrip())
    user = tmp_path / "test" / "data" / "test_field.py"
    user.write_text(textwrap.dedent("""
        from ..common.helpers import verify

        def test_numericalize(field):
            verify([[1]], field.numericalize([["a"]]))
    """).lstrip())

    def tl203_evidence() -> list[str]:
        report = lint_path(str(helper), str(helper), RULES, Project())
        assert report.internal_error is None, report.internal_error
        return [e.message for d in report.diagnostics if d.code == "TL203" for e in d.evidence]

    assert tl203_evidence() == []  # the importer does not import torch: nothing says tensor
    user.write_text("import torch\n" + user.read_text())
    evidence = tl203_evidence()
    assert any("`verify` is a helper of torch code (`../data/test_field.py` imports torch and "
               "`from ..common.helpers import verify`)" in message for message in evidence), evidence
    user.write_text("import torch\n")
    assert tl203_evidence() == []  # imports torch, but not the helper


# --- aliasing, from torch_facts: what each case reports (`# <- CODE` marks the line) -------

ALIASING = {
    "contiguous is the tensor itself when it already is contiguous": """
        import torch
        def f():
            x = torch.rand(2, 3, requires_grad=True)
            y = x.contiguous()
            y.mul_(2)  # <- TL303
            return x
    """,
    "chunk gives views: indexed": """
        import torch
        def f():
            x = torch.rand(4)
            y = x.chunk(2)[0]
            x.zero_()  # <- TL303
            return y
    """,
    "split gives views: unpacked": """
        import torch
        def f():
            x = torch.rand(4)
            a, b = x.split(2)
            x.add_(1)  # <- TL303
            return a
    """,
    "unbind gives views, kept as a tuple": """
        import torch
        def f():
            x = torch.rand(2, 2)
            rows = x.unbind()
            x.add_(1)  # <- TL303
            return rows
    """,
    "ravel is a view or a copy, like reshape": """
        import torch
        def f():
            x = torch.rand(2, 3)
            y = x.ravel()
            y.add_(1)  # <- TL303
            return x
    """,
    "requires_grad_ writes no data": """
        import torch
        def f(x: torch.Tensor):
            y = x.detach()
            y.requires_grad_()
            return x, y
    """,
    "squeeze_ and t_ write no data": """
        import torch
        def f(x: torch.Tensor):
            y = x.detach()
            y.squeeze_()
            y.t_()
            return x, y
    """,
    "unsqueeze_ on .data writes no data: a read of .data, not a write": """
        import torch
        def f(p: torch.Tensor):
            p.data.unsqueeze_(0)  # <- TL101
            return p
    """,
    "detach_ is no write into the base": """
        import torch
        def f(x: torch.Tensor):
            y = x.view(-1)
            torch.detach_(x)
            return y
    """,
}


@pytest.mark.parametrize("source", ALIASING.values(), ids=ALIASING.keys())
def test_aliasing_facts(source) -> None:
    source = textwrap.dedent(source).lstrip("\n")
    report = lint_text(source, rules=RULES)
    assert report.internal_error is None, report.internal_error
    marked = sorted((i, line.rsplit("# <- ", 1)[1].strip()) for i, line in enumerate(source.splitlines(), start=1)
                    if "# <- " in line)
    found = sorted((d.row, d.code) for d in report.diagnostics if d.code.startswith(("TL1", "TL3", "TL4")))
    assert found == marked


NEW_FACTS = {
    "unique_consecutive is a tensor without return_inverse/return_counts": """
        import torch
        def f(x):
            y = torch.unique_consecutive(x)
            return y.data  # <- TL101
    """,
    "requires_grad_ is no evidence of a tensor: nn.Module has it": """
        import torch
        def f(m):
            m.requires_grad_(False)
            return m.data
    """,
    "sign is in the graph: its result is no leaf": """
        import torch
        x = torch.rand(3, requires_grad=True)
        y = x.sign()
        y.sum().backward()
        print(y.grad)  # <- TL404
    """,
    "sum_to_size is the tensor itself when the size already matches": """
        import torch
        def f():
            x = torch.rand(2, 3)
            y = x.sum_to_size(2, 3)
            y.add_(1)  # <- TL303
            return x
    """,
}


@pytest.mark.parametrize("source", NEW_FACTS.values(), ids=NEW_FACTS.keys())
def test_facts_from_torch(source) -> None:
    test_aliasing_facts(source)


def test_tl101_fix_is_safe_when_a_method_only_copies() -> None:
    """`x.data.log1p()`: log1p returns a new tensor and writes nothing (torch_facts), so
    `x.detach().log1p()` changes nothing; `x.data.sum_to_size(..)` may be `x.data` itself."""
    source = textwrap.dedent("""
        import torch
        x = torch.rand(3, requires_grad=True)
        print(x.data.log1p(), torch.atan2(x.data, x.data))
        y = x.data.sum_to_size(3)
    """).lstrip()
    report = lint_text(source, rules=RULES)
    fixes = {(d.row, d.column): d.fix.applicability.value for d in report.diagnostics if d.code == "TL101"}
    assert fixes == {(3, 7): "safe", (3, 35): "safe", (3, 43): "safe", (4, 5): "unsafe"}


def test_a_list_repeated_by_a_tensor_is_a_list() -> None:
    """`[1] * n` is a list even where `n` is a 0-dim tensor (the list repeats itself
    `n.__index__()` times): no TL403 `.detach().clone()` on it, and TL204 builds it with
    `torch.tensor(..)`, not `.to(..)`."""
    source = textwrap.dedent("""
        import torch
        lengths = torch.tensor([3, 1])
        for idx, seqlen in enumerate(lengths):
            row = torch.tensor([1] * seqlen, dtype=torch.float32)
            padded = [[7]] + [[0]] * (seqlen - 1)
            print(row, torch.LongTensor(padded))
    """).lstrip()
    report = lint_text(source, rules=list(all_rules().values()))
    assert [d.code for d in report.diagnostics if d.code == "TL403"] == []
    [legacy] = [d for d in report.diagnostics if d.code == "TL204"]
    assert "torch.tensor(padded, dtype=torch.int64)" in legacy.message  # data, not a tensor to convert


def test_an_attribute_read_in_its_own_assignment_is_what_it_held_before() -> None:
    """`self.c = torch.tensor([self.c])`: the `self.c` inside is the float from `__init__`,
    not the tensor this very line makes."""
    source = textwrap.dedent("""
        import torch

        class Solver:
            def __init__(self, c_max):
                self.c_max = c_max

            def train(self):
                self.c_max = torch.tensor([self.c_max], dtype=torch.float32)
    """).lstrip()
    report = lint_text(source, rules=list(all_rules().values()))
    assert [d.code for d in report.diagnostics] == []


GRAD_MODES = """
    import torch

    model = torch.nn.Linear(2, 1)
    total = 0
    with torch.no_grad():
        for x in torch.randn(3, 2):
            with torch.enable_grad():
                loss = model(x).sum()
                total += loss  # <-
    quiet = 0
    with torch.no_grad():
        for x in torch.randn(3, 2):
            loss = model(x).sum()
            quiet += loss
    inference = 0
    with torch.inference_mode():
        for x in torch.randn(3, 2):
            with torch.enable_grad():  # cannot leave inference mode
                loss = model(x).sum()
                inference += loss
    recorded = 0
    with torch.inference_mode(False):
        for x in torch.randn(3, 2):
            loss = model(x).sum()
            recorded += loss  # <-
    mode = 0
    with torch.set_grad_enabled(False), torch.set_grad_enabled(True):
        for x in torch.randn(3, 2):
            loss = model(x).sum()
            mode += loss  # <-


    @torch.no_grad()
    @torch.enable_grad()
    def evaluate():
        kept = 0
        for x in torch.randn(3, 2):
            loss = model(x).sum()
            kept += loss  # <-
        print(kept)
"""


def test_grad_mode_follows_the_nearest_block_that_sets_it() -> None:
    """`enable_grad()` inside `no_grad()` records again (checked on torch 2.13: the loss has a
    `grad_fn`), inside `inference_mode()` it does not; `inference_mode(False)` disables nothing."""
    found, marked = reported_lines(GRAD_MODES, codes=("TL401",))
    assert found == marked


ORDER_PROGRAMS = (
    """
    from functools import reduce

    import numpy as np
    import torch


    def merge_images(a, b):
        return a


    glimpse = torch.zeros(2, 3).numpy()
    merged = []
    for i in range(len(glimpse)):
        g = glimpse[i]
        g = list(g)
        res = reduce(merge_images, list(g))
        merged.append(res)

    merged = [np.asarray(l, dtype='float32') / 255.0 for l in merged]
    print(merged[0])
    """,
)


@pytest.mark.parametrize("source", ORDER_PROGRAMS)
def test_an_answer_does_not_depend_on_the_order_the_questions_come_in(source) -> None:
    # A name met again while it is being inferred reads None to break the cycle; what was
    # computed from that stand-in must not stay remembered once the cycle is answered.
    from torchlint.analysis.module_analysis import ModuleAnalysis
    from torchlint.syntax import cst
    from torchlint.syntax.parsing import parse_module
    from torchlint.syntax.walk import iter_nodes

    def kinds(reverse: bool) -> list:
        analysis = ModuleAnalysis(parse_module(textwrap.dedent(source)), "order.py")
        names = [node for node in iter_nodes(analysis.module) if isinstance(node, (cst.Name, cst.Call))]
        order = list(reversed(names)) if reverse else names
        answers = {id(node): analysis.inference.infer(node) for node in order}
        return [None if answers[id(node)] is None else answers[id(node)].kind for node in names]

    forward, backward = kinds(False), kinds(True)
    assert forward == backward
    assert any(kind is not None for kind in forward)
