"""Each rule module is complete: metadata, docs, and examples that behave as documented."""

from __future__ import annotations

import re

import pytest

from torchlint.engine.linter import lint_text
from torchlint.framework.rule import Example
from torchlint.rules import all_rules

RULES = list(all_rules().values())


def test_rules_are_registered() -> None:
    assert set(all_rules()) >= {"TL101", "TL102", "TL103", "TL201", "TL202", "TL203"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_metadata(rule) -> None:
    assert re.fullmatch(r"TL[1-9][0-9]{2}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)*", rule.name)
    assert rule.summary and rule.message and rule.docs.strip()
    assert "## What it does" in rule.docs and "## Why is this bad?" in rule.docs
    assert rule.bad and rule.good
    assert rule.__module__.startswith("torchlint.rules.")


def test_names_are_unique() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    "rule, example",
    [(rule, example) for rule in RULES for example in rule.bad],
    ids=lambda value: getattr(value, "code", None) or "bad",
)
def test_bad_examples_are_reported(rule, example) -> None:
    report = lint_text(Example(example).source, rules=[rule])
    assert report.internal_error is None
    assert any(d.code == rule.code for d in report.diagnostics), Example(example).source


@pytest.mark.parametrize(
    "rule, example",
    [(rule, example) for rule in RULES for example in rule.good],
    ids=lambda value: getattr(value, "code", None) or "good",
)
def test_good_examples_are_not_reported(rule, example) -> None:
    report = lint_text(Example(example).source, rules=list(all_rules().values()))
    assert report.internal_error is None
    assert [d.code for d in report.diagnostics] == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_documentation_includes_examples(rule) -> None:
    text = rule.documentation()
    assert text.startswith(f"# {rule.code} {rule.name}")
    assert Example(rule.bad[0]).source.strip().splitlines()[0] in text
