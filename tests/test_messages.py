"""Messages say what is actually wrong in each context."""

from __future__ import annotations

import textwrap

from torchlint.linter import lint_text
from torchlint.rule import all_rules


def messages(source: str, code: str = "") -> dict[int, str]:
    report = lint_text(textwrap.dedent(source).lstrip(), rules=list(all_rules().values()))
    return {d.row: d.message for d in report.diagnostics if d.code.startswith(code)}


def test_data_inplace_message_depends_on_context() -> None:
    found = messages("""
        import torch
        import torch.nn as nn
        w = torch.ones(3, requires_grad=True)
        w.data.add_(1)
        with torch.no_grad():
            w.data.add_(1)
        def _init_weights(module: nn.Module):
            module.weight.data.normal_()
    """)
    assert "gradients computed from `w` can be silently wrong" in found[4]
    assert "under `torch.no_grad()`: `.data` is redundant" in found[6]
    assert "initialize under `torch.no_grad()` (or with `torch.nn.init`)" in found[8]


def test_variable_messages() -> None:
    found = messages("""
        import torch
        from torch.autograd import Variable
        a = Variable(torch.ones(1))
        b = Variable(torch.ones(1), requires_grad=True)
        c = isinstance(a, Variable)
    """)
    assert found[2].startswith("`torch.autograd.Variable` is deprecated")
    assert found[3].startswith("`Variable(...)` is a no-op since PyTorch 0.4")
    assert "use `torch.ones(1).requires_grad_()`" in found[4]
    assert found[5] == "`Variable` is `torch.Tensor` since PyTorch 0.4; check against `torch.Tensor`"


def test_volatile_messages() -> None:
    found = messages("""
        import torch
        x = torch.autograd.Variable(torch.ones(1), volatile=True)
        print(x.volatile)
        x.volatile = False
    """, code="TL202")
    assert found[2].startswith("`volatile=` has had no effect since PyTorch 0.4")
    assert found[3].startswith("`x.volatile` is always False")
    assert found[4].startswith("Setting `x.volatile` has had no effect")
