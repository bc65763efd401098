"""Hardening, second campaign (issue 40), the output doors: what the linted repository
or a job prints reaches a terminal or a CI log escaped, in every format; `--watch` runs
nothing of the repository; standard input and `-o` within bounds."""

from __future__ import annotations

import json
import os
import re
import resource
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from importlib.util import find_spec
from pathlib import Path

import pytest

from conftest import LEGACY, REPO, Project

needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")

ALIAS = "import torch\nx = torch.zeros(3)\ny = x.data\n"
# A file name can hold anything but "/" and NUL: cursor up and erase, a bell, CSI as C1,
# line breaks, a GitHub annotation and mask, Azure's and GitHub's "##" commands.
HOSTILE = ("\x1b[60A\x1b[J\x07\r\n::error file=ok.py,line=1::forged\n  ::add-mask::x\n"
           "##vso[task.setvariable variable=X]1 ##[error]y \x9b2J.py")
# Only the line breaks of the output itself, and tabs (--statistics) may be raw.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FORMATS = ("full", "concise", "grouped", "pylint", "github", "azure", "junit", "json", "json-lines", "sarif",
           "gitlab", "rdjson")


def assert_no_command_or_control(text: str, own_prefix: str = "", own: int = 0) -> None:
    """No raw control character; no line a CI runner would obey, but the tool's ``own``
    annotations (lines starting with ``own_prefix``)."""
    assert not RAW_CONTROL.search(text), sorted(set(RAW_CONTROL.findall(text)))
    lines = text.splitlines()
    ours = [line for line in lines if own_prefix and line.startswith(own_prefix)]
    assert len(ours) == own, ours
    for line in lines:
        rest = line[len(own_prefix):] if own_prefix and line.startswith(own_prefix) else line
        assert not rest.lstrip().startswith("::") or line in ours, line
        assert "##[" not in rest and "##vso[" not in rest.lower(), line


@pytest.fixture
def hostile(project: Project) -> Project:
    project.write(HOSTILE, ALIAS)
    project.write("ok.py", ALIAS)
    return project


@pytest.mark.parametrize("output_format", FORMATS)
def test_a_hostile_file_name_is_escaped_in_every_format(hostile: Project, output_format: str) -> None:
    result = hostile.run("check", "--isolated", "--no-cache", "--output-format", output_format, ".")
    assert result.returncode == 1, result.stderr
    own = {"github": "::error file=", "azure": "##vso[task.logissue type=error;"}.get(output_format, "")
    assert_no_command_or_control(result.stdout, own, 2 if own else 0)
    assert_no_command_or_control(result.stderr)
    if output_format in ("json", "json-lines", "gitlab", "rdjson"):
        # Structured: the name itself is carried whole, as escapes that decode to it.
        documents = [json.loads(line) for line in result.stdout.splitlines()] if output_format == "json-lines" \
            else [json.loads(result.stdout)]
        assert any(text.endswith(HOSTILE) for text in strings(documents))
    elif output_format == "sarif":
        json.loads(result.stdout)
    elif output_format == "junit":
        ET.fromstring(result.stdout.split("\n", 1)[1])  # well-formed XML 1.0
    assert "ok.py" in result.stdout
    assert result.stdout.count("TL101") >= 2  # the real findings, both files'


