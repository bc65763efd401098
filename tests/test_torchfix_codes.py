"""TorchFix's TOR codes in selections and `# noqa` (torchlint/framework/torchfix.py, docs/torchfix.md).

No TorchFix 0.7.0 rule checks what a torchlint rule checks, so every TOR code in a
selection stops the run with a message that says to keep TorchFix for it, and a
`# noqa: TOR...` comment is left to TorchFix: it hides no torchlint finding.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import REPO
from torchlint.framework import torchfix

DATA_READ = '''
    import torch

    x = torch.rand(3, requires_grad=True)
    y = x.data{comment}
'''


def test_select_with_a_torchfix_code_says_to_keep_torchfix(project):
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", "--select", "TL2,TOR102", "train.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "torchlint: error: the command line: torchlint has no rule for TorchFix's TOR102 "
        "(`torch.load` without `weights_only`): keep running TorchFix for it "
        "(`pip install torchfix==0.7.0`; `flake8 --select TOR` or `torchfix .`)"
    )


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
def test_every_selection_option_refuses_uncovered_codes(project, option):
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", option, "tor101", "train.py")
    assert result.returncode == 2
    assert "TorchFix's TOR101 (use of a deprecated function" in result.stderr


def test_a_prefix_names_every_rule_it_covers(project):
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", "--select", "TOR1", "train.py")
    assert result.returncode == 2
    assert "TorchFix's TOR101, TOR102, TOR103, TOR104, TOR105, TOR106, TOR107 " in result.stderr
    assert "keep running TorchFix for them" in result.stderr


def test_an_unknown_torchfix_code_lists_the_real_ones(project):
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", "--select", "TOR999", "train.py")
    assert result.returncode == 2
    assert "'TOR999' is not a TorchFix 0.7.0 rule code (those are TOR001, TOR002," in result.stderr


@pytest.mark.parametrize("table", [
    'extend-select = ["TOR2"]',
    'ignore = ["TOR401"]',
    '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TOR102"]',
])
def test_configuration_files_refuse_them_too(project, table):
    project.write("pyproject.toml", f"[tool.torchlint]\n{table}\n")
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", "train.py")
    assert result.returncode == 2
    assert "pyproject.toml [tool.torchlint]" in result.stderr and "TorchFix's TOR" in result.stderr


def test_a_torchfix_noqa_hides_no_torchlint_finding(project):
    project.write("torchfix_only.py", DATA_READ.format(comment="  # noqa: TOR101"))
    project.write("both.py", DATA_READ.format(comment="  # noqa: TOR101, TL101"))
    project.write("file_level.py", "# torchlint: noqa: TOR101\n" + textwrap.dedent(DATA_READ.format(comment="")))
    assert project.findings(".") == [("file_level.py", 6, 5, "TL101"), ("torchfix_only.py", 4, 5, "TL101")]


def test_every_torchfix_code_is_explained():
    for code, rule in torchfix.RULES.items():
        with pytest.raises(torchfix.NotCovered) as raised:
            torchfix.translate(code)
        assert f"TorchFix's {code} ({rule.flags})" in str(raised.value)
        assert torchfix.equivalent_codes(code) == frozenset()


def test_the_docs_table_lists_every_torchfix_code():
    text = (REPO / "docs" / "torchfix.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| (TOR\d{3}) \|", text, re.MULTILINE)
    assert documented == list(torchfix.RULES)
