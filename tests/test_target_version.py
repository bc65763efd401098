"""`target-version`: syntax newer than the oldest Python a project runs on is reported, as
ruff reports it, and no fix may write such syntax.  The construct table runs on every
supported Python (scripts/test_all_pythons.sh): what it finds must not depend on the
interpreter, as `ast.parse(feature_version=...)`'s answers do."""

from __future__ import annotations

import json
import sys

import pytest

from torchlint.engine.config import Target, requires_python_floor
from torchlint.engine.fixer import fix_source
from torchlint.framework.diagnostics import Applicability, Fix
from torchlint.framework.edits import replace
from torchlint.framework.rule import Rule
from torchlint.syntax.source import decode
from torchlint.syntax.versions import newer_syntax

# (source, the constructs newer than Python 3.7 it has, as (construct, release, row)).
NEWER = {
    "walrus": ("if (n := len(x)) > 2:\n    pass\n", [("an assignment expression (`:=`)", "3.8", 1)]),
    "positional-only": ("def f(a, /, b):\n    pass\n", [("positional-only parameters (`/`)", "3.8", 1)]),
    "positional-only on its own line": ("def f(\n    a,  # comment\n    /,\n):\n    pass\n",
                                        [("positional-only parameters (`/`)", "3.8", 2)]),
    "self-documenting f-string": ("print(f'{loss=:.3f} {step = !r}')\n",
                                  [("a self-documenting f-string (`f\"{x=}\"`)", "3.8", 1)]),
    "decorator expression": ("@handlers[0].register\ndef f():\n    pass\n",
                             [("a decorator that is not a dotted name or its call", "3.9", 1)]),
    "parenthesized context managers": ("with (\n    open('a') as f,\n    open('b') as g,\n):\n    pass\n",
                                       [("parenthesized context managers (`with (a as x, b as y):`)", "3.9", 1)]),
    "parenthesized context managers without as": (
        "with (\n    torch.no_grad(),\n    open('b'),\n):\n    pass\n",
        [("parenthesized context managers (`with (a as x, b as y):`)", "3.9", 1)]),
    "match": ("match command:\n    case 'train':\n        pass\n", [("a `match` statement", "3.10", 1)]),
}
NEWER_HERE = {  # what only newer Pythons parse, checked where they run
    "except star": ((3, 11), "try:\n    pass\nexcept* ValueError:\n    pass\n", [("`except*`", "3.11", 1)]),
    "starred index": ((3, 11), "x = a[*index]\n", [("a starred expression in an index (`a[*b]`)", "3.11", 1)]),
    "type alias": ((3, 12), "type Batch = list[int]\n", [("a `type` alias", "3.12", 1)]),
    "type parameters": ((3, 12), "def first[T](items: list[T]) -> T:\n    return items[0]\n",
                        [("type parameters (`def f[T]`)", "3.12", 1)]),
    "type parameter default": ((3, 13), "class Box[T = int]:\n    pass\n",
                               [("type parameters (`def f[T]`)", "3.12", 1),
                                ("a type parameter default (`[T = int]`)", "3.13", 1)]),
}
# Valid Python 3.7 that looks like the constructs above.
OLD_LOOK_ALIKES = {
    "comparisons and keywords in f-strings": "print(f'{a == b} {f(x=1)} {a != b} {a <= b} {x:=^9} {x!r:>4}')\n",
    "division": "y = a / b\nz = f(a /b, c/ d)\n",
    "dotted decorators": "@torch.no_grad()\n@functools.lru_cache(maxsize=None)\n@property\ndef f():\n    pass\n",
    "parenthesized expression in with": "with (torch.no_grad()):\n    pass\nwith (open('a')) as f:\n    pass\n"
                                        "with (a if c else b):\n    pass\n",
    "starred tuple in brackets of its own": "x = a[(Ellipsis, *index)]\n",
    "match as a name": "match = re.match(pattern, text)\nmatch.group(0)\n",
    "type as a name": "type = 'linear'\nprint(type)\n",
    "startswith(": "if name.startswith('a') or name.endswith(('b', 'c')):\n    pass\n",
}


@pytest.mark.parametrize("name", NEWER)
def test_each_construct_is_named_with_its_release(name: str) -> None:
    source, expected = NEWER[name]
    found = newer_syntax(source, (3, 7))
    assert [(item.construct, item.release, item.row) for item in found] == expected
    assert newer_syntax(source, (3, 10)) == [item for item in found if item.since > (3, 10)]


@pytest.mark.parametrize("name", NEWER_HERE)
def test_constructs_of_newer_pythons_where_they_parse(name: str) -> None:
    needs, source, expected = NEWER_HERE[name]
    if sys.version_info[:2] < needs:
        assert newer_syntax(source, (3, 7)) == []  # Python refuses it here: a TL000 of its own
        return
    assert [(item.construct, item.release, item.row) for item in newer_syntax(source, (3, 7))] == expected


@pytest.mark.parametrize("name", OLD_LOOK_ALIKES)
def test_python_3_7_syntax_is_not_reported(name: str) -> None:
    assert newer_syntax(OLD_LOOK_ALIKES[name], (3, 7)) == []


def test_rows_are_counted_as_python_counts_them() -> None:
    """A form feed (old GNU-style files have them on lines of their own) is no line break
    for Python: the f-string is found on its row, and a byte-order mark shifts no column."""
    [found] = newer_syntax("x = 1\n\x0c\nprint(f'{x=}')\n", (3, 7))
    assert (found.row, found.column) == (3, 7)
    [found] = newer_syntax("\ufeffy = (x := 2)\n", (3, 7))
    assert (found.row, found.column) == (1, 6)


