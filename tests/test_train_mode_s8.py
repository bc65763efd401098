"""TL414 (a model with Dropout/BatchNorm evaluated in training mode), issue 41's eighth
session: programs in the shapes people post ("different results every time I run
inference", "Expected more than 1 value per channel when training", "the validation loss
changes"), each linted through the real CLI with its fixed twin, and run under torch to show
that the bad one has the bug and the twin has not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import lint_findings


@dataclass(frozen=True)
class Probe:
    source: str  # the bad program; it prints a line starting with "BUG:" or raises `raises`
    fix: tuple[str, str]  # (text, replacement): the twin
    rows: tuple[int, ...]  # where TL414 reports on the bad program
    raises: str = ""

    @property
    def bad(self) -> str:
        return textwrap.dedent(self.source)

    @property
    def fixed(self) -> str:
        old, new = self.fix
        assert self.bad.count(old) == 1, old
        return self.bad.replace(old, new)


PROBES: dict[str, Probe] = {}


# A loop whose body calls `model.train()` leaves the model in training mode whether it ran
# or not (built: training mode; `train()`: training mode): the evaluation after it.
PROBES["train-in-loop-then-inference-mode"] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv1d(2, 8, 3), nn.BatchNorm1d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 14, 1))
    optimizer = torch.optim.Adam(model.parameters())
    signals, targets = torch.randn(20, 2, 16), torch.randn(20, 1)
    for epoch in range(4):
        model.train()
        for i in range(0, 20, 5):
            optimizer.zero_grad()
            nn.functional.l1_loss(model(signals[i:i + 5]), targets[i:i + 5]).backward()
            optimizer.step()

    with torch.inference_mode():
        forecast = model(signals[:4])
        single = model(signals[:1])
    if not torch.allclose(single, forecast[:1]):
        print("BUG: the forecast of a sample depends on the batch it comes in")
""", ("with torch.inference_mode():", "model.eval()\nwith torch.inference_mode():"), (17, 18))

PROBES["predict-method-after-training-loop"] = Probe("""
    import torch
    from torch import nn

    torch.manual_seed(0)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(7, 21), nn.Dropout(0.25), nn.ReLU())
            self.decoder = nn.Linear(21, 5)

        def forward(self, x):
            return self.decoder(self.encoder(x))

        def predict(self, x):
            with torch.no_grad():
                return self(x).argmax(-1)

    tagger = Tagger()
    optimizer = torch.optim.Adam(tagger.parameters())
    for _ in range(3):
        tagger.train()
        optimizer.zero_grad()
        nn.functional.cross_entropy(tagger(torch.randn(9, 7)), torch.randint(0, 5, (9,))).backward()
        optimizer.step()

    sentence = torch.randn(30, 7)
    tags = tagger.predict(sentence)
    if not torch.equal(tags, tagger.predict(sentence)):
        print("BUG: predicted tags change from call to call")
""", ("    def predict(self, x):\n", "    def predict(self, x):\n        self.eval()\n"), (29,))


@pytest.mark.parametrize("name", sorted(PROBES))
def test_the_bad_program_is_reported_and_its_twin_is_not(tmp_path, name) -> None:
    probe = PROBES[name]
    found = lint_findings(tmp_path, probe.bad, "TL414")
    assert tuple(f["location"]["row"] for f in found) == probe.rows, found
    assert lint_findings(tmp_path, probe.fixed, "TL414", name="fixed.py") == []


def _run(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    path = tmp_path / "program.py"
    path.write_text(source)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_the_bad_program_shows_the_bug_under_torch(tmp_path, name) -> None:
    pytest.importorskip("torch")
    probe = PROBES[name]
    bad = _run(tmp_path, probe.bad)
    if probe.raises:
        assert bad.returncode != 0 and probe.raises in bad.stderr, bad.stderr
    else:
        assert bad.returncode == 0 and "BUG:" in bad.stdout, (bad.stdout, bad.stderr)
    fixed = _run(tmp_path, probe.fixed)
    assert fixed.returncode == 0 and "BUG:" not in fixed.stdout, (fixed.stdout, fixed.stderr)
