"""What to watch in a file: one site per finding, read from the file with ``ast``.

The monitor sees line events for the first line of a statement, so each site carries
the line of the innermost statement around its finding; rules that are judged by
inspecting a value after the statement (TL401's running total, TL305's two operands)
carry the expression to inspect.  This runs in the parent and imports no torch.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Callable, Optional

from torchlint.framework.diagnostics import Diagnostic
from torchlint.runtime.stand_ins import periodic_test
from torchlint.syntax.legacy import repair as repair_legacy_syntax

# Findings of these codes mean nothing at run time (the file could not be linted).
UNJUDGED = ("TL000",)


def _byte_column(line: str, column: int) -> int:
    """ast's 0-based UTF-8 byte offset for a 1-based character column."""
    return len(line[: column - 1].encode("utf-8"))


def _char_column(line: str, offset: int) -> int:
    return len(line.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1


class FilePlan:
    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source
        self.lines = source.splitlines()
        self.tree = ast.parse(source)
        self.statements = [node for node in ast.walk(self.tree) if isinstance(node, ast.stmt)]

    def statement_at(self, row: int, column: int) -> Optional[ast.stmt]:
        line = self.lines[row - 1] if row <= len(self.lines) else ""
        position = (row, _byte_column(line, column))
        best = None
        for node in self.statements:
            start = (node.lineno, node.col_offset)
            end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
            if start <= position < end and (best is None or start >= (best.lineno, best.col_offset)):
                best = node
        return best

    def site(self, diagnostic: Diagnostic) -> dict:
        statement = self.statement_at(diagnostic.row, diagnostic.column)
        return {
            "code": diagnostic.code,
            "path": self.path,
            "line": diagnostic.row,
            "col": diagnostic.column,
            "end_line": diagnostic.end_row,
            "end_col": diagnostic.end_column,
            "stmt_line": statement.lineno if statement is not None else diagnostic.row,
            "related_lines": [note.row for note in diagnostic.related],
            "probe": self._probe(diagnostic, statement),
        }

    def _probe(self, diagnostic: Diagnostic, statement: Optional[ast.stmt]) -> Optional[str]:
        if statement is None:
            return None
        if diagnostic.code == "TL401":
            return _accumulator(statement)
        if diagnostic.code == "TL305":
            calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Name) and node.func.id == "id" and len(node.args) == 1
                     and (node.lineno, node.col_offset) >= (diagnostic.row, 0)]
            operands = [_dotted_or_detached(call.args[0]) for call in calls[:2]]
            if len(operands) == 2 and all(operands):
                return "|".join(operands)  # type: ignore[arg-type]
        if diagnostic.code == "TL220":
            return self._division(diagnostic, statement)
        if diagnostic.code == "TL414":  # `model(x)` / `model.forward(x)`: the module, read before the forward
            return self._forward_module(diagnostic, statement)
        if diagnostic.code == "TL418" and isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]  # `self.layers = [..]`: the module, and the attribute to look at
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                return f"{target.value.id}|{target.attr}"
        return None

    def _forward_module(self, diagnostic: Diagnostic, statement: ast.stmt) -> Optional[str]:
        line = self.lines[diagnostic.row - 1] if diagnostic.row <= len(self.lines) else ""
        start = (diagnostic.row, _byte_column(line, diagnostic.column))
        # `model(x).argmax(1)` starts where `model(x)` does: the call that also ends where
        # the finding ends, else the innermost one.
        calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call)
                 and (node.lineno, node.col_offset) == start]
        end_line = self.lines[diagnostic.end_row - 1] if diagnostic.end_row <= len(self.lines) else ""
        end = (diagnostic.end_row, _byte_column(end_line, diagnostic.end_column))
        calls.sort(key=lambda node: ((node.end_lineno, node.end_col_offset) != end,
                                     (node.end_lineno or 0, node.end_col_offset or 0)))
        if not calls:
            return None
        node = calls[0]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "forward":
            func = func.value
        # `model(x)`; or, for a call that hands the model to the function that evaluates it
        # (`predict(model, x)`, `model.predict(x)`), the first of its receiver and arguments
        # that holds a module when the line starts.
        candidates = [func]
        if isinstance(func, ast.Attribute):
            candidates.append(func.value)
        candidates += [arg for arg in node.args if not isinstance(arg, ast.Starred)]
        candidates += [keyword.value for keyword in node.keywords if keyword.arg is not None]
        names = [name for name in map(_dotted, candidates) if name]
        return "|".join(dict.fromkeys(names)) or None

    def _division(self, diagnostic: Diagnostic, statement: ast.stmt) -> Optional[str]:
        """``dividend|divisor`` of a TL220 division, each a dotted name or an integer, for the
        monitor to read before the statement runs."""
        line = self.lines[diagnostic.row - 1] if diagnostic.row <= len(self.lines) else ""
        start = (diagnostic.row, _byte_column(line, diagnostic.column))
        for node in ast.walk(statement):
            if (getattr(node, "lineno", None), getattr(node, "col_offset", None)) != start:
                continue
            operands: list = []
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                operands = [node.left, node.right]
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
                operands = [node.target, node.value]
            elif isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, ast.Attribute):
                operands = [node.func.value, node.args[0]]  # `a.div(b)`, `a.div_(b)`
            elif isinstance(node, ast.Call) and len(node.args) == 2:
                operands = list(node.args)  # `torch.div(a, b)`
            texts = [_dotted(o) or (str(o.value) if isinstance(o, ast.Constant) and type(o.value) is int else None)
                     for o in operands]
            if len(texts) == 2 and all(texts):
                return "|".join(texts)  # type: ignore[arg-type]
        return None

    def enclosing_function(self, row: int) -> Optional[ast.FunctionDef]:
        best = None
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.lineno <= row <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno:
                    best = node
        return best

    def qualname(self, function: ast.FunctionDef) -> Optional[str]:
        """``f`` for a module-level function, ``C.f`` for a method of a module-level class."""
        if function in self.tree.body:
            return function.name
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and function in node.body:
                return f"{node.name}.{function.name}"
        return None

    def constructor(self, qualname: str) -> Optional[ast.FunctionDef]:
        """The ``__init__`` of the module-level class that owns the method ``qualname``."""
        owner = qualname.rpartition(".")[0]
        for node in self.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == owner:
                return next((item for item in node.body
                             if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        return None

    def parameters(self, function: ast.FunctionDef) -> list[dict]:
        """The parameters a call must supply: name, annotation, whether it has a default."""
        arguments = function.args
        positional = arguments.posonlyargs + arguments.args
        defaults = [False] * (len(positional) - len(arguments.defaults)) + [True] * len(arguments.defaults)
        params = [{"name": a.arg, "annotation": ast.unparse(a.annotation) if a.annotation else None,
                   "default": d, "keyword": False} for a, d in zip(positional, defaults)]
        params += [{"name": a.arg, "annotation": ast.unparse(a.annotation) if a.annotation else None,
                    "default": d is not None, "keyword": True}
                   for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
        uses = parameter_uses(function)
        if function.name == "__init__":
            owner = next((node for node in ast.walk(self.tree)
                          if isinstance(node, ast.ClassDef) and function in node.body), None)
            if owner is not None:
                uses = {**{name: "flag" for name in _stored_flags(owner, function)},
                        **{name: f"sizes:{count}" for name, count in _stored_sizes(owner, function).items()},
                        **{name: "layers" for name in _visited_layers(owner, function)}, **uses}
                for name, read in _stored_attributes(owner, function).items():
                    if name not in uses and len(read) >= 2:
                        uses[name] = "attributes:" + ",".join(sorted(read))
        for param in params:
            if param["name"] in uses:
                param["use"] = uses[param["name"]]
        # `def initialize_weights(*models): for model in models: ...`: one of them, as the
        # loop's body uses it.
        if arguments.vararg is not None:
            for node in ast.walk(function):
                if isinstance(node, ast.For) and isinstance(node.iter, ast.Name) \
                        and node.iter.id == arguments.vararg.arg and isinstance(node.target, ast.Name):
                    item = node.target.id
                    use = parameter_uses(function, extra={item}).get(item)
                    params.append({"name": item, "annotation": None, "default": False, "keyword": False,
                                   **({"use": use} if use else {})})
                    break
        return params


def _visited_layers(owner: ast.ClassDef, init: ast.FunctionDef) -> set[str]:
    """The parameters of ``init`` kept on ``self`` as a module the class calls
    (``self.features(x)``) where the class also visits its layers (``self.modules()``, the
    weight initialization of a VGG): a network with a layer of each usual kind reaches
    every branch of that visit."""
    called = {node.func.attr for node in ast.walk(owner) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
              and node.func.value.id == "self"}
    if "modules" not in called:
        return set()
    return {name for attribute, name in _kept_on_self(init).items() if attribute in called}


def _kept_on_self(init: ast.FunctionDef) -> dict[str, str]:
    """``{attribute: name}`` for each ``self.attribute = name`` in ``init``."""
    return {node.targets[0].attr: node.value.id for node in ast.walk(init)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name)
            and isinstance(node.targets[0], ast.Attribute) and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == "self"}


def _stored_flags(owner: ast.ClassDef, init: ast.FunctionDef) -> set[str]:
    """The parameters of ``init`` kept as ``self.gpu = gpu`` and, in the class, only ever
    tested for truth (``if self.gpu:``): flags, like a function's own (parameter_uses)."""
    kept = _kept_on_self(init)
    parents = {child: node for node in ast.walk(owner) for child in ast.iter_child_nodes(node)}
    tested, other = set(), set()
    for node in ast.walk(owner):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
                and node.attr in kept and isinstance(node.ctx, ast.Load)):
            continue
        if _tested_for_truth(node, parents.get(node)):
            tested.add(node.attr)
        else:
            other.add(node.attr)
    return {kept[attribute] for attribute in tested - other}


def _stored_sizes(owner: ast.ClassDef, init: ast.FunctionDef) -> dict[str, int]:
    """The parameters of ``init`` kept as ``self.input_shape = input_shape`` and unpacked
    in the class (``bs, c, h, w = self.input_shape``): sizes, with how many."""
    kept = _kept_on_self(init)
    return {kept[node.value.attr]: len(node.targets[0].elts) for node in ast.walk(owner)
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], (ast.Tuple, ast.List))
            and not any(isinstance(element, ast.Starred) for element in node.targets[0].elts)
            and isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "self" and node.value.attr in kept}


