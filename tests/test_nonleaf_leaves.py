"""TL404 where the leaf is lost as it is made: a tensor made with `requires_grad=True` and
computed on at once (`* 0.01`), read by `.grad` or given to an optimizer, and a non-leaf in an
optimizer's parameter list. Real files through the real CLI; runtime verdicts under real torch."""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings
from torch_programs import run_program as torch_program

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


def test_a_converted_leaf_given_to_an_optimizer_is_advised_as_a_conversion(tmp_path) -> None:
    # `(leaf.double()).requires_grad_()` would still be no leaf: the advice is the conversion's.
    source = SOURCE.format(made="torch.randn(4, 2, requires_grad=True).double()",
                           use="opt = torch.optim.SGD([W, b], lr=0.1)")
    found = lint_findings(tmp_path, source, "TL404", "--runtime")
    assert [row for row, _ in finding_rows(found)] == [4]
    assert "converts a tensor that requires grad" in found[0]["message"]
    assert "can't optimize a non-leaf Tensor" in found[0]["message"]
    assert "make the tensor where it is used" in found[0]["message"]
    assert "make the leaf from the computed value" not in found[0]["message"]
    assert found[0]["runtime"]["verdict"] == "CONFIRMED"


EMBEDDINGS_TO_PERTURB = '''
import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 8)
        self.fc = nn.Linear(8, 2)

    def forward(self, embeds):
        return self.fc(embeds.mean(1))


model = TextClassifier()
tokens = torch.randint(0, 50, (3, 6))
embeds = model.embedding(tokens)
embeds.requires_grad = True
loss = nn.functional.cross_entropy(model(embeds), torch.tensor([0, 1, 0]))
loss.backward()
'''


@pytest.mark.parametrize("source, expected", [
    (EMBEDDINGS_TO_PERTURB, [("bad.py", 18, 1, "TL406")]),
    (EMBEDDINGS_TO_PERTURB.replace("embeds = model.embedding(tokens)\n",
                                   "embeds = model.embedding(tokens).detach()\n"), []),
], ids=["embedding-output", "detached-copy"])
def test_requires_grad_on_an_embeddings_output(project, source, expected) -> None:
    # An embedding's weight requires grad: its output is computed by the graph, whatever
    # the (integer) input; torch refuses to set the flag on it.
    project.write("bad.py", source)
    assert project.findings("--no-cache", "--select", "TL406") == expected
    pytest.importorskip("torch")
    ran = torch_program("bad.py", cwd=project.root)
    assert ("leaf variables" in ran.stderr) == bool(expected), ran.stderr
