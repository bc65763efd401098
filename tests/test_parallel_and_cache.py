"""`--jobs` and the cache change how fast findings come, never which: the same output
with one process or two, with the cache cold, warm, shared, corrupted or off; and a
cached result is not reused once a file it depends on has changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from torchlint.engine.cache import FORMAT

from conftest import FIXTURES, LEGACY, Project, run_torchlint

JSON = ("--output-format", "json", "--select", "ALL")


def _copy_fixtures(tmp_path: Path) -> Path:
    target = tmp_path / "code"
    shutil.copytree(FIXTURES, target)
    (target / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    return target


def _check(cwd: Path, *args: str) -> str:
    result = run_torchlint("check", *JSON, *args, ".", cwd=cwd)
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_findings_are_identical_with_and_without_cache_and_with_one_or_two_jobs(tmp_path) -> None:
    code = _copy_fixtures(tmp_path)
    cache = str(tmp_path / "cache")
    reference = _check(code, "--jobs", "1", "--no-cache")
    assert len(json.loads(reference)) > 200
    assert _check(code, "--jobs", "2", "--no-cache") == reference
    assert _check(code, "--jobs", "2", "--cache-dir", cache) == reference  # cold: fills the cache
    assert any((tmp_path / "cache").rglob("*")), "nothing was cached"
    assert _check(code, "--jobs", "2", "--cache-dir", cache) == reference  # warm
    assert _check(code, "--jobs", "1", "--cache-dir", cache) == reference
    assert not (code / ".torchlint_cache").exists()  # --cache-dir and --no-cache were obeyed


def test_source_lines_are_shown_the_same_with_one_or_two_jobs_and_from_the_cache(tmp_path) -> None:
    code = _copy_fixtures(tmp_path)
    cache = str(tmp_path / "cache")
    for output_format in ("full", "sarif"):
        def check(*args: str) -> str:
            result = run_torchlint("check", "--select", "ALL", "--output-format", output_format, *args, ".", cwd=code)
            assert result.returncode == 1, result.stderr
            return result.stdout

        reference = check("--jobs", "1", "--no-cache")
        assert check("--jobs", "2", "--no-cache") == reference
        assert check("--jobs", "2", "--cache-dir", cache + output_format) == reference  # cold
        assert check("--jobs", "2", "--cache-dir", cache + output_format) == reference  # warm
        if output_format == "full":
            assert "11 | x.data *= 10\n" in reference  # fixtures/TL102-data-inplace/bad_silent_wrong_gradient.py


def test_a_report_holds_the_lines_it_shows_not_the_whole_file(tmp_path) -> None:
    from torchlint.rules import all_rules
    from torchlint.engine import batch

    path = tmp_path / "a.py"
    path.write_text("# a comment\n" * 500 + LEGACY, encoding="utf-8")
    job = batch.Job(path, "a.py", tuple(all_rules()), (tmp_path,))
    for workers in (1, 2):
        [(report, _)] = batch.run([job, job], workers)[:1]
        assert report.source is None
        # The findings' lines with two lines of context each, their notes' and their fixes'.
        rows = {row for d in report.diagnostics
                for row in (*range(d.row - 2, d.end_row + 3), *(note.row for note in (*d.evidence, *d.related)),
                            *(edit[i] for edit in d.fix_edits for i in (0, 2)))}
        rows &= set(range(1, path.read_text().count("\n") + 2))  # the empty line after the last break too
        assert set(report.shown_lines) == rows and 400 not in rows
        assert all(report.line(row) == path.read_text().split("\n")[row - 1] for row in rows)
    [(kept, _)] = batch.run([job], 1, keep_source=True)
    assert kept.source is not None and kept.source.text == path.read_text()


def test_what_the_project_records_for_the_cache_does_not_grow_with_the_files_linted(tmp_path) -> None:
    from torchlint.analysis.project import Project
    from torchlint.rules import all_rules
    from torchlint.engine import batch

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    project = Project(cache_characters=100)  # room for one small module
    for number in range(30):
        (tmp_path / f"helper{number}.py").write_text("import torch\n\ndef make():\n    return torch.ones(2)\n",
                                                     encoding="utf-8")
        path = tmp_path / f"m{number}.py"
        path.write_text(f"from missing{number} import f\nfrom helper{number} import make\nx = make()\ny = x.data\n",
                        encoding="utf-8")
        job = batch.Job(path, path.name, tuple(all_rules()), project.roots_for(path))
        report, _ = batch.lint_job(job, None, tmp_path / "cache", project)
        assert [d.code for d in report.diagnostics] == ["TL101"]  # found through helper<number>.py
        assert len(project._absent) <= 1 and len(project._looked_into) <= 1 and len(project._digests) <= 1


_KILLING_RULE = """\
import os, signal, sys
from torchlint.framework import catalogue, rule
from torchlint.integrations.cli import main
class Killer(rule.Rule):
    code, name, summary, message, docs = 'TL998', 'killer', 's', 'm', 'd'
    def visit_Call(self, node):
        if self.ctx.path == 'die.py':
            os.kill(os.getpid(), signal.SIGKILL)
