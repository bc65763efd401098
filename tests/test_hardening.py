"""No file stops a run: hostile inputs through the real CLI (issue "Hardening").

Every case here crashed, hung or misbehaved before: a codec that raises a bare
UnicodeError, a file name that is not UTF-8, a FIFO named `x.py`, a file that takes
forever or all the memory, a kill in the middle of `--fix`, an edited cache entry, a
second byte-order mark, a default dtype the fix ignored.  Each must now be that file's
TL000 (or its right answer) while the other files are linted as usual, and an error
inside torchlint must exit 2, never 1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from conftest import LEGACY, Project, run_torchlint

GOOD = "import torch\nx = torch.zeros(3)\ny = x.data\n"  # one TL101 at 3:5
JOBS = pytest.mark.parametrize("jobs", ["1", "2"])


def by_file(result) -> dict[str, list[tuple[str, str]]]:
    """{file name: [(code, message)]} from JSON output."""
    found: dict[str, list[tuple[str, str]]] = {}
    for item in result.json():
        found.setdefault(Path(item["filename"]).name, []).append((item["code"], item["message"]))
    return found


def script(project: Project, code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `torchlint check ARGS` from a Python script that first runs ``code`` (to patch it)."""
    source = textwrap.dedent(code) + "\nimport sys\nfrom torchlint.integrations.cli import main\n" \
                                     "sys.argv = ['torchlint', 'check', *sys.argv[1:]]\nmain()\n"
    return subprocess.run([sys.executable, "-c", source, *args], cwd=project.root, capture_output=True,
                          text=True, timeout=timeout)


# --- 2. one file must not stop the run, and a crash is exit 2 ------------------------------------

@pytest.mark.parametrize("codec", ["undefined", "punycode", "rot13", "hex"])
@JOBS
def test_a_codec_that_fails_in_any_way_is_that_files_tl000(project, codec, jobs) -> None:
    project.write("cookie.py", f"# coding: {codec}\nimport torch\nx = torch.zeros(3)\ny = x.data\n")
    project.write("good.py", GOOD)
    result = project.run("check", "--no-cache", "--jobs", jobs, "--output-format", "json", ".")
    assert result.returncode == 1, result.stderr
    found = by_file(result)
    assert found["good.py"] == [("TL101", found["good.py"][0][1])]
    [(code, message)] = found["cookie.py"]
    assert code == "TL000" and codec in message, message


def test_standard_input_with_a_failing_codec(project) -> None:
    result = project.run("check", "--output-format", "json", "-", stdin=b"# coding: undefined\nimport torch\n")
    assert result.returncode == 1, result.stderr
    [item] = result.json()
    assert item["code"] == "TL000" and "undefined" in item["message"]


@pytest.mark.parametrize("output_format", ["full", "concise", "json", "json-lines", "sarif", "github", "junit"])
def test_a_file_name_that_is_not_utf8_is_linted_and_shown_in_every_format(project, output_format) -> None:
    name = os.fsdecode(b"bad\xffname.py")
    project.write(name, GOOD)
    project.write("good.py", GOOD)
    result = run_torchlint("check", "--no-cache", "--output-format", output_format, ".", cwd=project.root)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    if output_format in ("full", "concise", "github"):
        assert "bad\\xffname.py" in result.stdout
    elif output_format == "json":
        files = {os.fsencode(item["filename"]) for item in result.json()}  # lossless for Python
        assert str(project.root / "bad").encode() + b"\xffname.py" in files
    elif output_format == "json-lines":
        assert len(result.stdout.splitlines()) == 2
    elif output_format == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(result.stdout)["runs"][0]["results"]}
        assert uris & {"bad%FFname.py"} or any(uri.endswith("bad%FFname.py") for uri in uris), uris
    else:
        ElementTree.fromstring(result.stdout)


def test_an_error_inside_torchlint_anywhere_exits_2_not_1(project) -> None:
    project.write("good.py", GOOD)
    completed = script(project, """
        import torchlint.output.report
        def broken(reports, out):
            raise RuntimeError("a bug in an output writer")
        torchlint.output.report.WRITERS["concise"] = broken
    """, "--no-cache", "--output-format", "concise", ".")
    assert completed.returncode == 2, completed.stderr
    assert "torchlint: internal error: RuntimeError: a bug in an output writer (please report this)" \
        in completed.stderr


