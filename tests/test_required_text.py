"""The plain strings a rule's ``requires`` pattern cannot match without, looked for before
the pattern is searched: they must never turn away a file the pattern matches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchlint.framework.required_text import Literals, matches, may_contain, necessary_literals
from torchlint.rules import all_rules

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("pattern, literals, exact", [
    (r"backward|autograd\.grad|\bforward\b|\b__call__\b", {"backward", "autograd.grad", "forward", "__call__"}, False),
    (r"(?:no_grad|enable_grad)\s*:", {"no_grad", "enable_grad"}, False),
    (r"\bself\.\w+\s*=\s*[\[{(]|\bappend\s*\(", {"self.", "append"}, False),
    (r"(?:\w+)+_grad\(", {"_grad("}, False),  # a repeat that must run once holds its literals
    # Nothing but literals: they decide alone; one holding another is not looked for.
    (r"btrifact|btrifact_with_info|btrisolve", {"btrifact", "btrisolve"}, True),
    (r"lr_scheduler|swa_utils", {"lr_scheduler", "swa_utils"}, True),
    (r"\.to\(|\.cuda\(", {".to(", ".cuda("}, True),
])
def test_literals_every_match_needs(pattern, literals, exact):
    found = necessary_literals(pattern)
    assert set(found.strings) == literals and found.exact is exact
    assert list(found.strings) == sorted(found.strings, key=len)  # the likeliest found first


def test_an_exact_pattern_is_decided_by_its_literals():
    pattern = re.compile(r"lr_scheduler|swa_utils")
    literals = necessary_literals(pattern.pattern)
    for text in ("from torch.optim import lr_scheduler", "torch.optim.swa_utils.AveragedModel(m)", "x = 1"):
        assert matches(text, pattern, literals) is (pattern.search(text) is not None)


def test_a_case_insensitive_pattern_looks_in_the_lowered_text():
    literals = necessary_literals(r"(?i)noqa")
    assert literals == Literals(("noqa",), folded=True)
    assert may_contain("x = 1  # NoQA: TL101", literals)
    assert not may_contain("x = 1", literals)


@pytest.mark.parametrize("pattern", [
    r"/|\bdiv",  # a one-character branch is in nearly every file
    r"[-+]|\bappend\b",
    r"(?:x)?y",
    r"a*bc?",
])
def test_no_shortcut_where_a_match_needs_no_literal(pattern):
    assert necessary_literals(pattern) is None
    assert may_contain("anything", necessary_literals(pattern))


def test_the_shortcut_never_turns_away_a_file_a_rule_pattern_matches():
    """Every rule's patterns over the bundled fixtures, examples and the project's own code:
    where the pattern matches, one of its literals is in the text."""
    texts = [path.read_text(encoding="utf-8", errors="replace")
             for folder in ("fixtures", "examples", "torchlint", "tests")
             for path in sorted((REPO / folder).rglob("*.py"))]
    assert len(texts) > 200
    checked = 0
    for code, rule in all_rules().items():
        for pattern, literals in zip(rule._compiled_requires(), rule._requires_literals()):
            for text in texts:
                if pattern.search(text):
                    checked += 1
                    assert may_contain(text, literals), (code, pattern.pattern, literals)
    assert checked > 1000


def test_a_file_without_the_literals_is_turned_away_before_the_pattern_runs():
    rule = all_rules()["TL409"]
    assert rule._requires_literals()[0] is not None
    assert not rule.may_match("x = 1\ny = x[0]\n")
    assert rule.may_match("def forward(self, x):\n    x[0] += 1\n")
