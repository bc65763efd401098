"""Issue 40, items 7 and 9: gitignore and configuration patterns from the linted repository
are matched as git matches them, in polynomial time, and never stop a run."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

# `a*a*...a*b` against a name of 60 `a`s: a backtracking matcher tries every way of
# sharing the `a`s among the stars (pathspec's `re` took minutes).
BACKTRACKING = "a*" * 30 + "b"
LONG_NAME = "a" * 60 + ".py"
ODD_LINES = ["!", "foo\\", "\\", "[z-a]", "[x.py", "[[:foo:]].py", "!!"]


def listed(project, *args: str) -> list[str]:
    result = project.run("check", "--show-files", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def timed_listing(project) -> tuple[float, list[str]]:
    started = time.monotonic()
    files = listed(project)
    return time.monotonic() - started, files


def test_a_backtracking_gitignore_pattern_takes_no_time(project) -> None:
    project.write(LONG_NAME, "x = 1\n")
    project.write("keep.py", "x = 1\n")
    baseline, _ = timed_listing(project)
    project.write(".gitignore", BACKTRACKING + "\n")
    elapsed, files = timed_listing(project)
    assert files == [LONG_NAME, "keep.py"]
    # What the pattern costs beyond starting torchlint (the run is otherwise the same): a
    # backtracking matcher takes minutes, and a loaded machine varies start-up by a second or two.
    assert elapsed < baseline + 3, (elapsed, baseline)


def test_a_backtracking_exclude_pattern_takes_no_time(project) -> None:
    project.write(LONG_NAME, "x = 1\n")
    project.write(LONG_NAME[:-3] + "b.py", "x = 1\n")
    baseline, _ = timed_listing(project)
    project.write("pyproject.toml", f'[tool.torchlint]\nextend-exclude = ["{BACKTRACKING}*"]\n')
    elapsed, files = timed_listing(project)
    assert files == [LONG_NAME]
    assert elapsed < baseline + 3, (elapsed, baseline)


@pytest.mark.parametrize("line", ODD_LINES)
def test_a_gitignore_line_git_accepts_never_stops_the_run(project, line: str) -> None:
    # In git each of these lines matches none of these files (`[z-a]` is `[z]`, `!!`
    # re-includes files named `!`, the others match nothing); the lines around it apply.
    project.write(".gitignore", f"ignored.py\n{line}\nsub/*.py\n")
    for name in ("foo.py", "ignored.py", "keep.py", "[x.py", "z.py", "sub/a.py"):
        project.write(name, "x = 1\n")
    assert listed(project) == ["[x.py", "foo.py", "keep.py", "z.py"]


@pytest.mark.parametrize(("setting", "pattern", "problem"), [
    ("exclude", "\\\\", "ends with a backslash"),
    ("extend-exclude", "src/[z-a]", "the reversed range `z-a`"),
    ("exclude", "[unterminated", "never closed"),
])
def test_a_pattern_that_matches_nothing_is_a_configuration_error(project, setting, pattern, problem) -> None:
    project.write("a.py", "x = 1\n")
    project.write("pyproject.toml", f'[tool.torchlint]\n{setting} = ["{pattern}"]\n')
    result = project.run("check")
    assert result.returncode == 2
    assert "internal error" not in result.stderr
    assert f"pyproject.toml [tool.torchlint]: `{setting}` pattern " in result.stderr and problem in result.stderr


def test_a_per_file_ignores_pattern_that_matches_nothing_is_a_configuration_error(project) -> None:
    project.write("a.py", "x = 1\n")
    project.write("pyproject.toml", '[tool.torchlint.per-file-ignores]\n"tests\\\\" = ["TL101"]\n')
    result = project.run("check")
    assert result.returncode == 2 and "internal error" not in result.stderr
    assert "`per-file-ignores` pattern 'tests\\\\' ends with a backslash" in result.stderr
    on_the_command_line = project.run("check", "--extend-exclude", "[[:foo:]]")
    assert on_the_command_line.returncode == 2
    assert "the command line: `extend-exclude` pattern '[[:foo:]]' names an unknown character class" \
        in on_the_command_line.stderr


# Patterns compared with git.  Each goes in a .gitignore of its own folder, above the same
# files.  Git before 2.41 backtracks too (`a*a*a*a*a*a*a*a*a*a*b` takes it 100 s), so the
# backtracking pattern is a short one here.  Left out: a literal directly before `**` in a
# pattern with a slash (`sub**/b.py`): git before 2.52 matched it after cutting the
# literal off, which 2.52 fixed.
ORACLE_PATTERNS = [
    *ODD_LINES, "[z-a].py", "a*" * 5 + "b", "*a*a*a*a*a", "a*a*a*a*a*a*", "*.py", "?.py", "??.py", "a*", "*a*.py",
    "[a-c].py", "[!a].py", "[^a].py", "[]a].py", "[[]a].py", "\\[a\\].py", "[[:alpha:]].py", "[[:digit:]-].py",
    "[a-].py", "[\\]].py", "**/b.py", "/**/b.py", "**", "**/", "*/", "/", "sub/", "/sub", "sub", "deep/", "aa/",
    "sub/*", "sub/**", "sub/**/b.py", "sub/**/*", "*/a.py", "/a.py", "a.py/", "**/deep/**", "sub/deep",
    "a.py\n!a.py", "*.py\n!b.py", "sub/\n!sub/a.py", "sub/**\n!sub/deep/", "foo.py   ", "foo.py\\ ",
    "\\!x.py", "\\#x.py", "#x.py", "!x.py", "*.PY", "a.py\r", "sub/deep/", "s*b/d*p/", "a**b.py", "***/b.py",
]
ORACLE_FILES = ["a.py", "b.py", "ab.py", "aab.py", "foo.py", "!x.py", "#x.py", "[a].py", "].py", "-.py", "7.py",
                "z.py", "sub/a.py", "sub/deep/b.py", "aa/a.py", "a" * 20 + "b.py", LONG_NAME]


def git_ignores(root, paths: list[str]) -> set[str]:
    completed = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n"],
                               input="\0".join(paths).encode() + b"\0", capture_output=True, timeout=60)
    fields = completed.stdout.split(b"\0")
    ignored = set()
    for start in range(0, len(fields) - 3, 4):
        source, _line, pattern, path = fields[start:start + 4]
        if source and not pattern.startswith(b"!"):
            ignored.add(path.decode())
    return ignored


@pytest.mark.skipif(shutil.which("git") is None, reason="git decides what is right here")
def test_gitignore_patterns_match_what_git_matches(project) -> None:
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    every = []
    for number, pattern in enumerate(ORACLE_PATTERNS):
        folder = f"case{number:02}"
        project.write(f"{folder}/.gitignore", pattern + "\n")
        for name in ORACLE_FILES:
            project.write(f"{folder}/{name}", "x = 1\n")
            every.append(f"{folder}/{name}")
    kept = sorted(set(every) - git_ignores(project.root, every))
    assert listed(project) == kept


def test_a_search_for_files_made_slow_by_the_repository_stops_at_the_file_timeout(project) -> None:
    """Matching is polynomial, but at Python speed: 4,000 distinct wildcard lines tried on a name
    full of a's cost a fifth of a second (reading them a tenth of that). The search stops at
    --file-timeout with a TL000 where it stopped, and what it found so far is linted. The first
    name has no a, so it is cheap and the search reaches it however slow the machine is; the
    others have no digit, so no line ignores them."""
    project.write(".gitignore", "".join(f"{'*a' * 12}*[{number}]*\n" for number in range(4_000)))
    source = "import torch\nx = torch.zeros(3)\ny = x.data\n"
    project.write("0.py", source)
    letters = "bcdefghijklmnopqrstuvwxyz"
    for name in [first + second for first in letters for second in letters][:120]:
        project.write("a" * 60 + name + ".py", source)
    started = time.monotonic()
    result = project.run("check", "--no-cache", "--output-format", "json", "--file-timeout", "3", ".")
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    codes = [(item["code"], item["message"]) for item in result.json()]
    stopped = [message for code, message in codes if code == "TL000"]
    assert len(stopped) == 1 and "the search for files to lint stopped here after 3 s" in stopped[0], codes
    assert 0 < sum(code == "TL101" for code, _ in codes) < 121, codes
    assert elapsed < 12, elapsed
