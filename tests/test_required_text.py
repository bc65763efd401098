"""The plain strings a rule's ``requires`` pattern cannot match without, looked for before
the pattern is searched: they must never turn away a file the pattern matches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchlint.framework.required_text import Literals, RequiredPattern, may_contain, necessary_literals
from torchlint.syntax.text_search import TextPattern, match_starts, scout_source
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
    required = RequiredPattern(r"lr_scheduler|swa_utils")
    assert required.literals.exact
    for text in ("from torch.optim import lr_scheduler", "torch.optim.swa_utils.AveragedModel(m)", "x = 1"):
        assert required.found_in(text) is (required.pattern.search(text) is not None)


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


def _texts() -> list[str]:
    texts = [path.read_text(encoding="utf-8", errors="replace")
             for folder in ("fixtures", "examples", "torchlint", "tests")
             for path in sorted((REPO / folder).rglob("*.py"))]
    assert len(texts) > 200
    return texts


def test_the_shortcut_never_turns_away_a_file_a_rule_pattern_matches():
    """Every rule's patterns over the bundled fixtures, examples and the project's own code:
    where the pattern matches, one of its literals is in the text, and the pattern looked
    for branch by branch says what ``re`` says of the whole."""
    texts = _texts()
    checked = 0
    for code, rule in all_rules().items():
        for required in rule.required_patterns():
            for text in texts:
                found = required.pattern.search(text) is not None
                assert required.found_in(text) is found, (code, required.pattern.pattern)
                if found:
                    checked += 1
                    assert required.may_be_in(text), (code, required.pattern.pattern, required.literals)
    assert checked > 1000


@pytest.mark.parametrize("pattern, scout", [
    (r"\bno_grad\b|\binference_mode\b", r"no_grad\b|inference_mode\b"),
    (r"\b(?:global|nonlocal)\b|\b(?:import|from)\s+torch\b", r"(?:global|nonlocal)\b|(?:import|from)\s+torch\b"),
    (r"self\.\w+\s*=\s*[\[{(|]|\bappend\s*\(", r"self\.\w+\s*=\s*[\[{(|]|append\s*\("),  # `|` in a class: no cut
    (r"(?:\bx|\by)z", None),  # a `\b` inside a group is left alone
    (r"(?i)\bnoqa", None),  # inline flags: left alone
    (r"a|b", None),
])
def test_the_scout_drops_only_the_word_boundaries_that_start_a_branch(pattern, scout):
    assert scout_source(pattern) == scout


@pytest.mark.parametrize("pattern", [
    r"\bno_grad\b|\binference_mode\b|\.(?:argmax|detach|item|numpy|tolist)\s*\(",
    r"\b(?:global|nonlocal|apply)\b|\b(?:import|from)\s+torch\b",
    r"\bself\.(\w+)\s*=\s*(?:[\[{(]|[A-Za-z_]\w*\s*$)",
    r"\bout\b|\binplace\b|_\s*\(",
    r"(?:add|sub)[a-z]*_?\(",
    r"\b(?:forward|backward)\b|\.item\(",
])
def test_a_text_pattern_finds_what_re_finds(pattern):
    """The same leftmost match as ``re``, from any position, in real files (where `\b`
    fails inside a name such as `layout` and the search must go on past it)."""
    compiled, fast = re.compile(pattern, re.MULTILINE), TextPattern(pattern, re.MULTILINE)
    for text in _texts()[:120] + ["layout = 1; out = 2", "xno_grad no_grad"]:
        for start in (0, len(text) // 3):
            expected, found = compiled.search(text, start), fast.search(text, start)
            assert (found and (found.span(), found.groups())) == (expected and (expected.span(), expected.groups()))


def test_a_file_without_the_literals_is_turned_away_before_the_pattern_runs():
    rule = all_rules()["TL409"]
    assert rule.required_patterns()[0].literals is not None
    assert not rule.may_match("x = 1\ny = x[0]\n")
    assert rule.may_match("def forward(self, x):\n    x[0] += 1\n")


@pytest.mark.parametrize("pattern, starts", [
    (r"\bno_grad\b|\binference_mode\b", ("no_grad", "inference_mode")),
    (r"(?:add|sub)[a-z]*_?\(", ("add", "sub")),
    (r"\.(?:argmax|item)\s*\(", (".argmax", ".item")),
    (r"\b(?:global|nonlocal)\b|\bimport\s+torch", ("global", "nonlocal", "import")),
    (r"\.[\s\\]*grad\b|optim", None),  # `.` alone starts the first branch
    (r"(?i)noqa", None),
    (r"(?:x|)yz", ("xyz", "yz")),
    (r"(?:ab|)\w", None),  # a match may start with any word character
])
def test_the_strings_every_match_starts_with(pattern, starts):
    assert match_starts(re.compile(pattern)) == starts
