"""What a wheel built from this checkout holds: every rule module, the rule docs they
carry, and the entry points of the command, the flake8 plugin and the pytest plugin (the
README's installation section tells users to build one until a package index has it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from torchlint.rules import all_rules

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    # A copy of what the sdist has, so the build writes nothing into the checkout.
    source = tmp_path_factory.mktemp("source")
    shutil.copytree(REPO / "torchlint", source / "torchlint", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, source / name)
    # As pip builds it for a user (an isolated environment with the declared setuptools);
    # where no package index answers, with the setuptools of this environment.
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=source)
    if result.returncode != 0:
        result = subprocess.run([*command[:5], "--no-build-isolation", *command[5:]], capture_output=True,
                                text=True, timeout=600, cwd=source)
    assert result.returncode == 0, result.stderr
    [built] = out.glob("torchlint-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_every_rule_module(wheel) -> None:
    names = set(wheel.namelist())
    for rule in all_rules().values():
        module = rule.__module__.replace(".", "/") + ".py"
        assert module in names, module
    assert "torchlint/py.typed" in names or "torchlint/__init__.py" in names
    assert not any(name.startswith(("tests/", "fixtures/", "corpus/")) for name in names)


def test_the_wheel_declares_the_command_and_both_plugins(wheel) -> None:
    [entry_points] = [name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "torchlint = torchlint.integrations.cli:main" in text
    assert "[flake8.extension]" in text and "TL = torchlint.integrations.flake8_plugin:TorchlintChecker" in text
    assert "[pytest11]" in text and "torchlint = torchlint.integrations.pytest_plugin" in text
    [metadata] = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    declared = wheel.read(metadata).decode()
    assert "Provides-Extra: runtime" in declared and "Provides-Extra: lsp" in declared