def _stored_attributes(owner: ast.ClassDef, init: ast.FunctionDef) -> dict[str, set[str]]:
    """The parameters of ``init`` kept as ``self.rnn = decoder_rnn``, with the attributes
    the class reads on them (`self.rnn.hidden_size`)."""
    kept = _kept_on_self(init)
    read: dict[str, set[str]] = {}
    for node in ast.walk(owner):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "self" \
                and node.value.attr in kept and isinstance(node.ctx, ast.Load):
            read.setdefault(kept[node.value.attr], set()).add(node.attr)
    return read


def periodic_guards(tree: ast.AST, rows: list[int]) -> list[int]:
    """The lines of the ``if`` statements whose body holds one of ``rows`` and whose test
    checks a step against a period (`step % log_interval == 0`, `(i + 1) % 100 == 0`):
    logging and checkpointing every N steps, which a short run may never reach."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(periodic_test(part) for part in ast.walk(node.test)) and node.body:
            first, last = node.body[0].lineno, max(getattr(stmt, "end_lineno", stmt.lineno) or 0 for stmt in node.body)
            if any(first <= row <= last for row in rows):
                found.add(node.lineno)
    return sorted(found)


def _tested_for_truth(node: ast.expr, parent: Optional[ast.AST]) -> bool:
    """``node`` is the test of an ``if``/``while``/conditional, an operand of ``and``/``or``, or negated."""
    return isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is node \
        or isinstance(parent, ast.BoolOp) or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)


def package_of(path: str, tree: ast.AST) -> tuple[Optional[str], Optional[str]]:
    """The package the file at ``path`` belongs to and the folder its name starts in, as
    ``python -m pkg.module`` from that folder would import it: its folders with an
    ``__init__.py``, and at least as many as its deepest relative import climbs (``from
    ..utils import x`` in ``models/fcn.py`` makes the project folder a namespace package,
    as the code's author ran it). ``(None, None)`` for a plain script."""
    depth = 0
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, *[".."] * depth, "__init__.py")):
        depth += 1
    climbs = max((node.level for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)), default=0)
    depth = max(depth, climbs)
    parts = os.path.normpath(folder).split(os.sep)
    if depth == 0 or len(parts) <= depth + 1:
        return None, None
    return ".".join(parts[-depth:]), os.sep.join(parts[:-depth]) or os.sep


