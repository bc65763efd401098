"""Session 22: the facts table has rows for `torch.linalg`, `torch.special` and `torch.fft`
(derived by scripts/gen_torch_facts.py from their aten ops `linalg_<name>`... and probes), and
the analyses find them by qualified name: a weight-decay term built once from
`torch.linalg.norm` of the parameters carries a graph, so adding it to every batch's loss
backwards through its freed graph at the second batch (TL411); built inside the loop, it is not.
"""

from __future__ import annotations

from conftest import finding_rows, lint_findings
from torchlint.analysis import torch_facts

BUILT_ONCE = """
import torch
from torch import nn


def train(model: nn.Module, batches, optimizer):
    penalty = 1e-4 * sum(torch.linalg.norm(w) for w in model.parameters())
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y) + penalty
        loss.backward()
        optimizer.step()
"""


def test_namespace_rows() -> None:
    norm = torch_facts.fact("torch.linalg.norm")
    assert (norm.kind, norm.returns, norm.zero_dim, norm.differentiable) == ("function", "tensor", "no_dim", True)
    assert torch_facts.fact("torch.linalg.det").zero_dim == "no_dim"  # probed on a square matrix
    assert torch_facts.fact("torch.linalg.cholesky").differentiable is True  # ... positive definite
    assert torch_facts.fact("torch.linalg.svd").returns == "tuple"
    assert torch_facts.fact("torch.linalg.matrix_rank").differentiable is False  # an integer result
    assert torch_facts.fact("torch.linalg.diagonal").aliasing == "view"
    assert torch_facts.fact("torch.special.erf").differentiable is True
    assert torch_facts.fact("torch.fft.fft").returns == "tensor"
    assert {"norm", "vector_norm", "solve", "inv", "qr", "eigh", "lstsq", "cross"} <= torch_facts.functions("torch.linalg")
    # torch's own functions stay those directly under `torch.`
    assert "norm" in torch_facts.functions("torch") and "linalg.norm" not in torch_facts.functions("torch")


def test_norm_penalty_built_once_backwards_twice(tmp_path) -> None:
    found = lint_findings(tmp_path, BUILT_ONCE, "TL411")
    assert finding_rows(found) == [(7, "TL411")], found  # where the penalty is built, the line to change


def test_norm_penalty_built_per_batch(tmp_path) -> None:
    fixed = BUILT_ONCE.replace("    penalty = 1e-4 * sum(torch.linalg.norm(w) for w in model.parameters())\n", "").replace(
        "        optimizer.zero_grad()\n",
        "        optimizer.zero_grad()\n        penalty = 1e-4 * sum(torch.linalg.norm(w) for w in model.parameters())\n")
    assert "penalty = " in fixed
    assert lint_findings(tmp_path, fixed, "TL411") == []


def test_every_tensor_returning_linalg_function_is_known(tmp_path) -> None:
    # `torch.linalg.vector_norm` was in a hand-written list; `solve_triangular` is known only
    # from the facts table's rows: both penalties built once are graphs used twice.
    for function in ("vector_norm", "solve_triangular"):
        call = "torch.linalg.vector_norm(w)" if function == "vector_norm" else \
            "torch.linalg.solve_triangular(w.T @ w + torch.eye(w.shape[1]), w.T, upper=False).sum()"
        source = BUILT_ONCE.replace("torch.linalg.norm(w)", call)
        assert call in source
        found = lint_findings(tmp_path, source, "TL411")
        assert finding_rows(found) == [(7, "TL411")], (function, found)
