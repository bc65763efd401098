"""The fuzz campaigns' CI configurations: `scripts/fuzz.py --quick` and `scripts/fuzz_doors.py --quick`.

About 150 inputs made from `fixtures/` by every mutator (byte flips, truncation, bad
encodings and coding cookies, BOMs, huge lines, deep nesting, legacy and modern syntax,
thousands of findings, notebooks, imports between the files), linted with `--jobs 1` and
`--jobs 2`, then a `--fix --unsafe-fixes` sample and the special files (a FIFO, symlink
loops, /dev/zero).  It must find no crash, hang, internal error, difference between job
counts, lost neighbour, parse disagreement or fix failure.  The full campaign
(10,000 inputs) is `python scripts/fuzz.py`; docs/reliability.md has its numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# CI runs the --quick configuration (test id `test_fuzz_campaign[ci-quick]`); the full
# campaign takes an hour and is run by hand.
@pytest.mark.parametrize("configuration", [["--quick"]], ids=["ci-quick"])
def test_fuzz_campaign(tmp_path, configuration) -> None:
    summary = tmp_path / "summary.json"
    environment = dict(os.environ)
    environment.pop("GITHUB_ACTIONS", None)
    completed = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "fuzz.py"), *configuration, "--keep", str(tmp_path / "keep"),
         "--summary-json", str(summary)],
        cwd=REPO, capture_output=True, text=True, env=environment, timeout=600,
    )
    report = completed.stdout + completed.stderr[-4000:]
    assert summary.exists(), report
    counts = json.loads(summary.read_text())
    assert counts["inputs"] > 0, report
    assert completed.returncode == 0, report


def test_hostile_repository_doors(tmp_path) -> None:
    """`scripts/fuzz_doors.py --quick`: hostile worlds (symlinks out of the repository, names and
    source that try to drive a terminal or a CI log, .gitignore lines checked against git, a
    forged or linked cache, documents sent to the language server, `--runtime` reading through
    links) must leak, write, run or inject nothing and crash nothing."""
    summary = tmp_path / "summary.json"
    environment = dict(os.environ)
    environment.pop("GITHUB_ACTIONS", None)
    completed = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "fuzz_doors.py"), "--quick", "--keep", str(tmp_path / "keep"),
         "--summary-json", str(summary)],
        cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=900,
    )
    report = completed.stdout[-6000:] + completed.stderr[-4000:]
    assert summary.exists(), report
    counts = json.loads(summary.read_text())
    assert sum(counts["worlds"].values()) >= 30, report
    assert completed.returncode == 0, report