def test_two_byte_order_marks_are_refused_as_python_refuses_them(project) -> None:
    path = project.write("bom.py", b"\xef\xbb\xbf\xef\xbb\xbf" + GOOD.encode())
    ran = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert ran.returncode != 0 and "U+FEFF" in ran.stderr
    result = project.run("check", "--output-format", "json", ".")
    [item] = result.json()
    assert item["code"] == "TL000" and "byte-order mark" in item["message"]
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())  # one is fine
    assert [item["code"] for item in project.run("check", "--output-format", "json", ".").json()] == ["TL101"]


# --- 3. special files never block; every file has a time and memory limit -------------------------

@pytest.mark.parametrize("mode", ["folder", "named", "cache", "fix"])
@JOBS
def test_a_fifo_named_like_python_never_blocks(project, mode, jobs) -> None:
    project.write("good.py", GOOD)
    os.mkfifo(project.root / "x.py")
    args = {"folder": ["--no-cache", "."], "named": ["--no-cache", "x.py", "good.py"],
            "cache": ["--cache-dir", str(project.root / ".cache"), "."],
            "fix": ["--no-cache", "--fix", "--unsafe-fixes", "."]}[mode]
    result = project.run("check", "--jobs", jobs, "--output-format", "json", *args)  # times out after 120 s
    assert result.returncode == 1, result.stderr
    found = by_file(result)
    [(code, message)] = found["x.py"]
    assert code == "TL000" and "named pipe (FIFO), not a regular file" in message
    assert "good.py" in found or mode == "fix"


def test_sockets_and_devices_are_skipped_without_opening(project, tmp_path) -> None:
    project.write("good.py", GOOD)
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(project.root / "sock.py"))
        os.symlink("/dev/zero", project.root / "zero.py")
        result = project.run("check", "--no-cache", "--output-format", "json", ".")
    found = by_file(result)
    assert "a socket, not a regular file" in found["sock.py"][0][1]
    assert "symbolic link to a file outside the project: not read" in found["zero.py"][0][1]  # /dev/zero
    assert found["good.py"][0][0] == "TL101"


def test_a_file_swapped_for_a_fifo_after_it_was_found_never_blocks(project) -> None:
    project.write("good.py", GOOD)
    swapped = project.write("swapped.py", GOOD)
    completed = script(project, f"""
        import os
        import torchlint.integrations.cli, torchlint.engine.discovery
        found = torchlint.engine.discovery.discover
        def discover_then_swap(*args, **kwargs):
            result = found(*args, **kwargs)
            os.unlink({str(swapped)!r})
            os.mkfifo({str(swapped)!r})
            return result
        torchlint.integrations.cli.discover = discover_then_swap
    """, "--no-cache", "--jobs", "1", "--output-format", "json", ".")
    assert completed.returncode == 1, completed.stderr
    found = {Path(item["filename"]).name: item for item in json.loads(completed.stdout)}
    assert found["swapped.py"]["code"] == "TL000" and "named pipe" in found["swapped.py"]["message"]
    assert found["good.py"]["code"] == "TL101"


def _slow_file(lines: int = 20000) -> str:
    return "import torch\nx = torch.zeros(3)\n" + "x.data; x.data; x.data; x.data\n" * lines


@JOBS
def test_a_file_over_the_time_limit_is_stopped_and_the_others_are_linted(project, jobs) -> None:
    project.write("slow.py", _slow_file())
    project.write("good.py", GOOD)
    start = time.monotonic()
    result = project.run("check", "--no-cache", "--jobs", jobs, "--file-timeout", "0.5", "--output-format", "json", ".")
    assert time.monotonic() - start < 30
    found = by_file(result)
    assert found["slow.py"] == [("TL000", "slow.py was not linted: took longer than 0.5 s to lint, so it was "
                                          "stopped (raise the limit with --file-timeout)")]
    assert found["good.py"][0][0] == "TL101"
    assert result.returncode == 1


@JOBS
def test_a_file_over_the_memory_limit_is_stopped(project, jobs) -> None:
    project.write("big.py", _slow_file(10000))
    project.write("good.py", GOOD)
    result = project.run("check", "--no-cache", "--jobs", jobs, "--file-memory", "20M", "--output-format", "json", ".")
    found = by_file(result)
    assert found["big.py"] == [("TL000", "big.py was not linted: needed more than 20 MiB of memory to lint, so it "
                                         "was stopped (raise the limit with --file-memory)")]
    assert found["good.py"][0][0] == "TL101"