import torchlint.rules
torchlint.rules.all_rules()['TL998'] = Killer
catalogue.RULES['TL998'] = catalogue.RuleInfo('TL998', 'killer', None, True)
sys.argv = ['torchlint', 'check', *sys.argv[1:]]
main()
"""


def test_a_worker_that_dies_costs_only_the_file_it_was_linting(project: Project) -> None:
    for name in ("a.py", "die.py", "b.py", "c.py"):
        project.write(name, LEGACY)
    completed = subprocess.run([sys.executable, "-c", _KILLING_RULE, "--jobs", "2", "--no-cache",
                                "--output-format", "concise", "."],
                               cwd=project.root, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 2, completed.stderr
    lines = completed.stdout.splitlines()
    assert "die.py:1:1: TL000 die.py was not linted: internal error: the worker process linting this file " \
           "was killed by SIGKILL (the system may have run out of memory) (please report this)" in lines
    for name in ("a.py", "b.py", "c.py"):  # linted again, each in a fresh worker if need be
        assert {line.split(": ")[1].split()[0] for line in lines if line.startswith(name + ":")} \
            == {"TL101", "TL201", "TL203"}, completed.stdout
    assert "internal error: the worker process linting this file was killed by SIGKILL" in completed.stderr


def test_clean_removes_what_torchlint_wrote_and_nothing_else(project: Project) -> None:
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['ALL']\n")
    project.write("pkg/a.py", LEGACY)
    assert project.run("check", "-q", cwd=project.root / "pkg").returncode == 1
    cache = project.root / ".torchlint_cache"
    mine = project.write(".torchlint_cache/notes.txt", "mine")
    cleaned = project.run("clean", cwd=project.root / "pkg")  # the cache beside the configuration
    assert cleaned.returncode == 0, cleaned.stderr
    assert "Removed 1 cached result from" in cleaned.stdout
    assert sorted(path.name for path in cache.iterdir()) == ["notes.txt"] and mine.read_text() == "mine"
    mine.unlink()
    assert project.run("check", "-q", cwd=project.root / "pkg").returncode == 1
    assert project.run("clean", cwd=project.root).returncode == 0
    assert not cache.exists()
    assert project.run("clean").stdout.startswith("No cache at")
    other = project.write("elsewhere/v1-abc/data", "not a cache")
    refused = project.run("clean", "--cache-dir", str(project.root / "elsewhere"))
    assert refused.returncode == 2 and "is not torchlint's cache" in refused.stderr
    assert other.read_text() == "not a cache"


def test_the_cache_lives_beside_the_configuration_by_default(project: Project) -> None:
    project.write("pyproject.toml", "[tool.torchlint]\nselect = ['ALL']\n")
    project.write("pkg/a.py", LEGACY)
    first = project.run("check", "--output-format", "concise", cwd=project.root / "pkg")
    assert first.returncode == 1
    assert (project.root / ".torchlint_cache" / "CACHEDIR.TAG").is_file()
    assert not (project.root / "pkg" / ".torchlint_cache").exists()
    second = project.run("check", "--output-format", "concise", cwd=project.root / "pkg")
    assert second.stdout == first.stdout


def test_fixing_with_two_jobs_writes_the_same_files_as_one(tmp_path) -> None:
    one = _copy_fixtures(tmp_path / "one")
    two = _copy_fixtures(tmp_path / "two")
    for folder, jobs in ((one, "1"), (two, "2")):
        result = run_torchlint("check", "--fix", "--unsafe-fixes", "--no-cache", "--jobs", jobs,
                               "--output-format", "concise", ".", cwd=folder)
        assert result.returncode in (0, 1), result.stderr
        assert "Fixed" in result.stdout or "fixed" in result.stdout
    files = sorted(path.relative_to(one) for path in one.rglob("*.py"))
    changed = [f for f in files if (one / f).read_bytes() != (FIXTURES / f).read_bytes()]
    assert len(changed) > 20
    for relative in files:
        assert (one / relative).read_bytes() == (two / relative).read_bytes(), relative


def test_a_cached_result_is_dropped_when_an_imported_module_changes(project: Project) -> None:
    project.write("pyproject.toml", "[project]\nname = 'x'\n")
    project.write("util.py", "import torch\n\ndef make():\n    return torch.ones(3)\n")
    project.write("a.py", "from util import make\n\nw = make()\nw.data.add_(1)\nprint(w)\n")
    assert project.findings() == [("a.py", 4, 1, "TL102")]
    assert project.findings() == [("a.py", 4, 1, "TL102")]  # from the cache
    project.write("util.py", "def make():\n    return [1.0, 2.0]\n")  # a.py itself is unchanged
    assert project.findings() == []
    assert project.findings() == project.findings("--no-cache") == []


def test_a_cached_result_is_dropped_when_a_missing_module_appears(project: Project) -> None:
    project.write("pyproject.toml", "[project]\nname = 'x'\n")
    project.write("b.py", "from helper import build\n\nv = build()\nv.data.add_(1)\nprint(v)\n")
    assert project.findings() == []
    project.write("helper.py", "import torch\n\ndef build():\n    return torch.zeros(2)\n")
    assert project.findings() == [("b.py", 4, 1, "TL102")]


def test_a_changed_selection_or_file_is_not_served_from_the_cache(project: Project) -> None:
    path = project.write("a.py", LEGACY)
    assert {code for *_, code in project.findings()} == {"TL101", "TL201", "TL203"}
    assert {code for *_, code in project.findings("--select", "TL101")} == {"TL101"}
    assert {code for *_, code in project.findings("--ignore", "TL101")} == {"TL201", "TL203"}
    path.write_text(LEGACY.replace("y = x.data\n", "y = x.detach()\n"), encoding="utf-8")
    assert {code for *_, code in project.findings()} == {"TL201", "TL203"}


def test_corrupted_cache_entries_are_ignored_and_rebuilt(tmp_path) -> None:
    code = _copy_fixtures(tmp_path)
    cache = tmp_path / "cache"
    reference = _check(code, "--cache-dir", str(cache))
    entries = [path for path in cache.rglob("*") if path.is_file() and path.parent != cache]
    assert len(entries) > 50
    for number, entry in enumerate(entries):
        data = entry.read_bytes()
        damaged = [data[: len(data) // 2], b"\x00\xff garbage", b"{}", b'{"format": %d, "report": 3}' % FORMAT,
                   data.replace(b'"range":[', b'"range":["x",')][number % 5]
        entry.write_bytes(damaged)
    assert _check(code, "--cache-dir", str(cache)) == reference
    for entry in entries:  # rewritten whole
        assert json.loads(entry.read_bytes().partition(b"\n")[2])["format"] == FORMAT
    assert _check(code, "--cache-dir", str(cache)) == reference


def test_two_runs_can_share_one_cache(tmp_path) -> None:
    code = _copy_fixtures(tmp_path)
    reference = _check(code, "--no-cache")
    command = [sys.executable, "-m", "torchlint", "check", *JSON, "--cache-dir", str(tmp_path / "cache"), "."]
    for _ in range(2):
        runs = [subprocess.Popen(command, cwd=code, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
        outputs = [run.communicate(timeout=300) for run in runs]
        for run, (stdout, stderr) in zip(runs, outputs):
            assert run.returncode == 1, stderr.decode()
            assert stdout.decode() == reference
    leftovers = [path.name for path in (tmp_path / "cache").rglob("*.torchlint-tmp")]
    assert leftovers == []


_IMPORTS_AT_EXIT = """
import atexit, sys
atexit.register(lambda: sys.stderr.write(
    "\\nparser imported: %s, libcst imported: %s\\n" % ("torchlint.syntax.cst" in sys.modules, "libcst" in sys.modules)))
