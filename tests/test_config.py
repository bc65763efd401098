"""`[tool.torchlint]` configuration, rule selection and its precedence, through the real CLI."""

from __future__ import annotations

import pytest

from conftest import LEGACY

ALL_THREE = [("train.py", 2, 28, "TL201"), ("train.py", 5, 5, "TL101"), ("train.py", 8, 7, "TL203")]


def codes(findings) -> list[str]:
    return sorted({code for *_, code in findings})


def test_defaults_without_config(project) -> None:
    project.write("train.py", LEGACY)
    assert project.findings() == ALL_THREE


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--select", "TL101"], ["TL101"]),
        (["--select", "data-read"], ["TL101"]),  # by name
        (["--select", "TL2"], ["TL201", "TL203"]),  # by prefix
        (["--select", "TL101,TL203"], ["TL101", "TL203"]),
        (["--select", "TL101", "--select", "TL201"], ["TL101", "TL201"]),
        (["--select", "ALL"], ["TL101", "TL201", "TL203"]),
        (["--ignore", "TL2"], ["TL101"]),
        (["--ignore", "variable-wrap"], ["TL101", "TL203"]),
        (["--select", "TL2", "--ignore", "TL203"], ["TL201"]),
        # The more specific selector wins: TL203 beats the TL2 prefix.
        (["--select", "TL203", "--ignore", "TL2"], ["TL203"]),
        (["--select", "TL1", "--extend-select", "TL203"], ["TL101", "TL203"]),
    ],
)
def test_cli_selection(project, args, expected) -> None:
    project.write("train.py", LEGACY)
    assert codes(project.findings(*args)) == expected


def test_config_selection(project) -> None:
    project.write("train.py", LEGACY)
    project.write("pyproject.toml", """
        [project]
        name = "demo"

        [tool.torchlint]
        select = ["TL1", "TL2"]
        ignore = ["TL201"]
    """)
    assert codes(project.findings()) == ["TL101", "TL203"]
    # --extend-select adds to the configured selection, --ignore removes from it.
    assert codes(project.findings("--extend-select", "TL201")) == ["TL101", "TL201", "TL203"]
    assert codes(project.findings("--ignore", "TL101")) == ["TL203"]
    # --select on the command line replaces the config's selection (and its ignores).
    assert codes(project.findings("--select", "TL201")) == ["TL201"]


def test_config_extend_select_and_names(project) -> None:
    project.write("train.py", LEGACY)
    project.write("pyproject.toml", """
        [tool.torchlint]
        select = ["data-read"]
        extend-select = ["data-index-scalar"]
    """)
    assert codes(project.findings()) == ["TL101", "TL203"]


def test_nearest_pyproject_upward_applies(project) -> None:
    project.write("pyproject.toml", '[tool.torchlint]\nignore = ["TL101"]\n')
    project.write("pkg/sub/train.py", LEGACY)
    # A pyproject.toml without [tool.torchlint] is skipped on the way up.
    project.write("pkg/pyproject.toml", '[project]\nname = "pkg"\n')
    assert codes(project.findings("pkg/sub/train.py")) == ["TL201", "TL203"]
    # Running from inside the sub-folder finds the same config.
    result = project.run("check", "--output-format", "concise", "-q", cwd=project.root / "pkg" / "sub")
    assert "TL101" not in result.stdout and "TL203" in result.stdout


def test_nested_projects_use_their_own_config(project) -> None:
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    project.write("inner/pyproject.toml", '[tool.torchlint]\nselect = ["TL203"]\n')
    project.write("outer.py", LEGACY)
    project.write("inner/inner.py", LEGACY)
    assert project.findings() == [("inner/inner.py", 8, 7, "TL203"), ("outer.py", 5, 5, "TL101")]


