"""Files with syntax today's Python refuses (``.cuda(async=True)``, Python 2) are still
linted: each construct is read as Python 3 of the same length, so every finding keeps the
file's own lines and columns; no fix is offered where none could make the file Python 3."""

from __future__ import annotations

import ast

import pytest

from torchlint.syntax import legacy

CONSTRUCTS = {
    "async keyword argument": ("y = x.cuda(async=True)\n", "`async` as a name"),
    "async parameter": ("def copy(src, async=False):\n    pass\n", "`async` as a name"),
    "async attribute": ("flag = loader.async\n", "`async` as a name"),
    "print statement": ("print 'loss', loss\n", "print statement"),
    "print with a trailing comma": ("print x,\n", "print statement"),
    "exec statement": ("exec code in namespace\n", "exec statement"),
    "except with a comma": ("try:\n    f()\nexcept ValueError, error:\n    pass\n", "`except E, e:`"),
    "raise with a comma": ("raise ValueError, 'bad value'  # why\n", "`raise E, message`"),
    "octal literal": ("mode = 0755\n", "an octal literal without `0o`"),
    "long literal": ("big = 10L + 0xFFL\n", "a long integer literal"),
    "backquotes": ("text = `x` + `y`\n", "repr backquotes"),
    "not equal": ("same = a <> b\n", "`<>`"),
    "ur string": ("pattern = ur'\\d+'\n", "a `ur` string"),
}


@pytest.mark.parametrize("text, construct", CONSTRUCTS.values(), ids=CONSTRUCTS.keys())
def test_each_construct_is_read_as_python3_of_the_same_length(text: str, construct: str) -> None:
    with pytest.raises(SyntaxError):
        ast.parse(text)
    repaired, repairs = legacy.repair(text)
    ast.parse(repaired)
    assert len(repaired) == len(text)
    assert [line.count("\n") for line in repaired.splitlines(True)] == [line.count("\n") for line in
                                                                          text.splitlines(True)]
    assert construct in {repair.construct for repair in repairs}
    for repair in repairs:
        assert text[repair.start:repair.end].strip()


def test_every_other_character_stays() -> None:
    text = "import torch\nprint 'x', w.data[0]\nvalue = w.data\n"
    repaired, _ = legacy.repair(text)
    assert repaired.splitlines()[1] == "print,'x', w.data[0]"
    assert repaired.splitlines()[2] == text.splitlines()[2]


@pytest.mark.parametrize("text", [
    "import torch\r\nprint 'x'\r\nraise ValueError, 'bad'\r\nmode = 0755\r\n",  # Windows line breaks
    "import torch\rprint 'x'\rraise ValueError, 'bad'\rmode = 0755\r",  # old Mac line breaks
    "\ufeffimport torch\nprint 'x'\nraise ValueError, 'bad'\n",  # a byte-order mark
])
def test_every_kind_of_line_break_keeps_its_place(text: str) -> None:
    repaired, repairs = legacy.repair(text)
    assert len(repaired) == len(text)
    assert [i for i, c in enumerate(repaired) if c in "\r\n"] == [i for i, c in enumerate(text) if c in "\r\n"]
    assert {"print statement", "`raise E, message`"} <= {repair.construct for repair in repairs}


@pytest.mark.parametrize("text", [
    "x = = 1\n",  # a plain syntax error
    "print 'x'\nx = = 1\n",  # a Python 2 file with a real error as well
    "def f(:\n",
    "if True:\n\tx = 1\n        y = 2\n",  # tabs and spaces mixed: no same-length rewrite
])
def test_text_that_stays_broken_is_not_repaired(text: str) -> None:
    assert legacy.repair(text) is None


def test_valid_python3_is_left_alone() -> None:
    assert legacy.repair("async def main():\n    await f(async_=1)\nprint(x)\n") is None


PYTHON2_SCRIPT = """\
import torch
from torch.autograd import Variable

w = Variable(torch.randn(3), requires_grad=True)
loss = (w * 2).sum()
loss.backward()
print "loss", loss.data[0]
try:
    w = w.cuda(async=True)
except RuntimeError, error:
    print error
"""


def test_a_python2_script_is_linted_with_a_note_and_no_fixes(project) -> None:
    path = project.write("train.py", PYTHON2_SCRIPT)
    result = project.run("check", "--output-format", "json", "--select", "ALL")
    assert result.returncode == 1, result.stderr
    items = result.json()
    found = sorted((item["location"]["row"], item["location"]["column"], item["code"]) for item in items)
    assert found == [(2, 28, "TL201"), (4, 5, "TL201"), (7, 1, "TL000"), (7, 15, "TL203"), (9, 16, "TL205")]
    note = next(item for item in items if item["code"] == "TL000")
    assert note["message"] == (
        "train.py has syntax that Python 3 refuses: print statement (lines 7, 11); `except E, e:` (line 10). "
        "torchlint read it as Python 3 to lint it; its findings are shown, without fixes")
    assert all(item["fix"] is None for item in items)
    fixed = project.run("check", "--fix", "--unsafe-fixes", "--select", "ALL")
    assert fixed.returncode == 1 and "please report" not in fixed.stdout + fixed.stderr
    assert path.read_text() == PYTHON2_SCRIPT


def test_async_alone_is_fixed_into_python3(project) -> None:
    source = "import torch\nx = torch.zeros(2)\ny = x.cuda(async=True)\nprint(y.data)\n"
    path = project.write("gpu.py", source)
    assert project.findings() == [("gpu.py", 3, 12, "TL205"), ("gpu.py", 4, 7, "TL101")]
    result = project.run("check", "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_text()
    assert fixed == "import torch\nx = torch.zeros(2)\ny = x.cuda(non_blocking=True)\nprint(y.detach())\n"
    ast.parse(fixed)


def test_async_on_something_else_is_named_in_the_note(project) -> None:
    project.write("jobs.py", "import torch\nw = torch.ones(2)\ntask.apply(async=True)\nprint(w.data)\n")
    result = project.run("check", "--output-format", "json")
    items = result.json()
    assert sorted((item["location"]["row"], item["code"]) for item in items) == [(3, "TL000"), (4, "TL101")]
    assert "`async` as a name (line 3)" in items[0]["message"]


def test_a_selection_that_matches_nothing_still_reads_python2(project) -> None:
    """No selected rule could match the file (nothing to look for): it is still read, and
    the note is the same as a full run's, not "was not linted"."""
    project.write("train.py", PYTHON2_SCRIPT)
    items = project.run("check", "--output-format", "json", "--select", "TL304").json()
    assert [(item["code"], item["location"]["row"]) for item in items] == [("TL000", 7)]
    assert items[0]["message"] == (
        "train.py has syntax that Python 3 refuses: print statement (lines 7, 11); `async` as a name (line 9); "
        "`except E, e:` (line 10). torchlint read it as Python 3 to lint it; its findings are shown, without fixes")
    assert "was not linted" not in items[0]["message"]
