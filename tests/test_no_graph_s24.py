"""No graph followed through the ordinary structure of training code (issue 41, round 24):

- ``obj(..)`` runs ``type(obj).__call__`` and a module call runs ``forward``: a name unpacked
  from such a call is the matching item of what that method returns, and the parameters of
  ``__call__`` get what the calls of its instances pass;
- a function that returns a value and, beside it, a copy cut from it (``return loss,
  loss.detach()``) cuts on purpose: the finding is on the backward of the cut item;
- a ``@torch.no_grad()`` method of a module class whose ``forward`` records the graph is an
  inference entry point: the finding is on the call that takes its result for training; the
  ``.values`` of ``max``/``topk`` carry a graph exactly when their input does;
- ``nn.Embedding.from_pretrained(w)`` / ``nn.EmbeddingBag.from_pretrained(w)`` build a frozen
  module unless ``freeze=False``; ``forward`` also runs for an explicit ``self.forward(x)``;
- a module's parameters are those of its submodules: freezing each part its `__init__` builds
  (`for p in model.encoder.parameters(): ...`) freezes it all;
- a helper, for a given call, runs the arms its constant arguments select: a freezing statement
  under ``if freeze_backbone:`` runs for ``freeze_backbone=True``, and a trainable head added
  under ``if head is not None:`` does not when the call passes none; the finding is on the
  argument that selects the freezing.

Each bad program is found on the line named and its near twin is clean; both run under torch,
the bad one raising "element 0 of tensors does not require grad"."""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings
from torch_programs import run_program

LOSS_OBJECT_TUPLE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WeightedLoss:
    def __init__(self, weights):
        self.weights = weights

    def __call__(self, logits, target, boxes, box_target):
        parts = torch.stack([F.cross_entropy(logits, target), F.smooth_l1_loss(boxes, box_target)])
        total = (parts * self.weights).sum()
        return total, parts.detach()


net = nn.Linear(8, 7)
criterion = WeightedLoss(torch.tensor([1.0, 0.5]))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(2):
    out = net(torch.randn(4, 8))
    total, parts = criterion(out[:, :3], torch.randint(0, 3, (4,)), out[:, 3:], torch.rand(4, 4))
    opt.zero_grad()
    parts.sum().backward()
    opt.step()
"""

INFERENCE_METHOD = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 5))

    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def predict(self, x):
        return self.forward(x).softmax(-1)


scorer = Scorer()
x = torch.randn(3, 6, requires_grad=True)
confidence = scorer.predict(x).max(-1).values.sum()
confidence.backward()
print(x.grad.abs().sum())
"""

PRETRAINED_VECTORS = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BagOfWords(nn.Module):
    def __init__(self, vectors):
        super().__init__()
        self.bag = nn.EmbeddingBag.from_pretrained(vectors, mode="mean")

    def forward(self, tokens):
        return self.bag(tokens)

    def similarity(self, a, b):
        return F.cosine_similarity(self.forward(a), self.forward(b))


model = BagOfWords(torch.randn(30, 8))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
a, b = torch.randint(0, 30, (4, 5)), torch.randint(0, 30, (4, 5))
loss = (1 - model.similarity(a, b)).mean()
opt.zero_grad()
loss.backward()
opt.step()
"""

SELECTED_FREEZE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def build(backbone, freeze_backbone=False, head=None):
    if freeze_backbone:
        backbone.requires_grad_(False)
    if head is not None:
        backbone = nn.Sequential(backbone, head)
    return backbone


def train(model, batches):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


model = build(nn.Sequential(nn.Linear(4, 8), nn.Tanh()), freeze_backbone=True)
train(model, [(torch.randn(5, 4), torch.randn(5, 8)) for _ in range(2)])
"""

FROZEN_PART_BY_PART = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self, vocab=20, tags=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.rnn = nn.GRU(16, 16, batch_first=True)
        self.out = nn.Linear(16, tags)
        self.tags = tags

    def forward(self, tokens):
        hidden, _ = self.rnn(self.embed(tokens))
        return self.out(hidden)


tagger = Tagger()
tagger.embed.requires_grad_(False)
for p in tagger.rnn.parameters():
    p.requires_grad = False
for name, p in tagger.out.named_parameters():
    p.requires_grad = False
tokens, tags = torch.randint(0, 20, (3, 7)), torch.randint(0, 4, (3, 7))
loss = F.cross_entropy(tagger(tokens).flatten(0, 1), tags.flatten())
loss.backward()
"""

# name: (source, line of the finding, (old, new) of its near twin)
CASES = {
    "loss-object-tuple": (LOSS_OBJECT_TUPLE, 26, ("parts.sum().backward()", "total.backward()")),
    "inference-method": (INFERENCE_METHOD, 23, ("scorer.predict(x)", "scorer(x).softmax(-1)")),
    "pretrained-vectors": (PRETRAINED_VECTORS, 12, ('mode="mean")', 'mode="mean", freeze=False)')),
    "frozen-part-by-part": (FROZEN_PART_BY_PART, 26, ("for name, p in tagger.out.named_parameters():\n"
                                                      "    p.requires_grad = False\n", "")),
    "selected-freeze": (SELECTED_FREEZE, 26, ("freeze_backbone=True)", "freeze_backbone=True, head=nn.Linear(8, 8))")),
}


def _source(case: str, fixed: bool) -> str:
    source, _line, (old, new) = CASES[case]
    assert source.count(old) == 1
    return source.replace(old, new) if fixed else source


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bad_program_is_found(tmp_path, case) -> None:
    assert finding_rows(lint_findings(tmp_path, _source(case, False), "TL408")) == [(CASES[case][1], "TL408")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_near_twin_has_no_finding(tmp_path, case) -> None:
    assert lint_findings(tmp_path, _source(case, True), "TL408") == []


def test_a_pretrained_embedding_beside_a_layer_to_train_is_left_alone(tmp_path) -> None:
    source = PRETRAINED_VECTORS.replace(
        "        self.bag = nn.EmbeddingBag.from_pretrained(vectors, mode=\"mean\")\n",
        "        self.bag = nn.EmbeddingBag.from_pretrained(vectors, mode=\"mean\")\n"
        "        self.proj = nn.Linear(8, 8)\n").replace("return self.bag(tokens)", "return self.proj(self.bag(tokens))")
    assert lint_findings(tmp_path, source, "TL408") == []


def test_a_freezing_arm_the_call_does_not_select_is_left_alone(tmp_path) -> None:
    source = SELECTED_FREEZE.replace("freeze_backbone=True)", "freeze_backbone=False)")
    assert lint_findings(tmp_path, source, "TL408") == []


def test_the_item_that_keeps_the_graph_is_left_alone_when_the_cut_one_is_only_logged(tmp_path) -> None:
    source = LOSS_OBJECT_TUPLE.replace("parts.sum().backward()", "total.backward()\n    print(parts.tolist())")
    assert lint_findings(tmp_path, source, "TL408") == []


@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_raises_on_the_bad_program_and_not_on_the_fixed_one(tmp_path, case) -> None:
    pytest.importorskip("torch")
    for fixed in (False, True):
        path = tmp_path / ("fixed.py" if fixed else "bad.py")
        path.write_text(_source(case, fixed))
        run = run_program(path, cwd=tmp_path, timeout=120)
        if fixed:
            assert run.returncode == 0, run.stderr
        else:
            assert run.returncode != 0 and "does not require grad" in run.stderr, run.stderr