def test_per_file_ignores(project) -> None:
    project.write("pyproject.toml", """
        [tool.torchlint.per-file-ignores]
        "tests/*" = ["TL101", "TL203"]
        "legacy_*.py" = ["variable-wrap"]
    """)
    project.write("tests/test_train.py", LEGACY)
    project.write("src/legacy_train.py", LEGACY)
    project.write("src/train.py", LEGACY)
    found = project.findings()
    assert [f for f in found if f[0] == "tests/test_train.py"] == [("tests/test_train.py", 2, 28, "TL201")]
    assert codes(f for f in found if f[0] == "src/legacy_train.py") == ["TL101", "TL203"]
    assert codes(f for f in found if f[0] == "src/train.py") == ["TL101", "TL201", "TL203"]


def test_per_file_ignores_on_the_command_line(project) -> None:
    project.write("tests/test_train.py", LEGACY)
    found = project.findings("--per-file-ignores", "tests/*:TL101,TL201")
    assert codes(found) == ["TL203"]


def test_extend_per_file_ignores_adds_to_the_table(project) -> None:
    project.write("pyproject.toml", """
        [tool.torchlint]
        per-file-ignores = { "tests/*" = ["TL101"] }
        extend-per-file-ignores = { "tests/*" = ["TL203"] }
    """)
    project.write("tests/test_train.py", LEGACY)
    assert codes(project.findings()) == ["TL201"]
    assert codes(project.findings("--extend-per-file-ignores", "tests/*:TL201")) == []
    # --per-file-ignores replaces the configured table; --extend-per-file-ignores adds to it.
    assert codes(project.findings("--per-file-ignores", "tests/*:TL201")) == ["TL101", "TL203"]
    result = project.run("check", "--extend-per-file-ignores", "TL101")
    assert result.returncode == 2 and "--extend-per-file-ignores" in result.stderr


@pytest.mark.parametrize("name", ["torchlint.toml", ".torchlint.toml"])
def test_a_dedicated_config_file_has_its_settings_at_the_top_level(project, name) -> None:
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL203"]\n')
    project.write(name, 'select = ["TL101"]\n[per-file-ignores]\n"legacy/*" = ["TL101"]\n')
    project.write("train.py", LEGACY)
    project.write("legacy/old.py", LEGACY)
    # It wins over pyproject.toml in the same folder, as ruff.toml does.
    assert project.findings() == [("train.py", 5, 5, "TL101")]
    shown = project.run("check", "--show-settings", "train.py")
    assert shown.returncode == 0, shown.stderr
    assert f"configuration: {(project.root / name).resolve()}" in shown.stdout
    assert "select: TL101\n" in shown.stdout and "per-file-ignores: legacy/*: TL101" in shown.stdout


def test_dot_torchlint_toml_wins_over_torchlint_toml(project) -> None:
    project.write("torchlint.toml", 'select = ["TL203"]\n')
    project.write(".torchlint.toml", 'select = ["TL201"]\n')
    project.write("train.py", LEGACY)
    assert codes(project.findings()) == ["TL201"]


def test_show_settings_without_config_names_the_defaults(project) -> None:
    project.write("train.py", LEGACY)
    shown = project.run("check", "--show-settings", "--select", "TL2", "--target-torch", "1.13")
    assert shown.returncode == 0, shown.stderr
    assert "configuration: none (defaults and the command line)" in shown.stdout
    assert "target-torch: 1.13.0" in shown.stdout and "select: TL201, TL202" in shown.stdout
    assert "respect-gitignore: true" in shown.stdout


def test_output_file_and_short_exit_zero(project) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", "-e", "-o", "report.txt", "--output-format", "concise")
    assert result.returncode == 0 and result.stdout == ""
    written = (project.root / "report.txt").read_text()
    assert written.startswith("train.py:2:28: TL201 ") and "Found 3 findings in 1 file." in written
    result = project.run("check", "--output-file", "report.json", "--output-format", "json")
    assert result.returncode == 1 and result.stdout == ""
    assert [item["code"] for item in __import__("json").loads((project.root / "report.json").read_text())] == \
        ["TL201", "TL101", "TL203"]
    result = project.run("check", "-o", str(project.root / "missing" / "r.txt"))
    assert result.returncode == 2 and "--output-file" in result.stderr


