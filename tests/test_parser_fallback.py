"""libcst's parser as the reference and the fallback (torchlint/syntax/parsing.py): the same
rules on libcst's parse give the same reports as on the fast tree, and a file the fast
tree cannot build (syntax newer than this Python, a node it does not know) is linted
through libcst instead of being TL000."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, rule_example_params, run_torchlint
from torchlint.syntax import cst, libcst_tree, parsing
from torchlint.syntax.source import SourceText
from torchlint.analysis.project import Project
from torchlint.rules import all_rules
from torchlint.engine.linter import lint_source

MODERN = REPO / "tests" / "data" / "modern_syntax"
# What the modern-syntax corpus gives on every Python (row, column, code), whichever
# parser built each file's tree.
MODERN_FINDINGS = {
    "py310_match_and_friends.py": [(4, 28, "TL201"), (21, 22, "TL201"), (36, 5, "TL102")],
    "py311_except_star.py": [(14, 9, "TL102")],
    "py312_generics_and_fstrings.py": [(16, 13, "TL402"), (27, 11, "TL204"), (28, 10, "TL101")],
    "py313_type_defaults.py": [(13, 13, "TL201"), (13, 53, "TL202")],
}


def _needs(path: Path) -> tuple[int, int]:
    return 3, int(re.match(r"py3(\d+)_", path.name).group(1))


def _report(text: str, parser: str, path: str = "example.py") -> list[tuple]:
    rules = [rule for rule in all_rules().values() if rule.default_enabled]
    report = lint_source(SourceText(text, "utf-8", text.encode("utf-8")), path, rules, None, Project(parser=parser))
    assert report.internal_error is None, report.internal_error
    return [(d.row, d.column, d.end_row, d.end_column, d.code, d.message, d.applicable_fix,
             tuple((e.start, e.end, e.content) for e in d.text_edits), repr(d.evidence), repr(d.related))
            for d in report.diagnostics]


@pytest.mark.parametrize("text", rule_example_params())
def test_rule_examples_report_the_same_on_both_trees(text: str) -> None:
    assert _report(text, "libcst") == _report(text, "fast")


# Form feeds in indentation (Python counts a line's indentation from after the last one):
# libcst's tokenizer miscounted such lines and its code generation dropped the form feed,
# so a 3.12 file holding one was TL000 on 3.11 (a fuzz campaign found it).
FORM_FEEDS = ("import torch\nclass A:\n    @classmethod\n\f    def f(cls):\n\f        x = torch.zeros(3); y = x.data\n"
              "  \f\f        return x.data\n\fz = torch.ones(2)\nw = z.data  # c\n\f\n")


def test_form_feeds_in_indentation_give_the_same_findings_and_fixes_on_both_trees() -> None:
    fast = _report(FORM_FEEDS, "fast")
    assert [(row, column, code) for row, column, _, _, code, *_ in fast] == \
        [(5, 34, "TL101"), (6, 20, "TL101"), (8, 5, "TL101")]
    assert _report(FORM_FEEDS, "libcst") == fast


def test_fixtures_report_the_same_on_both_trees_through_the_cli(tmp_path: Path) -> None:
    outputs = {}
    for parser in ("fast", "libcst"):
        result = run_torchlint("check", "--isolated", "--no-cache", "--parser", parser,
                               "--output-format", "json", str(FIXTURES), str(MODERN))
        assert result.returncode == 1, result.stderr
        outputs[parser] = result.json()
    unlinted = {item["filename"] for item in outputs["fast"] if item["code"] == "TL000"}
    fast = [item for item in outputs["fast"] if item["filename"] not in unlinted]
    assert fast == [item for item in outputs["libcst"] if item["filename"] not in unlinted]
    assert len(fast) > 250
    # The fast tree's only TL000s are the corpus files newer than this Python.
    newer = sorted(path.name for path in MODERN.glob("*.py") if sys.version_info[:2] < _needs(path))
    assert sorted(Path(item["filename"]).name for item in outputs["fast"] if item["code"] == "TL000") == newer
    assert not [item for item in outputs["libcst"] if item["code"] == "TL000"]


def test_modern_syntax_is_linted_on_every_python_with_the_same_findings() -> None:
    """On Python 3.10 the files with 3.11-3.13 syntax go through libcst; on 3.13 through
    the fast tree; the findings are the same."""
    result = run_torchlint("check", "--isolated", "--no-cache", "--output-format", "json", str(MODERN))
    assert result.returncode == 1, result.stderr
    found: dict[str, list[tuple]] = {}
    for item in result.json():
        found.setdefault(Path(item["filename"]).name, []).append(
            (item["location"]["row"], item["location"]["column"], item["code"]))
    assert found == MODERN_FINDINGS


@pytest.mark.parametrize("path", sorted(MODERN.glob("*.py")), ids=lambda p: p.name)
def test_each_tree_of_the_modern_corpus_is_the_fast_trees_twin(path: Path) -> None:
    """Node by node: classes, fields, values and ranges (where this Python builds the
    fast tree)."""
    text = path.read_text(encoding="utf-8")
    if sys.version_info[:2] < _needs(path):
        module, parsed_by = parsing.parse(text)
        assert parsed_by == "libcst" and module.code == text
        return
    assert _differences(cst.parse_module(text), libcst_tree.parse_module(text)) is None


def _differences(ours, theirs) -> str | None:
    stack = [(ours, theirs, "Module")]
    while stack:
        a, b, where = stack.pop()
        if type(a) is not type(b):
            return f"{where}: {type(a).__name__} != {type(b).__name__}"
        if isinstance(a, cst.CSTNode):
            slots = {slot for klass in type(a).__mro__ for slot in getattr(klass, "__slots__", ())}
            stack.extend((getattr(a, s), getattr(b, s), f"{where}.{s}") for s in sorted(slots - cst.WALK_SLOTS))
        elif isinstance(a, (list, tuple)):
            if len(a) != len(b):
                return f"{where}: {len(a)} != {len(b)} items"
            stack.extend((x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b)))
        elif a != b:
            return f"{where}: {a!r} != {b!r}"
    return None


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695 and PEP 701 itself")
def test_a_fix_in_a_file_newer_than_this_python_is_verified_by_libcst(tmp_path: Path) -> None:
    target = tmp_path / "generics.py"
    shutil.copy(MODERN / "py312_generics_and_fstrings.py", target)
    result = run_torchlint("check", "--isolated", "--no-cache", "--fix", "--select", "TL204", str(target))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "weights = torch.empty(3)\n" in target.read_text(encoding="utf-8")
    assert "type Pair[T] = tuple[T, T]\n" in target.read_text(encoding="utf-8")


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695 itself")
def test_parser_fast_refuses_what_this_python_does_not_parse(tmp_path: Path) -> None:
    result = run_torchlint("check", "--isolated", "--no-cache", "--parser", "fast", "--output-format", "json",
                           str(MODERN / "py312_generics_and_fstrings.py"))
    assert [item["code"] for item in result.json()] == ["TL000"]


def test_a_syntax_error_both_parsers_refuse_is_reported_in_pythons_words(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\nx = torch.ones(3\ny.data.add_(1)\n", encoding="utf-8")
    result = run_torchlint("check", "--isolated", "--no-cache", "--output-format", "json", str(tmp_path))
    [item] = result.json()
    try:
        compile((tmp_path / "broken.py").read_text(), "broken.py", "exec")
    except SyntaxError as error:
        expected = error.msg
    assert item["code"] == "TL000" and expected in item["message"]


def test_on_the_newest_python_ast_has_the_last_word() -> None:
    """libcst accepts some text CPython refuses; on the newest Python torchlint mirrors,
    a syntax error is final (older Pythons ask libcst, whose grammar is then the check)."""
    text = "f(**kwargs, *args)\n"  # refused by both: the same answer everywhere
    with pytest.raises(cst.ParserSyntaxError):
        parsing.parse_module(text)
    if sys.version_info[:2] >= parsing.NEWEST_SYNTAX:
        with pytest.raises(cst.ParserSyntaxError):
            parsing.parse_module("type X = int\ntry:\n    pass\nexcept* E:\n    pass\nx = (yield)\n" + "print 'x'\n")


def test_a_node_the_fast_tree_cannot_build_goes_to_libcst(monkeypatch) -> None:
    """A bug or an unknown node in the fast tree's builder costs speed, not the file."""
    def unknown(self, tree):
        raise KeyError(type(tree.body[0]))

    monkeypatch.setattr(cst._Builder, "module", unknown)
    text = "import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.mul_(2)\n"
    module, parsed_by = parsing.parse(text)
    assert parsed_by == "libcst"
    assert [(row, code) for row, _, _, _, code, *_ in _report(text, "auto")] == [(3, "TL102")]
    with pytest.raises(KeyError):
        parsing.parse(text, "fast")


