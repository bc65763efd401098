"""`# noqa`, `# noqa: CODES` and file-level `# torchlint: noqa`, through the real CLI."""

from __future__ import annotations

SOURCE = '''\
import torch
from torch.autograd import Variable{import_comment}

x = torch.rand(3, requires_grad=True)
y = x.data{line_comment}
z = Variable(x).data{both_comment}
{file_comment}
'''


def findings(project, import_comment="", line_comment="", both_comment="", file_comment=""):
    project.write("train.py", SOURCE.format(
        import_comment=import_comment, line_comment=line_comment,
        both_comment=both_comment, file_comment=file_comment,
    ))
    return [(row, code) for _, row, _, code in project.findings()]


ALL = [(2, "TL201"), (5, "TL101"), (6, "TL101"), (6, "TL201")]


def test_no_directive(project) -> None:
    assert findings(project) == ALL


def test_bare_noqa_suppresses_the_line(project) -> None:
    assert findings(project, both_comment="  # noqa") == [(2, "TL201"), (5, "TL101")]


def test_noqa_with_codes_suppresses_only_those(project) -> None:
    assert findings(project, both_comment="  # noqa: TL201") == [(2, "TL201"), (5, "TL101"), (6, "TL101")]
    assert findings(project, both_comment="  # noqa: TL101, TL201") == [(2, "TL201"), (5, "TL101")]
    assert findings(project, both_comment="  # noqa:TL101,TL201") == [(2, "TL201"), (5, "TL101")]
    assert findings(project, line_comment="  # noqa: TL201") == ALL


def test_noqa_reason_may_follow(project) -> None:
    found = findings(project, line_comment="  # noqa: TL101 legacy checkpoint loader, see #123")
    assert found == [(2, "TL201"), (6, "TL101"), (6, "TL201")]


def test_noqa_inside_a_longer_comment(project) -> None:
    found = findings(project, import_comment="  # kept for old checkpoints  # noqa: TL201")
    assert found == [(5, "TL101"), (6, "TL101"), (6, "TL201")]


def test_file_level_noqa(project) -> None:
    assert findings(project, file_comment="# torchlint: noqa") == []
    assert findings(project, file_comment="# torchlint: noqa: TL101") == [(2, "TL201"), (6, "TL201")]
    assert findings(project, file_comment="# torchlint: noqa: TL101, TL201") == []


def test_noqa_text_in_a_string_is_not_a_directive(project) -> None:
    project.write("train.py", 'import torch\nx = torch.ones(1, requires_grad=True)\ny = (x.data, "# noqa")\n')
    assert [(row, code) for _, row, _, code in project.findings()] == [(3, "TL101")]


def test_noqa_on_the_last_line_of_a_multiline_finding(project) -> None:
    project.write("train.py", 'import torch\nx = torch.ones(1, requires_grad=True)\ny = (x\n     .data)  # noqa: TL101\n')
    assert project.findings() == []


def test_noqa_does_not_hide_unreadable_files(project) -> None:
    project.write("broken.py", "# torchlint: noqa\ndef f(:\n")
    assert [code for *_, code in project.findings()] == ["TL000"]


def test_a_noqa_line_is_never_rewritten_by_a_neighbours_fix_in_any_case_spelling(project) -> None:
    """Directives are case-insensitive (`# NOQA`) for the findings, and so for the fixes
    that would rewrite a neighbouring line into their block (TL202 spelled `noqa` only
    in lower case before)."""
    project.write("train.py", (
        "import torch\n"
        "import torch.nn as nn\n"
        "from torch.autograd import Variable\n"
        "\n"
        "model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 3))\n"
        "model[0].bias.data = model[0].bias.data.clamp(0, 1)\n"
        "model[2].bias.data = model[2].bias.data * 0  # NoQa: TL103\n"
        "\n"
        "\n"
        "def predict(images):\n"
        "    first = model(Variable(images, volatile=True))\n"
        "    again = model(Variable(images, volatile=True))  # NOQA: TL202\n"
        "    return first, again\n"
    ))
    result = project.run("check", "--no-cache", "--fix", "--unsafe-fixes", "train.py")
    assert result.returncode == 1, result.stdout + result.stderr  # the NOQA line's TL201 remains
    lines = (project.root / "train.py").read_text().splitlines()
    assert "from torch.autograd import Variable" in lines  # still used on the NOQA line
    assert "    model[0].bias.copy_(model[0].bias.clamp(0, 1))" in lines
    assert "model[2].bias.data = model[2].bias.detach() * 0  # NoQa: TL103" in lines  # TL101 is not suppressed
    assert lines[-4:] == ["    with torch.no_grad():", "        first = model(images)",
                          "    again = model(Variable(images, volatile=True))  # NOQA: TL202", "    return first, again"]
