"""Arguments from the project's own calls: before a function or class is called with
synthesized arguments, look for the calls the project itself makes to it, and take each
argument whose value the text fixes (``ResNeXt(baseWidth, cardinality, [3, 4, 6, 3], 1000)``
gives ``layers=[3, 4, 6, 3]``; ``retina(g=64, k=3, s=2)`` in a test gives all three).

Read with ``ast`` in the parent; no code runs.  A value is taken only when it is a literal,
or arithmetic on literals and on names the calling file or function binds to such values
once (``n_labels = 10`` at the top of the script): a value the real program passes, not one
made up.  Method calls other than a class's construction are not matched: `model.train()`
says nothing about a function named ``train``.
"""

from __future__ import annotations

import ast
import operator
import os
from typing import Any, Optional

from torchlint.runtime.plan import TreeReader, read_tree


class NotFixed(Exception):
    """The expression's value depends on what only a run knows."""


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
              ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow}


def fixed_value(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of ``node`` when the text alone decides it, else NotFixed."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, bytes):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [fixed_value(item, names) for item in node.elts if not isinstance(item, ast.Starred)]
        if len(items) != len(node.elts):
            raise NotFixed
        return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {fixed_value(key, names): fixed_value(value, names)  # type: ignore[arg-type]
                for key, value in zip(node.keys, node.values)}
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = fixed_value(node.operand, names)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = fixed_value(node.left, names), fixed_value(node.right, names)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
        if numbers and not (isinstance(node.op, ast.Pow) and abs(right) > 64):
            try:
                return _OPERATORS[type(node.op)](left, right)
            except ArithmeticError:
                raise NotFixed from None
    raise NotFixed


def _bindings(body: list[ast.stmt], before: Optional[int] = None) -> dict[str, Any]:
    """The names these statements bind once to a fixed value (``x = 784``, ``a, b = 1, [2, 3]``),
    in their order; a name bound twice, or otherwise (a loop, an import), is left out."""
    values: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for statement in body:
        if before is not None and statement.lineno >= before:
            break
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                counts[node.id] = counts.get(node.id, 0) + 1
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        pairs = [(target, statement.value)]
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(statement.value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(statement.value.elts):
            pairs = list(zip(target.elts, statement.value.elts))
        for name, expression in pairs:
            if isinstance(name, ast.Name):
                try:
                    values[name.id] = fixed_value(expression, values)
                except NotFixed:
                    values.pop(name.id, None)
    return {name: value for name, value in values.items() if counts.get(name) == 1}


class CallSites:
    """The calls in a project's files, by the name called."""

    def __init__(self, paths: list[str], root: str, read: TreeReader = read_tree):
        self.root = root
        self.calls: dict[str, list[tuple[str, ast.Call, dict[str, Any]]]] = {}
        self.defined_in: dict[str, set[str]] = {}
        # Module-level classes of files that import without running anything: (path, name,
        # bases, what an instance has: attributes set on self, methods, class attributes).
        self.classes: list[tuple[str, str, list[str], set[str]]] = []
        # The names a module of the project can be imported by: `import glimpse`, `from drqa import ...`.
        self.project_names = {part for path in paths
                              for part in os.path.splitext(os.path.relpath(path, root))[0].split(os.sep)}
        for path in paths:
            tree = read(path)
            if tree is None:
                continue
            self._collect(path, tree)
            self._collect_classes(path, tree)
        order = {path: number for number, path in enumerate(paths)}
        for calls in self.calls.values():  # the first call in the shallowest file first
            calls.sort(key=lambda found: (order[found[0]], found[1].lineno, found[1].col_offset))

    def _collect(self, path: str, tree: ast.Module) -> None:
        module_names = _bindings(tree.body)
        # Names bound by imports: of the project's modules (`import glimpse`, `from .layers import
        # Attention`) or of others (`import numpy as np`, `from numpy import unique`).
        ours, others = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    (ours if top in self.project_names else others).add(alias.asname or top)
            elif isinstance(node, ast.ImportFrom):
                project = node.level > 0 or (node.module or "").split(".")[0] in self.project_names
                for alias in node.names:
                    (ours if project else others).add(alias.asname or alias.name)
        defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        self.defined_in[path] = defined
        modules = ours - others
        scopes: list[tuple[ast.AST, Optional[ast.FunctionDef]]] = [(tree, None)]
        while scopes:
            scope, function = scopes.pop()
            for node in ast.iter_child_nodes(scope):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    scopes.append((node, node))
                    continue
                for inner in _walk_skipping_functions(node, scopes, function):
                    if not isinstance(inner, ast.Call):
                        continue
                    name = _called_name(inner.func, modules)
                    if name is not None and not (isinstance(inner.func, ast.Name) and name in others - ours):
                        self.calls.setdefault(name, []).append((path, inner, module_names if function is None
                                                                 else _local_names(function, module_names,
                                                                                   inner.lineno)))

    def _collect_classes(self, path: str, tree: ast.Module) -> None:
        if not all(_runs_nothing(node) for node in tree.body):
            return
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            has = {item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
            has |= {target.id for item in node.body if isinstance(item, ast.Assign)
                    for target in item.targets if isinstance(target, ast.Name)}
            has |= {target.attr for inner in ast.walk(node) if isinstance(inner, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                    for target in (inner.targets if isinstance(inner, ast.Assign) else [inner.target])
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"}
            bases = [base.attr if isinstance(base, ast.Attribute) else base.id for base in node.bases
                     if isinstance(base, (ast.Name, ast.Attribute))]
            self.classes.append((path, node.name, bases, has))

    def project_class(self, used: set[str]) -> Optional[tuple[str, str]]:
        """``(path, class name)`` of the one project class whose instances have every
        attribute in ``used`` (a parameter's `data.HP_gpu`, `data.word_alphabet`...), with the
        fewest others; None where no class, or more than one equally close, has them all.
        One attribute says less: the class must be the only one with it (`action_noise.noise()`
        and the project's `OUNoise`), and it must not be what every module has."""
        if not used or len(used) == 1 and used <= _MODULE_MEMBERS:
            return None
        fitting = []
        for path, name, _bases, _has in self.classes:
            has = self._attributes(name, path)
            if used <= has:
                fitting.append((len(has), path, name))
        fitting.sort()
        if not fitting or len(fitting) > 1 and (fitting[0][0] == fitting[1][0] or len(used) == 1):
            return None
        return fitting[0][1], fitting[0][2]

    def _attributes(self, name: str, path: str, depth: int = 3) -> set[str]:
        """What an instance of the class has, with what its project bases give it."""
        found = next(((bases, has) for p, n, bases, has in self.classes if n == name and p == path), None) \
            or next(((bases, has) for _p, n, bases, has in self.classes if n == name), None)
        if found is None or depth == 0:
            return set()
        bases, has = found
        has = set(has)
        for base in bases:
            if base == "Module":
                has |= _MODULE_MEMBERS
            else:
                has |= self._attributes(base, path, depth - 1)
        return has

    def arguments(self, name: str, params: list[dict], defined_in: str) -> dict[str, tuple[str, str]]:
        """``{param: (value as Python text, "file:line")}`` from the project's call of ``name``
        (defined in the file ``defined_in``) that fixes the most parameters without a
        default (to something other than None); with it, the values that call gives the
        others (`feature_output=True`). Nothing from a call that fixes none of them."""
        wanted = {param["name"] for param in params}
        required = {param["name"] for param in params if not param["default"]}
        best: dict[str, tuple[str, str]] = {}
        for path, call, names in self.calls.get(name, ()):
            if path != defined_in and isinstance(call.func, ast.Name) and name in self.defined_in.get(path, ()):
                continue  # another file's own `train()`
            found = {}
            where = f"{os.path.relpath(path, self.root)}:{call.lineno}"
            for param, node in _matched(call, params).items():
                if param not in wanted:
                    continue
                try:
                    value = fixed_value(node, names)
                except (NotFixed, TypeError, ValueError, RecursionError):
                    continue
                if value is None and param in required:
                    continue  # `nb_classes=None` turns a part off: a value made here reaches more
                text = repr(value)
                try:
                    if ast.literal_eval(text) != value:
                        continue
                except (ValueError, SyntaxError, RecursionError):
                    continue
                found[param] = (text, where)
            if len(found.keys() & required) > len(best.keys() & required):
                best = found
        return best


def _local_names(function: ast.FunctionDef, module_names: dict[str, Any], line: int) -> dict[str, Any]:
    """The fixed names a call on ``line`` of ``function`` sees: the module's, less those the
    function binds itself (its parameters, any assignment), plus its own fixed ones before the line."""
    local = {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    arguments = function.args
    local |= {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                              arguments.vararg, arguments.kwarg] if a is not None}
    return {**{name: value for name, value in module_names.items() if name not in local},
            **_bindings(function.body, line)}


# What every nn.Module has, beside what its class defines.
_MODULE_MEMBERS = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "named_children",
                             "state_dict", "load_state_dict", "eval", "train", "apply", "cuda", "cpu", "to", "forward",
                             "zero_grad", "training", "buffers", "register_buffer", "add_module"})


def _runs_nothing(node: ast.stmt) -> bool:
    """A module-level statement that only defines (an import, a function, a class, a
    name, a docstring, a `__main__` block, an import fallback): importing its file runs no
    program."""
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                         ast.Assign, ast.AnnAssign, ast.Pass)):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.If):
        test = ast.unparse(node.test)
        return "__name__" in test or all(_runs_nothing(item) for item in node.body + node.orelse)
    if isinstance(node, ast.Try):
        return all(_runs_nothing(item) for item in node.body + [s for h in node.handlers for s in h.body])
    return False


def _walk_skipping_functions(node: ast.AST, scopes: list, function: Optional[ast.FunctionDef]):
    """The nodes of ``node`` outside the functions and classes it defines (queued as scopes)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append((current, current))
            continue
        if isinstance(current, ast.ClassDef):
            scopes.append((current, function))
            continue
        yield current
        stack.extend(ast.iter_child_nodes(current))


def _called_name(func: ast.expr, modules: set[str]) -> Optional[str]:
    """``f`` for ``f(...)`` and for ``module.f(...)`` where ``module`` is an imported name;
    None for a method of a value (``model.train()``)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
        return func.attr
    return None


def _matched(call: ast.Call, params: list[dict]) -> dict[str, ast.expr]:
    """Which argument expression of ``call`` each parameter gets."""
    matched: dict[str, ast.expr] = {}
    positional = [param["name"] for param in params if not param["keyword"]]
    for name, argument in zip(positional, call.args):
        if isinstance(argument, ast.Starred):
            break
        matched[name] = argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            matched[keyword.arg] = keyword.value
    return matched