def parameter_uses(function: ast.FunctionDef, extra: frozenset = frozenset()) -> dict[str, str]:
    """What the function's own code shows a parameter to be, where it shows it: "vgg" (its
    `features` and `classifier` read: torchvision's VGG, as pruning and style-transfer code
    takes it), "layers"
    (a module whose layers are visited, `for m in net.modules()`, never called), "trained"
    (a module whose parameters' gradients are read: `clip_gradients(model, clip)`), "module"
    (`target.parameters()`, `net.eval()`), "layer" (its type tested, its `weight` or `bias`
    read: `def weights_init(m)` applied to every layer), "optimizer" (`opt.step()` and `opt.zero_grad()`),
    "loader" (`for x, y in batches`), "number" (only ever an operand of arithmetic, once
    beside a number: `tau` in `w * (1 - tau) + v * tau`), "flag" (only ever tested for
    truth: `if use_gpu:`), "array" (given to `torch.from_numpy`), "sizes:N" (unpacked
    into N names: `[x_dim, z_dim, h_dim] = dims`), "attributes:a,b" (two or more other
    attributes read: an object). ``extra``: other names to read the same way (the loop
    variable over a ``*models`` parameter)."""
    names = (_parameter_names(function) | set(extra)) - {"self", "cls"}
    attributes: dict[str, set[str]] = {name: set() for name in names}
    iterated_in_pairs: set[str] = set()
    other_loads: dict[str, int] = {name: 0 for name in names}
    with_numbers: set[str] = set()  # an operand beside a number literal somewhere: `1 - tau`
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    type_tested: set[str] = set()  # isinstance(m, nn.Linear), m.__class__.__name__, type(m)
    truth_tested: set[str] = set()  # `if use_gpu:`, `not bidirectional`, `a and b`
    arrays: set[str] = set()  # `torch.from_numpy(embedding)`
    unpacked: dict[str, int] = {}  # `[x_dim, z_dim, h_dim] = dims`: how many names
    scalars: set[str] = set()  # `m.weight.data.normal_(mean, std)`, `nn.init.constant_(w, value)`
    compared: set[str] = set()  # `scores > confidence`
    shapes: dict[str, list[int]] = {}  # `prediction[:, :, 4]`, `boxes[:, 5:5 + n]`: the least size of each dimension
    items: dict[str, str] = {}  # `image_pred = prediction[ind]`: an item of a parameter, by name
    # `if isinstance(model, list): for m in model: init(m)`: the other form the parameter may
    # take, handled apart; what the rest of the code does with it says what it is.
    as_a_list = {id(name) for node in ast.walk(function) if isinstance(node, ast.If) and _list_test(node.test, names)
                 for part in [node.test, *node.body] for name in ast.walk(part)
                 if isinstance(name, ast.Name) and name.id == node.test.args[0].id}
    reads_gradients = any(isinstance(node, ast.Attribute) and node.attr == "grad" for node in ast.walk(function))
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            needed = _sizes_indexed(node.slice)
            if needed is not None:
                _widen(shapes, node.value.id, needed)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Subscript) and isinstance(node.value.value, ast.Name) \
                and node.value.value.id in names and isinstance(node.value.slice, (ast.Name, ast.Constant)):
            items[node.targets[0].id] = node.value.value.id
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLS:
            receiver = _dotted(node.func.value) or ""
            given = node.args[1:] if receiver.rsplit(".", 1)[-1] == "init" else node.args  # nn.init's take the tensor first
            scalars.update(arg.id for arg in [*given, *(k.value for k in node.keywords)]
                           if isinstance(arg, ast.Name) and arg.id in names)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names \
                and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and not any(isinstance(element, ast.Starred) for element in node.targets[0].elts):
            unpacked[node.value.id] = len(node.targets[0].elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "type") \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in names:
            type_tested.add(node.args[0].id)
        if isinstance(node, ast.For) and isinstance(node.target, ast.Tuple):
            iterated = node.iter
            if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) \
                    and iterated.func.id == "enumerate" and iterated.args:
                iterated = iterated.args[0]
            if isinstance(iterated, ast.Name) and iterated.id in names:
                iterated_in_pairs.add(iterated.id)
        if not (isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load)) \
                or id(node) in as_a_list:
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute):
            attributes[node.id].add(parent.attr)
        elif _tested_for_truth(node, parent):
            truth_tested.add(node.id)
        elif isinstance(parent, ast.Compare) and not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                         for op in parent.ops):
            compared.add(node.id)
        elif isinstance(parent, (ast.BinOp, ast.UnaryOp)):
            partner = (parent.right if parent.left is node else parent.left) if isinstance(parent, ast.BinOp) else None
            if isinstance(partner, ast.Constant) and isinstance(partner.value, (int, float)):
                with_numbers.add(node.id)
        else:
            other_loads[node.id] += 1
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Attribute) \
                    and parent.func.attr == "from_numpy":
                arrays.add(node.id)
    for item, container in items.items():
        if item in shapes:
            _widen(shapes, container, [0, *shapes[item]])
    uses = {}
    for name in names:
        if attributes[name] & {"features", "classifier"} and not attributes[name] - _MODULE_ATTRIBUTES - {
                "features", "classifier", "cuda", "cpu", "to"}:
            uses[name] = "vgg"  # `model.features[layer_index]`: shaped like torchvision's VGG
        elif attributes[name] & {"modules", "named_modules", "children", "named_children"} and not other_loads[name]:
            uses[name] = "layers"
        elif attributes[name] & {"parameters", "named_parameters"} and reads_gradients:
            uses[name] = "trained"  # `for p in model.parameters(): p.grad.data.mul_(coef)`: it has gradients
        elif attributes[name] & _MODULE_ATTRIBUTES:
            uses[name] = "module"
        elif (name in type_tested or "__class__" in attributes[name]) and attributes[name] & {"weight", "bias"}:
            uses[name] = "layer"
        elif {"step", "zero_grad"} <= attributes[name] or "param_groups" in attributes[name]:
            uses[name] = "optimizer"
        elif name in iterated_in_pairs and not attributes[name]:
            uses[name] = "loader"
        elif name in with_numbers and not attributes[name] and not other_loads[name] or \
                name in scalars and not attributes[name]:
            uses[name] = "number"
        elif name in truth_tested and not attributes[name] and not other_loads[name] and name not in with_numbers:
            uses[name] = "flag"
        elif name in compared and not attributes[name] and not other_loads[name] and name not in shapes:
            uses[name] = "number"  # only ever compared: `scores > confidence`, `if loss < best`
        elif name in shapes and len(shapes[name]) >= 2 and attributes[name] <= _TENSOR_ATTRIBUTES:
            # Indexed in more dimensions than a matrix, or past the sizes made here: a tensor of that shape.
            sizes = [max(size, 4) for size in shapes[name]]
            if len(sizes) > 2 or max(sizes) > 4:
                uses[name] = "shape:" + ",".join(map(str, sizes))
        elif name in arrays:
            uses[name] = "array"
        elif name in unpacked and not attributes[name]:
            uses[name] = f"sizes:{unpacked[name]}"
        elif attributes[name] and _SETTINGS_NAME.match(name):
            uses[name] = "settings"
        elif len(attributes[name]) >= 2 or attributes[name] and not attributes[name] <= _TENSOR_ATTRIBUTES:
            # `data.HP_gpu`, `data.word_alphabet`: an object of some class (call_sites finds
            # the project's class that has them all; the one class that has it, for one
            # attribute: `action_noise.noise()`).
            uses[name] = "attributes:" + ",".join(sorted(attributes[name]))
    return uses


