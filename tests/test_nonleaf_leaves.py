"""TL404 where the leaf is lost as it is made: a tensor made with `requires_grad=True` and
computed on at once (`* 0.01`), read by `.grad` or given to an optimizer, and a non-leaf in an
optimizer's parameter list. Real files through the real CLI; runtime verdicts under real torch."""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings

torch = pytest.importorskip("torch")

SOURCE = """
    import torch

    W = {made}
    b = torch.zeros(2, requires_grad=True)
    {use}
"""


@pytest.mark.parametrize("made, use, rows, signature", [
    ("torch.randn(4, 2, requires_grad=True) * 0.01", "opt = torch.optim.SGD([W, b], lr=0.1)", [4],
     "can't optimize a non-leaf Tensor"),
    ("torch.randn(4, 2, requires_grad=True) * 0.01",
     "(torch.randn(8, 4) @ W + b).sum().backward()\n    print(W.grad)", [4], "not a leaf"),
    ("torch.randn(4, 2, requires_grad=True).clone()", "opt = torch.optim.SGD([W, b], lr=0.1)", [6],
     "can't optimize a non-leaf Tensor"),
    ("(torch.randn(4, 2) * 0.01).requires_grad_()", "opt = torch.optim.SGD([W, b], lr=0.1)", [], ""),
    ("torch.randn(4, 2, requires_grad=True)", "opt = torch.optim.SGD([W, b], lr=0.1)", [], ""),
])
def test_a_leaf_lost_where_it_is_made(tmp_path, made, use, rows, signature) -> None:
    found = lint_findings(tmp_path, SOURCE.format(made=made, use=use), "TL404", "--runtime")
    assert [row for row, _ in finding_rows(found)] == rows
    for finding in found:
        assert finding["runtime"]["verdict"] == "CONFIRMED", finding
        assert signature in finding["runtime"]["evidence"]
