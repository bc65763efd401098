"""Adopting torchlint on a legacy repository, through the real CLI: `check --add-noqa`
acknowledges every present finding, TL901 (unused-noqa) finds directives that no longer
suppress anything, and a directive after a multi-line string covers its lines."""

from __future__ import annotations

import json

from test_notebooks import assert_valid_notebook, code, notebook, write

LEGACY = '''\
import torch
from torch.autograd import Variable

x = Variable(torch.ones(3))  # the input
y = x.data  # noqa: E501
loss = x.sum()
print(loss.data[0], """
text""", x.data)
total = x.data + \\
    x.data
'''


def test_add_noqa_acknowledges_every_finding_and_only_new_ones_fail(project) -> None:
    path = project.write("train.py", LEGACY)
    before = project.findings()
    assert len(before) == 7
    result = project.run("check", "--add-noqa")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Added 5 noqa directives to 1 file.\n"
    assert path.read_text() == '''\
import torch
from torch.autograd import Variable  # noqa: TL201

x = Variable(torch.ones(3))  # the input  # noqa: TL201
y = x.data  # noqa: E501, TL101
loss = x.sum()
print(loss.data[0], """
text""", x.data)  # noqa: TL101, TL203
total = x.data + \\
    x.data  # noqa: TL101
'''
    compile(path.read_text(), str(path), "exec")
    assert project.findings() == []
    # Unchanged since: nothing to add, and TL901 finds every directive in use.
    assert project.run("check", "--add-noqa").stdout == "Added 0 noqa directives to 0 files.\n"
    assert project.findings("--extend-select", "TL901") == []
    # A new finding fails as usual.
    with path.open("a") as handle:
        handle.write("z = x.data\n")
    assert [(row, code) for _, row, _, code in project.findings()] == [(11, "TL101")]


def test_add_noqa_with_a_reason_keeps_encoding_newlines_and_mode(project) -> None:
    source = "# -*- coding: latin-1 -*-\r\nimport torch\r\n\r\nx = torch.ones(3)\r\ny = x.data  # caf\xe9\r\n"
    path = project.write("old.py", source.encode("latin-1"))
    path.chmod(0o750)
    result = project.run("check", "--add-noqa", "--noqa-reason", "legacy code, see #12", "old.py")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == source.replace("caf\xe9\r\n", "caf\xe9  # noqa: TL101  # legacy code, see #12\r\n") \
        .encode("latin-1")
    assert path.stat().st_mode & 0o777 == 0o750
    assert project.findings("old.py") == []


def test_add_noqa_in_a_notebook_edits_only_code_cells(project) -> None:
    path = write(project, "nb.ipynb", notebook(code("import torch\nx = torch.ones(3)\n", 1),
                                               code("y = x.data\nprint(y)\n", 2)))
    result = project.run("check", "--add-noqa", "nb.ipynb")
    assert result.returncode == 0, result.stderr
    content = assert_valid_notebook(path)
    assert content["cells"][1]["source"] == ["y = x.data  # noqa: TL101\n", "print(y)\n"]
    assert content["cells"][0]["source"] == ["import torch\n", "x = torch.ones(3)\n"]
    assert project.findings("nb.ipynb") == []


def test_add_noqa_refuses_what_it_cannot_do(project) -> None:
    project.write("train.py", LEGACY)
    for flags in (["--fix"], ["--diff"], ["--runtime"]):
        result = project.run("check", "--add-noqa", *flags)
        assert result.returncode == 2 and "--add-noqa" in result.stderr, result.stderr
    result = project.run("check", "--add-noqa", "-", stdin=b"import torch\n")
    assert result.returncode == 2 and "standard input" in result.stderr
    result = project.run("check", "--noqa-reason", "why")
    assert result.returncode == 2 and "give --add-noqa too" in result.stderr


UNUSED = '''\
import torch
# torchlint: noqa: TL202

x = torch.ones(3)
y = x.data  # noqa: TL101
z = x.detach()  # noqa: TL101, E501
w = x * 2  # noqa: TL1O1  # why
v = x * 3  # noqa
u = x * 4  # noqa: E501
t = x * 5  # legacy # noqa: TOR102
'''


