"""Modules analysed only because another file imports them are parsed with lazy function
bodies (cst.parse_module(lazy_bodies=True)), built when the inference looks into them.
Whatever order they are built in, the tree, the semantic model and the findings are those
of the eager parse."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

from conftest import FIXTURES
from torchlint.syntax import cst
from torchlint.analysis.project import Project
from torchlint.analysis.semantic import SemanticModel
from torchlint.rules import all_rules
from torchlint.engine import batch

STANDARD_LIBRARY = Path(sysconfig.get_paths()["stdlib"])
# Big modules with every kind of function: decorators, nested classes, async, generators.
LIBRARY_FILES = [STANDARD_LIBRARY / name for name in (
    "ast.py", "typing.py", "dataclasses.py", "argparse.py", "inspect.py", "enum.py", "functools.py",
    "asyncio/tasks.py", "unittest/mock.py", "email/_header_value_parser.py",
)]

TRICKY = {
    "decorator in parentheses on two lines": "@(\n    decorate\n)\ndef f():\n    return 1\n",
    "last line continued into a comment": "def f():\n    x = 1 \\\n        # comment\n\ny = 2\n",
    "final semicolon": "class A:\n    def f(self):\n        x = 1;  \n    def g(self): return 2;\n",
    "footer comments at several depths": (
        "def f():\n    if a:\n        b()\n        # inner\n    # outer\n# module\nz = 1\n"
    ),
    "one-line functions": "def f(): return 1\nclass A:\n    def g(self): return self.x; y = 2\n",
    "nested in a function": "def f():\n    class B:\n        def m(self): return 1\n    def g(): yield 2\n    return B\n",
    "async, tabs and else clauses": (
        "class A:\n\tasync def f(self):\n\t\tfor x in y:\n\t\t\tpass\n\t\telse:\n\t\t\treturn x\n"
        "\t@property\n\tdef p(self):\n\t\ttry:\n\t\t\treturn 1\n\t\tfinally:\n\t\t\tpass\n"
    ),
    "functions under if and try": (
        "if TYPE_CHECKING:\n    def f(): ...\nelse:\n    def f():\n        return 2\n"
        "try:\n    def g(): return h()\nexcept ImportError:\n    pass\n"
    ),
    "reaching out of the function": (
        "x = None\ndef f():\n    global x\n    x = 1\ndef g(m):\n    m.apply(init)\n"
        "def h():\n    import torch\n    return torch.ones(1)\ndef k():\n    return 3\n"
    ),
    "byte order mark": "\ufeffdef f():\n    return 1\n",
    "non-ascii": "def f():\n    s = 'é🤗'; return s  # 🤗\n\ndef g(ü):\n    return ü\n",
}


def _texts():
    for name, text in TRICKY.items():
        yield pytest.param(text, id=name)
    for path in sorted(FIXTURES.rglob("*.py")):
        if path.parent.name.startswith("TL205"):
            continue  # legacy syntax: read through legacy.py, always with every body built
        yield pytest.param(path.read_text(encoding="utf-8"), id=path.relative_to(FIXTURES).as_posix())
    for path in LIBRARY_FILES:
        yield pytest.param(path.read_text(encoding="utf-8"), id=f"stdlib/{path.relative_to(STANDARD_LIBRARY)}")


def _difference(a, b, where: str = "") -> str | None:
    """Where two trees differ (class, slots, values), or None."""
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, cst.CSTNode):
        for klass in type(a).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if slot not in cst.WALK_SLOTS:
                    found = _difference(getattr(a, slot, None), getattr(b, slot, None),
                                        f"{where}/{type(a).__name__}.{slot}")
                    if found:
                        return found
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        return next((found for index, (x, y) in enumerate(zip(a, b))
                     if (found := _difference(x, y, f"{where}[{index}]"))), None)
    return None if a == b else f"{where}: {a!r} != {b!r}"


def _lazy_functions(module: cst.Module) -> list[cst.FunctionDef]:
    found, stack = [], [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.LazyBody):
            found.append(node)
        for klass in type(node).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                value = getattr(node, slot, None) if slot not in cst.WALK_SLOTS else None
                if isinstance(value, cst.CSTNode):
                    stack.append(value)
                elif isinstance(value, (list, tuple)):
                    stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


@pytest.mark.parametrize("text", list(_texts()))
def test_built_bodies_make_the_eager_tree(text: str) -> None:
    eager = cst.parse_module(text)
    lazy = cst.parse_module(text, lazy_bodies=True)
    functions = _lazy_functions(lazy)
    if "def f():\n    return" in text or len(text) > 2000:
        assert functions, "nothing was left lazy"
    random.Random(7).shuffle(functions)
    for function in functions:
        cst.build_lazy_body(lazy, function)
    assert _difference(lazy, eager) is None


def test_what_reaches_out_of_a_function_is_built_at_once() -> None:
    module = cst.parse_module(TRICKY["reaching out of the function"], lazy_bodies=True)
    lazy = {function.name.value for function in _lazy_functions(module)}
    assert lazy == {"k"}  # global, .apply() and `import torch` change the module's analysis


def _model_summary(model: SemanticModel) -> list:
    """The model without seq numbers (a lazy body's continue after the module's)."""
    summary = []
    for scope in model.scopes:
        summary.append((
            scope.kind, scope.node.start,
            {name: [(b.kind, b.node.start, b.param_index, b.path) for b in bindings]
             for name, bindings in scope.bindings.items()},
            {name: [load.start for _, load in loads] for name, loads in scope.loads.items()},
            {name: [(attribute, node.start) for _, attribute, node in uses]
             for name, uses in scope.attribute_uses.items()},
        ))
    for function in sorted(model.functions.values(), key=lambda f: f.node.start):
        summary.append((function.name, function.kind, function.self_name, function.is_generator,
                        [expression.start for expression in function.returns]))
    for cls in sorted(model.classes.values(), key=lambda c: c.node.start):
        summary.append((cls.name, sorted(cls.methods),
                        {name: [a.node.start for a in cls.assignments(name)] for name in sorted(cls.attributes)}))
    summary.append((model.imports_torch, [entry[0] for entry in model.star_imports],
                    [name.start for name in model.applied_names]))
    return summary


@pytest.mark.parametrize("text", list(_texts()))
def test_the_semantic_model_is_the_same_whatever_order_bodies_are_built_in(text: str) -> None:
    eager = SemanticModel(cst.parse_module(text), "pkg.mod")
    lazy = SemanticModel(cst.parse_module(text, lazy_bodies=True), "pkg.mod")
    functions = list(lazy.lazy_functions)
    random.Random(3).shuffle(functions)
    for function in functions[: len(functions) // 3]:
        function.returns  # built one by one, out of order
    for cls in lazy.classes.values():
        for name in ("x", "weight", "config"):
            cls.assignments(name)
    lazy.scopes_mentioning("self")
    for function in list(lazy.lazy_functions):
        lazy.materialize(function)
    assert _model_summary(lazy) == _model_summary(eager)


UTIL = '''\
import torch
from torch import nn


def make():
    return torch.ones(3)


def scale(x: torch.Tensor, by):
    return x * by


class Model(nn.Module):
    def forward(self, x):
        return self.head(x)

    def reset(self):
        self.buffer = torch.zeros(2)

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 2)
        self.buffer = None

    def loss(self, out):
        return out.sum()

    def step(self, out):
        value = self.loss(out)
        value.backward()
'''

CONSUMER = '''\
import torch
from util import Model, make, scale

w = make()
w.data.add_(1)
v = scale(torch.ones(2), 3)
v.data.mul_(2)
model = Model()
model.head.weight.data.zero_()
b = model.buffer
b.data.fill_(0)
print(model.loss(torch.ones(2)).data[0])
'''


def test_findings_through_lazy_imports_are_those_of_eager_ones(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "util.py").write_text(UTIL, encoding="utf-8")
    consumer = tmp_path / "consumer.py"
    consumer.write_text(CONSUMER, encoding="utf-8")
    codes = tuple(all_rules())

    def lint() -> list:
        project = Project()
        job = batch.Job(consumer, "consumer.py", codes, project.roots_for(consumer))
        report, _ = batch.lint_job(job, None, None, project)
        return [(d.code, d.row, d.message, [note.message for note in d.evidence]) for d in report.diagnostics]

    lazy = lint()
    assert {(code, row) for code, row, *_ in lazy} >= {("TL102", 5), ("TL102", 7), ("TL102", 9), ("TL102", 11)}
    parse = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text, lazy_bodies=False: parse(text))
    assert lint() == lazy