from torchlint.integrations.cli import main
sys.argv = ["torchlint", "check", *sys.argv[1:]]
main()
"""


def test_a_warm_run_does_not_import_the_parser(tmp_path) -> None:
    code = _copy_fixtures(tmp_path)
    command = [sys.executable, "-c", _IMPORTS_AT_EXIT, "--cache-dir", str(tmp_path / "cache"), "."]
    cold = subprocess.run(command, cwd=code, capture_output=True, text=True)
    warm = subprocess.run(command, cwd=code, capture_output=True, text=True)
    assert cold.returncode == warm.returncode == 1
    assert "parser imported: True, libcst imported: False" in cold.stderr  # libcst: only where the fast tree cannot be built
    assert "parser imported: False, libcst imported: False" in warm.stderr
    assert warm.stdout == cold.stdout
    assert "TL102" in warm.stdout


def test_a_file_no_rule_can_match_is_still_checked_for_syntax(project: Project) -> None:
    """The text pre-scan skips building a tree for a file no selected rule could match,
    but a file that is not Python is still reported."""
    project.write("clean.py", "def f(a, b):\n    return a * b\n")
    project.write("broken.py", "def f(:\n    return 1\n")
    result = project.run("check", "--select", "TL202", "--output-format", "concise", "--no-cache")
    assert result.returncode == 1
    assert "broken.py:1:7: TL000" in result.stdout
    assert "clean.py" not in result.stdout


def test_rule_prescan_patterns_hold_for_every_documented_example() -> None:
    """Each rule's ``requires`` must be found in every example it flags (otherwise the
    pre-scan would hide a finding)."""
    from torchlint.rules import all_rules

    for rule in all_rules().values():
        assert rule.bad, rule.code
        for example in rule.bad:
            assert rule.may_match(example.source), (rule.code, example)
