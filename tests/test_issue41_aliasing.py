"""Issue 41, the aliasing kinds: writes through a helper's parameter (TL301), outputs of
split/chunk/unbind (TL303), a parameter frozen only after it was written (TL417).  Each
program runs through the real CLI; `# <-` marks the lines that must be reported and no
other line of that code may be.  The bad programs also run under torch: the bug is real."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from conftest import run_torchlint
from torch_programs import run_program as torch_program

CASES = {
    "TL301 helper returns a view of its argument on one path": ("TL301", """
        import torch

        def to_grid(t):
            if t.size(0) == 1:
                return t.squeeze(0)
            return torch.cat(list(t), dim=1)

        def save(t):
            grid = to_grid(t)
            grid.mul_(255)  # <-
            return grid.to(torch.uint8)

        sample = torch.rand(1, 3, 4, 4)
        save(sample)
        assert float(sample.max()) <= 1.0, "BUG: save scaled the caller's sample"
    """),
    "TL301 nested helper normalizes a .data alias in place": ("TL301", """
        import torch

        def tile(tensor, normalize=False):
            if tensor.size(1) == 1:
                tensor = torch.cat((tensor, tensor, tensor), 1)
            if normalize:
                def norm_ip(img, lo, hi):
                    img.clamp_(min=lo, max=hi)  # <-
                for t in tensor:
                    norm_ip(t, 0.0, 0.5)
            return tensor.flatten(1)

        conv = torch.nn.Conv2d(3, 4, 3)
        before = conv.weight.detach().clone()
        tile(conv.weight.data, normalize=True)
        assert torch.equal(before, conv.weight.detach()), "BUG: the weights were clamped"
    """),
    "TL303 torch.split as a function": ("TL303", """
        import torch
        lin = torch.nn.Linear(4, 6)
        q, k, v = torch.split(lin(torch.randn(2, 4)), 2, dim=-1)
        q *= 0.5  # <-
    """),
    "TL303 a reshape of a torch.chunk output": ("TL303", """
        import torch
        lin = torch.nn.Linear(4, 6)
        a, b, c = torch.chunk(lin(torch.randn(1, 4)), 3, dim=1)
        flat = c.reshape(-1)
        flat[flat.abs() < 1e-2] = 1e-2  # <-
    """),
    "TL303 zip over an attached tensor": ("TL303", """
        import torch
        x = torch.rand(3, 4, requires_grad=True) * 1
        for row, scale in zip(x, [1.0, 2.0, 3.0]):
            row.mul_(scale)  # <-
    """),
    "TL417 written, then frozen": ("TL417", """
        import torch

        def fill(E):
            E[:, 0::2] = torch.ones(4, 2)  # <-
            E.requires_grad = False

        emb = torch.nn.Embedding(4, 4)
        fill(emb.weight)
    """),
    "TL303 a loop over the views unbind returned, kept in a name": ("TL303", """
        import torch
        import torch.nn as nn

        lin = nn.Linear(4, 3)
        out = lin(torch.randn(5, 4))
        rows = out.unbind(0)
        for r in rows:
            r.clamp_(min=0)  # <-
        torch.stack(rows).sum().backward()
    """),
    "TL301 a helper writes the detached tensor it made of its parameter": ("TL301", """
        import torch
        import torch.nn as nn

        def to_image(t):
            img = t.detach()
            img -= img.min()  # <-
            img /= img.max()
            return img

        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        out = model(torch.randn(3, 4))
        picture = to_image(out)
        out.pow(2).sum().backward()
    """),
}

QUIET = {
    "TL301 a helper that always writes its argument (meant)": ("TL301", """
        import torch

        def init_(w):
            w.normal_(0, 0.02)
            return w

        weight = torch.empty(3, 3)
        init_(weight)
        print(weight.sum())
    """),
    "TL301 the helper copies first": ("TL301", """
        import torch

        def save(t):
            grid = t.squeeze(0).clone() if t.size(0) == 1 else t.sum(0)
            grid.mul_(255)
            return grid

        sample = torch.rand(1, 3, 4, 4)
        save(sample)
        print(sample.max())
    """),
    "TL303 tensor_split outputs may be written": ("TL303", """
        import torch
        lin = torch.nn.Linear(4, 6)
        a, b = lin(torch.randn(2, 4)).tensor_split(2, dim=1)
        a.mul_(2)
    """),
    "TL417 frozen before it is written": ("TL417", """
        import torch

        def fill(E):
            E.requires_grad = False
            E[:, 0::2] = torch.ones(4, 2)

        emb = torch.nn.Embedding(4, 4)
        fill(emb.weight)
    """),
    "TL301 a helper writes a copy of the detached tensor": ("TL301", """
        import torch
        import torch.nn as nn

        def to_image(t):
            img = t.detach().clone()
            img -= img.min()
            return img

        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        out = model(torch.randn(3, 4))
        picture = to_image(out)
        out.pow(2).sum().backward()
    """),
}


def _lint(tmp_path, code: str, source: str) -> tuple[list[int], list[int]]:
    source = textwrap.dedent(source).lstrip("\n")
    path = tmp_path / "case.py"
    path.write_text(source)
    result = run_torchlint("check", "--select", code, "--no-cache", "--output-format", "json", str(path))
    found = sorted({item["location"]["row"] for item in result.json() if item["code"] == code})
    marked = [i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith("# <-")]
    return found, marked


@pytest.mark.parametrize("name", sorted(CASES))
def test_reported(tmp_path, name):
    code, source = CASES[name]
    found, marked = _lint(tmp_path, code, source)
    assert found == marked


@pytest.mark.parametrize("name", sorted(QUIET))
def test_quiet(tmp_path, name):
    code, source = QUIET[name]
    found, _ = _lint(tmp_path, code, source)
    assert found == []


def _run(tmp_path, source: str) -> subprocess.CompletedProcess:
    pytest.importorskip("torch")
    path = tmp_path / "case.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return torch_program(str(path), timeout=120)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_programs_show_the_bug(tmp_path, name):
    completed = _run(tmp_path, CASES[name][1])
    assert completed.returncode != 0, completed.stdout
    assert "RuntimeError" in completed.stderr or "BUG:" in completed.stderr, completed.stderr[-500:]


@pytest.mark.parametrize("name", sorted(QUIET))
def test_quiet_programs_run(tmp_path, name):
    completed = _run(tmp_path, QUIET[name][1])
    assert completed.returncode == 0, completed.stderr[-500:]
