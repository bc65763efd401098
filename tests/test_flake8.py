"""The flake8 plugin (entry point `TL` under `flake8.extension`), through real flake8."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, REPO, run_torchlint
from torchlint.rules import all_rules

# flake8 runs no plugin on a file Python refuses (it reports E999): TL205's fixtures
# (`async=`) are linted by `torchlint check` only.
BAD_FIXTURES = sorted(path.relative_to(REPO).as_posix() for path in FIXTURES.glob("*/bad_*.py")
                      if not path.parent.name.startswith("TL205"))
FORMAT = "%(path)s:%(row)d:%(col)d:%(code)s"


def flake8(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("FLAKE8")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd, capture_output=True, text=True, env=environment, timeout=300,
    )


def flake8_positions(output: str) -> list[tuple[str, int, int, str]]:
    """(path, row, 0-based column, code) per line of FORMAT output: flake8 prints the
    0-based column a plugin gives it plus one."""
    found = []
    for line in output.splitlines():
        path, row, column, code = line.rsplit(":", 3)
        found.append((path, int(row), int(column) - 1, code))
    return sorted(found)


def torchlint_positions(*paths: str, cwd: Path = REPO) -> list[tuple[str, int, int, str]]:
    result = run_torchlint("check", "--output-format", "json", *paths, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    found = []
    for item in result.json():
        path = Path(item["filename"]).resolve().relative_to(cwd.resolve()).as_posix()
        found.append((path, item["location"]["row"], item["location"]["column"] - 1, item["code"]))
    return sorted(found)


def test_every_bad_fixture_gets_torchlints_findings_at_flake8_columns():
    result = flake8("--select", "TL", "--format", FORMAT, *BAD_FIXTURES)
    assert result.returncode == 1, result.stderr
    expected = torchlint_positions(*BAD_FIXTURES)
    assert len(expected) > len(BAD_FIXTURES)  # every bad fixture has at least one finding
    assert flake8_positions(result.stdout) == expected
    # Rules off by default (TorchFix's TOR4xx) report nothing unless selected, here as in flake8.
    off = tuple(f"fixtures/{code}-" for code, rule in all_rules().items() if not rule.default_enabled)
    assert {path for path, *_ in expected} == {path for path in BAD_FIXTURES if not path.startswith(off)}


def test_columns_count_characters_like_pycodestyle(project):
    # `é` is one character and two UTF-8 bytes: the finding must not drift right.
    project.write("train.py", '''
        import torch

        x = torch.rand(3, requires_grad=True)
        s = "é"; y = x.data
    ''')
    result = flake8("--select", "TL,E702", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(result.stdout) == [("train.py", 4, 7, "E702"), ("train.py", 4, 13, "TL101")]
    assert torchlint_positions("train.py", cwd=project.root) == [("train.py", 4, 13, "TL101")]


DATA_READ_AND_WRITE = '''
    import torch

    x = torch.rand(3, requires_grad=True)
    y = x.data
    x.data.mul_(2)
'''


def test_select_picks_one_rule(project):
    project.write("train.py", DATA_READ_AND_WRITE)
    everything = flake8("--format", FORMAT, "train.py", cwd=project.root)
    assert [code for *_, code in flake8_positions(everything.stdout)] == ["TL101", "TL102"]
    only = flake8("--select", "TL102", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(only.stdout) == [("train.py", 5, 0, "TL102")]
    ignored = flake8("--extend-ignore", "TL1", "train.py", cwd=project.root)
    assert (ignored.returncode, ignored.stdout) == (0, "")


def test_noqa_comments(project):
    project.write("train.py", '''
        import torch

        x = torch.rand(3, requires_grad=True)
        x.data.mul_(2)  # noqa: TL102
        x.data.add_(1)  # noqa: E501
        x.data.sub_(1)  # noqa
        x.data.div_(2)
    ''')
    result = flake8("--select", "TL", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(result.stdout) == [("train.py", 5, 0, "TL102"), ("train.py", 7, 0, "TL102")]


def test_torchlint_configuration_chooses_the_rules(project):
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL101"]\n')
    project.write("train.py", DATA_READ_AND_WRITE)
    result = flake8("--select", "TL", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(result.stdout) == [("train.py", 5, 0, "TL102")]


def test_target_torch_applies_under_flake8(project):
    """The project's target-torch leaves out what only later releases deprecate, as `check` does."""
    project.write("train.py", """
        import torch

        scaler = torch.cuda.amp.GradScaler()
        cached = torch.cuda.memory_cached()
    """)
    result = flake8("--select", "TL503", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(result.stdout) == [("train.py", 3, 9, "TL503"), ("train.py", 4, 9, "TL503")]
    project.write("pyproject.toml", '[tool.torchlint]\ntarget-torch = "2.0"\n')
    result = flake8("--select", "TL503", "--format", FORMAT, "train.py", cwd=project.root)
    assert flake8_positions(result.stdout) == [("train.py", 4, 9, "TL503")]


def test_bad_torchlint_configuration_is_a_clear_error(project):
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL999"]\n')
    project.write("train.py", DATA_READ_AND_WRITE)
    result = flake8("train.py", cwd=project.root)
    assert result.returncode == 1
    assert "unknown rule selector 'TL999'" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_standard_input_uses_the_display_name(project):
    project.write("pyproject.toml", '[tool.torchlint]\nper-file-ignores = { "tests/*" = ["TL101"] }\n')
    source = project.write("train.py", DATA_READ_AND_WRITE).read_text()
    for name, codes in (("src/train.py", ["TL101", "TL102"]), ("tests/test_train.py", ["TL102"])):
        result = subprocess.run(
            [sys.executable, "-m", "flake8", "--isolated", "--select", "TL", "--format", FORMAT,
             "--stdin-display-name", name, "-"],
            cwd=project.root, input=source, capture_output=True, text=True, timeout=120,
        )
        assert [(path, code) for path, _, _, code in flake8_positions(result.stdout)] == [(name, c) for c in codes]


def test_the_plugin_never_imports_torch(tmp_path):
    # A `torch` package first on the path records every attempt to import torch, from
    # any process flake8 starts and by any means (`import`, importlib), then refuses it.
    marker = tmp_path / "torch-imports.txt"
    blocker = tmp_path / "blocker" / "torch"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        "import os\n"
        "with open(os.environ['TORCH_IMPORT_MARKER'], 'a') as handle:\n"
        "    handle.write(f'{os.getpid()}\\n')\n"
        "raise ImportError('the flake8 plugin must not import torch')\n"
    )
    env = {"PYTHONPATH": str(blocker.parent), "TORCH_IMPORT_MARKER": str(marker)}
    probe = subprocess.run([sys.executable, "-c", "import torch"], env={**os.environ, **env}, capture_output=True)
    assert probe.returncode != 0 and marker.exists()  # the blocker works
    marker.unlink()

    result = flake8("--select", "TL", "--format", FORMAT, *BAD_FIXTURES, env=env)
    assert result.returncode == 1, result.stderr
    assert flake8_positions(result.stdout) == torchlint_positions(*BAD_FIXTURES)
    assert not marker.exists()
