"""torchlint says the same thing whatever Python's string hashing: a finding that depends
on the order a set of names is walked in (TL414 walked a helper's mode changes in set
order until issue 41's tenth session) changes from run to run and from CI to laptop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# A model built in one method with trained weights loaded, then run under `no_grad` in
# another: in training mode, so its Dropout is active in `score` (runs under torch: the
# layer's `training` is True there).
SCORER = '''\
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, width), nn.Dropout(0.3), nn.Linear(width, 2))

    def forward(self, x):
        return self.body(x)


class Scorer:
    def __init__(self, options):
        self.options = options
        self.net = None

    def load(self, weights):
        self.net = Classifier(**self.options)
        self.net.load_state_dict(weights)

    @torch.no_grad()
    def score(self, x):
        return self.net(x).softmax(-1)


trained = Classifier()
scorer = Scorer({"width": 8})
scorer.load(trained.state_dict())
print(scorer.score(torch.randn(3, 4)))
'''


def _lint(path: Path, seed: int) -> list[dict]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "--select", "ALL",
                           "--output-format", "json", "--exit-zero", str(path)],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_findings_do_not_depend_on_the_hash_seed(tmp_path):
    program = tmp_path / "scorer.py"
    program.write_text(SCORER, encoding="utf-8")
    runs = [_lint(program, seed) for seed in (0, 1, 2, 3, 4, 5)]
    assert all(run == runs[0] for run in runs[1:])
    assert [(d["code"], d["location"]["row"]) for d in runs[0] if d["code"] == "TL414"] == [("TL414", 25)]