def test_config_option_points_at_a_file(project) -> None:
    project.write("train.py", LEGACY)
    project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL101"]\n')
    project.write("ci/strict.toml", 'select = ["TL203"]\n')
    assert codes(project.findings("--config", "ci/strict.toml")) == ["TL203"]
    assert codes(project.findings("--isolated")) == ["TL101", "TL201", "TL203"]


@pytest.mark.parametrize(
    "toml, message",
    [
        ('[tool.torchlint]\nselekt = ["TL101"]\n', "unknown key 'selekt'"),
        ('[tool.torchlint]\nselect = ["TL999"]\n', "unknown rule selector 'TL999'"),
        ('[tool.torchlint]\nignore = ["no-such-rule"]\n', "unknown rule selector 'no-such-rule'"),
        ('[tool.torchlint]\nselect = "TL101"\n', "`select` must be a list of strings"),
        ('[tool.torchlint.per-file-ignores]\n"a.py" = ["TL8"]\n', "unknown rule selector 'TL8'"),
        ('[tool.torchlint]\nforce-exclude = "yes"\n', "`force-exclude` must be true or false"),
        ('[tool.torchlint\nselect = []\n', "invalid TOML"),
    ],
)
def test_bad_config_exits_2_naming_the_problem(project, toml, message) -> None:
    project.write("train.py", LEGACY)
    project.write("pyproject.toml", toml)
    result = project.run("check")
    assert result.returncode == 2
    assert message in result.stderr
    assert "pyproject.toml" in result.stderr
    assert result.stdout == ""


def test_missing_config_file_is_an_error(project) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", "--config", "nope.toml")
    assert result.returncode == 2 and "not found" in result.stderr


def test_unknown_selector_on_the_command_line(project) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", "--ignore", "TL1O1")  # letter O, not zero
    assert result.returncode == 2
    assert "unknown rule selector 'TL1O1'" in result.stderr


@pytest.mark.parametrize("args", [["--select="], ["--select", ""], ["--select", " , "]])
def test_an_empty_select_is_an_error_not_every_rule_off(project, args) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", *args)
    assert result.returncode == 2, result.stdout
    assert "--select" in result.stderr and "names no rule" in result.stderr and "--ignore ALL" in result.stderr
    assert "All checks passed" not in result.stdout
    # Every rule off is said so.
    assert project.run("check", "--ignore", "ALL").returncode == 0


def test_an_empty_select_in_the_config_is_an_error(project) -> None:
    project.write("train.py", LEGACY)
    project.write("pyproject.toml", """
        [tool.torchlint]
        select = []
    """)
    result = project.run("check")
    assert result.returncode == 2
    assert "`select` names no rule" in result.stderr and 'ignore = ["ALL"]' in result.stderr


# --- target-torch --------------------------------------------------------------------

OLD_OPTIMIZER = """
    import torch

    def step(p, g, path):
        p.add_(-0.1, g)
        return torch.load(path)
"""


def test_target_torch_leaves_out_findings_of_later_releases(project) -> None:
    """TL210 holds from torch 1.5 (the overload was deprecated there); TL507 on every release."""
    project.write("opt.py", OLD_OPTIMIZER)
    assert codes(project.findings("--select", "ALL")) == ["TL210", "TL507"]
    assert codes(project.findings("--select", "ALL", "--target-torch", "1.4")) == ["TL507"]
    assert codes(project.findings("--select", "ALL", "--target-torch", "1.5")) == ["TL210", "TL507"]
    project.write("pyproject.toml", '[tool.torchlint]\ntarget-torch = "1.4.1"\n')
    assert codes(project.findings("--select", "ALL")) == ["TL507"]
    assert codes(project.findings("--select", "ALL", "--target-torch", "2.4")) == ["TL210", "TL507"]  # CLI wins


