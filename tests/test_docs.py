"""The generated documentation matches the rule modules, and the README's quick start
matches what CI runs."""

from __future__ import annotations

import re

from conftest import REPO
from torchlint.output.docs import catalogue_with_table, readme_with_table, rule_pages


def test_readme_rules_table_is_up_to_date() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme_with_table(readme) == readme, "run `python scripts/gen_docs.py`"


def test_rule_catalogue_is_up_to_date() -> None:
    """Selection and the cache use torchlint/framework/catalogue.py instead of importing the rules."""
    text = (REPO / "torchlint" / "framework" / "catalogue.py").read_text(encoding="utf-8")
    assert catalogue_with_table(text) == text, "run `python scripts/gen_docs.py`"


def test_rule_pages_are_up_to_date() -> None:
    folder = REPO / "docs" / "rules"
    pages = rule_pages()
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(pages), "run `python scripts/gen_docs.py`"
    for name, content in pages.items():
        assert (folder / name).read_text(encoding="utf-8") == content, f"{name}: run `python scripts/gen_docs.py`"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    quick_start = re.findall(r"```sh\n(.+?)\n```", readme.split("## Quick start")[1].split("\n## ")[0])
    assert len(quick_start) == 2
    test_command = quick_start[1].split("&&")[-1].strip()
    assert test_command == "python -m pytest -q -n auto --maxprocesses 4"
    lines = ci.rstrip().splitlines()
    # The README's command, then the syntax tests on the other Pythons (README says so too).
    assert lines[-3:] == [test_command, lines[-2], "bash scripts/test_all_pythons.sh"]
    assert "bash scripts/test_all_pythons.sh" in readme
    assert "pip install --quiet torch==2.13.0" in ci
    assert ci.index("torch==2.13.0") < ci.index("-e '.[runtime,test]'")


def test_fixture_findings_in_readme_example_are_real(tmp_path) -> None:
    from conftest import run_torchlint

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    example = readme.split("```text\n$ torchlint check ")[1].split("\n```")[0]
    path, expected = example.split("\n", 1)
    result = run_torchlint("check", "-q", path, cwd=REPO)
    assert result.stdout.strip() == expected.strip()


def test_readme_main_command_runtime_checks_the_fixtures() -> None:
    """The quick start's first command lints and runtime-checks the bundled fixtures."""
    from conftest import run_torchlint

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = re.findall(r"```sh\n(.+?)\n```", readme.split("## Quick start")[1].split("\n## ")[0])
    command = quick_start[0].split("&&")[-1].split()
    assert command == ["torchlint", "check", "--runtime", "fixtures/"]
    # Every bundled fixture runs under torch: 90 s on a quiet 2-core machine, four minutes
    # when the machine is loaded; the limit is there to catch a hang.
    result = run_torchlint(*command[1:], cwd=REPO, timeout=600)
    assert result.returncode == 1, result.stderr
    summary = re.search(r"Runtime check: (\d+) confirmed, (\d+) latent, (\d+) not reproduced, (\d+) could not run"
                        r"(\.|; \d+ style findings? not run)", result.stdout)
    assert summary is not None, result.stdout[-2000:]
    assert int(summary.group(1)) >= 40
