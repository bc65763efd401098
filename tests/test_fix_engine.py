"""The fix engine through the real CLI: flags and exit codes, what is written and how
(encoding, newlines, mode, atomically), noqa, verification, and standard input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from torchlint.syntax.source import decode
from torchlint.framework.diagnostics import allowed_applicabilities
from torchlint.framework.edits import replace
from torchlint.framework.rule import Applicability, Fix, Rule
from torchlint.engine.fixer import fix_source
from torch_programs import run_program as torch_program

# One safe fix (TL203) and one unsafe fix (TL102).
TRAIN = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    criterion = nn.MSELoss()
    w = torch.ones(3, requires_grad=True)
    loss = criterion(w * 2, torch.zeros(3))
    loss.backward()
    w.data.add_(-0.1 * w.grad)
    print(loss.data[0])
''')
SAFE_FIXED = TRAIN.replace("print(loss.data[0])", "print(loss.item())")
ALL_FIXED = SAFE_FIXED.replace("w.data.add_(-0.1 * w.grad)", "with torch.no_grad():\n    w.add_(-0.1 * w.grad)")


def test_fix_applies_safe_fixes_and_reports_the_rest(project) -> None:
    path = project.write("train.py", TRAIN)
    result = project.run("check", "--isolated", "--fix", "train.py")
    assert path.read_text() == SAFE_FIXED
    assert result.returncode == 1  # the unsafe TL102 finding remains
    assert "TL102" in result.stdout and "TL203" not in result.stdout.split("Found")[0]
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.stdout
    assert "No fixes available (1 with the `--unsafe-fixes` option)." in result.stdout


def test_unsafe_fixes_and_exit_codes(project) -> None:
    path = project.write("train.py", TRAIN)
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "--show-fixes", "train.py")
    assert path.read_text() == ALL_FIXED
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 × TL102 (data-inplace)" in result.stdout and "1 × TL203 (data-index-scalar)" in result.stdout
    # Nothing left: a second run changes nothing and exits 0, unless asked to flag fixes.
    again = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "train.py")
    assert again.returncode == 0 and path.read_text() == ALL_FIXED
    path.write_text(TRAIN)
    flagged = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "train.py")
    assert flagged.returncode == 1 and path.read_text() == ALL_FIXED


def test_fix_only_does_not_report_what_remains(project) -> None:
    path = project.write("train.py", TRAIN)
    result = project.run("check", "--isolated", "--fix-only", "train.py")
    assert result.returncode == 0
    assert "TL102" not in result.stdout and "Fixed 1 finding." in result.stdout
    assert path.read_text() == SAFE_FIXED


def test_diff_writes_nothing_and_exits_1_when_there_is_a_diff(project) -> None:
    path = project.write("train.py", TRAIN)
    result = project.run("check", "--isolated", "--diff", "train.py")
    assert result.returncode == 1
    assert path.read_text() == TRAIN
    assert result.stdout.startswith("--- train.py\n+++ train.py\n")
    assert "-print(loss.data[0])\n+print(loss.item())\n" in result.stdout
    assert "-w.data.add_" not in result.stdout  # unsafe: not without --unsafe-fixes
    assert "Would fix 1 finding in 1 file." in result.stderr
    unsafe = project.run("check", "--isolated", "--diff", "--unsafe-fixes", "train.py")
    assert "+with torch.no_grad():\n+    w.add_(-0.1 * w.grad)\n" in unsafe.stdout
    clean = project.write("clean.py", "import torch\nprint(torch.ones(2))\n")
    assert project.run("check", "--isolated", "--diff", str(clean)).returncode == 0


def test_diff_and_fix_cannot_be_combined(project) -> None:
    project.write("train.py", TRAIN)
    result = project.run("check", "--isolated", "--diff", "--fix", "train.py")
    assert result.returncode == 2 and "--diff" in result.stderr


def test_json_carries_fix_applicability_and_edits(project) -> None:
    project.write("train.py", TRAIN)
    items = {item["code"]: item for item in project.run("check", "--isolated", "--output-format", "json",
                                                         "train.py").json()}
    assert items["TL203"]["fix"] == {
        "applicability": "safe",
        "message": "Replace with `loss.item()`",
        "edits": [{"content": "loss.item()", "location": {"row": 9, "column": 7},
                   "end_location": {"row": 9, "column": 19}}],
    }
    assert items["TL102"]["fix"]["applicability"] == "unsafe"
    [edit] = items["TL102"]["fix"]["edits"]
    assert edit["content"] == "with torch.no_grad():\n    w.add_(-0.1 * w.grad)"
    assert (edit["location"], edit["end_location"]) == ({"row": 8, "column": 1}, {"row": 8, "column": 27})


def test_noqa_lines_are_never_rewritten(project) -> None:
    source = TRAIN.replace("print(loss.data[0])", "print(loss.data[0])  # noqa: TL203\nprint(loss.data[0])")
    path = project.write("train.py", source)
    project.run("check", "--isolated", "--fix", "train.py")
    lines = path.read_text().splitlines()
    assert lines[-2] == "print(loss.data[0])  # noqa: TL203"
    assert lines[-1] == "print(loss.item())"


def test_encoding_bom_newlines_and_mode_are_kept(project) -> None:
    crlf = project.write("crlf.py", TRAIN.replace("\n", "\r\n").encode())
    bom = project.write("bom.py", b"\xef\xbb\xbf" + TRAIN.encode())
    latin = project.write("latin.py", ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + TRAIN).encode("latin-1"))
    os.chmod(crlf, 0o751)
    result = project.run("check", "--isolated", "--fix", "--unsafe-fixes", "crlf.py", "bom.py", "latin.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert crlf.read_bytes() == ALL_FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o751
    assert bom.read_bytes() == b"\xef\xbb\xbf" + ALL_FIXED.encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + ALL_FIXED).encode("latin-1")


def test_missing_torch_import_is_added_after_docstring_and_future_imports(project) -> None:
    path = project.write("legacy.py", '''\
        """Legacy init."""
        from __future__ import print_function
        import torch.nn as nn

        layer = nn.Linear(2, 2)
        layer.weight.data.fill_(0.5)
        ''')
    project.run("check", "--isolated", "--fix", "--unsafe-fixes", "legacy.py")
    assert path.read_text() == textwrap.dedent('''\
        """Legacy init."""
        from __future__ import print_function
        import torch
        import torch.nn as nn

        layer = nn.Linear(2, 2)
        with torch.no_grad():
            layer.weight.fill_(0.5)
        ''')


def test_torch_alias_is_reused(project) -> None:
    path = project.write("alias.py", "import torch as T\nw = T.ones(2, requires_grad=True)\nw.data.zero_()\n")
    project.run("check", "--isolated", "--fix", "--unsafe-fixes", "alias.py")
    assert path.read_text() == "import torch as T\nw = T.ones(2, requires_grad=True)\nwith T.no_grad():\n    w.zero_()\n"


def test_stdin_fix_prints_the_fixed_source(project) -> None:
    result = project.run("check", "--isolated", "--fix", "-", "--stdin-filename", "train.py", stdin=TRAIN.encode())
    assert result.stdout == SAFE_FIXED
    assert "TL102" in result.stderr  # what remains goes to standard error
    assert result.returncode == 1
    unchanged = project.run("check", "--isolated", "--fix", "-", stdin=b"x = 1\n")
    assert unchanged.stdout == "x = 1\n" and unchanged.returncode == 0


def test_a_file_changed_on_disk_meanwhile_is_not_written(project, tmp_path: Path) -> None:
    """Run the CLI in a process whose first file read is followed by another writer."""
    path = project.write("train.py", TRAIN)
    script = textwrap.dedent(f'''
        import sys
        import torchlint.engine.fixer as fixer
        original = fixer.fix_source
        def fix_then_someone_edits(*args, **kwargs):
            outcome = original(*args, **kwargs)
            with open({str(path)!r}, "a") as handle:
                handle.write("# edited meanwhile\\n")
            return outcome
        fixer.fix_source = fix_then_someone_edits
        import torchlint.integrations.cli
        torchlint.integrations.cli.fix_source = fix_then_someone_edits
        sys.argv = ["torchlint", "check", "--isolated", "--fix", {str(path)!r}]
        torchlint.integrations.cli.main()
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=project.root)
    assert result.returncode == 2
    assert "changed on disk" in result.stderr
    assert path.read_text() == TRAIN + "# edited meanwhile\n"


def test_a_crash_between_write_and_replace_leaves_the_original_intact(project) -> None:
    """The process is killed at the moment the temporary file would replace the original."""
    path = project.write("train.py", TRAIN)
    script = textwrap.dedent(f'''
        import os, signal, sys
        from torchlint.engine import atomic
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        os.replace = atomic._exchange = die
        import torchlint.integrations.cli
        sys.argv = ["torchlint", "check", "--isolated", "--fix", {str(path)!r}]
        torchlint.integrations.cli.main()
    ''')
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=project.root)
    assert result.returncode == -9  # killed
    assert path.read_text() == TRAIN
    leftovers = [p.name for p in project.root.iterdir() if p.name.endswith(".torchlint-tmp")]
    assert leftovers and all(p.startswith(".train.py.") for p in leftovers)
    # The next run lints the original as usual and ignores the leftover temporary file.
    again = project.run("check", "--isolated", "--fix", "train.py")
    assert path.read_text() == SAFE_FIXED and again.returncode == 1


def test_unwritable_folder_is_reported_and_the_file_kept(project) -> None:
    folder = project.root / "readonly"
    path = project.write("readonly/train.py", TRAIN)
    folder.chmod(0o555)
    try:
        result = project.run("check", "--isolated", "--fix", "readonly/train.py", without_root_file_access=True)
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2
    assert "cannot create a temporary file" in result.stderr
    assert path.read_text() == TRAIN


class _BreaksTheCode(Rule):
    """A rule whose fix is wrong on purpose: the engine must refuse it."""

    code = "TL999"
    name = "breaks-the-code"
    summary = message = docs = "test rule"

    def visit_Name(self, node) -> None:
        if node.value == "loss":
            self.report(node, fix=Fix(Applicability.SAFE, "break it", (replace(node, "loss ="),)))


def test_a_fix_that_does_not_compile_leaves_the_file_untouched() -> None:
    source = decode(TRAIN.encode())
    outcome = fix_source(source, "train.py", [_BreaksTheCode], allowed_applicabilities(False))
    assert outcome.text == TRAIN and not outcome.changed and not outcome.fixed
    assert "the TL999 fix at 6:1" in outcome.error
    assert "does not" in outcome.error or "cannot parse" in outcome.error


def test_many_files_fix_in_one_run_with_json_of_what_remains(project) -> None:
    for index in range(3):
        project.write(f"pkg/m{index}.py", TRAIN)
    result = project.run("check", "--isolated", "--fix", "--output-format", "json", "pkg")
    remaining = json.loads(result.stdout)
    assert sorted(item["code"] for item in remaining) == ["TL102"] * 3
    assert all((project.root / f"pkg/m{index}.py").read_text() == SAFE_FIXED for index in range(3))


def test_a_rewritten_call_keeps_its_own_parentheses_once(project) -> None:
    """TL202 drops an argument and TL207 adds two, rewriting the whole call: parentheses
    around the call stay as they were, not doubled."""
    path = project.write("paren.py", textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        from torch.autograd import Variable

        x = torch.randn(1, 1, 2, 2)
        with torch.no_grad():
            y = (Variable(x, volatile=True)).sum()
        z = (F.upsample_bilinear(x, scale_factor=2)).sum()
    """).lstrip())
    project.run("check", "--isolated", "--select", "TL202,TL207", "--fix")
    lines = path.read_text().splitlines()
    assert lines[6] == "    y = (Variable(x)).sum()"
    assert lines[7] == 'z = (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)).sum()'


