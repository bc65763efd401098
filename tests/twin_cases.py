"""The harness of the tests that hold a bad program in the shape people write and its fixed
twin (one edit apart): the finding must be on the line to change and the twin clean,
linted through the real CLI; the bad program must show the bug under torch and the twin
must not."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import pytest

from torch_programs import run_program as torch_program


@dataclass(frozen=True)
class Case:
    why: str
    codes: str
    bad: str
    fixed: str
    shows: str  # "raises" (the message is in stderr) or "wrong-value" (the program prints it)
    expect: str
    found: tuple[tuple[int, int, str], ...]
    files: tuple[tuple[str, str], ...] = ()  # other files of the project the programs import


# A model with Dropout: in training mode its predictions change from call to call.
DROPOUT_NET = '''\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))

    def forward(self, x):
        return self.body(x)

'''


def twin(why: str, codes: str, bad: str, edit: tuple[str, str], shows: str, expect: str,
          found: tuple[tuple[int, int, str], ...], files: tuple[tuple[str, str], ...] = ()) -> Case:
    """A case whose twin is the bad program with one edit (the fix)."""
    old, new = edit
    assert bad.count(old) == 1, old
    return Case(why, codes, bad, bad.replace(old, new), shows, expect, found, files)


def write(project, case: Case) -> None:
    for name, text in case.files:
        project.write(name, text)
    project.write("bad.py", case.bad)
    project.write("fixed.py", case.fixed)


def assert_reported_on_the_line_and_twin_clean(project, case: Case) -> None:
    write(project, case)
    assert project.findings("--no-cache", "--select", case.codes, "bad.py") == \
        [("bad.py", *found) for found in case.found]
    assert project.findings("--no-cache", "--select", case.codes, "fixed.py") == []


def assert_bad_shows_the_bug_and_twin_does_not(project, case: Case) -> None:
    write(project, case)
    assert shows_the_bug(run_program(project, "bad.py"), case), case.why
    fixed = run_program(project, "fixed.py")
    assert fixed.returncode == 0 and not shows_the_bug(fixed, case), fixed.stderr[-500:]


def twin_tests(cases: dict[str, Case]):
    """The two tests of a family of cases, parametrized by the cases' names; a test module
    binds them to its own names: ``test_reported, test_shows_the_bug = twin_tests(CASES)``."""

    @pytest.mark.parametrize("name", sorted(cases))
    def reported_on_the_line_and_twin_clean(project, name: str) -> None:
        assert_reported_on_the_line_and_twin_clean(project, cases[name])

    @pytest.mark.parametrize("name", sorted(cases))
    def bad_shows_the_bug_under_torch_and_twin_does_not(project, name: str) -> None:
        pytest.importorskip("torch")
        assert_bad_shows_the_bug_and_twin_does_not(project, cases[name])

    return reported_on_the_line_and_twin_clean, bad_shows_the_bug_under_torch_and_twin_does_not


def run_program(project, name: str) -> subprocess.CompletedProcess:
    return torch_program(name, cwd=project.root, timeout=180)


def shows_the_bug(result: subprocess.CompletedProcess, case) -> bool:
    """The run shows what ``case`` (any case with ``shows`` and ``expect``) expects."""
    if case.shows == "raises":
        return result.returncode != 0 and case.expect in result.stderr
    return result.returncode == 0 and case.expect in result.stdout