def strings(value) -> list[str]:
    """Every string in a decoded JSON document."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [text for item in items for text in strings(item)]


def test_github_annotations_still_name_a_file_with_a_line_break(hostile: Project) -> None:
    """GitHub's own escaping (%0A) carries a line break in a property: the annotation names
    the real file; the ESC and C1 characters it cannot carry are shown as escapes."""
    result = hostile.run("check", "--isolated", "--no-cache", "--output-format", "github", ".")
    files = sorted(re.findall(r"^::error file=([^,]*),", result.stdout, re.MULTILINE))
    assert files[1] == "ok.py"
    assert "%0D%0A%3A%3Aerror file=ok.py%2Cline=1%3A%3Aforged%0A" in files[0]
    assert files[0].startswith("\\x1b[60A\\x1b[J\\x07")


def test_file_names_on_other_outputs_are_escaped(hostile: Project) -> None:
    """--show-files, --statistics, --diff and --show-fixes print names (or rule names) too."""
    for arguments in (("--show-files",), ("--statistics",), ("--diff", "--unsafe-fixes")):
        result = hostile.run("check", "--isolated", "--no-cache", *arguments, ".")
        assert result.returncode in (0, 1), result.stderr
        assert_no_command_or_control(result.stdout)
        assert_no_command_or_control(result.stderr)
        assert "ok.py" in result.stdout or "TL101" in result.stdout
    result = hostile.run("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--show-fixes", ".")
    assert "ok.py" in result.stdout
    assert_no_command_or_control(result.stdout)


def test_an_error_naming_a_hostile_path_is_escaped_on_standard_error(project: Project) -> None:
    folder = "\x1b]0;owned\x07\n::error::forged"
    project.write(f"{folder}/pyproject.toml", "[tool.torchlint]\nselect = 3\n")
    project.write(f"{folder}/a.py", ALIAS)
    result = project.run("check", "--no-cache", folder)
    assert result.returncode == 2 and "torchlint: error:" in result.stderr, result.stderr
    assert "pyproject.toml" in result.stderr
    assert_no_command_or_control(result.stderr)


def test_source_lines_with_commands_are_not_obeyed(project: Project) -> None:
    """A line of the linted file, shown in context, is a line of the CI log too."""
    project.write("cmd.py", 'import torch\nx = torch.zeros(3)\ny = x.data  # ##vso[task.setvariable variable=A]b\n'
                            'print("##[error]forged")\n')
    result = project.run("check", "--isolated", "--no-cache", ".")
    assert result.returncode == 1 and "TL101" in result.stdout
    assert_no_command_or_control(result.stdout)
    assert "y = x.data  # #\ufffdvso[task.setvariable variable=A]b" in result.stdout


@needs_torch
def test_an_entry_programs_exception_and_output_are_escaped(project: Project) -> None:
    """The type name, message, traceback and output of an --entry program that fails
    reach standard error without terminal escapes or workflow commands."""
    project.write("model.py", "import torch\n\n\ndef step(w):\n    loss = (w * 2).sum()\n    loss.backward()\n"
                              "    return loss.data[0]\n")
    project.write("evil.py", 'print("starting\\x1b]0;owned\\x07")\nprint("::add-mask::secret")\n'
                             'Bad = type("Oops\\x1b]0;title\\x07\\n::add-mask::x", (Exception,), {})\n'
                             'raise Bad("message \\x1b]0;title\\x07\\n::add-mask::y")\n')
    result = project.run("check", "--runtime", "--entry", "evil.py", "model.py")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--entry evil.py failed: it raised Oops\\x1b]0;title\\x07\\n::add-mask::x: message" in result.stderr
    assert "\\x3a:add-mask::secret" in result.stderr  # its output, escaped
    assert_no_command_or_control(result.stderr)
    assert_no_command_or_control(result.stdout)
    assert "TL" in result.stdout and "Runtime check:" in result.stdout


# -- --watch runs nothing of the repository -------------------------------------------------

SHADOWS = ("torchlint.py", "torchlint/__init__.py", "torchlint/__main__.py", "tokenize.py", "click.py")
# The watcher as a user starts it (a console script): the working folder is not on sys.path.
LAUNCHER = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'torchlint'; "
            "from torchlint.integrations.cli import main; main()")


def test_watch_never_imports_the_linted_folders_modules(project: Project, tmp_path_factory) -> None:
    markers = tmp_path_factory.mktemp("markers")
    for index, name in enumerate(SHADOWS):
        project.write(name, f"open({str(markers / str(index))!r}, 'w').close()\n")
    path = project.write("train.py", LEGACY)
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("FORCE_COLOR", "NO_COLOR", "GITHUB_ACTIONS")}
    errors = open(project.root.parent / f"{project.root.name}-watch-stderr.txt", "w+")
    process = subprocess.Popen([sys.executable, "-I", "-c", LAUNCHER, str(REPO), "check", "--isolated",
                                "--no-cache", "--output-format", "concise", "--watch"],
                               cwd=project.root, env=environment, stdout=subprocess.PIPE, stderr=errors, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    seen: list[str] = []

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert not any(markers.iterdir()), f"the repository's code ran: {sorted(os.listdir(markers))}"
            try:
                seen.append(lines.get(timeout=0.5))
            except queue.Empty:
                continue
            if text in seen[-1]:
                return
        raise AssertionError(f"{text!r} never came: {seen}")

    try:
        wait_for("Found 3 findings in 1 file.")
        time.sleep(0.6)  # past the watcher's first look at the files
        path.write_text(LEGACY.replace("print(loss.data[0])", "print(loss.item())"))
        wait_for("Found 2 findings in 1 file.")
    finally:
        code = interrupted(process)
        errors.seek(0)
        stderr = errors.read()
        errors.close()
    assert code == 0, stderr
    assert not any(markers.iterdir()), sorted(os.listdir(markers))
    assert stderr.count("torchlint: checking") == 2, stderr


def interrupted(process: subprocess.Popen) -> int:
    """Ctrl-C to ``process``; its exit status (killed if it does not end in 30 s)."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


