"""Output formats, statistics, exit codes and the `rule`/`rules` commands, through the real CLI."""

from __future__ import annotations

import json
import re

from conftest import LEGACY
from torchlint import __version__


def test_full_format_shows_location_source_and_caret(project) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", "train.py")
    assert result.returncode == 1
    out = result.stdout
    assert "train.py:5:5: TL101 `x.data` is an alias autograd does not track; use `x.detach()`" in out
    assert "5 | y = x.data\n" in out
    caret_line = next(line for line in out.splitlines() if line.strip().startswith("|") and "^" in line and "TL101" in line)
    assert caret_line.index("^") - caret_line.index("|") - 2 == 4  # under column 5
    assert caret_line.count("^") == len("x.data")
    assert "= evidence: `x` = `torch.rand(3, requires_grad=True)`, which returns a tensor (line 4)" in out
    assert "\nFound 3 findings in 1 file.\n[*] 2 fixable with the `--fix` option (1 more with `--unsafe-fixes`)." in out


def test_full_format_shows_context_and_the_fix_as_a_diff(project) -> None:
    project.write("train.py", LEGACY)
    out = project.run("check", "train.py", "--select", "TL203").stdout
    assert out.startswith("train.py:8:7: TL203 [*] `loss.data[0]` raises IndexError")
    # two lines of context on each side (the file has 8 lines), then the fix as a diff
    assert "\n6 | loss = (x * 2).sum()\n7 | loss.backward()\n8 | print(loss.data[0])\n  |       ^^^^^^^^^^^^ TL203\n" in out
    assert "  = fix (safe, --fix): Replace with `loss.item()`\n8 - print(loss.data[0])\n8 + print(loss.item())\n" in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_colour_follows_force_color_and_no_color(project) -> None:
    project.write("train.py", LEGACY)
    forced = project.run("check", "train.py", env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[1;31mTL101\x1b[0m" in forced and "\x1b[32m8 + print(loss.item())\x1b[0m" in forced
    concise = project.run("check", "train.py", "--output-format", "concise", env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[1;31mTL203\x1b[0m" in concise
    assert "\x1b[" not in project.run("check", "train.py", env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert "\x1b[" not in project.run("check", "train.py", env={"FORCE_COLOR": "0"}).stdout
    assert "\x1b[" not in project.run("check", "train.py", "--output-format", "json", env={"FORCE_COLOR": "1"}).stdout


def test_concise_format_is_one_line_each(project) -> None:
    project.write("train.py", LEGACY)
    result = project.run("check", "--output-format", "concise", "train.py")
    lines = [line.replace(" [*] ", " ") for line in result.stdout.strip().splitlines()]
    assert "TL203 [*] `loss.data[0]`" in result.stdout  # a safe fix is marked
    assert lines[:3] == [
        "train.py:2:28: TL201 `torch.autograd.Variable` is deprecated: tensors track gradients themselves since PyTorch 0.4; use `torch.Tensor`",
        "train.py:5:5: TL101 `x.data` is an alias autograd does not track; use `x.detach()`",
        "train.py:8:7: TL203 `loss.data[0]` raises IndexError on a 0-dim tensor since PyTorch 0.5; use `loss.item()`",
    ]
    assert lines[3] == "Found 3 findings in 1 file."


def test_json_format_shape(project) -> None:
    path = project.write("train.py", LEGACY)
    result = project.run("check", "--output-format", "json", "train.py")
    assert result.returncode == 1
    items = json.loads(result.stdout)  # nothing but JSON on stdout
    assert [item["code"] for item in items] == ["TL201", "TL101", "TL203"]
    data_read = items[1]
    assert set(data_read) == {"code", "name", "message", "filename", "location", "end_location",
                              "fix", "url", "evidence", "related", "runtime"}
    assert data_read["runtime"] is None  # only `--runtime` runs code
    assert data_read["name"] == "data-read"
    assert data_read["filename"] == str(path)
    assert data_read["location"] == {"row": 5, "column": 5}
    assert data_read["end_location"] == {"row": 5, "column": 11}
    # `y = x.data` keeps the alias in a name: `.detach()` is right, but behaves differently
    # if `y` is later written in place, hence unsafe.
    assert data_read["fix"] == {
        "applicability": "unsafe", "message": "Replace with `x.detach()`",
        "edits": [{"content": "x.detach()", "location": {"row": 5, "column": 5}, "end_location": {"row": 5, "column": 11}}],
    }
    assert data_read["url"].endswith("TL101-data-read.md")
    assert data_read["evidence"] == [
        {"message": "`x` = `torch.rand(3, requires_grad=True)`, which returns a tensor",
         "location": {"row": 4, "column": 5}},
    ]
    scalar = items[2]
    assert scalar["location"] == {"row": 8, "column": 7}
    assert scalar["end_location"] == {"row": 8, "column": 19}
    assert any("0-dimensional" in step["message"] for step in scalar["evidence"])


def test_json_of_a_clean_run_is_an_empty_list(project) -> None:
    project.write("ok.py", "import torch\nx = torch.zeros(2).detach()\n")
    result = project.run("check", "--output-format", "json")
    assert result.returncode == 0
    assert json.loads(result.stdout) == []


def test_statistics_text_and_json(project) -> None:
    project.write("a.py", LEGACY)
    project.write("b.py", "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.data)\n")
    text = project.run("check", "--statistics")
    assert text.returncode == 1
    rows = [re.split(r"\s+", line.strip()) for line in text.stdout.splitlines()[:3]]
    assert rows[0][:2] == ["2", "TL101"] and rows[0][-1] == "data-read"
    assert {row[1] for row in rows[1:]} == {"TL201", "TL203"}
    data = project.run("check", "--statistics", "--output-format", "json")
    rows = json.loads(data.stdout)
    assert [(row["code"], row["name"], row["count"]) for row in rows] == [
        ("TL101", "data-read", 2), ("TL201", "variable-wrap", 1), ("TL203", "data-index-scalar", 1),
    ]
    assert rows[2]["fixable"] is True  # loss.data[0] -> loss.item() is a safe fix


def test_exit_codes(project) -> None:
    project.write("clean.py", "import torch\nprint(torch.zeros(1).detach())\n")
    assert project.run("check", "clean.py").returncode == 0
    project.write("dirty.py", LEGACY)
    assert project.run("check", "dirty.py").returncode == 1
    assert project.run("check", "--exit-zero", "dirty.py").returncode == 0
    assert project.run("check", "--select", "TL999", "dirty.py").returncode == 2
    assert project.run("check", "--output-format", "xml", "dirty.py").returncode == 2
    assert project.run("check", "--no-such-flag").returncode == 2


def test_clean_run_says_so(project) -> None:
    project.write("clean.py", "print('hello')\n")
    result = project.run("check")
    assert result.returncode == 0
    assert result.stdout.strip() == "All checks passed!"


def test_quiet_prints_findings_without_summary(project) -> None:
    project.write("dirty.py", LEGACY)
    result = project.run("check", "--quiet", "--output-format", "concise")
    assert result.returncode == 1
    assert "Found" not in result.stdout
    assert len(result.stdout.strip().splitlines()) == 3
    clean = project.write("sub/clean.py", "x = 1\n")
    quiet_clean = project.run("check", "-q", str(clean))
    assert quiet_clean.returncode == 0 and quiet_clean.stdout == ""


def test_rules_command_lists_every_rule() -> None:
    from conftest import run_torchlint

    result = run_torchlint("rules")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["code", "name", "fix", "default"]
    codes = [line.split()[0] for line in lines[1:]]
    from torchlint.rules import all_rules

    assert codes == ["TL000", *all_rules()]
    assert {"TL101", "TL102", "TL103", "TL201", "TL202", "TL203", "TL204"} <= set(codes)
    data = json.loads(run_torchlint("rules", "--output-format", "json").stdout)
    assert {row["code"]: row["name"] for row in data}["TL102"] == "data-inplace"
    assert all(set(row) == {"code", "name", "fix", "default", "summary"} for row in data)


def test_rule_command_prints_documentation() -> None:
    from conftest import run_torchlint

    by_code = run_torchlint("rule", "TL102")
    by_name = run_torchlint("rule", "data-inplace")
    assert by_code.returncode == 0 and by_code.stdout == by_name.stdout
    assert by_code.stdout.startswith("# TL102 data-inplace")
    assert "## Why is this bad?" in by_code.stdout and "```python" in by_code.stdout
    # Each bad example with its fixed text (TL102's fixes are unsafe).
    assert "Fixed (with `--unsafe-fixes`):\n\n```python\nimport torch\n" in by_code.stdout
    assert "with torch.no_grad():\n    a *= 3\n```" in by_code.stdout
    assert run_torchlint("rule", "TL000").stdout.startswith("# TL000 unlintable-file")
    unknown = run_torchlint("rule", "TL999")
    assert unknown.returncode == 2 and "unknown rule 'TL999'" in unknown.stderr


def test_version() -> None:
    from conftest import run_torchlint

    result = run_torchlint("--version")
    assert result.returncode == 0 and __version__ in result.stdout


def test_default_path_is_the_current_folder(project) -> None:
    project.write("pkg/model.py", LEGACY)
    result = project.run("check", "--output-format", "concise", "-q")
    assert result.stdout.splitlines()[0].startswith("pkg/model.py:2:28: TL201")


def test_output_is_sorted_by_path(project) -> None:
    for name in ("b.py", "a.py", "c/z.py", "c/a.py"):
        project.write(name, "import torch\nw = torch.ones(1, requires_grad=True)\nw.data\n")
    result = project.run("check", "--output-format", "concise", "-q")
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["a.py", "b.py", "c/a.py", "c/z.py"]


def test_linter_never_imports_torch(project) -> None:
    import subprocess
    import sys

    project.write("train.py", LEGACY)
    code = (
        "import sys, runpy\n"
        "sys.argv = ['torchlint', 'check', 'train.py', '-q']\n"
        "try:\n"
        "    runpy.run_module('torchlint', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert not any(m == 'torch' or m.startswith('torch.') for m in sys.modules), 'torch was imported'\n"
        "print('ok')\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True)
    assert completed.stdout.strip().endswith("ok"), completed.stderr


def test_a_crashing_rule_is_an_internal_error_not_a_crash(project) -> None:
    """A bug in one rule becomes TL000 on that file, exit status 2, and the traceback on
    stderr; the other rules and files are still checked."""
    from conftest import run_with_crashing_rule

    project.write("a.py", LEGACY)
    project.write("b.py", "import torch\nprint(torch.ones(1, requires_grad=True).data)\n")
    completed = run_with_crashing_rule(project.root, "--output-format", "concise", "-q")
    assert completed.returncode == 2
    assert "internal error in rule TL999 while linting a.py: ValueError: boom" in completed.stderr
    assert "a.py:1:1: TL000 a.py was not linted: internal error in rule TL999: ValueError: boom" in completed.stdout
    assert "b.py:2:7: TL101" in completed.stdout


def _with_stderr_on_a_terminal(project, *args: str) -> tuple[str, bytes]:
    """Run torchlint with standard output a pipe and standard error a pseudo-terminal,
    read as it is written (a full terminal buffer would stop the writer)."""
    import os
    import pty
    import subprocess
    import sys
    import threading

    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("GITHUB_ACTIONS", "FORCE_COLOR", "NO_COLOR")}
    environment["TERM"] = "xterm"
    seen = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    completed = subprocess.run([sys.executable, "-m", "torchlint", *args], cwd=project.root, stdout=subprocess.PIPE,
                               stderr=follower, env=environment, timeout=300)
    os.close(follower)
    reader.join(10)
    os.close(leader)
    return completed.stdout.decode(), bytes(seen)


def test_a_plain_check_of_many_files_shows_progress_on_a_terminal(project) -> None:
    for index in range(220):
        project.write(f"pkg/m{index}.py", "import torch\nx = torch.ones(1)\n")
    stdout, terminal = _with_stderr_on_a_terminal(project, "check", "--isolated", "--no-cache", "-j1", ".")
    assert stdout == "All checks passed!\n"  # the findings' output is untouched
    assert b"torchlint: 220 of 220 files" in terminal and terminal.endswith(b"\r\x1b[K")
    _, quiet_terminal = _with_stderr_on_a_terminal(project, "check", "--isolated", "--no-cache", "-q", ".")
    assert b"files" not in quiet_terminal
    # Standard error a pipe (CI logs): no progress line.
    assert project.run("check", "--isolated", "--no-cache", ".").stderr == ""


def test_watch_lints_again_when_a_file_changes(project) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    path = project.write("train.py", LEGACY)
    environment = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "NO_COLOR")}
    # Standard error goes to a file: a pipe nobody reads could fill and block the watcher,
    # and the file says where it was if it does not stop.
    errors = open(project.root / "watch-stderr.txt", "w+")  # not a file it lints
    # Ctrl-C reaches a program started from a terminal; a test run in the background
    # (`.ci/run &`) ignores SIGINT, and its children would inherit that.
    process = subprocess.Popen([sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache",
                                "--output-format", "concise", "--watch"], cwd=project.root, env=environment,
                               stdout=subprocess.PIPE, stderr=errors, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        lines = []

        def wait_for(text: str) -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = process.stdout.readline()
                lines.append(line)
                if text in line:
                    return
            raise AssertionError(f"{text!r} never came: {lines}")

        wait_for("Found 3 findings in 1 file.")
        time.sleep(0.6)
        path.write_text(LEGACY.replace("print(loss.data[0])", "print(loss.item())"))
        wait_for("Found 2 findings in 1 file.")
        project.write("pyproject.toml", '[tool.torchlint]\nselect = ["TL203"]\n')  # ignored: --isolated
        project.write("clean.py", "import torch\n")  # a new file is a change too
        wait_for("Found 2 findings in 1 file.")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            errors.seek(0)
            raise AssertionError(f"--watch did not stop on Ctrl-C; its standard error: {errors.read()[-3000:]}")
        finally:
            errors.close()
    assert code == 0
    assert project.run("check", "--watch", "--fix").returncode == 2

