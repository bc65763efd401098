"""Session 20: TL401's runtime check when the total is not a name it can read after the
statement (`stats.device_stat('average_loss').add_(loss)`, a dev case of the thread
corpus): the monitor inspects the tensor the statement wrote in place and sees its graph
grow; the fixed twin (`add_(loss.detach())`) has no finding.  The real CLI, real torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CASE = Path(__file__).resolve().parent.parent / "eval" / "threads" / "cases" / \
    "graph-total--gh-nvidia-deeplearningexamples-1102"


def _check(path: Path, *extra: str) -> list[dict]:
    run = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--select", "TL401",
                          "--output-format", "json", "--exit-zero", *extra, str(path)],
                         capture_output=True, text=True, timeout=300, cwd=CASE)
    assert run.returncode == 0, run.stderr[-500:]
    return json.loads(run.stdout)


def test_the_total_written_in_place_is_seen_to_grow() -> None:
    pytest.importorskip("torch")
    [finding] = _check(CASE / "bad.py", "--runtime")
    assert finding["location"]["row"] == 61, finding
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "the total the statement writes in place grew every iteration" in finding["runtime"]["evidence"]


def test_the_fixed_twin_has_no_finding() -> None:
    assert _check(CASE / "fixed.py") == []