def _list_test(test: ast.expr, names: set[str]) -> bool:
    """``isinstance(name, list)`` (or ``tuple``, or both) for a parameter ``name``."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id in names):
        return False
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    return all(isinstance(kind, ast.Name) and kind.id in ("list", "tuple") for kind in kinds)


# What code reads of a tensor it indexes (`prediction.size(0)`, `x.new(..)`, `boxes.shape`).
_TENSOR_ATTRIBUTES = frozenset({"size", "shape", "new", "dim", "view", "reshape", "contiguous", "float", "long",
                                "cuda", "cpu", "to", "clone", "detach", "data", "unsqueeze", "squeeze", "transpose",
                                "permute", "sum", "mean", "max", "min", "numel", "type", "type_as", "new_zeros",
                                "new_ones", "new_full", "dtype", "device", "is_cuda", "half", "expand", "repeat"})


def _widen(shapes: dict[str, list[int]], name: str, needed: list[int]) -> None:
    """Add what one more index shows (``needed``) to the least sizes known of ``name``."""
    known = shapes.get(name, [])
    width = max(len(known), len(needed))
    known, needed = known + [0] * (width - len(known)), needed + [0] * (width - len(needed))
    shapes[name] = [max(a, b) for a, b in zip(known, needed)]


def _sizes_indexed(index: ast.expr) -> Optional[list[int]]:
    """The least size of each dimension an index shows: ``[:, :, 4]`` needs 3 dimensions, the
    last more than 4; ``[:, 5:5 + n]`` 2, the last at least 5 + 4 (``n`` a size made here).
    None for an index that says nothing (a name, an ellipsis)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    needed = []
    for part in parts:
        if isinstance(part, ast.Constant) and type(part.value) is int and part.value >= 0:
            needed.append(part.value + 1)
        elif isinstance(part, ast.Slice):
            bounds = [_least(bound) for bound in (part.lower, part.upper)]
            needed.append(max(bounds[1] or 0, (bounds[0] or 0) + 1 if part.lower is not None else 0))
        elif isinstance(part, ast.Constant) and part.value is Ellipsis:
            return None
        else:
            needed.append(0)
    return needed if any(needed) or len(parts) > 1 else None


