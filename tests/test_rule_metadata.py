"""Each rule module is complete: metadata, docs, and examples that behave as documented:
a bad example is reported exactly where it says and fixed into exactly the text it gives."""

from __future__ import annotations

import re

import pytest

from torchlint.syntax.source import LineIndex, SourceText
from torchlint.framework.diagnostics import allowed_applicabilities
from torchlint.framework.rule import Bad, Example
from torchlint.rules import all_rules
from torchlint.engine.fixer import fix_source
from torchlint.engine.linter import lint_text

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
    assert all(isinstance(example, Bad) for example in rule.bad)
    assert all(isinstance(example, str) for example in rule.good)
    assert rule.__module__.startswith("torchlint.rules.")
    # Where a reader can check the docs: torch's documentation, release notes, an issue.
    assert rule.references and all(title and url.startswith("https://") for title, url in rule.references)
    assert f"## References\n\n- [{rule.references[0][0]}]({rule.references[0][1]})" in rule.documentation()


def test_names_are_unique() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))


BAD_EXAMPLES = [pytest.param(rule, example, id=f"{rule.code}-bad-{index}")
                for rule in RULES for index, example in enumerate(rule.bad)]


@pytest.mark.parametrize("rule, example", BAD_EXAMPLES)
def test_bad_examples_are_reported_exactly(rule, example) -> None:
    source = example.source
    report = lint_text(source, rules=[rule])
    assert report.internal_error is None
    lines = LineIndex(source)
    reported = [(d.row, source[lines.offset(d.row, d.column):lines.offset(d.end_row, d.end_column)])
                for d in report.diagnostics]
    assert reported == list(example.reported), source


@pytest.mark.parametrize("rule, example", BAD_EXAMPLES)
def test_bad_examples_are_fixed_exactly(rule, example) -> None:
    expected = example.fixed_source if example.fixed is not None else example.source
    assert _fixed(rule, example.source, example.unsafe) == expected
    if example.unsafe:  # the safe fixes alone do not get there
        assert _fixed(rule, example.source, False) != expected


def _fixed(rule, source: str, unsafe: bool) -> str:
    outcome = fix_source(SourceText(source, "utf-8", source.encode("utf-8")), "<string>", [rule],
                         allowed_applicabilities(unsafe))
    assert outcome.error is None
    return outcome.text


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
    assert rule.bad[0].source.strip().splitlines()[0] in text
    for example in rule.bad:
        if example.fixed is not None:
            assert f"```python\n{example.fixed_source}```" in text


def test_torch_releases_of_rules_are_releases() -> None:
    """`since` and `fix_since` are what `target-torch` compares: each must parse, and a fix
    needing a later release than the finding holds from would never be applied where it
    first matters (say so with `fix_since` only when it is the later one)."""
    from torchlint.engine.config import torch_version

    for rule in all_rules().values():
        for release in (rule.since, rule.fix_since):
            if release is not None:
                torch_version(release)
        if rule.since is not None and rule.fix_since is not None:
            assert torch_version(rule.fix_since) > torch_version(rule.since), rule.code
