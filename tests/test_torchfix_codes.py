"""TorchFix's TOR codes in selections, configuration and `# noqa` (torchlint/framework/torchfix.py,
docs/torchfix.md).

Every TorchFix rule but its TOR9xx ones (for pytorch/pytorch itself) has a torchlint rule that
names its code: the TOR code selects, ignores and suppresses that rule, so a TorchFix user keeps
the codes in CI and comments.  A TOR9xx code stops the run with a message that says to keep
TorchFix for it.
"""

from __future__ import annotations

import re
import textwrap


from conftest import REPO
from torchlint.framework import catalogue, torchfix

DATA_READ = '''
    import torch

    x = torch.rand(3, requires_grad=True)
    y = x.data{comment}
'''


UNSAFE_LOAD = '''
    import torch

    state = torch.load("model.pt"){comment}
    x = torch.rand(3, requires_grad=True)
    y = x.data
'''


def test_a_torchfix_code_selects_the_rule_that_does_its_work(project):
    project.write("train.py", UNSAFE_LOAD.format(comment=""))
    assert project.findings(".", "--select", "TOR102") == [("train.py", 3, 9, "TL507")]
    assert project.findings(".", "--select", "TL1,TOR102") == [("train.py", 3, 9, "TL507"), ("train.py", 5, 5, "TL101")]
    assert project.findings(".", "--ignore", "TOR102") == [("train.py", 5, 5, "TL101")]


def test_a_prefix_selects_every_rule_it_names(project):
    expected = {code for rule in torchfix.RULES.values() if rule.code.startswith("TOR1") for code in rule.torchlint}
    assert torchfix.translate("TOR1") == frozenset(expected) and len(expected) == 8
    assert torchfix.translate("TOR") == frozenset(
        code for info in catalogue.RULES.values() if info.torchfix for code in [info.code])


def test_the_internal_rules_say_to_keep_torchfix(project):
    project.write("train.py", UNSAFE_LOAD.format(comment=""))
    result = project.run("check", "--select", "TL2,TOR901", "train.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "torchlint: error: the command line: torchlint has no rule for TorchFix's TOR901 "
        "(`torch.library.Library` in PyTorch's own tests): keep running TorchFix for it "
        "(`pip install torchfix==0.7.0`; `flake8 --select TOR` or `torchfix .`)"
    )


def test_an_unknown_torchfix_code_lists_the_real_ones(project):
    project.write("train.py", DATA_READ.format(comment=""))
    result = project.run("check", "--select", "TOR999", "train.py")
    assert result.returncode == 2
    assert "'TOR999' is not a TorchFix 0.7.0 rule code (those are TOR001, TOR002," in result.stderr


def test_configuration_files_take_them_too(project):
    project.write("pyproject.toml", '[tool.torchlint]\nextend-select = ["TOR4"]\n'
                                    '[tool.torchlint.per-file-ignores]\n"tests/*" = ["TOR102"]\n')
    project.write("train.py", "import torch\nfrom torch.utils.data import DataLoader\n"
                              "loader = DataLoader(range(3))\nstate = torch.load('m.pt')\n")
    project.write("tests/test_train.py", "import torch\nstate = torch.load('m.pt')\n")
    assert project.findings(".") == [("train.py", 3, 10, "TL513"), ("train.py", 4, 9, "TL507")]


def test_a_torchfix_noqa_suppresses_its_rule(project):
    project.write("torchfix_only.py", UNSAFE_LOAD.format(comment="  # noqa: TOR102"))
    project.write("other_code.py", UNSAFE_LOAD.format(comment="  # noqa: TOR101"))
    project.write("file_level.py", "# torchlint: noqa: TOR102\n" + textwrap.dedent(UNSAFE_LOAD.format(comment="")))
    assert project.findings(".") == [
        ("file_level.py", 7, 5, "TL101"),
        ("other_code.py", 3, 9, "TL507"), ("other_code.py", 5, 5, "TL101"),
        ("torchfix_only.py", 5, 5, "TL101"),
    ]


def test_torchfix_defaults_carry_over():
    for rule in torchfix.RULES.values():
        for code in rule.torchlint:
            assert catalogue.RULES[code].default_enabled is rule.default, code
    assert [rule.code for rule in torchfix.RULES.values() if not rule.torchlint] == ["TOR901"]


def test_the_docs_table_lists_every_torchfix_code():
    text = (REPO / "docs" / "torchfix.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| (TOR\d{3}) \|", text, re.MULTILINE)
    assert documented == list(torchfix.RULES)
