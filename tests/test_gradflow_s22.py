"""Session 22 facts of the gradient-flow analyses, each on a bad program of our own and its
correct near-twin, linted through the CLI:

- an optimizer built with the entries of a dict (`list(store.values())`) is given every tensor
  stored in it, also through a function of the file that stores its parameter
  (`def param(name, init): store[name] = init`): a converted copy of a leaf stored there is
  not a leaf, and the optimizer raises (TL404).
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