def test_unused_noqa_finds_directives_that_suppress_nothing_and_fixes_them(project) -> None:
    path = project.write("train.py", UNUSED)
    found = project.run("check", "--extend-select", "TL901", "--output-format", "json").json()
    assert [(item["location"]["row"], item["message"]) for item in found] == [
        (2, "`# torchlint: noqa: TL202` suppresses nothing: no TL202 finding in this file"),
        (6, "`# noqa: TL101, E501` suppresses nothing: no TL101 finding on this line"),
        (7, "`# noqa: TL1O1` suppresses nothing: TL1O1 is not a torchlint rule"),
        (10, "`# noqa: TOR102` suppresses nothing: no TOR102 finding on this line"),
    ]
    assert all(item["fix"]["applicability"] == "safe" for item in found)
    # Off by default; and a code whose rule did not run is not judged.
    assert project.findings() == []
    assert [row for _, row, _, _ in project.findings("--select", "TL2,TL901")] == [2, 7]
    result = project.run("check", "--extend-select", "TL901", "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text() == '''\
import torch

x = torch.ones(3)
y = x.data  # noqa: TL101
z = x.detach()  # noqa: E501
w = x * 2  # why
v = x * 3  # noqa
u = x * 4  # noqa: E501
t = x * 5  # legacy
'''


def test_a_directive_after_a_multiline_string_covers_its_lines(project) -> None:
    project.write("doc.py", '''\
        import torch
        x = torch.ones(3)
        print(x.data, """
        more""")  # noqa: TL101
        print(x.data, """
        more""")
    ''')
    assert [(row, code) for _, row, _, code in project.findings()] == [(5, "TL101")]


def test_add_noqa_reports_a_file_it_could_not_read(project) -> None:
    project.write("good.py", "import torch\nx = torch.ones(3)\ny = x.data\n")
    project.write("bad.py", b"\xff\xfe\x00garbage")
    result = project.run("check", "--add-noqa")
    assert result.returncode == 0, result.stderr  # bad.py is a TL000 note: nothing to add there
    assert "Added 1 noqa directive to 1 file." in result.stdout
    assert json.loads(project.run("check", "--output-format", "json", "good.py").stdout) == []


BASE = '''\
import torch
from torch.autograd import Variable

x = Variable(torch.ones(3))
y = x.data
loss = x.sum()
print(loss.data[0])
'''


def test_a_baseline_records_todays_findings_and_fails_only_on_new_ones(project) -> None:
    path = project.write("src/train.py", BASE)
    first = project.run("check", "--baseline", "baseline.json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "recorded 4 findings in the baseline baseline.json" in first.stderr
    recorded = json.loads((project.root / "baseline.json").read_text())
    assert recorded["torchlint-baseline"] == 1
    assert [(entry["file"], entry["code"], entry["line"]) for entry in recorded["findings"]] == [
        ("src/train.py", "TL201", 2), ("src/train.py", "TL201", 4), ("src/train.py", "TL101", 5),
        ("src/train.py", "TL203", 7)]
    again = project.run("check", "--baseline", "baseline.json")
    assert again.returncode == 0 and "4 findings in the baseline baseline.json not shown" in again.stderr
    # Lines move and are re-indented: the same findings. A new line is a new finding.
    path.write_text("# a header\n\n" + BASE.replace("y = x.data", "y = x.data  ") + "z = x.data\n")
    moved = project.run("check", "--baseline", "baseline.json", "--output-format", "json")
    assert moved.returncode == 1
    assert [(item["code"], item["location"]["row"]) for item in moved.json()] == [("TL101", 10)]
    assert json.loads((project.root / "baseline.json").read_text()) == recorded  # nothing gone


def test_a_baseline_shrinks_as_findings_are_fixed(project) -> None:
    path = project.write("train.py", BASE)
    assert project.run("check", "--baseline", "baseline.json").returncode == 0
    path.write_text(BASE.replace("print(loss.data[0])", "print(loss.item())"))
    # A run of other rules says nothing of TL203: its entry stays until a run looks for it.
    assert project.run("check", "--baseline", "baseline.json", "--select", "TL2", "--ignore", "TL203").returncode == 0
    assert len(json.loads((project.root / "baseline.json").read_text())["findings"]) == 4
    shrunk = project.run("check", "--baseline", "baseline.json")
    assert shrunk.returncode == 0 and "1 finding of the baseline baseline.json is gone" in shrunk.stderr
    assert [entry["code"] for entry in json.loads((project.root / "baseline.json").read_text())["findings"]] \
        == ["TL201", "TL201", "TL101"]
    # The fixed finding cannot come back unnoticed.
    path.write_text(BASE)
    back = project.run("check", "--baseline", "baseline.json", "--output-format", "concise")
    assert back.returncode == 1 and back.stdout.startswith("train.py:7:7: TL203")


def test_a_baseline_that_is_not_one_is_a_clear_error(project) -> None:
    project.write("train.py", BASE)
    project.write("baseline.json", '{"findings": 3}')
    result = project.run("check", "--baseline", "baseline.json")
    assert result.returncode == 2 and "not a torchlint baseline" in result.stderr
    for flags in (["--diff"], ["--add-noqa"]):
        assert project.run("check", "--baseline", "b.json", *flags).returncode == 2
    assert project.run("check", "--baseline", "b.json", "-", stdin=b"import torch\n").returncode == 2
