"""`pytest --torchlint-runtime`: a real pytest run of a real project's tests under the
monitor (examples/runtime_project, copied so that its own folder is pytest's rootdir)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from importlib.util import find_spec
from pathlib import Path

import pytest

from conftest import REPO

needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "runtime_project"
    shutil.copytree(REPO / "examples" / "runtime_project", folder)
    # A second finding that no test reaches.
    (folder / "unused.py").write_text(textwrap.dedent("""
        import torch

        def snapshot(x: torch.Tensor):
            return x.data
    """).lstrip())
    return folder


def pytest_run(folder: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=folder,
                          capture_output=True, text=True, timeout=600, env=environment)


def test_the_plugin_is_registered_for_pytest() -> None:
    [plugin] = [entry for entry in entry_points(group="pytest11") if entry.name == "torchlint"]
    assert plugin.value == "torchlint.integrations.pytest_plugin"


@needs_torch
def test_the_tests_confirm_what_they_reach(project: Path) -> None:
    result = pytest_run(project, "--torchlint-runtime", "--torchlint-output", "verdicts.json", "tests")
    assert result.returncode == 0, result.stdout + result.stderr  # the user's tests still pass
    out = result.stdout
    assert "torchlint runtime" in out
    assert "model.py:28:9: TL102" in out
    assert "CONFIRMED: `p.data.mul_(1 - weight_decay)` (line 28) changed a tensor saved for backward" in out
    assert "1 of 2 findings reached by the tests; 1 not reached." in out
    assert "Runtime check: 1 confirmed, 0 latent, 0 not reproduced, 1 could not run." in out
    items = {Path(item["filename"]).name: item for item in json.loads((project / "verdicts.json").read_text())}
    assert items["model.py"]["runtime"]["verdict"] == "CONFIRMED"
    assert items["model.py"]["runtime"]["run"] == "pytest"
    assert items["unused.py"]["runtime"] == {"verdict": "COULD NOT RUN", "evidence": "not reached by the tests that ran",
                                             "run": "pytest"}


@needs_torch
@pytest.mark.parametrize("plugin", ["torchlint", "torchlint.integrations.pytest_plugin"])
def test_sarif_output_and_explicit_plugin_loading(project: Path, plugin: str) -> None:
    """With plugin autoloading off, `-p torchlint` (the entry point) or the module loads it."""
    result = pytest_run(project, "-p", plugin, "--torchlint-runtime",
                        "--torchlint-paths", "model.py", "--torchlint-output", "verdicts.sarif",
                        "--torchlint-format", "sarif", "tests/test_model.py::test_step",
                        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    sarif = json.loads((project / "verdicts.sarif").read_text())
    [run] = sarif["runs"]
    [finding] = run["results"]
    assert finding["ruleId"] == "TL102"
    assert "CONFIRMED" in json.dumps(finding)


@needs_torch
def test_without_the_flag_nothing_is_linted_or_watched(project: Path) -> None:
    result = pytest_run(project, "tests")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "torchlint runtime" not in result.stdout and "Runtime check" not in result.stdout
    assert not list(project.rglob("*.json"))


@needs_torch
def test_warnings_pytest_records_reach_the_monitor(project: Path) -> None:
    """TL202's evidence is torch's warning, which pytest captures per test."""
    (project / "legacy.py").write_text(textwrap.dedent("""
        import torch
        from torch.autograd import Variable

        def predict(model, x):
            return model(Variable(x, volatile=True))
    """).lstrip())
    (project / "tests" / "test_legacy.py").write_text(textwrap.dedent("""
        import torch
        from legacy import predict

        def test_predict():
            assert predict(torch.nn.Linear(2, 1), torch.ones(3, 2)).shape == (3, 1)
    """).lstrip())
    result = pytest_run(project, "--torchlint-runtime", "--torchlint-paths", "legacy.py", "tests/test_legacy.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "TL202" in result.stdout
    assert "CONFIRMED: " in result.stdout.split("legacy.py:5:")[-1].split("\n")[1], result.stdout


@needs_torch
def test_numpy_results_keep_their_type_unless_numpy_sharing_is_watched(project: Path) -> None:
    """The monitor tracks `.numpy()` arrays only for TL304: a test checking
    `type(a) is np.ndarray` passes as without the plugin."""
    (project / "tests" / "test_types.py").write_text(textwrap.dedent("""
        import numpy as np
        import torch

        def test_numpy_type():
            assert type(torch.ones(2).numpy()) is np.ndarray
    """).lstrip())
    result = pytest_run(project, "--torchlint-runtime", "tests/test_types.py")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_torch
def test_failing_tests_still_get_their_verdicts(project: Path) -> None:
    (project / "tests" / "test_fails.py").write_text(textwrap.dedent("""
        from model import Regressor, make_batches, train_step
        import torch

        def test_step_then_fail():
            model = Regressor()
            train_step(model, torch.optim.SGD(model.parameters(), lr=0.1), make_batches(1)[0])
            assert False, "a failing test"
    """).lstrip())
    result = pytest_run(project, "--torchlint-runtime", "tests/test_fails.py")
    assert result.returncode == 1  # pytest's own status: a test failed
    assert "1 failed" in result.stdout
    assert "CONFIRMED: `p.data.mul_(1 - weight_decay)`" in result.stdout