_STUCK_IN_C = """
    import ctypes, signal
    from torchlint.framework import catalogue, rule
    class Stuck(rule.Rule):
        code, name, summary, message, docs = "TL997", "stuck", "s", "m", "d"
        def visit_Module(self, node):
            if self.ctx.path == "stuck.py":
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
                ctypes.CDLL(None).pause()  # inside C, where no Python signal handler runs
    import torchlint.rules
    torchlint.rules.all_rules()["TL997"] = Stuck
    catalogue.RULES["TL997"] = catalogue.RuleInfo("TL997", "stuck", None, True)
"""


def test_a_worker_stuck_where_the_guard_cannot_reach_is_killed_at_its_deadline(project) -> None:
    project.write("stuck.py", GOOD)
    project.write("good.py", GOOD)
    completed = script(project, _STUCK_IN_C, "--no-cache", "--jobs", "2", "--file-timeout", "1",
                       "--output-format", "json", ".", timeout=60)
    assert completed.returncode == 1, completed.stderr
    found = {Path(item["filename"]).name: item for item in json.loads(completed.stdout)}
    assert found["stuck.py"]["code"] == "TL000" and "took longer than 1 s" in found["stuck.py"]["message"]
    assert found["good.py"]["code"] == "TL101"


def test_in_process_a_file_stuck_where_the_guard_cannot_reach_ends_the_run_with_an_error(project) -> None:
    project.write("stuck.py", GOOD)
    completed = script(project, _STUCK_IN_C, "--no-cache", "--jobs", "1", "--file-timeout", "1", ".", timeout=60)
    assert completed.returncode == 2
    assert "torchlint: error: linting stuck.py did not stop within 3.5 s" in completed.stderr


def test_a_file_with_too_many_findings_keeps_the_first_ten_thousand(project) -> None:
    project.write("generated.py", "import torch\nx = torch.zeros(3)\n" + "x.data\n" * 10050)
    result = project.run("check", "--no-cache", "--statistics", "--output-format", "json", ".")
    counts = {row["code"]: row["count"] for row in result.json()}
    assert counts == {"TL101": 10000, "TL000": 1}
    result = project.run("check", "--no-cache", "--output-format", "concise", ".")
    assert "generated.py: only its first 10,000 findings are reported, 50 more were found" in result.stdout


# --- 6. kills during --fix, the cache, default dtypes ---------------------------------------------

def test_a_kill_while_writing_a_fix_leaves_no_temporary_file(project) -> None:
    path = project.write("train.py", LEGACY)
    completed = script(project, """
        import os, signal
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        os.fsync = die  # the new text is written, not yet named
    """, "--isolated", "--no-cache", "--fix", str(path))
    assert completed.returncode == -signal.SIGKILL
    assert path.read_text() == LEGACY
    assert sorted(p.name for p in project.root.iterdir()) == ["train.py"]


def test_what_a_kill_just_before_the_rename_leaves_is_removed_by_the_next_fix(project) -> None:
    path = project.write("train.py", LEGACY)
    completed = script(project, """
        import os, signal
        from torchlint.engine import atomic
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        os.replace = atomic._exchange = die
    """, "--isolated", "--no-cache", "--fix", str(path))
    assert completed.returncode == -signal.SIGKILL
    assert path.read_text() == LEGACY
    [leftover] = [p.name for p in project.root.iterdir() if p.name != "train.py"]
    assert leftover.startswith(".train.py.") and leftover.endswith(".torchlint-tmp")
    result = project.run("check", "--isolated", "--no-cache", "--fix", str(path))
    assert result.returncode == 1, result.stderr
    assert sorted(p.name for p in project.root.iterdir()) == ["train.py"]
    assert path.read_text() != LEGACY


