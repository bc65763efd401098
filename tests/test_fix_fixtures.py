"""Every fix fixture through the real CLI: `bad_x.py` fixed with `--fix --unsafe-fixes`
(and only its folder's rule selected, so each rule's fixes are checked on their own)
must equal `bad_x.fixed`, compile, and stay as it is when fixed again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, run_torchlint
from torchlint.rules import all_rules

FIX_CASES = sorted(path.with_suffix(".py") for path in FIXTURES.rglob("*.fixed"))


def rule_of(source: Path) -> str:
    return source.parent.name.split("-")[0]


def fixed_copy(source: Path, folder: Path, *flags: str) -> tuple[Path, object]:
    target = folder / source.name
    shutil.copyfile(source, target)
    result = run_torchlint("check", "--isolated", "--select", rule_of(source), "--fix", *flags, str(target),
                           cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    assert "error" not in result.stderr, result.stderr
    return target, result


@pytest.mark.parametrize("source", FIX_CASES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fix_gives_the_expected_output(source: Path, tmp_path: Path) -> None:
    target, _ = fixed_copy(source, tmp_path, "--unsafe-fixes")
    expected = source.with_suffix(".fixed").read_bytes()
    assert target.read_bytes().decode() == expected.decode()
    compile(target.read_bytes(), str(target), "exec", dont_inherit=True)
    again = run_torchlint("check", "--isolated", "--select", rule_of(source), "--diff", "--unsafe-fixes",
                          str(target), cwd=tmp_path)
    assert again.returncode == 0, again.stdout  # idempotent: nothing left to fix
    assert again.stdout == ""


@pytest.mark.parametrize("source", FIX_CASES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_safe_fixes_alone_leave_compiling_code(source: Path, tmp_path: Path) -> None:
    target, _ = fixed_copy(source, tmp_path)
    compile(target.read_bytes(), str(target), "exec", dont_inherit=True)
    listed = run_torchlint("check", "--isolated", "--select", rule_of(source), "--output-format", "json",
                           str(target), cwd=tmp_path).json()
    assert not [item for item in listed if item["fix"] and item["fix"]["applicability"] == "safe"
                and item["fix"]["edits"]]


def test_every_rule_with_a_fix_has_a_fix_fixture() -> None:
    covered = {rule_of(path) for path in FIX_CASES}
    for code, rule in all_rules().items():
        if rule.fix is not None and rule.fix.value != "display-only":
            assert code in covered, f"{code} has a fix but no fixtures/{code}-{rule.name}/*.fixed"


def test_every_fixed_file_has_its_input() -> None:
    for path in FIXTURES.rglob("*.fixed"):
        assert path.with_suffix(".py").exists(), path


def test_each_rules_documented_fix_is_the_best_its_fixtures_get() -> None:
    """The rules table's fix column (``Rule.fix``) says what fixing really offers: the
    best applicability among the fixes the rule's fixtures get, with edits."""
    off = ",".join(code for code, rule in all_rules().items() if not rule.default_enabled)
    result = run_torchlint("check", "--isolated", "--no-cache", "--output-format", "json", "--extend-select", off,
                           str(FIXTURES))
    best: dict[str, int] = {}
    rank = {"safe": 2, "unsafe": 1, "display-only": 0}
    for item in result.json():
        fix = item["fix"]
        offered = rank[fix["applicability"]] if fix and fix["edits"] else 0
        best[item["code"]] = max(best.get(item["code"], 0), offered)
    for code, rule in all_rules().items():
        documented = rank[rule.fix.value] if rule.fix is not None else 0
        assert best.get(code, 0) == documented, f"{code}: documented {rule.fix}, offered at best {best.get(code, 0)}"
