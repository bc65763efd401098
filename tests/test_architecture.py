"""The package's layers (docs/architecture.md): every import goes to the same layer or a
lower one, and no module imports itself back through others.  Imports inside functions
count (they are real dependencies); those only for type checking do not."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "torchlint"
# Lowest first.  The package's own __init__ (the version and the documentation URL) is
# below everything; __main__ only starts the command line.
LAYERS = ["torchlint", "syntax", "analysis", "framework", "rules", "engine", "output", "runtime",
          "integrations", "__main__"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str) -> set[str]:
    """The torchlint modules ``module`` imports (a name imported from a package counts as
    its submodule when there is one)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "torchlint")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] == "torchlint":
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    found.add(submodule if submodule in MODULES else base)
        stack.extend(ast.iter_child_nodes(node))
    found.discard(module)
    return {name for name in found if name in MODULES}


GRAPH = {module: _imports(module) for module in MODULES}


def test_every_module_belongs_to_a_layer() -> None:
    assert {_layer(module) for module in MODULES} <= set(LAYERS)


def test_no_import_goes_up_a_layer() -> None:
    upward = [f"{module} ({_layer(module)}) imports {target} ({_layer(target)})"
              for module, targets in sorted(GRAPH.items()) for target in sorted(targets)
              if LAYERS.index(_layer(target)) > LAYERS.index(_layer(module))]
    assert upward == []


def test_no_import_cycle() -> None:
    cycles = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(GRAPH[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert cycles == []


def test_rules_use_only_the_rule_api() -> None:
    """A rule module imports from torchlint.framework.api and nowhere else in torchlint, so
    what rules may use is one list, and the engine can change behind it."""
    outside = [f"{module} imports {target}" for module, targets in sorted(GRAPH.items())
               if _layer(module) == "rules" and module != "torchlint.rules"
               for target in sorted(targets) if target != "torchlint.framework.api"]
    assert outside == []


def test_every_rule_judges_its_findings_beside_it() -> None:
    """Each rule says what a run shows of its findings (its ``judge``, in its own module or
    the base it shares); the monitor only records what happened and asks the rule."""
    from torchlint.framework.rule import Rule
    from torchlint.rules import all_rules

    without = [code for code, rule in all_rules().items() if rule.judge.__func__ is Rule.judge.__func__]
    assert without == []
    monitor = MODULES["torchlint.runtime.monitor"].read_text(encoding="utf-8")
    assert "def _judge" not in monitor and ".judge(" in monitor


def test_the_checks_see_real_imports() -> None:
    """The graph is not empty by mistake: the linter imports the tree and the rule base."""
    assert "torchlint.syntax.cst" in GRAPH["torchlint.engine.linter"]
    assert GRAPH["torchlint.rules.data_inplace"] == {"torchlint.framework.api"}
    assert "torchlint.framework.rule" in GRAPH["torchlint.framework.api"]