def _least(bound: Optional[ast.expr]) -> Optional[int]:
    """A slice bound's least value: ``4``, ``5 + num_classes`` (9: sizes made here are 4)."""
    if isinstance(bound, ast.Constant) and type(bound.value) is int and bound.value >= 0:
        return bound.value
    if isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Add):
        left, right = _least(bound.left), _least(bound.right)
        if left is not None or right is not None:
            return (left if left is not None else 4) + (right if right is not None else 4)
    return None


# The methods (and `nn.init` functions) that fill a tensor from numbers: `normal_(mean, std)`.
_FILLS = frozenset({"normal_", "uniform_", "fill_", "constant_", "log_normal_", "exponential_", "cauchy_",
                    "geometric_", "trunc_normal_"})

# Parameters that hold a program's options: `Solver(args)`, `Trainer(config)`, `Model(opt)`.
_SETTINGS_NAME = re.compile(r"^(args|arguments|opts?|options|config|cfg|conf|hparams|hp|flags|FLAGS|settings)$")


def read_tree(path: str) -> Optional[ast.Module]:
    """A project file's syntax tree, from its first megabyte; None where it cannot be read
    or parsed (binary, gone).  Python 2 code is read as its runs run it: rewritten to
    Python 3 of the same length (syntax.legacy)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 20)
    except OSError:
        return None
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError):
        pass
    try:
        repaired = repair_legacy_syntax(data.decode("utf-8"))
        return ast.parse(repaired[0]) if repaired is not None else None
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None


# How the project's files are read: read_tree, or a run's cache of it (check.py).
TreeReader = Callable[[str], Optional[ast.Module]]


def argparse_defaults(paths: list[str], limit: int = 400, read: TreeReader = read_tree) -> dict[str, object]:
    """What ``parser.parse_args([])`` would give for every option the project's files
    declare (``add_argument('--lr', type=float, default=0.01)`` -> ``lr: 0.01``), read with
    ``ast``: literal defaults only (converted by ``type=int``/``float`` as argparse does),
    ``store_true`` False, ``store_false`` True, and None for an option without a default."""
    found: dict[str, object] = {}
    for path in paths[:limit]:
        tree = read(path)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "add_argument":
                option = _declared_option(node)
                if option is not None and option[0] not in found:
                    found[option[0]] = option[1]
    return found


def string_options(tree: ast.AST) -> dict[str, str]:
    """The options a file declares with a literal string default, by the flag a command
    line gives them (``add_argument('--suffix', type=str, default='_springs')`` ->
    ``{'--suffix': '_springs'}``)."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                     and arg.value.startswith("-")]
            option = _declared_option(node)
            if flags and option is not None and isinstance(option[1], str):
                found.setdefault(max(flags, key=len), option[1])
    return found


