"""TL203 on `prec1[0]` without `.data`: a 0-dim accuracy (the result of a full reduction)
indexed as the 1-element vector it was before PyTorch 0.5, also through the list an `accuracy`
helper fills with `res.append(..)` and returns. Real files through the real CLI; the runtime
verdict under real torch."""

from __future__ import annotations

import pytest

from conftest import finding_rows, lint_findings

torch = pytest.importorskip("torch")

ACCURACY = """
    import torch


    def accuracy(output, target, topk=(1,)):
        _, pred = output.topk(max(topk), 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum({dim})
            res.append(correct_k.mul_(100.0 / target.size(0)))
        return res


    output, target = torch.randn(8, 5), torch.randint(0, 5, (8,))
    prec1, prec5 = accuracy(output, target, topk=(1, 5))
    print(prec1[0], prec5{read})
"""


@pytest.mark.parametrize("dim, read, rows", [
    ("0", "[0]", [17, 17]),  # both 0-dim: IndexError
    ("0", ".item()", [17]),
    ("0, keepdim=True", "[0]", []),  # one element kept: indexing works
])
def test_an_accuracy_indexed_as_a_vector(tmp_path, dim, read, rows) -> None:
    found = lint_findings(tmp_path, ACCURACY.format(dim=dim, read=read), "TL203", "--runtime")
    assert [row for row, _ in finding_rows(found)] == rows
    assert all(item["runtime"]["verdict"] == "CONFIRMED" for item in found), found
    if found:
        assert found[0]["fix"]["edits"][0]["content"] == "prec1.item()"
