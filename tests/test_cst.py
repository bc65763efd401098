"""torchlint.syntax.cst builds libcst's tree from ``ast``: same classes, fields, node ranges and
parentheses as libcst on every fixture, every rule example and the tricky cases below
(the comparison is scripts/compare_cst.py's)."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import re
from pathlib import Path

import libcst
import pytest

from conftest import FIXTURES, REPO, rule_example_params
from torchlint.syntax import cst, legacy

_spec = importlib.util.spec_from_file_location("compare_cst", REPO / "scripts" / "compare_cst.py")
compare_cst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_cst)


def assert_same_as_libcst(text: str) -> None:
    try:
        ast.parse(text)
    except SyntaxError:  # legacy syntax (TL205's examples): its tree is the repaired text's
        text = legacy.repair(text)[0]
    outcome, detail = compare_cst.compare_text(text)
    assert outcome == "same", detail


FIXTURE_FILES = sorted([*FIXTURES.rglob("*.py"), *FIXTURES.rglob("*.fixed")])


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture(path: Path) -> None:
    assert_same_as_libcst(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", rule_example_params())
def test_rule_example(text: str) -> None:
    assert_same_as_libcst(text)


TRICKY = {
    "call arguments in parentheses": "f((a), (b) , c)\nf(( a ))\nf((a)(b))\nprint((a))\nprint ((a, b))\n",
    "generator arguments": (
        "f(x for x in y)\nf((x for x in y))\nf((x for x in y), z)\nf(a, (x for x in y))\n"
        "f(((x for x in y)))\nsum(x for x in y if x)\n"
    ),
    "parenthesized callee": "(a)(b)\n(a.b)(c)\n((a))(b)(c)\n(f)((g))\nf(a)(b)\n",
    "tuples": """\
a, b = c
(a, b) = c
x = (a, b)
x = ((a, b))
x = a,
x = (a,)
x = ()
x = (  )
for a, b in c: pass
for (a, b) in c: pass
x = (a), (b)
x = (a,
     b,
)
x = (a, b  # c
)
x = *a, b
""",
    "comparisons": """\
a < b < c
a == (b) != c
a is not b
a is  not b
a not in b
a not\\
 in b
not a in b
(a < b) < c
""",
    "boolean chains": """\
a and b and c
a or b or c and d
(a and b) and c
a and (b and c)
not a and not b
a and b or c and d or e
""",
    "decorators": """\
@a
@a.b(c)
@ (d)
@e[0]
@(lambda f: f)
def f(): pass

class D:
    @property
    def x(self): return 1

    @x.setter
    # a comment
    def x(self, v): pass
""",
    "lambdas": """\
f = lambda a=(1), *b, c=[2], **d: a
g = lambda: 0
h = lambda *, a: a
k = lambda a, /, b: a
m = lambda a, : a
n = lambda a : a
""",
    "f-strings": """\
f"{a}"
f"a{b!r}c{d:>{w}}"
f"{a=}"
f"{a = }"
f"{a!s:10}"
f"{{}}{x}}}"
f"{x:}"
F"{x}"
rf"\\d{x}"
f"\\N{EN DASH}{x}"
f\"\"\"{
  x +
  y
}\"\"\"
f"{x, y}"
f"{(x, y)}"
f"{x:{y}.{z}f}"
f"{d['k']}"
f"{a!=b}"
f"{a==b}"
f"{f'{x}'}"
f"{ x }"
f"{x:%Y-%m-%d}"
f"a" "b" f"{c}"
f"{x:a{{b}}c}"
f"{a = !r:>10}"
f\"\"\"{a=
}\"\"\"
""",
    "implicit concatenation": """\
x = 'a' 'b'
x = ('a'
     'b'  # c
     "c")
x = b'a' b'b'
x = 'a' \\
    'b'
x = r'a' u'b' 'c'
x = '''a''' "b"
x = ''
x = \"\"\"\"\"\"
f('a'
  'b', c)
""",
    "non-ASCII lines": """\
x = 'é' + b
y = f'{é}' + 'ü' 'ß'
naïve = 1
z = naïve.attr
z = a.naïve
w = [ä for ä in ö]
v = {'ключ': значение}
x = f'é{a}ü{b!r}' + f'{"é"}'
# ü
if é: pass
""",
    "CRLF": "x = 1\r\nif a:\r\n    b = (1,\r\n         2)\r\n    # c\r\n\r\ndef f(a,\r\n      b):\r\n    return a\r\n",
    "tabs": "if a:\n\tb = 1\n\tif c:\n\t\td = (e,\n\t\t     f)\n\t# tab comment\nelse:\n\tpass\n",
    "backslash continuations": """\