def test_fixes_are_written_from_the_exact_source_not_the_shortened_message(project) -> None:
    """Messages shorten long expressions with an ellipsis; a fix built from that text
    would not parse (TL211's `.bool()` on a long mask, TL210's moved arguments)."""
    path = project.write("long.py", """
        import torch
        mask = (1 - torch.zeros(4, 3).long()).byte()
        scores, tag_size_of_a_really_long_name_for_this_test = torch.zeros(3, 5), 5
        scores.masked_fill_(mask[0].view(3, 1).expand(3, tag_size_of_a_really_long_name_for_this_test), 0)
        p = torch.zeros(3)
        p.add_(-0.1 * a_really_long_learning_rate_variable_name_for_this_test, torch.ones(3) * a_long_gradient_name)
    """)
    result = project.run("check", "--isolated", "--select", "TL210,TL211", "--fix", "long.py")
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_text()
    assert "expand(3, tag_size_of_a_really_long_name_for_this_test).bool(), 0)" in fixed
    assert ("p.add_(torch.ones(3) * a_long_gradient_name, "
            "alpha=-0.1 * a_really_long_learning_rate_variable_name_for_this_test)") in fixed


def test_a_form_feed_starting_the_first_indented_line_is_not_indentation(project) -> None:
    """A file's first indented line may start with a form feed (a page break); one level
    of indentation is its spaces only: after spaces, a form feed resets Python's column
    count, and a block indented with it would not be indented at all (found by the fuzz
    campaign, issue 40)."""
    source = ("import torch\n\nw = torch.randn(3, requires_grad=True)\nfor step in range(3):\n"
              "\f    loss = (w ** 2).sum()\n    loss.backward()\n    w -= 0.1 * w.grad\n    w.grad.zero_()\n")
    path = project.write("page_break.py", source)
    result = project.run("check", "--isolated", "--select", "TL417", "--fix", "--unsafe-fixes", "page_break.py")
    assert "not fixed" not in result.stderr, result.stderr
    fixed = path.read_text()
    assert "    with torch.no_grad():\n        w -= 0.1 * w.grad\n" in fixed
    compile(fixed, "page_break.py", "exec")
    run = torch_program(str(path), timeout=120)
    assert run.returncode == 0, run.stderr