def _declared_option(call: ast.Call) -> Optional[tuple[str, object]]:
    names = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    if "dest" in keywords and isinstance(keywords["dest"], ast.Constant):
        dest = keywords["dest"].value
    else:
        longs = [name for name in names if name.startswith("--")]
        dest = (longs or names or [""])[0].lstrip("-").replace("-", "_")
    if not isinstance(dest, str) or not dest.isidentifier():
        return None
    action = keywords.get("action")
    action = action.value if isinstance(action, ast.Constant) else None
    if action == "store_true":
        default: object = False
    elif action == "store_false":
        default = True
    else:
        default = None
    if "default" in keywords:
        try:
            default = ast.literal_eval(keywords["default"])
        except ValueError:
            return None  # computed (`default=os.getcwd()`): nothing to take from the text
    kind = keywords.get("type")
    if isinstance(default, str) and isinstance(kind, ast.Name) and kind.id in ("int", "float"):
        try:
            default = int(default) if kind.id == "int" else float(default)
        except ValueError:
            return None
    return dest, default


_MODULE_ATTRIBUTES = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children",
                                "named_children", "state_dict", "load_state_dict", "eval", "train", "apply",
                                "buffers", "named_buffers"})


def gradient_parameters(function: ast.FunctionDef) -> list[str]:
    """The parameters whose gradients the function's own code works with (`w.grad`,
    `w.backward()`, `w.requires_grad`, `w.register_hook(..)`...): only those may be
    synthesized requiring grad, since a confirmation that rests on a gradient no caller
    asked for is one the real program could not produce."""
    names = _parameter_names(function)
    return sorted({node.value.id for node in ast.walk(function)
                   if isinstance(node, ast.Attribute) and node.attr in _GRADIENT_WORDS
                   and isinstance(node.value, ast.Name) and node.value.id in names})


