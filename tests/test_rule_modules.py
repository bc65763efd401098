"""Rules stay small (issue 41): knowledge about torch lives in the facts table
(torchlint/analysis/torch_api.py, torch_facts.py and its generated table, torch_names.py)
and analyses live below the rules (torchlint/analysis/, torchlint/framework/), so a rule
module holds neither a table of torch names nor a flow analysis of its own.

What counts, read from each rule module's syntax tree:

(a) A table of torch names: an assignment at module level or in a class body (not in a
    function) whose value holds two or more string constants that are torch names, or a
    regular expression (``re.compile``) whose pattern spells two or more.  A torch name is
    a dotted identifier that starts with ``torch.`` or is in one of the generated name lists
    of torch 2.13 (tensor methods and properties, ``torch.*`` functions, ``torch.nn``
    modules, ``torch.nn.functional``, ``torch.nn.init``, optimizers).  The attributes a rule
    class declares for the framework (``code``, ``docs``, ``references``, ``requires``,
    ``saved_kinds``...: the annotated class variables of the rule bases) are its
    description, not tables, and are not read.
(b) A flow analysis: the rule reads the scope model's bindings to follow a value across
    statements: the name ``BindingKind`` or ``Binding``, or an attribute ``.bindings``,
    ``.resolve``, ``.assignments``, ``.scope`` or ``.scopes`` (a name's bindings, the values
    assigned to it, the scopes that hold them).  Named queries of the analysis layer
    (``ctx.infer``, ``ctx.qualname``, ``ctx.autograd``...) are what a rule asks instead.

The rules that still do either are listed below with the reason, to be moved next: the
lists may only shrink (a test fails when an entry no longer violates, so it is removed).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from conftest import REPO
from torchlint.analysis import torch_names

RULES = REPO / "torchlint" / "rules"

_NAME_LISTS = (torch_names.TENSOR_METHODS, torch_names.TENSOR_PROPERTIES, torch_names.TORCH_FUNCTIONS,
               torch_names.NN_MODULES, torch_names.NN_FUNCTIONAL, torch_names.NN_INIT, torch_names.OPTIMIZERS)
TORCH_NAMES = frozenset().union(*_NAME_LISTS)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_FLOW_NAMES = frozenset({"BindingKind", "Binding"})
_FLOW_ATTRIBUTES = frozenset({"bindings", "resolve", "assignments", "scope", "scopes"})


def _declared_attributes() -> frozenset:
    """The class variables the rule bases declare (a rule's description to the framework)."""
    from torchlint.framework import api

    names: set[str] = set()
    for value in vars(api).values():
        if isinstance(value, type) and issubclass(value, api.Rule):
            for base in value.__mro__:
                names.update(getattr(base, "__annotations__", {}))
    return frozenset(names)


DECLARED = _declared_attributes()

# Rule modules that still hold a table of torch names, with why each is not moved yet.
# Only shrink this list: move the table into torchlint/analysis/torch_api.py instead.
KNOWN_TABLES: dict[str, str] = {
}

# Assignments that hold torch-looking words and are no table of torch names, with why.
NOT_TABLES: dict[str, str] = {
    "legacy_constructor.py: _CONSTRUCTOR_MESSAGES":
        "the rule's messages, keyed by the form of the legacy call (no argument, a size, a tensor, data): "
        "the keys are words of the rule, not names of torch",
}

# Rule modules that still follow values through the scope model themselves, with why.
# Only shrink this list: move the analysis into torchlint/analysis/ or torchlint/framework/.
KNOWN_FLOW: dict[str, str] = {
    # Each reads `ctx.model.resolve` (or a scope's bindings) to follow a name to the values
    # bound to it; the queries these need belong in the analysis layer (a "value of a name
    # before this statement", "is this name rebound in this loop" query), and were not
    # moved in issue 41's first pass for want of time, not because they must stay.
}


def _is_torch_name(text: str) -> bool:
    return _DOTTED.fullmatch(text) is not None and (text.startswith("torch.") or text in TORCH_NAMES)


def _pattern_names(pattern: str) -> list[str]:
    """The torch names a regular expression spells (its escapes dropped)."""
    return [word for word in _DOTTED.findall(re.sub(r"\\.", " ", pattern)) if _is_torch_name(word)]


def _table_names(value: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.extend(_pattern_names(node.args[0].value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_torch_name(node.value):
            found.append(node.value)
    return found


def torch_name_tables(source: str, module: str = "") -> list[str]:
    """The assignments of ``source`` (module level, class bodies) that hold a table of torch
    names; ``module`` is the file's name, for ``NOT_TABLES``."""
    tree = ast.parse(source)
    bodies = [("", tree.body)] + [(f"{node.name}.", node.body) for node in ast.walk(tree)
                                  if isinstance(node, ast.ClassDef)]
    tables = []
    for prefix, body in bodies:
        for statement in body:
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets, value = [statement.target], statement.value
            else:
                continue
            names = [ast.unparse(target) for target in targets]
            if prefix and all(name in DECLARED for name in names):
                continue
            if any(f"{module}: {prefix}{name}" in NOT_TABLES for name in names):
                continue
            found = _table_names(value)
            if len(found) >= 2:
                tables.append(f"{prefix}{'='.join(names)} ({', '.join(sorted(set(found))[:4])}...)")
    return tables


def flow_uses(source: str, module: str = "") -> list[str]:
    """Where ``source`` reads the scope model's bindings itself (line: what)."""
    uses = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in _FLOW_NAMES:
            uses.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in _FLOW_ATTRIBUTES:
            uses.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.alias) and node.name in _FLOW_NAMES:
            uses.append(f"import {node.name}")
    return uses


MODULES = sorted(path for path in RULES.glob("*.py") if path.name != "__init__.py")


def _violations(check, known: dict[str, str]) -> tuple[list[str], list[str]]:
    new, fixed = [], []
    for path in MODULES:
        found = check(path.read_text(encoding="utf-8"), path.name)
        if found and path.name not in known:
            new.append(f"{path.name}: {'; '.join(found)}")
        if not found and path.name in known:
            fixed.append(path.name)
    return new, fixed


def test_no_rule_module_keeps_a_table_of_torch_names() -> None:
    new, fixed = _violations(torch_name_tables, KNOWN_TABLES)
    assert new == [], "move these tables into torchlint/analysis/torch_api.py"
    assert fixed == [], "these rules hold no table any more: remove them from KNOWN_TABLES"


def test_no_rule_module_keeps_a_flow_analysis() -> None:
    new, fixed = _violations(flow_uses, KNOWN_FLOW)
    assert new == [], "move these analyses into torchlint/analysis/ or torchlint/framework/"
    assert fixed == [], "these rules follow no values any more: remove them from KNOWN_FLOW"


def test_the_known_exceptions_are_rule_modules() -> None:
    names = {path.name for path in MODULES}
    assert set(KNOWN_TABLES) <= names and set(KNOWN_FLOW) <= names
    assert {entry.split(":")[0] for entry in NOT_TABLES} <= names
    assert all(reason.strip() for reason in (*KNOWN_TABLES.values(), *KNOWN_FLOW.values()))


# --- the checks catch what they are meant to --------------------------------------------------

PLANTED = textwrap.dedent('''
    import re
    from torchlint.framework.api import BindingKind, Rule

    _CLEARING = frozenset({"zero_", "fill_"})
    _LOADERS = ("torch.utils.data.DataLoader",)
    _MASKING = re.compile(r"\\bmasked_fill_?\\b|\\bmasked_scatter\\b")
    _WORDS = ("hello", "world")

    class Planted(Rule):
        code = "TL999"
        references = (("torch.Tensor.zero_", "https://pytorch.org"), ("torch.no_grad", "https://pytorch.org"))
        _MODULES = {"torch.nn.Linear": 1, "torch.nn.Conv2d": 2}

        def visit_Call(self, node):
            for binding in self.ctx.model.resolve(node.func):
                if binding.kind is BindingKind.IMPORT:
                    return
''')


def test_the_checks_catch_a_planted_rule() -> None:
    tables = torch_name_tables(PLANTED)
    assert [table.split(" ")[0] for table in tables] == ["_CLEARING", "_MASKING", "Planted._MODULES"]
    uses = flow_uses(PLANTED)
    assert "import BindingKind" in uses and any(use.endswith(".resolve") for use in uses) \
        and any(use.endswith("BindingKind") for use in uses)


@pytest.mark.parametrize("source", [
    "_ONE = ('torch.zeros',)\n",                         # one name is not a table
    "def f():\n    names = {'zero_', 'fill_'}\n",         # inside a function: the rule's logic
    "_MESSAGES = {'a': 'call `x.zero_()`', 'b': 'or fill_ it'}\n",  # prose, not names
])
def test_the_checks_leave_the_rest(source: str) -> None:
    assert torch_name_tables(source) == [] and flow_uses(source) == []


def test_the_planted_rule_would_fail_the_real_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule module with a table and a flow analysis, among the real ones, is named."""
    planted = tmp_path / "planted.py"
    planted.write_text(PLANTED, encoding="utf-8")
    monkeypatch.setattr(__import__(__name__), "MODULES", [*MODULES, planted])
    new_tables, _ = _violations(torch_name_tables, KNOWN_TABLES)
    new_flow, _ = _violations(flow_uses, KNOWN_FLOW)
    assert [entry.split(":")[0] for entry in new_tables] == ["planted.py"]
    assert [entry.split(":")[0] for entry in new_flow] == ["planted.py"]


# --- the tables moved out of the rules hold what torch has ------------------------------------

def _resolve(qualname: str):
    import importlib

    parts = qualname.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part)
        return value
    raise ImportError(qualname)


def test_the_moved_method_tables_name_tensor_methods() -> None:
    torch = pytest.importorskip("torch")
    from torchlint.analysis import torch_api

    tables = {name: getattr(torch_api, name) for name in (
        "GRADIENT_CLEARING_METHODS", "NON_BLOCKING_METHODS", "SHAPE_KEEPING_METHODS", "MASKING_METHODS",
        "MASK_DTYPE_KEEPING_METHODS", "GRAD_KEEPING_METHODS", "ELEMENTWISE_METHODS", "PLAIN_COPY_METHODS",
        "LAYOUT_KEEPING_METHODS", "NEW_TENSOR_METHODS", "VARIABLE_SHAPING_METHODS", "INDEX_TAKING_METHODS",
        "TORCH_ONLY_SCALAR_FIRST_OVERLOADS")}
    missing = {name: sorted(m for m in table if not hasattr(torch.Tensor, m)) for name, table in tables.items()}
    assert {name: names for name, names in missing.items() if names} == {}
    storage = torch.TypedStorage
    assert all(hasattr(storage, name) for name in torch_api.STORAGE_BYTE_METHODS | torch_api.STORAGE_BYTE_PROPERTIES)
    # The methods that took `async=` take `non_blocking=` now.
    assert all("non_blocking" in (getattr(torch.Tensor, m).__doc__ or "") for m in torch_api.NON_BLOCKING_METHODS)


def test_the_moved_qualified_names_are_torch_objects() -> None:
    torch = pytest.importorskip("torch")
    from torchlint.analysis import torch_api

    names = (torch_api.AUTOGRAD_BACKWARD_FUNCTIONS | torch_api.DATA_FACTORIES | torch_api.SHAPE_FACTORIES
             | set(torch_api.MASKING_FUNCTIONS) | torch_api.UINT8_TENSOR_TYPES | torch_api.DTYPE_FACTORIES
             | set(torch_api.CHECKPOINT_FUNCTIONS) | torch_api.LIKE_FACTORIES | torch_api.DATALOADER_CLASSES
             | set(torch_api.DEVICE_AUTOCASTS) | set(torch_api.DEVICE_CUSTOM_AUTOGRAD_DECORATORS)
             | torch_api.GRAD_MODE_CONTEXTS | set(torch_api.INDEX_TAKING_FUNCTIONS) | torch_api.INTEGER_DTYPE_NAMES
             | set(torch_api.LEGACY_SPARSE_TYPES) | torch_api.TYPED_STORAGE_CLASSES)
    # What the module path of a function spells too (`torch.autograd.backward.backward`: how
    # an import of the function through its module's name resolves), and the CUDA classes
    # a CPU build of torch leaves out.
    unresolved = []
    for name in sorted(names):
        try:
            _resolve(name)
        except (AttributeError, ImportError):
            unresolved.append(name)
    assert [name for name in unresolved if not name.startswith("torch.cuda.")] == \
        ["torch.autograd.backward.backward"]
    assert all(not _resolve(name).is_floating_point and not _resolve(name).is_complex
               for name in torch_api.INTEGER_DTYPE_NAMES)
    assert _resolve("torch.ByteTensor").dtype == torch.uint8
    assert {name: _resolve(name).__module__ for name in torch_api.CHECKPOINT_FUNCTIONS} == {
        name: "torch.utils.checkpoint" for name in torch_api.CHECKPOINT_FUNCTIONS}