# -- standard input: at most a file's size ----------------------------------------------------

def _memory_cap() -> None:
    """preexec_fn: 1 GiB of address space, so that reading all of an endless input fails fast."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("fix", [False, True])
def test_endless_standard_input_is_read_only_up_to_the_file_limit(project: Project, fix: bool) -> None:
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("FORCE_COLOR", "NO_COLOR", "GITHUB_ACTIONS")}
    arguments = ["check", "--isolated", "--no-cache", "--output-format", "concise", *(["--fix"] if fix else []), "-"]
    with open("/dev/zero", "rb") as endless:
        completed = subprocess.run([sys.executable, "-m", "torchlint", *arguments], cwd=project.root, stdin=endless,
                                   capture_output=True, text=True, env=environment, timeout=120,
                                   preexec_fn=_memory_cap)
    assert "internal error" not in completed.stderr and "MemoryError" not in completed.stderr, completed.stderr
    if fix:  # the output would be the source: there is none to print
        assert completed.returncode == 2 and completed.stdout == ""
        assert "standard input is larger than 10 MiB" in completed.stderr
    else:
        assert completed.returncode == 1, completed.stderr
        assert completed.stdout.startswith("-:1:1: TL000 - was not linted: standard input is too large (over 10 MiB")


def test_standard_input_at_the_limit_is_linted(project: Project) -> None:
    source = ALIAS.encode() + b"#" * (10 * 1024 * 1024 - len(ALIAS) - 1) + b"\n"
    result = project.run("check", "--isolated", "--no-cache", "--output-format", "concise", "-", stdin=source)
    assert result.returncode == 1 and "TL101" in result.stdout and "too large" not in result.stdout


# -- -o: the whole report, or the earlier one untouched -------------------------------------------

FULL_DISK = r"""
set -u
mount -t tmpfs -o size=64k tmpfs "$DISK" || exit 77
printf 'the earlier report\n' > "$DISK/report.txt"
cat /dev/zero > "$DISK/filler" 2>/dev/null
"$PYTHON" -m torchlint check --isolated --no-cache -o "$DISK/report.txt" "$PROJECT" 2> "$ERRORS"
echo "status=$?"
cat "$DISK/report.txt"
ls -a "$DISK"
"""


def test_output_file_on_a_full_disk_is_an_error_and_the_earlier_report_stays(project: Project, tmp_path_factory) \
        -> None:
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to mount a small file system in a namespace of the test's own")
    for index in range(40):
        project.write(f"m{index}.py", LEGACY)  # a report of a few kilobytes
    disk = tmp_path_factory.mktemp("disk")
    errors = disk.parent / f"{disk.name}-stderr.txt"
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("FORCE_COLOR", "NO_COLOR", "GITHUB_ACTIONS")}
    environment.update(DISK=str(disk), PYTHON=sys.executable, PROJECT=str(project.root), ERRORS=str(errors))
    completed = subprocess.run(["unshare", "--mount", "--map-root-user", "sh", "-c", FULL_DISK], cwd=project.root,
                               env=environment, capture_output=True, text=True, timeout=180)
    if completed.returncode == 77 or "status=" not in completed.stdout:
        pytest.skip(f"cannot mount a small tmpfs here: {completed.stderr.strip()[-300:]}")
    stderr = errors.read_text()
    assert "status=2" in completed.stdout, completed.stdout + stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert "--output-file" in stderr and "cannot write the report" in stderr, stderr
    listing = completed.stdout.split("status=2\n", 1)[1]
    assert listing.startswith("the earlier report\n"), listing  # whole, not truncated
    assert "torchlint-tmp" not in listing  # no temporary file left beside it


def test_output_file_is_replaced_whole_and_special_files_still_work(project: Project) -> None:
    project.write("a.py", LEGACY)
    report = project.root / "report.json"
    report.write_text("old")
    report.chmod(0o640)
    result = project.run("check", "--isolated", "--no-cache", "--output-format", "json", "-o", str(report), "a.py")
    assert result.returncode == 1 and result.stdout == "", result.stderr
    assert len(json.loads(report.read_text())) == 3
    assert report.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(project.root)) == ["a.py", "report.json"]
    link = project.root / "link.json"
    link.symlink_to(report)
    assert project.run("check", "--isolated", "--no-cache", "-o", str(link), "a.py").returncode == 1
    assert link.is_symlink() and "Found 3 findings" in report.read_text()  # written through the link
    assert project.run("check", "--isolated", "--no-cache", "-o", os.devnull, "a.py").returncode == 1
    assert Path(os.devnull).is_char_device()
