"""Session 20: TL204's advice for `x.new(*size)` keeps the star (`x.new_empty(*size)`): the
advice read `x.new_empty(0, size)` before, which raises.  The advice is run under torch."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

SOURCE = """import torch

x = torch.randn(3)
size = (2, 3)
a = x.new(*size)
b = x.new(*x.size())
"""


def test_the_advice_for_a_starred_size_runs_and_gives_that_size(project) -> None:
    pytest.importorskip("torch")
    project.write("legacy.py", SOURCE)
    result = project.run("check", "--select", "TL204", "--no-cache", "--output-format", "json")
    advice = {f["location"]["row"]: re.search(r"use `([^`]*)`", f["message"]).group(1) for f in result.json()}
    assert advice == {5: "x.new_empty(*size)", 6: "x.new_empty(*x.size())"}, advice
    check = SOURCE + f"assert {advice[5]}.shape == (2, 3)\nassert {advice[6]}.shape == (3,)\n"
    project.write("advice.py", check)
    run = subprocess.run([sys.executable, "advice.py"], cwd=project.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
