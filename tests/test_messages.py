"""Messages say what is actually wrong in each context."""

from __future__ import annotations

import textwrap

from torchlint.rules import all_rules
from torchlint.engine.linter import lint_text


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
    assert found[3].startswith("`Variable(...)` is deprecated since PyTorch 0.4")
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


def diagnostics(source: str, code: str) -> list:
    report = lint_text(textwrap.dedent(source).lstrip(), rules=list(all_rules().values()))
    return [d for d in report.diagnostics if d.code == code]


def test_alias_findings_point_at_where_the_alias_was_made_and_read() -> None:
    [found] = diagnostics("""
        import torch
        w = torch.ones(3, requires_grad=True)
        h = w * 2
        view = h.view(3)
        h.add_(1)
        print(view)
    """, "TL303")
    assert (found.row, found.column) == (5, 1)
    assert [(note.message, note.row, note.column) for note in found.related] == [
        ("`view` is made here", 4, 8),
        ("and read here, after the write", 6, 7),
    ]


def test_alias_write_on_an_exclusive_branch_is_not_read_after() -> None:
    assert diagnostics("""
        import torch
        x = torch.ones(3, requires_grad=True) * 2
        y = x.detach()
        if x.sum() > 0:
            y.zero_()
        else:
            print(x)
    """, "TL301") == []


def test_clone_detach_is_reported_only_where_a_gradient_is_involved() -> None:
    found = messages("""
        import torch
        w = torch.ones(3, requires_grad=True)
        def f(t: torch.Tensor, layer):
            print(layer.weight.clone().detach())
            return torch.clone(t - 1).detach()
        a = w.clone().detach()
        b = torch.ones(3).clone().detach()
        with torch.no_grad():
            c = w.clone().detach()
    """, code="TL402")
    # `t` may or may not require grad; a layer's weight does, and so does `w`.
    assert found[4] == ("`layer.weight.clone().detach()` records the copy in the autograd graph and then "
                        "detaches it; use `layer.weight.detach().clone()`")
    assert found[6].endswith("use `w.detach().clone()`")
    assert set(found) == {4, 6}


def test_legacy_constructor_messages_keep_the_dtype() -> None:
    found = messages("""
        import torch
        a = torch.Tensor([3, 1])
        b = torch.LongTensor(4)
        c = torch.cuda.FloatTensor(2, 3)
        d = a.type(torch.cuda.FloatTensor)
        e = a.new(2, 3)
    """, code="TL204")
    assert "torch.tensor([3, 1], dtype=torch.float32)" in found[2]
    assert "torch.empty(4, dtype=torch.int64)" in found[3]
    assert 'torch.empty(2, 3, dtype=torch.float32, device="cuda")' in found[4]
    assert 'a.to("cuda", torch.float32)' in found[5]
    assert "a.new_empty(2, 3)" in found[6]
    # `data=` holds the data, and a repeated list is a list.
    found = messages("""
        import torch
        a = torch.LongTensor(data=[3, 4])
        b = torch.Tensor([0.] * 5)
    """, code="TL204")
    assert "use `torch.tensor([3, 4], dtype=torch.int64)`" in found[2] and "empty" not in found[2]
    assert "use `torch.tensor([0.] * 5, dtype=torch.float32)`" in found[3] and "either" not in found[3]
    # A file that changes the default dtype: `torch.Tensor` follows it, whatever it is then.
    found = messages("""
        import torch
        torch.set_default_tensor_type(torch.DoubleTensor)
        a = torch.Tensor([3, 1])
        b = torch.FloatTensor([3, 1])
    """, code="TL204")
    assert "torch.set_default_dtype(torch.float64)" in found[2]
    assert "torch.tensor([3, 1], dtype=torch.get_default_dtype())" in found[3]
    assert "torch.tensor([3, 1], dtype=torch.float32)" in found[4]