def test_target_torch_only_shows_fixes_that_need_a_later_release(project) -> None:
    """`weights_only=` came in torch 1.13: on 1.10 TL507's fix is shown, never written."""
    path = project.write("opt.py", OLD_OPTIMIZER)
    listed = project.run("check", "--select", "TL507", "--target-torch", "1.10", "--output-format", "json").json()
    assert [item["fix"]["applicability"] for item in listed] == ["display-only"]
    assert "needs torch 1.13, newer than `target-torch`" in listed[0]["fix"]["message"]
    result = project.run("check", "--select", "ALL", "--target-torch", "1.10", "--fix", "--unsafe-fixes")
    assert result.returncode == 1, result.stderr
    assert "weights_only" not in path.read_text() and "p.add_(g, alpha=-0.1)" in path.read_text()
    project.run("check", "--select", "ALL", "--target-torch", "2.4", "--fix", "--unsafe-fixes")
    assert "torch.load(path, weights_only=True)" in path.read_text()


AMP_AND_LINALG = """
    import torch

    def solve(A, b, model, x):
        q, r = torch.qr(A)
        scaler = torch.cuda.amp.GradScaler()
        with torch.cuda.amp.autocast():
            return scaler.scale(model(x)), torch.cuda.memory_cached(), q, r
"""


def test_target_torch_leaves_out_each_api_deprecated_after_it(project) -> None:
    """TL503 covers APIs deprecated in 1.4 (`memory_cached`), 1.9 (`torch.qr`) and 2.4
    (`torch.cuda.amp`): a project on 2.0 sees the first two, on 1.8 only the first, and
    a fix is never written for an API that its target does not deprecate."""
    path = project.write("amp.py", AMP_AND_LINALG)
    rows = lambda *args: [row for _, row, _, _ in project.findings("--select", "TL503", *args)]  # noqa: E731
    assert rows() == [4, 5, 6, 7]
    assert rows("--target-torch", "2.0") == [4, 7]
    assert rows("--target-torch", "1.8") == [7]
    assert rows("--target-torch", "1.3") == []
    cache = ("--cache-dir", str(project.root / ".cache"))
    assert rows(*cache, "--target-torch", "1.8") == [7] and rows(*cache) == [4, 5, 6, 7]
    project.run("check", "--select", "TL503", "--target-torch", "2.0", "--fix")
    fixed = path.read_text()
    assert "torch.cuda.memory_reserved()" in fixed and "torch.cuda.amp.GradScaler()" in fixed
    assert "torch.cuda.amp.autocast()" in fixed
    project.run("check", "--select", "TL503", "--fix")
    fixed = path.read_text()
    assert 'torch.amp.GradScaler("cuda")' in fixed and 'torch.amp.autocast("cuda")' in fixed


def test_target_torch_is_part_of_what_the_cache_remembers(project) -> None:
    project.write("opt.py", OLD_OPTIMIZER)
    cache = ["--cache-dir", str(project.root / ".cache"), "--select", "ALL", "--output-format", "json"]
    assert [item["fix"]["applicability"] for item in project.run("check", *cache).json()
            if item["code"] == "TL507"] == ["unsafe"]
    assert [item["fix"]["applicability"] for item in project.run("check", *cache, "--target-torch", "1.10").json()
            if item["code"] == "TL507"] == ["display-only"]
    assert [item["fix"]["applicability"] for item in project.run("check", *cache).json()
            if item["code"] == "TL507"] == ["unsafe"]


@pytest.mark.parametrize("value", ['"two"', "2.4", '"2"', '"v2.4"'])
def test_a_target_torch_that_is_not_a_release_is_an_error(project, value) -> None:
    project.write("opt.py", OLD_OPTIMIZER)
    project.write("pyproject.toml", f"[tool.torchlint]\ntarget-torch = {value}\n")
    result = project.run("check")
    assert result.returncode == 2
    assert "[tool.torchlint]: `target-torch` must be a torch release such as" in result.stderr