def test_the_cache_keeps_the_parsers_apart(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.mul_(2)\n")
    cache = tmp_path / "cache"
    reports = []
    for parser in ("libcst", "fast", "libcst"):
        result = run_torchlint("check", "--isolated", "--cache-dir", str(cache), "--parser", parser,
                               "--output-format", "json", str(tmp_path / "a.py"))
        reports.append(json.loads(result.stdout))
    assert reports[0] == reports[1] == reports[2]
    assert len({entry.name for entry in cache.rglob("*") if entry.is_file() and len(entry.name) == 32}) == 2


def test_a_file_too_deep_for_libcsts_parser_is_tl000_not_a_crash(tmp_path: Path) -> None:
    """libcst's native parser overflows the C stack on deep nesting (a segmentation fault);
    Python refuses such files with a syntax error, which is what sends them to libcst.
    Found by scripts/fuzz.py: 2,000 parentheses took the whole run down."""
    (tmp_path / "deep.py").write_text("import torch\ny = " + "(" * 2000 + "x" + ")" * 2000 + "\n", encoding="utf-8")
    (tmp_path / "chain.py").write_text("y = " + "lambda: " * 10000 + "x\ndef f(:\n", encoding="utf-8")
    (tmp_path / "good.py").write_text("import torch\nw = torch.zeros(3, requires_grad=True)\nw.data.mul_(2)\n")
    for parser in ("auto", "libcst"):
        result = run_torchlint("check", "--isolated", "--no-cache", "--jobs", "1", "--parser", parser,
                               "--output-format", "json", str(tmp_path))
        assert result.returncode == 1, result.stderr
        found = sorted((Path(item["filename"]).name, item["code"]) for item in result.json())
        assert found == [("chain.py", "TL000"), ("deep.py", "TL000"), ("good.py", "TL102")]
        assert "Fatal Python error" not in result.stderr


def test_libcsts_parser_gets_a_time_limit(monkeypatch) -> None:
    """On a long operator chain with a syntax error libcst's parser runs for minutes."""
    monkeypatch.setattr(libcst_tree, "LIBCST_SECONDS", 0.0)
    text = "y = x" + " + a" * 30000 + "\ndef f(:\n"  # 120,000 characters: 2.4 s
    assert str(libcst_tree._trial_parse(text)) == "libcst's parser took longer than 2 s on it"
    monkeypatch.setattr(libcst_tree, "LIBCST_SECONDS", 3.0)
    assert libcst_tree._trial_parse("x = 1\n") is None


def test_python_3_14_syntax_is_not_linted_as_if_it_were_older() -> None:
    """libcst parses `except A, B:` (Python 3.14); torchlint lints Python up to 3.13, and in
    the Python 2 code where it is found it meant `except A as B`."""
    text = "try:\n    pass\nexcept ValueError, error:\n    pass\n"
    with pytest.raises(cst.ParserSyntaxError) as caught:
        libcst_tree.parse_module(text)
    assert "Python 3.14" in caught.value.message and caught.value.editor_line == 3
    with pytest.raises(cst.ParserSyntaxError):
        parsing.parse_module(text)
