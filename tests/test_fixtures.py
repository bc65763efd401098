"""Every fixture, through the real CLI: bad files are reported exactly as their
`.expected` sidecar says (row, column, code), good files are not reported at all."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from conftest import FIXTURES, run_torchlint
from torchlint.rules import all_rules

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.fixture(scope="module")
def fixture_findings() -> dict[str, list[str]]:
    # Rules off by default (TorchFix's TOR4xx) are turned on: their folders hold fixtures too.
    off = ",".join(code for code, rule in all_rules().items() if not rule.default_enabled)
    result = run_torchlint("check", "--isolated", "--output-format", "json", "--extend-select", off, str(FIXTURES))
    assert result.returncode == 1, result.stderr
    found: dict[str, list[str]] = defaultdict(list)
    for item in result.json():
        relative = Path(item["filename"]).resolve().relative_to(FIXTURES.resolve()).as_posix()
        found[relative].append(f"{item['location']['row']}:{item['location']['column']} {item['code']}")
    return found


def expected_for(path: Path) -> list[str]:
    sidecar = path.with_suffix(".expected")
    if not sidecar.exists():
        return []
    return [line.strip() for line in sidecar.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture(path: Path, fixture_findings) -> None:
    relative = path.relative_to(FIXTURES).as_posix()
    assert sorted(fixture_findings.get(relative, [])) == sorted(expected_for(path))


def test_good_fixtures_have_no_expectations() -> None:
    for path in FIXTURE_FILES:
        if path.name.startswith("good_"):
            assert not path.with_suffix(".expected").exists(), path


def test_bad_fixtures_expect_their_rule() -> None:
    for path in FIXTURE_FILES:
        if path.name.startswith("bad_"):
            code = path.parent.name.split("-")[0]
            assert any(line.endswith(code) for line in expected_for(path)), path


def test_every_expectation_has_its_fixture() -> None:
    for sidecar in [*FIXTURES.rglob("*.expected"), *FIXTURES.rglob("*.fixed")]:
        assert sidecar.with_suffix(".py").exists(), sidecar


def test_every_rule_has_bad_and_good_fixtures() -> None:
    folders = {folder.name for folder in FIXTURES.iterdir() if folder.is_dir()}
    for code, rule in all_rules().items():
        folder = f"{code}-{rule.name}"
        assert folder in folders, f"no fixtures/{folder}/"
        names = [p.name for p in (FIXTURES / folder).glob("*.py")]
        assert any(n.startswith("bad_") for n in names), folder
        assert any(n.startswith("good_") for n in names), folder
