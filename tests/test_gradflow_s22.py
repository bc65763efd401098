"""Session 22 facts of the gradient-flow analyses, each on a bad program of our own and its
correct near-twin, linted through the CLI:

- an optimizer built with the entries of a dict (`list(store.values())`) is given every tensor
  stored in it, also through a function of the file that stores its parameter
  (`def param(name, init): store[name] = init`): a converted copy of a leaf stored there is
  not a leaf, and the optimizer raises (TL404);
- iterating (or indexing) an `nn.ModuleList` made of instances of one class of the file
  (`nn.ModuleList([Block(w) for _ in range(n)])`, nothing appended to it) yields that class, so
  what its methods return is known;
- `torch.tensor(xs)` of a list bound once to tensors (`xs = [b.penalty() for b in blocks]`)
  copies their values: a new leaf without their graph;
- the terms of a loss that a function of the file returns in a tuple (`total, aux = f(..)` of
  `return fit + aux, aux`) are the terms of the sum it returns: a term rebuilt with
  `torch.tensor` trains nothing (TL410);
- at run time, TL410's judge sees `torch.tensor(list of tensors)` and `torch.autograd.grad(..)`
  without `create_graph=True` take values out of the graph.
"""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings

STORE = """
import torch

store = {}


def param(name, init):
    if name not in store:
        store[name] = init
    return store[name]


def model(x):
    w = param("w", torch.zeros(3, requires_grad=True).double())
    b = param("b", torch.zeros(1, dtype=torch.float64, requires_grad=True))
    return x @ w + b


x = torch.randn(5, 3, dtype=torch.float64)
model(x)
opt = torch.optim.SGD(list(store.values()), lr=0.1)
"""

STORE_NAMED = STORE.replace('    w = param("w", torch.zeros(3, requires_grad=True).double())\n',
                            '    w_init = torch.zeros(3, requires_grad=True).double()\n'
                            '    w = param("w", w_init)\n')


def test_a_converted_copy_stored_for_the_optimizer_is_found(tmp_path) -> None:
    found = lint_findings(tmp_path, STORE_NAMED, "TL404")
    assert finding_rows(found) == [(14, "TL404")], found
    assert "can't optimize a non-leaf Tensor" in found[0]["message"]


def test_the_leaf_stored_for_the_optimizer_is_not_reported(tmp_path) -> None:
    fixed = STORE_NAMED.replace("torch.zeros(3, requires_grad=True).double()",
                                "torch.zeros(3).double().requires_grad_()")
    assert lint_findings(tmp_path, fixed, "TL404") == []


def test_torch_refuses_the_converted_copy(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    with pytest.raises(ValueError, match="non-leaf"):
        exec(compile(STORE_NAMED, "store.py", "exec"), namespace)
    exec(compile(STORE_NAMED.replace("torch.zeros(3, requires_grad=True).double()",
                                     "torch.zeros(3).double().requires_grad_()"), "store.py", "exec"), {})
    assert torch is not None


PENALTY = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.penalty = None

    def forward(self, x):
        h = torch.relu(self.proj(x))
        self.penalty = h.abs().mean()
        return h

    def last_penalty(self):
        return self.penalty


class Net(nn.Module):
    def __init__(self, width=8, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def compute_loss(net, x, y):
    fit = nn.functional.mse_loss(net(x), y)
    penalties = [block.last_penalty() for block in net.blocks]
    sparsity = torch.tensor(penalties).sum() * 0.01
    total = fit + sparsity
    return total, sparsity


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x, y = torch.randn(16, 8), torch.randn(16, 1)
total, sparsity = compute_loss(net, x, y)
opt.zero_grad()
total.backward()
opt.step()
"""

PENALTY_FIXED = PENALTY.replace("torch.tensor(penalties)", "torch.stack(penalties)")
# Something of another class is appended: what an item of the list is, is not known.
PENALTY_APPENDED = PENALTY.replace("        self.head = nn.Linear(width, 1)\n",
                                   "        self.blocks.append(nn.Identity())\n        self.head = nn.Linear(width, 1)\n")


def test_a_term_rebuilt_with_torch_tensor_is_found(tmp_path) -> None:
    found = lint_findings(tmp_path, PENALTY, "TL410")
    assert finding_rows(found) == [(36, "TL410")], found
    assert "the term `sparsity` of `total`" in found[0]["message"]


def test_the_stacked_term_is_not_reported(tmp_path) -> None:
    assert lint_findings(tmp_path, PENALTY_FIXED, "TL410") == []


def test_a_module_list_given_another_class_is_not_read_as_one_class(tmp_path) -> None:
    assert lint_findings(tmp_path, PENALTY_APPENDED, "TL410") == []


def test_torch_cuts_the_rebuilt_term(tmp_path) -> None:
    pytest.importorskip("torch")
    bad: dict = {}
    exec(compile(PENALTY, "penalty.py", "exec"), bad)
    assert not bad["sparsity"].requires_grad
    fixed: dict = {}
    exec(compile(PENALTY_FIXED, "penalty.py", "exec"), fixed)
    assert fixed["sparsity"].requires_grad


def test_the_runtime_judge_confirms_the_rebuilt_term(tmp_path) -> None:
    pytest.importorskip("torch")
    found = lint_findings(tmp_path, PENALTY, "TL410", "--runtime")
    assert [(f["location"]["row"], (f.get("runtime") or {}).get("verdict")) for f in found] == \
        [(36, "CONFIRMED")], found


PENALTY_OF_GRADIENTS = """
import torch
import torch.nn as nn

net = nn.Linear(4, 1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
fit = nn.functional.mse_loss(net(x), y)
grads = torch.autograd.grad(fit, net.parameters(), retain_graph=True)
penalty = sum(g.pow(2).sum() for g in grads)
(fit + 0.1 * penalty).backward()
"""


def test_the_runtime_judge_confirms_gradients_taken_without_create_graph(tmp_path) -> None:
    pytest.importorskip("torch")
    found = lint_findings(tmp_path, PENALTY_OF_GRADIENTS, "TL410", "--runtime")
    assert [(f["location"]["row"], (f.get("runtime") or {}).get("verdict")) for f in found] == \
        [(8, "CONFIRMED")], found


def test_gradients_taken_with_create_graph_are_not_reported(tmp_path) -> None:
    fixed = PENALTY_OF_GRADIENTS.replace("retain_graph=True", "create_graph=True")
    assert lint_findings(tmp_path, fixed, "TL410") == []