x = a + \\
    b
if a and \\
   b:
    pass
assert x, \\
    'msg'
from a import \\
    b
y = \\
  1
""",
    "comments between a parenthesis and its expression": """\
x = (  # c
    a)
x = ( # c1
    # c2
    a # c3
)
f(  # c
  a,  # d
  b)
x = [
    # c
    a,
]
x = (
    a  # c
    + b
)
x = ('#',
     a)
x = ('a#b'  # c
     , b)
""",
    "simple statements": """\
a = b = c
a += 1
a: int
a: int = 1
del a
del a, b
del (a, b)
del (a), b
del a,
global a, b
assert a, b
raise a from b
pass; pass
x = 1; y = 2;
x = 1 ;
import a.b.c as d, e
from .a import (b, c,)
from . import b as c
from .... a import e
from a import *
""",
    "imports": """\
from a import (  # c
    b,
    c as d,  # e
)
import a.b, \\
    c
from . a . b import c
from .a.b import (c)
import a .b as  c
def f():
    global x, \\
        y
""",
    "compound statements": """\
if a:
    pass
elif b:
    pass
elif c: pass
else:
    pass
while a:
    break
else:
    pass
for a in b:
    continue
else: pass
try:
    pass
except A:
    pass
except (B, C) as e:
    pass
except:
    pass
else:
    pass
finally:
    pass
with a as b, c as (d, e):
    pass
with (a as b, c):
    pass
with (a, b) as c: pass
""",
    "starred subscripts (Python 3.11)": "x[*a, b]\nx[a, *b]: int\n",
    "except star (Python 3.11)": """\
try:
    pass
except* A:
    pass
except* (B, C) as e: pass
""",
    "with parentheses": """\
with (a): pass
with (a) as b: pass
with (a, b): pass
with (a, b,): pass
with ((a, b)): pass
with (a)(b): pass
with (a).b: pass
with (a), (b): pass
with (x for x in y): pass
with (a := b): pass
def f():
    with (yield): pass
    with (yield) as b: pass
""",
    "functions and classes": """\
async def f(a, b=1, *args, c, d=2, **kwargs) -> int:
    async for a in b:
        await (c)
    async with d as e:
        return [y async for y in z]
def g(a, /, b): pass
def h(*, a): pass
def i(a: int = 1, *b: str, **c: 'x'): pass
def j(
    a,
    b,
): pass
def k(a,  # c
      b  # d
      ): pass
def m( ): pass
class A(B, (C), metaclass=M, **kw): pass
class B(): pass
""",
    "subscripts": """\
x[a, b]
x[a,]
x[(a, b)]
x[(a)]
x[a:b:c]
x[:]
x[::]
x[a:, :b]
x[..., 0]
x[()]
x[
    a,
    :,
]
x[ a : b ]
""",
    "comprehensions": """\
[a for a in b if c if d]
[a for a in b for c in d]
{a: b for a, b in c}
[(a, b) for (a, b) in c]
[a for a in (b)]
[a  for  a  in  b  if  c]
[y := f(x) for x in a]
""",
    "expressions": """\
x = a if b else c
x = (y := 1)
x = - (a) + ~b
x = a ** -b @ c // d % e << f >> g | h & i ^ j
x = {**a, 'b': c}
x = {a, *b}
x = 1j + 1.5 + 0x10 + 1_000 + 1e5 + ...
x = True, False, None
f(a=1, *b, c=2, **d)
x = (a).b
x = ((a) + (b)) * (c)
x = ((((a))))
(a).b = 1
((a), b) = c
a, *b = c
""",
    "yield": """\
def f():
    x = (yield)
    y = (yield a)
    f((yield))
    yield from (a)
""",
    "match": """\
match x:
    case 1 | (2):
        pass
    case [a, *rest] | (a, b, ) | a, b:
        pass
    case {'k': v, **kw}:
        pass
    case Point(1, (2), x=0, y=yy):
        pass
    case None | -1 | a.b:
        pass
    case (a) if a > 1:
        pass
    case [1, 2] as z:
        pass
    case _:
        pass
""",
    "block footers": """\
def f():
    x = 1
    # trailing comment

# module comment
class A:
    def g(self):
        pass
        # deep

    # mid
    x = 1

if a:
    b
    # c
else:
    d
