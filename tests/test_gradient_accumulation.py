"""TL407's runtime judge: gradients kept from the previous step are recognised in `.grad`
as it is when the optimizer steps, also after a GradScaler's `unscale_` has divided it in
place (real torch, through the real CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import lint_findings

pytest.importorskip("torch")

SCALED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    for step in range(3):
        {clear}
        loss = model(torch.randn(8, 4)).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
"""


def test_gradients_kept_under_a_grad_scaler_are_confirmed(tmp_path: Path) -> None:
    (finding,) = lint_findings(tmp_path, SCALED.format(clear="pass"), "TL407", "--runtime")
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "still held the previous step's gradient" in finding["runtime"]["evidence"]


def test_cleared_gradients_under_a_grad_scaler_are_not_reported(tmp_path: Path) -> None:
    assert lint_findings(tmp_path, SCALED.format(clear="opt.zero_grad()"), "TL407", "--runtime") == []