def test_columns_count_characters_not_bytes() -> None:
    [found] = newer_syntax("s = 'ééé'; y = (é := 2)\n", (3, 7))
    assert (found.row, found.column) == (1, 17)


@pytest.mark.parametrize("specifiers, floor", [
    (">=3.8", (3, 8)), (">=3.8, <4", (3, 8)), ("~=3.9", (3, 9)), ("==3.10.*", (3, 10)), (">3.7", (3, 7)),
    (">=3.10.2", (3, 10)), ("!=3.8.*,>=3.7", (3, 7)), (">=2.7, !=3.0.*", (3, 7)), (">=3.6", (3, 7)),
    ("<3.9", (3, 7)), ("not a range", None),
])
def test_requires_python_gives_the_oldest_release_it_allows(specifiers: str, floor) -> None:
    assert requires_python_floor(specifiers) == floor


TRAIN = """\
import torch

w = torch.ones(3, requires_grad=True)
match w.dim():
    case 1:
        print(w.data)
if (n := w.numel()) > 2:
    print(f"{n=}")
"""


def _codes(result) -> list[tuple[str, int]]:
    return [(item["code"], item["location"]["row"]) for item in json.loads(result.stdout)]


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements parse from Python 3.10")
def test_requires_python_sets_the_target_and_the_command_line_overrides_it(project) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\nrequires-python = ">=3.8"\n\n'
                                    '[tool.torchlint]\nselect = ["ALL"]\n')
    project.write("train.py", TRAIN)
    result = project.run("check", "--output-format", "json", "train.py")
    assert _codes(result) == [("TL000", 4), ("TL101", 6)]
    note = json.loads(result.stdout)[0]["message"]
    assert "newer than `target-version` (Python 3.8): a `match` statement (Python 3.10: line 4)" in note
    assert result.returncode == 1
    assert _codes(project.run("check", "--output-format", "json", "--target-version", "py310", "train.py")) == [
        ("TL101", 6)]
    shown = project.run("check", "--show-settings", "train.py").stdout
    assert "target-version: py38 (from requires-python '>=3.8')" in shown
    # The fix of the other finding still applies; the note stays.
    fixed = project.run("check", "--fix", "--output-format", "json", "train.py")
    assert _codes(fixed) == [("TL000", 4)]
    assert "print(w.detach())" in (project.root / "train.py").read_text()


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements parse from Python 3.10")
def test_a_torchlint_toml_reads_requires_python_beside_it_and_target_version_wins(project) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\nrequires-python = ">=3.8"\n')
    project.write("torchlint.toml", 'target-version = "py37"\n')
    project.write("train.py", TRAIN)
    findings = json.loads(project.run("check", "--output-format", "json", "train.py").stdout)
    assert findings[0]["code"] == "TL000" and "(Python 3.7): a `match` statement (Python 3.10: line 4); " \
        "an assignment expression (`:=`) (Python 3.8: line 7)" in findings[0]["message"]
    project.write("torchlint.toml", "")
    findings = json.loads(project.run("check", "--output-format", "json", "train.py").stdout)
    assert findings[0]["code"] == "TL000" and "(Python 3.8)" in findings[0]["message"]


def test_a_wrong_target_version_is_an_error_naming_the_file(project) -> None:
    project.write("torchlint.toml", 'target-version = "3.8"\n')
    project.write("train.py", "import torch\n")
    result = project.run("check", "train.py")
    assert result.returncode == 2
    assert "torchlint.toml: `target-version` must be one of py37, py38" in result.stderr
    result = project.run("check", "--isolated", "--target-version", "py27", "train.py")
    assert result.returncode == 2 and "'py27' is not one of 'py37'" in result.stderr


class _WritesAWalrus(Rule):
    """A rule whose fix writes Python 3.8 syntax: refused for a project on 3.7."""

    code = "TL999"
    name = "writes-a-walrus"
    summary = message = docs = "test rule"

    def visit_Name(self, node) -> None:
        if node.value == "total":
            self.report(node, fix=Fix(Applicability.SAFE, "walrus", (replace(node, "(summed := 0)"),)))


def test_a_fix_that_writes_newer_syntax_than_the_target_is_refused() -> None:
    source = decode(b"total\n")
    allowed = frozenset({Applicability.SAFE})
    assert fix_source(source, "a.py", [_WritesAWalrus], allowed).text == "(summed := 0)\n"
    outcome = fix_source(source, "a.py", [_WritesAWalrus], allowed, target=Target(python=(3, 7)))
    assert outcome.text == "total\n" and not outcome.fixed
    assert "write an assignment expression (`:=`) (Python 3.8), newer than `target-version`" in outcome.error
    # A file that has the construct already does not run on the target: the fix adds nothing new.
    source = decode(b"y = (x := 1)\ntotal\n")
    assert fix_source(source, "a.py", [_WritesAWalrus], allowed, target=Target(python=(3, 7))).error is None


def test_a_pyproject_is_read_once_for_its_table_and_requires_python(tmp_path, monkeypatch) -> None:
    from torchlint.engine import config

    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.9"\n\n'
                                            '[tool.torchlint]\nselect = ["TL1"]\n')
    reads = []
    original = config._read_toml
    monkeypatch.setattr(config, "_read_toml", lambda path: reads.append(path) or original(path))
    options = config.load_options(tmp_path / "pyproject.toml", required=True)
    assert options.requires_python == ">=3.9" and len(reads) == 1
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.10"\n')  # edited: read again
    assert config.load_options(tmp_path / "pyproject.toml", required=True).requires_python == ">=3.10"
    assert len(reads) == 2