""",
    "semicolons in blocks": "if a: b; c\nif a:\n    b; c;\n",
    "no final line break": "if a:\n    b = (1,\n         2)",
    "form feed": "x = 1\n\x0c\ndef f():\n    pass\n",
    "first block deeper than its parent": "class A:\n  def f(self):\n        pass\n",
    "deep nesting": "x = " + "(" * 50 + "a" + ")" * 50 + "\n",
    "only a comment": "# just a comment\n",
    "empty": "",
}


# The cases that Python 3.10 does not parse (linted there through libcst).
_TRICKY_NEEDS = {"starred subscripts (Python 3.11)": (3, 11), "except star (Python 3.11)": (3, 11)}


@pytest.mark.parametrize("text", TRICKY.values(), ids=TRICKY.keys())
def test_tricky(text: str) -> None:
    import sys

    needs = _TRICKY_NEEDS.get(next(name for name, value in TRICKY.items() if value == text))
    if needs and sys.version_info < needs:
        pytest.skip(f"this syntax needs Python {needs[0]}.{needs[1]}")
    assert_same_as_libcst(text)


def _node_classes():
    for name, ours in vars(cst).items():
        if inspect.isclass(ours) and issubclass(ours, cst.CSTNode) and hasattr(libcst, name) \
                and not name.startswith("Base") and name != "CSTNode":
            yield pytest.param(ours, getattr(libcst, name), id=name)


# The order of evaluation, where it is not libcst's order of fields (see torchlint/syntax/walk.py).
EVALUATION_ORDER = {
    "Assign": ("value", "targets"),
    "AugAssign": ("value", "target"),
    "AnnAssign": ("annotation", "value", "target"),
    "NamedExpr": ("value", "target"),
    "For": ("iter", "target", "body", "orelse"),
    "CompFor": ("iter", "target", "ifs", "inner_for_in"),
    "ListComp": ("for_in", "elt"),
    "SetComp": ("for_in", "elt"),
    "GeneratorExp": ("for_in", "elt"),
    "DictComp": ("for_in", "key", "value"),
    "FunctionDef": ("decorators", "type_parameters", "params", "returns", "body"),
    "ClassDef": ("decorators", "type_parameters", "bases", "keywords", "body"),
    "TypeAlias": ("type_parameters", "value"),
    # The names a type parameter binds are not references.
    "TypeVar": ("bound",),
    "TypeVarTuple": (),
    "ParamSpec": (),
    "Lambda": ("params", "body"),
    "ExceptHandler": ("type", "name", "body"),
    # Names that are not references, and statements inspected as a whole.
    "Attribute": ("value",),
    "Param": ("annotation", "default"),
    "Arg": ("value",),
    "Import": (),
    "ImportFrom": (),
    "Global": (),
    "Nonlocal": (),
}
# libcst fields that hold no child worth visiting: whitespace, punctuation, operators,
# strings and flags (and the match patterns' separators).
_NOT_CHILDREN = re.compile(
    r"^(whitespace.*|lpar|rpar|lbracket|rbracket|lbrace|rbrace|comma|semicolon|"
    r"leading_lines|leading_whitespace|trailing_whitespace|header|footer|"
    r"lines_after_decorators|equal|colon|first_colon|second_colon|star|dot|"
    r"operator|asynchronous|indent|encoding|default_indent|default_newline|"
    r"has_trailing_newline|start|end|conversion|newline|relative|trailing_comma|separator)$"
)
_STRING_VALUES = {"Name", "Integer", "Float", "Imaginary", "SimpleString", "FormattedStringText", "NotEqual"}


@pytest.mark.parametrize("ours, theirs", list(_node_classes()))
def test_fields_in_evaluation_order(ours: type, theirs: type) -> None:
    """``_fields``: the node-valued fields, in the order Python evaluates them."""
    name = ours.__name__
    libcst_order = tuple(f.name for f in dataclasses.fields(theirs) if not _NOT_CHILDREN.match(f.name)
                         and not (name in _STRING_VALUES and f.name == "value"))
    assert ours._fields == EVALUATION_ORDER.get(name, libcst_order)
    slots = {slot for klass in ours.__mro__ for slot in getattr(klass, "__slots__", ())}
    assert set(ours._fields) <= slots


def test_nodes_are_slotted() -> None:
    stack = [cst.parse_module("@d\ndef f(a, *, b=1):\n    return [x.y for x in a if b]\n")]
    while stack:
        node = stack.pop()
        assert not hasattr(node, "__dict__"), type(node)
        for field in type(node)._fields:
            stack.extend(compare_cst._children(getattr(node, field)))


def test_syntax_error() -> None:
    with pytest.raises(cst.ParserSyntaxError) as caught:
        cst.parse_module("x = 1\ndef f(:\n")
    error = caught.value
    assert (error.editor_line, error.editor_column) == (2, 7)
    assert str(error) == error.message == "invalid syntax"


def test_values_and_ranges() -> None:
    text = "x = ('a' 'b')[0] is not (f)(y, *z, k=1)\n"
    module = cst.parse_module(text)
    assert (module.code, module.default_newline, module.default_indent) == (text, "\n", "    ")
    comparison = module.body[0].body[0].value
    target = comparison.comparisons[0]
    assert type(target.operator) is cst.IsNot and target.operator.token == "is not"
    assert text[target.operator.start:target.operator.end] == "is not"
    call = target.comparator
    assert len(call.func.lpar) == 1 and text[call.func.outer_start:call.func.outer_end] == "(f)"
    assert [(arg.star, arg.keyword and arg.keyword.value) for arg in call.args] == [("", None), ("*", None), ("", "k")]
    string = comparison.left.value
    assert type(string) is cst.ConcatenatedString and string.evaluated_value == "ab"
    assert text[string.outer_start:string.outer_end] == "('a' 'b')"
    assert (string.left.prefix, string.left.quote, string.left.raw_value) == ("", "'", "a")


def test_deep_nesting() -> None:
    """Deeper than the recursion limit allows a recursive conversion (libcst's own code
    generation gives up there, so no comparison)."""
    import sys

    limit = sys.getrecursionlimit()
    text = "x = " + " + ".join(f"a{i}" for i in range(1500)) + "\n"
    module = cst.parse_module(text)
    assert sys.getrecursionlimit() == limit
    node = module.body[0].body[0].value
    while type(node) is cst.BinaryOperation:
        assert text[node.operator.start:node.operator.end] == "+"
        node = node.left
    assert (node.value, node.start, node.end) == ("a0", 4, 6)


def test_byte_order_mark() -> None:
    """ast refuses a BOM; the tree skips it and its offsets still index the text."""
    text = "\ufeffx = (1)\nif a:\n    y = 'é' + b\n"
    module = cst.parse_module(text)
    assign = module.body[0].body[0]
    assert text[assign.start:assign.end] == "x = (1)"
    assert text[assign.value.outer_start:assign.value.outer_end] == "(1)"
    inner = module.body[1].body.body[0].body[0]
    assert text[inner.value.right.start:inner.value.right.end] == "b"


MODERN_SYNTAX = sorted((REPO / "tests" / "data" / "modern_syntax").glob("*.py"))
# Each file's name says the Python that first parses it: py312_... needs 3.12.
_NEEDS = {path: (3, int(re.match(r"py3(\d+)_", path.name).group(1))) for path in MODERN_SYNTAX}


@pytest.mark.parametrize("path", MODERN_SYNTAX, ids=lambda p: p.name)
def test_modern_syntax(path: Path) -> None:
    """Newer syntax builds libcst's tree on every Python that parses it (older ones lint
    it through libcst's own parser: tests/test_parser_fallback.py)."""
    import sys

    if sys.version_info < _NEEDS[path]:
        pytest.skip(f"Python {sys.version_info[0]}.{sys.version_info[1]} does not parse {path.name}")
    assert_same_as_libcst(path.read_text(encoding="utf-8"))


PEP_701 = {
    "same quotes": 'd = {"k": 1}\ns = f"{d["k"]}"\n',
    "nested f-strings": 'x = f"{f"{f"{1}"}"}"\n',
    "format spec with a nested field and same quotes": 's = f"{x["a"]!r:>{w["b"]}}"\n',
    "backslash in a field": "s = f\"{'\\n'.join(a)}\"\n",
    "comment and line breaks in a field": 's = f"{\n    a  # why\n    + b\n}"\n',
    "field in a raw f-string after a backslash": 's = rf"\\{x}" f"\\N{EM DASH}{y}"\n',
    "prefix on a nested string": 's = f"{rb"x" + b"y"!r}" "tail"\n',
    "triple quotes inside a field": 's = f"""{f"""{a}"""}"""\n',
}


@pytest.mark.parametrize("text", list(PEP_701.values()), ids=list(PEP_701))
def test_pep_701_f_strings(text: str) -> None:
    import sys

    if sys.version_info < (3, 12):
        pytest.skip("PEP 701 f-strings need Python 3.12")
    assert_same_as_libcst(text)
