"""Shared helpers: run the real `torchlint` command line in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


def run_torchlint(*args: str, cwd: Path | str | None = None, stdin: bytes | None = None,
                  env: dict | None = None, without_root_file_access: bool = False, timeout: float = 120) -> Result:
    """Run `python -m torchlint ARGS` and capture what it prints."""
    environment = dict(os.environ)
    for variable in ("GITHUB_ACTIONS", "FORCE_COLOR", "NO_COLOR"):  # the machine's own must not change the output
        environment.pop(variable, None)
    if env:
        environment.update(env)
    completed = subprocess.run(
        [sys.executable, "-m", "torchlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=environment,
        timeout=timeout,
        preexec_fn=drop_root_file_access if without_root_file_access and os.geteuid() == 0 else None,
    )
    return Result(
        completed.returncode,
        completed.stdout.decode("utf-8", errors="replace"),
        completed.stderr.decode("utf-8", errors="replace"),
    )


def lint_findings(folder: Path, source: str, select: str, *extra: str, name: str = "train.py",
                  isolated: bool = True) -> list[dict]:
    """Write ``source`` (dedented) as ``folder/name``, lint it for the rules ``select`` names
    and return the JSON findings."""
    path = folder / name
    path.write_text(textwrap.dedent(source))
    options = ("--isolated",) if isolated else ()
    result = run_torchlint("check", *options, "--no-cache", "--select", select, "--output-format", "json",
                           *extra, str(path))
    assert result.returncode in (0, 1), result.stderr
    return result.json()


def finding_rows(found: list[dict]) -> list[tuple[int, str]]:
    """(row, code) of each finding."""
    return [(item["location"]["row"], item["code"]) for item in found]


_CRASHING_RULE = (
    "import sys\n"
    "from torchlint.framework import rule\n"
    "from torchlint.integrations.cli import main\n"
    "class Broken(rule.Rule):\n"
    "    code, name, summary, message, docs = 'TL999', 'broken', 's', 'm', 'd'\n"
    "    def visit_Call(self, node):\n"
    "        if self.ctx.path == 'a.py':\n"
    "            raise ValueError('boom')\n"
    "import torchlint.rules\ntorchlint.rules.all_rules()['TL999'] = Broken\n"
    "from torchlint.framework import catalogue\n"
    "catalogue.RULES['TL999'] = catalogue.RuleInfo('TL999', 'broken', None, True)\n"
    "sys.argv = ['torchlint', 'check', *sys.argv[1:]]\n"
    "main()\n"
)


def run_with_crashing_rule(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`torchlint check ARGS` with an extra rule, TL999, that raises on every call in a.py."""
    return subprocess.run([sys.executable, "-c", _CRASHING_RULE, *args], cwd=cwd, capture_output=True, text=True)


def drop_root_file_access() -> None:
    """preexec_fn: take CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the bounding set,
    so that a process running as root obeys file permissions like anyone else."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    PR_CAPBSET_DROP = 24
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.fixture
def torchlint():
    return run_torchlint


class Project:
    """A throwaway project folder to lint."""

    def __init__(self, root: Path):
        self.root = root

    def write(self, relative: str, content: str | bytes = "") -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
        return path

    def run(self, *args: str, **kwargs) -> Result:
        kwargs.setdefault("cwd", self.root)
        return run_torchlint(*args, **kwargs)

    def findings(self, *args: str, **kwargs) -> list[tuple[str, int, int, str]]:
        """(filename relative to the project, row, column, code) for each finding."""
        result = self.run("check", "--output-format", "json", *args, **kwargs)
        assert result.returncode in (0, 1), result.stderr
        found = []
        for item in result.json():
            filename = Path(item["filename"])
            if filename.is_absolute():
                filename = filename.relative_to(self.root.resolve())
            found.append((filename.as_posix(), item["location"]["row"], item["location"]["column"], item["code"]))
        return sorted(found)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


# A small file with one finding of each of three rules, used by many tests.
LEGACY = '''\
import torch
from torch.autograd import Variable

x = torch.rand(3, requires_grad=True)
y = x.data
loss = (x * 2).sum()
loss.backward()
print(loss.data[0])
'''


def rule_example_params() -> list:
    """Every rule's bad and good example source, as pytest params named CODE-kind-index."""
    from torchlint.framework.rule import Example
    from torchlint.rules import all_rules

    return [pytest.param(Example.of(example).source, id=f"{code}-{kind}-{index}")
            for code, rule in all_rules().items()
            for kind in ("bad", "good")
            for index, example in enumerate(getattr(rule, kind))]