# How code names the classes of its classification: `voc.num_classes`, `n_classes`.
_CLASS_COUNT_NAMES = frozenset({"num_classes", "n_classes", "nclasses", "num_class", "n_class", "class_num"})


def class_count(function: ast.FunctionDef) -> Optional[str]:
    """The class count a function reads from outside itself, as text to evaluate where it
    runs: `voc.num_classes`, a module's `NUM_CLASSES`; None where it reads none (a parameter
    or a local of that name is the caller's or its own)."""
    own = _parameter_names(function) | {node.id for node in ast.walk(function)
                                        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr.lower() in _CLASS_COUNT_NAMES \
                and isinstance(node.value, ast.Name) and node.value.id not in own and node.value.id != "self":
            return ast.unparse(node)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id.lower() in _CLASS_COUNT_NAMES \
                and node.id not in own:
            return node.id
    return None


def guarded_by_defaults(function: ast.FunctionDef) -> dict[str, dict]:
    """The parameters whose default keeps a branch from running: ``{name: {"default":
    "False", "lines": [[first, last], ...]}}`` for `if use_cuda:` (default False), `if not
    keep:` (default True), `if noise is not None:` (default None). A call that never
    reached a flagged line there is worth a call with the other value. A parameter without
    a default, which a call is given a value for, guards the branch it takes when None:
    the `else` of `if pretrained is not None:`, the body of `if pretrained is None:`
    (``"default": "required"``: the other value is None)."""
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults):]], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    literal = {name: value.value for name, value in defaults.items()
               if isinstance(value, ast.Constant) and value.value in (None, True, False)}
    required = {a.arg for a in [*positional, *arguments.kwonlyargs]} - set(defaults) - {"self", "cls"}
    guarded: dict[str, dict] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or not node.body:
            continue
        test, name, wanted = node.test, None, None
        if isinstance(test, ast.Name):
            name, wanted = test.id, True
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
            name, wanted = test.operand.id, False
        elif isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and len(test.ops) == 1 \
                and isinstance(test.ops[0], (ast.Is, ast.IsNot)) and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None:
            name, wanted = test.left.id, "not None" if isinstance(test.ops[0], ast.IsNot) else "None"
            if name in required:
                branch = node.orelse if wanted == "not None" else node.body
                if branch:
                    entry = guarded.setdefault(name, {"default": "required", "lines": []})
                    entry["lines"].append([branch[0].lineno, branch[-1].end_lineno])
                continue
        if name not in literal:
            continue
        default = literal[name]
        if wanted == "not None" and default is None or wanted is True and default in (False, None) \
                or wanted is False and default is True:
            entry = guarded.setdefault(name, {"default": repr(default), "lines": []})
            entry["lines"].append([node.body[0].lineno, node.body[-1].end_lineno])
    return guarded


def _parameter_names(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}


_GRADIENT_WORDS = frozenset({"backward", "grad", "requires_grad", "requires_grad_", "retain_grad", "register_hook",
                             "grad_fn", "is_leaf"})


def _accumulator(statement: ast.stmt) -> Optional[str]:
    """The running total a TL401 statement grows: `total += loss`, `total = total + loss`,
    `losses.append(loss)`."""
    if isinstance(statement, ast.AugAssign):
        return _dotted(statement.target)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return _dotted(statement.targets[0])
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute):
            return _dotted(func.value)
    return None


def _dotted_or_detached(node: ast.expr) -> Optional[str]:
    """A dotted name, or one with ``.detach()`` after it (``a.detach()``: the monitor takes
    the tensor's own ``detach``, never a user's method, to look at it)."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "detach":
        inner = _dotted(node.func.value)
        return f"{inner}.detach()" if inner else None
    return _dotted(node)


def _dotted(node: ast.expr) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None