def test_a_cache_entry_edited_into_other_valid_json_is_a_miss(project) -> None:
    project.write("a.py", GOOD)
    cache = project.root / ".cache"
    reference = project.run("check", "--cache-dir", str(cache), "--output-format", "json", ".").stdout
    [entry] = [p for p in cache.rglob("*") if p.is_file() and p.parent != cache]
    check, _, payload = entry.read_bytes().partition(b"\n")
    data = json.loads(payload)
    data["report"]["diagnostics"] = []  # valid JSON, valid shape, wrong content
    entry.write_bytes(check + b"\n" + json.dumps(data).encode())
    assert project.run("check", "--cache-dir", str(cache), "--output-format", "json", ".").stdout == reference


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_cache_entry_that_is_not_a_regular_file_never_blocks(project, kind) -> None:
    project.write("a.py", GOOD)
    cache = project.root / ".cache"
    reference = project.run("check", "--cache-dir", str(cache), "--output-format", "json", ".").stdout
    [entry] = [p for p in cache.rglob("*") if p.is_file() and p.parent != cache]
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        os.symlink("/dev/zero", entry)
    result = project.run("check", "--cache-dir", str(cache), "--output-format", "json", ".")
    assert result.stdout == reference


def test_a_fix_in_a_file_that_changes_the_default_dtype_keeps_it(project) -> None:
    pytest.importorskip("torch")  # the file is run before and after the fix
    path = project.write("train.py", """
        import torch
        torch.set_default_tensor_type("torch.DoubleTensor")
        weights = torch.Tensor([3, 1])
        print(weights.dtype)
    """)
    before = subprocess.run([sys.executable, str(path)], capture_output=True, text=True).stdout
    result = project.run("check", "--isolated", "--output-format", "concise", str(path))
    assert "use `torch.tensor([3, 1], dtype=torch.get_default_dtype())`" in result.stdout
    assert "float32" not in result.stdout
    project.run("check", "--isolated", "--fix", "--unsafe-fixes", str(path))
    assert "dtype=torch.get_default_dtype()" in path.read_text()
    after = subprocess.run([sys.executable, str(path)], capture_output=True, text=True).stdout
    assert before == after == "torch.float64\n"


# --- found by the fuzz campaign (scripts/fuzz.py) ---------------------------------------------------


def test_a_coding_cookie_after_an_old_mac_line_break_is_honoured(project) -> None:
    path = project.write("mac.py", b"# coding: latin-1\rimport torch\rx = torch.zeros(3)\ry = x.data  # \xe9\r")
    compile(path.read_bytes(), str(path), "exec")  # Python reads it as latin-1
    result = project.run("check", "--output-format", "json", str(path))
    assert [(item["code"], item["location"]["row"]) for item in result.json()] == [("TL101", 4)]
    project.write("mac.py", b"import torch\rx = 1\ry = '\xe9'\r")  # no cookie: not UTF-8, on line 3
    [item] = project.run("check", "--output-format", "json", str(path)).json()
    assert item["code"] == "TL000" and "at line 3, column 6" in item["message"]


def test_del_of_data_is_neither_reported_nor_rewritten_into_code_that_does_not_parse(project) -> None:
    path = project.write("d.py", "import torch\nx = torch.ones(3, requires_grad=True)\ndel x.data\n")
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "del x.data" in path.read_text()


def test_nested_findings_are_fixed_however_deep(project) -> None:
    nested = "Variable(" * 12 + "x" + ")" * 12
    path = project.write("n.py", f"import torch\nfrom torch.autograd import Variable\n"
                                 f"x = torch.ones(3, requires_grad=True)\ny = {nested}\n")
    result = project.run("check", "--isolated", "--fix", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text().splitlines()[-1] == "y = x.detach()"


def test_a_finding_inside_another_is_fixed_after_it_not_with_it(project) -> None:
    """`loss.data[0].data`: TL101's fix and TL203's together gave `loss.item().detach()`,
    which raises AttributeError; `.item()` under an attribute is not a safe fix either."""
    path = project.write("l.py", "import torch\nx = torch.ones(3, requires_grad=True)\n"
                                 "loss = torch.nn.functional.mse_loss(x, x)\ny = loss.data[0].data\n")
    result = project.run("check", "--isolated", "--fix", str(path))
    assert result.returncode == 1 and path.read_text().endswith("y = loss.data[0].data\n")
    [tl203] = [item for item in project.run("check", "--isolated", "--output-format", "json", str(path)).json()
               if item["code"] == "TL203"]
    assert tl203["fix"]["applicability"] == "unsafe"


def test_terminal_escapes_in_the_source_are_not_printed(project) -> None:
    project.write("e.py", 'import torch\nx = torch.zeros(3)\ny = x.data; s = "\x1b[2J\x1b]0;owned\x07"\n')
    for output_format in ("full", "concise"):
        result = project.run("check", "--output-format", output_format, ".")
        assert result.returncode == 1 and "TL101" in result.stdout
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
