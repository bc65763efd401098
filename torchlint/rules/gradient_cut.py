"""TL410 gradient-cut: inside ``forward`` (or a loss), a tensor of the autograd graph turned
into numpy or Python values that flow into what the function returns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Binding, BindingKind, Fix, Kind, Observation, Rule, Step,
    Verdict, cst, dotted, is_true, iter_nodes, keyword, quote, torch_api, torch_facts,
)

# Methods that move or convert a tensor and keep its values (and its graph): stripped from
# `h.detach().cpu().numpy()` down to the tensor whose values are taken, `h`.
_MOVES = frozenset({
    "cpu", "cuda", "to", "float", "double", "half", "bfloat16", "clone",
    "contiguous", "squeeze", "unsqueeze", "flatten", "view", "reshape", "type", "type_as", "view_as", "t",
})
# Methods that keep a value's values (a numpy array's, a Python number's, a new tensor's):
# what they give still carries what the cut took.
_VALUE_METHODS = frozenset({
    "astype", "float", "double", "half", "to", "cuda", "cpu", "reshape", "view", "view_as", "unsqueeze",
    "squeeze", "transpose", "permute", "copy", "clone", "contiguous", "expand", "expand_as", "repeat", "type",
    "type_as", "flatten", "ravel", "mean", "sum", "prod", "exp", "log", "sqrt", "tanh", "sigmoid", "clip",
    "clamp", "abs", "neg", "mul", "add", "sub", "div", "pow", "requires_grad_", "float_", "unsqueeze_",
    "squeeze_", "T",
})
# Tensor methods whose tensor arguments are values the result is computed from.
_ARITHMETIC_METHODS = frozenset({
    "add", "sub", "mul", "div", "true_divide", "pow", "matmul", "mm", "bmm", "add_", "sub_", "mul_", "div_",
    "pow_", "lerp", "lerp_", "addcmul", "addcdiv", "where", "new_tensor",
})
# torch and numpy functions whose every positional argument is a value of the result.
_ARITHMETIC_FUNCTIONS = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "power", "matmul",
    "mm", "bmm", "dot", "where", "maximum", "minimum", "fmax", "fmin", "lerp", "addcmul", "addcdiv",
})
# torch and numpy functions that make a tensor from sizes (`torch.zeros(n)`, `np.arange(k)`):
# a value passed there is a size, not something the result is computed from.
_SIZE_FUNCTIONS = frozenset({
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "randperm", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "tril_indices", "triu_indices", "identity", "indices",
})
# Libraries computing on numpy arrays: what they give is computed from their first argument.
_ARRAY_LIBRARIES = frozenset({"scipy", "skimage", "cv2", "sklearn", "PIL"})
# Builtins whose result is computed from the value they are given.
_VALUE_BUILTINS = frozenset({"float", "abs", "max", "min", "sum", "complex"})
# Step functions, integer conversions and indices: their gradient is zero (or none) in torch
# too, so a value that goes through one loses nothing by leaving torch (`int(t)`,
# `a.astype(int)`, `np.round(a)`, `h.argmax()`). The tensor methods whose result is an integer
# tensor whatever the input (`argmax`, `long`, `nonzero`) come from the torch facts.
_STEP_NAMES = frozenset({
    "round", "around", "rint", "floor", "ceil", "trunc", "fix", "sign", "signbit", "digitize", "searchsorted",
    "bucketize", "flatnonzero", "unique", "bincount", "histogram", "histc", "multinomial", "bernoulli", "poisson",
    "bool", "floor_divide", "isclose", "isnan", "isinf", "isfinite", "all", "any",
}) | torch_facts.methods(integer="always")
# Of the results of these, item 1 holds indices: `h.max(1)[1]`, `_, idx = h.topk(k)`.
_WITH_INDICES = torch_facts.methods(integer="indices")
_INTEGER_DTYPE = re.compile(r"\b(?:u?int\d*|long|short|bool\w*|byte)\b")
# Calls whose arguments are only shown: a use there is no path to the output.
_SHOWING = frozenset({"print", "log", "info", "debug", "warning", "warn", "add_scalar", "add_histogram", "append_log"})
# Names of a flag that says the module is training (`self.training`, `is_training`).
_TRAINING_FLAGS = frozenset({"training", "is_training", "train", "train_mode"})
# Layers whose output is not meant to be trained through (a teacher, a target network).
_NOT_TRAINED = re.compile(r"teacher|target|ema\b|_ema|momentum|frozen|fixed|pretrained|reference|critic_old", re.I)
# Classes that only run for inference (an export wrapper, a predictor, a post-processor).
_INFERENCE_CLASSES = re.compile(r"Predictor|Inference|Export|Post[Pp]rocess|Demo|Deploy|Evaluat")
_KINDS_CARRYING = frozenset({Kind.TENSOR, Kind.SEQUENCE, Kind.TUPLE, Kind.DICT, Kind.PACKED})


@dataclass(frozen=True)
class _Cut:
    """Where a tensor's values leave torch: ``node`` (the conversion), the tensor whose values
    it takes (``tensor``) and how it says so."""

    node: cst.Call
    tensor: cst.BaseExpression
    how: str


@dataclass(frozen=True)
class _Flow:
    """How the cut's values reach the function's result: the assignments on the way and the
    returned expression they end in."""

    assignments: tuple[cst.CSTNode, ...]
    returned: cst.BaseExpression
    numpy_call: Optional[cst.Call]  # the first numpy function the values go through


class GradientCut(Rule):
    code = "TL410"
    name = "gradient-cut"
    summary = ("inside `forward`, a graph tensor turned into numpy or Python values (`.numpy()`, `.item()`, "
               "`float()`) that flow into the output: the layers before it get no gradient")
    message = (
        "`{tensor}` is part of the autograd graph{source}; `{cut}` takes its values out of torch, and they flow "
        "into the returned `{returned}` (line {line}): {layer} no gradient through this path; {advice}"
    )
    fix = Applicability.DISPLAY_ONLY
    requires = (r"\bforward\b|backward", r"numpy|\.item\(|tolist|\bfloat\(|\bnp\.|\bmath\.|tensor\(")
    references = (
        ("Autograd mechanics", "https://pytorch.org/docs/stable/notes/autograd.html"),
        ("torch.Tensor.item", "https://pytorch.org/docs/stable/generated/torch.Tensor.item.html"),
        ("torch.Tensor.numpy", "https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html"),
        ("Retaining gradients after converting to numpy then PyTorch (PyTorch forums)",
         "https://discuss.pytorch.org/t/retaining-gradients-after-comverting-to-numpy-then-pytorch/194702"),
        ("ruff issue 12349: prefer torch over numpy inside nn.Module",
         "https://github.com/astral-sh/ruff/issues/12349"),
    )
    docs = """
    ## What it does
    Flags, inside the `forward` method of an `nn.Module` subclass (and inside a function
    whose result a `backward()` in the same file differentiates), a tensor of the
    autograd graph turned into numpy or Python values (`t.detach().cpu().numpy()`,
    `t.data.numpy()`, `t.item()`, `t.tolist()`, `float(t)`, `np.tanh(t.detach())`,
    `math.exp(t)`, `torch.tensor(t)`) when what comes out flows, through assignments in
    that function, into the tensor it returns as a value (an operand of arithmetic, the
    input of a layer, a tensor made from it) and nothing else carries `t` itself to the
    result. That `t` is part of the graph (the output of a layer, or computed from
    one) comes from the inference, with its evidence; the finding names the layer that
    gets no gradient and the returned expression.

    A value used only as a size, an index, a loop bound, an `if` condition, or returned
    as a Python number for logging is left alone; so is `t.detach()` that stays in
    torch (a target network, a straight-through estimator `x + (q - x).detach()`), code
    under `torch.no_grad()`, code that runs only when `self.training` is false, methods
    other than `forward`, and a cut when `t` also reaches the output directly
    (`x / float(x.norm())`: `x` still gets its gradient). Step functions and integers
    are left alone too (`int(t)`, `a.astype(int)`, `np.round(a)`, `h.argmax()`,
    `h.max(1)[1]`): torch gives them no gradient either, so nothing is lost. So are
    cuts from a layer meant to stay fixed (a file that sets `requires_grad = False`, a
    `teacher`, `target` or `ema` network) and the `forward` of a class named for
    inference (`Predictor`, `Export`, `PostProcess`...).

    ## Why is this bad?
    Autograd records only torch operations on tensors. A numpy array or a Python float
    has no history: the tensor built from it again (`torch.from_numpy(a)`,
    `torch.tensor(v)`, or `out * v`) is a new leaf, and `backward()` stops there. The
    layers that computed `t` get no gradient through this path, and if it is the only
    one, their `.grad` stays `None` and they never train, without any error or warning.

    ## What to do instead
    Compute it in torch: `torch.tanh(h)` instead of `np.tanh(h.detach().numpy())`, `h`
    itself (a 0-dim tensor broadcasts) instead of `h.item()` or `float(h)`. When no
    gradient should flow there, write `h.detach()` and stay in torch, which says so.

    ## Fix (display-only)
    The torch equivalent is shown; rewriting numpy code into torch is left to its author.
    """
    bad = (
        Bad(
            """
            import numpy as np
            import torch
            import torch.nn as nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = nn.Linear(4, 8)
                    self.fc2 = nn.Linear(8, 2)

                def forward(self, x):
                    h = self.fc1(x)
                    squashed = np.tanh(h.detach().numpy())
                    return self.fc2(torch.from_numpy(squashed))
            """,
            reported=((13, "h.detach().numpy()"),),
        ),
        Bad(
            """
            import torch
            import torch.nn as nn

            class Gated(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = nn.Linear(8, 1)
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    gate = torch.sigmoid(self.gate(x)).mean()
                    return self.proj(x) * gate.item()
            """,
            reported=((12, "gate.item()"),),
        ),
    )
    good = (
        """
        import numpy as np
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 2)

            def forward(self, x):
                h = torch.tanh(self.fc1(x))
                h = h / float(h.norm())  # `h` still reaches the output
                q = torch.round(h)
                h = h + (q - h).detach()  # straight-through: stays in torch
                k = int(h.argmax(1).max().item())  # an index
                return self.fc2(h)[:, : k + 1]

            def predict(self, x):
                return np.tanh(self.forward(x).detach().numpy())
        """,
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        forward = node.name.value == "forward"
        if not forward and not self._is_differentiated(node):
            return
        scope = self._scope(node)
        if scope is None or (forward and not self._is_forward(scope) and not self._is_differentiated(node)):
            return
        if self.ctx.grad_disabled(node.body) is not None:
            return
        for inner in iter_nodes(node.body):
            if not isinstance(inner, cst.Call) or self.ctx.enclosing_function(inner) is not node:
                continue
            cut = self._cut(inner)
            if cut is not None:
                self._check(cut, node, scope)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        left = run.every("graph-left")
        attached = next((details for details in left if details["requires_grad"]), None)
        if attached is not None:
            state = f"had grad_fn={attached['grad_fn']}" if attached["grad_fn"] else "was a leaf that requires grad"
            verb = "took its values"
            if attached["how"] in (".detach()", ".data"):
                then = next((details["how"] for details in left[left.index(attached) + 1:]
                             if details["how"] not in (".detach()", ".data")), None)
                verb = "cut it from the graph" + (f" and `{then}` took its values" if then else "")
            return Verdict(CONFIRMED, f"{quote(attached['where'])}: the tensor {state} when `{attached['how']}` "
                                      f"{verb}: no gradient flows back through this line")
        if left:
            how = left[0]["how"]
            return Verdict(NOT_REPRODUCED, f"the tensor had no grad_fn and did not require grad when `{how}` took its "
                                           "values: it was not part of the graph on this run")
        return Verdict(NOT_REPRODUCED, "no tensor left torch at this line on this run")

    # --- which functions ----------------------------------------------------------

    def _scope(self, node: cst.FunctionDef):
        scopes = self.ctx.cache.get("TL410 scopes")
        if scopes is None:
            scopes = self.ctx.cache["TL410 scopes"] = {id(scope.node): scope for scope in self.ctx.model.scopes}
        return scopes.get(id(node))

    def _is_forward(self, scope) -> bool:
        """``forward`` of an ``nn.Module`` subclass that is not an inference-only class."""
        function = scope.function
        return self.ctx.is_module_forward(function) and not _INFERENCE_CLASSES.search(function.cls.name)

    def _is_differentiated(self, node: cst.FunctionDef) -> bool:
        """A module-level function whose result a ``backward()`` of this file differentiates:
        ``loss = my_loss(out, y)`` (or ``loss = ce + my_loss(out, y)``), ``loss.backward()``."""
        if "backward" not in self.ctx.text or node.parent is not self.ctx.module:
            return False
        found = self.ctx.cache.get("TL410 differentiated")
        if found is None:
            found = self.ctx.cache["TL410 differentiated"] = self._differentiated_functions()
        return id(node) in found

    def _differentiated_functions(self) -> set[int]:
        found: set[int] = set()
        for call in iter_nodes(self.ctx.module):
            func = call.func if isinstance(call, cst.Call) else None
            if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"
                    and self.ctx.tensor(func.value) is not None):
                continue
            expressions = [func.value]
            for _ in range(2):  # the loss, and the terms it adds up
                more = []
                for expression in expressions:
                    for name in iter_nodes(expression):
                        if isinstance(name, cst.Name):
                            more += self.ctx.assigned_values(name) or ()
                expressions += more
            for expression in expressions:
                for inner in iter_nodes(expression):
                    if isinstance(inner, cst.Call):
                        callee = self.ctx.infer(inner.func)
                        if callee is not None and callee.kind is Kind.FUNCTION and callee.function is not None \
                                and isinstance(callee.function.node, cst.FunctionDef):
                            found.add(id(callee.function.node))
        return found

    # --- where values leave torch -----------------------------------------------------

    def _cut(self, node: cst.Call) -> Optional[_Cut]:
        func = node.func
        arguments = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if isinstance(func, cst.Attribute) and func.attr.value in ("numpy", "item", "tolist") \
                and self.ctx.tensor(func.value) is not None:
            tensor, detached = self._strip(func.value)
            if func.attr.value == "numpy" and not detached and not node.args:
                return None  # `.numpy()` of a tensor that requires grad raises at once
            return _Cut(node, tensor, f"`.{func.attr.value}()`")
        qualname = self.ctx.qualname(func)
        if qualname is None or len(arguments) != 1 and not qualname.startswith("numpy."):
            return None
        if not arguments or self.ctx.tensor(arguments[0].value) is None:
            return None
        tensor, detached = self._strip(arguments[0].value)
        if qualname == "builtins.float" or (qualname.startswith("math.") and qualname[5:] not in _STEP_NAMES):
            return _Cut(node, tensor, f"`{qualname.split('.', 1)[1]}()`")
        if qualname == "torch.tensor":
            return _Cut(node, tensor, "`torch.tensor()`")
        if qualname.startswith("numpy.") and detached:  # without `.detach()` numpy raises at once
            return _Cut(node, tensor, f"`{self.ctx.snippet(func)}()`")
        return None

    def _strip(self, node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool]:
        """The tensor whose values ``node`` holds, through moves, ``.detach()`` and ``.data``;
        and whether one of those detached it."""
        detached = False
        while True:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in _MOVES | {"detach"} and self.ctx.tensor(node.func.value) is not None:
                detached = detached or node.func.attr.value == "detach"
                node = node.func.value
            elif isinstance(node, cst.Attribute) and node.attr.value == "data" and self.ctx.tensor(node.value):
                detached = True
                node = node.value
            else:
                return node, detached

    # --- the check ----------------------------------------------------------------

    def _check(self, cut: _Cut, function: cst.FunctionDef, scope) -> None:
        value = self.ctx.tensor(cut.tensor)
        if value is None or value.attached is not True or self._zero_gradient(cut.tensor, 0):
            return
        if self.ctx.grad_disabled(cut.node) is not None or self._evaluation_only(cut.node, function):
            return
        flow = self._flow(cut.node, scope)
        if flow is None:
            return
        layer, roots, attributes = self._sources(cut.tensor, scope)
        if (layer is not None and _NOT_TRAINED.search(self.ctx.snippet(layer))) or self.ctx.freezes_parameters:
            return  # a teacher, a target network, frozen layers: the cut is meant
        if self._reaches_directly(roots, attributes, cut, function, scope):
            return
        line = self._line(flow.returned)
        source = ""
        if isinstance(cut.tensor, cst.Name):
            values = self.ctx.assigned_values(cut.tensor)
            if values is not None and len(values) == 1:
                source = f" (`{cut.tensor.value}` = `{self.ctx.snippet(values[0])}`, line {self._line(values[0])})"
        if layer is not None:
            who = f"`{self.ctx.snippet(layer)}` gets"
        elif value.leaf is True:
            who = f"`{self.ctx.snippet(cut.tensor)}`, a leaf that requires grad, gets"
        else:
            who = f"what computed `{self.ctx.snippet(cut.tensor)}` gets"
        advice = self._advice(cut, flow)
        if any(isinstance(node, cst.Call) and is_true(keyword(node, "requires_grad"))
               for part in (*flow.assignments, flow.returned) for node in iter_nodes(part)):
            advice += " (`requires_grad=True` makes a new leaf: it does not connect the values back to the graph)"
        steps = [Step(node, "`{code}` carries the values on") for node in flow.assignments]
        steps.append(Step(flow.returned, "`{code}` is returned, computed from them"))
        self.report(
            cut.node, tensor=cut.tensor, source=source, cut=cut.node, returned=flow.returned, line=line,
            layer=who, advice=advice, evidence=(*value.why, *steps),
            related=((flow.returned, "returned here, computed from the values that left torch"),),
            fix=Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ()),
        )

    def _zero_gradient(self, node: cst.BaseExpression, depth: int) -> bool:
        """``node`` is computed by a step function, a comparison or an index (``h.argmax()``,
        ``torch.round(h)``, ``h.max(1)[1]``): torch would give it no gradient either."""
        if depth > 8:
            return False
        if isinstance(node, cst.Call):
            func = node.func
            tensors = [arg.value for arg in node.args if self.ctx.tensor(arg.value) is not None]
            if isinstance(func, cst.Attribute) and self.ctx.tensor(func.value) is not None:
                if func.attr.value in _STEP_NAMES or func.attr.value in torch_api.NOT_DIFFERENTIABLE_METHODS:
                    return True
                tensors.insert(0, func.value)
            else:
                qualname = self.ctx.qualname(func) or ""
                fact = torch_facts.fact(qualname) if qualname.startswith("torch.") else None
                if not qualname.startswith("torch."):
                    return False
                if qualname.rsplit(".", 1)[-1] in _STEP_NAMES or (fact is not None and fact.differentiable is False):
                    return True
            return bool(tensors) and all(self._zero_gradient(tensor, depth + 1) for tensor in tensors)
        if isinstance(node, cst.Subscript):
            if self._indices_of(node.value, node.slice):
                return True
            return self._zero_gradient(node.value, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            tensors = [side for side in (node.left, node.right) if self.ctx.tensor(side) is not None]
            return bool(tensors) and all(self._zero_gradient(side, depth + 1) for side in tensors)
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.Name):
            bindings = self.ctx.model.resolve(node)
            if not bindings or any(binding.kind is not BindingKind.ASSIGN or binding.value is None
                                   for binding in bindings):
                return False
            return all(self._indices_of(binding.value, binding.path) if binding.path
                       else self._zero_gradient(binding.value, depth + 1) for binding in bindings)
        return False

    @staticmethod
    def _indices_of(node: cst.BaseExpression, index) -> bool:
        """``node`` gives (values, indices) and ``index`` (a subscript, or an unpacking's path)
        takes the indices: ``h.max(1)[1]``, ``_, idx = h.topk(k)``."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, (cst.Attribute, cst.Name))):
            return False
        name = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
        if name not in _WITH_INDICES:
            return False
        if isinstance(index, tuple):
            return index == (1,)
        return len(index) == 1 and isinstance(index[0].slice, cst.Index) and \
            isinstance(index[0].slice.value, cst.Integer) and index[0].slice.value.value == "1"

    def _advice(self, cut: _Cut, flow: _Flow) -> str:
        tensor = self.ctx.receiver(cut.tensor)
        if flow.numpy_call is not None:
            name = self.ctx.qualname(flow.numpy_call.func) or ""
            short = name.rsplit(".", 1)[-1]
            if torch_facts.fact(f"torch.{short}") is not None:
                return f"compute it in torch: `torch.{short}({self.ctx.snippet(cut.tensor)})`"
            return "compute it with torch operations on the tensor"
        if cut.how in ("`.item()`", "`float()`", "`int()`"):
            return f"use the tensor `{tensor}` itself (a 0-dim tensor broadcasts), or `{tensor}.detach()` if " \
                   "no gradient should flow there"
        return f"keep `{tensor}` a tensor and use torch operations, or `{tensor}.detach()` if no gradient " \
               "should flow there"

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]

    # --- inference-only code ------------------------------------------------------

    def _evaluation_only(self, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
        """``node`` runs only when the module is not training: under ``if not self.training:``,
        in the ``else`` of ``if self.training:``, or after ``if self.training: return ...``."""
        child = node
        for ancestor in self.ctx.ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test:
                training = _training_test(ancestor.test)
                if training is not None:
                    in_body = child is ancestor.body
                    if in_body != training:
                        return True
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and self._after_training_return(ancestor, child):
                return True
            child = ancestor
        return False

    @staticmethod
    def _after_training_return(block, child: cst.CSTNode) -> bool:
        for statement in block.body:
            if statement is child:
                return False
            if isinstance(statement, cst.If) and statement.orelse is None and _training_test(statement.test) is True \
                    and isinstance(statement.body, cst.IndentedBlock) and statement.body.body:
                last = statement.body.body[-1]
                if isinstance(last, cst.SimpleStatementLine) and any(isinstance(small, cst.Return)
                                                                      for small in last.body):
                    return True
        return False

    # --- how the values flow to the result ----------------------------------------

    def _flow(self, start: cst.CSTNode, scope) -> Optional[_Flow]:
        """The way the value of ``start`` reaches a ``return`` of the function as a value, in
        a tensor: through value positions and assignments to names."""
        queue: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...], Optional[cst.Call]]] = [(start, (), None)]
        seen: set[int] = set()
        while queue:
            node, assignments, numpy_call = queue.pop(0)
            climbed = self._climb(node)
            if climbed is None:
                continue
            last, statement, numpy_here = climbed
            if not assignments:  # the numpy function the cut's values go straight into
                numpy_call = numpy_here
            if isinstance(statement, cst.Return):
                if self.ctx.tensor(last) is not None:
                    return _Flow(assignments, statement.value, numpy_call)
                continue
            for binding in self._bound(statement, scope):
                if id(binding) in seen:
                    continue
                seen.add(id(binding))
                for load in self._loads(binding, scope):
                    queue.append((load, assignments + (statement,), numpy_call))
        return None

    def _climb(self, node: cst.CSTNode):
        """From ``node`` up through the positions that carry its value: (the last expression
        that is not a container, the statement reached, the first numpy function passed), or
        None when the value ends as a size, an index, a condition or an argument of a call
        whose use of it is not known."""
        current = node
        last = node
        numpy_call = None
        while True:
            parent = current.parent
            if parent is None:
                return None
            if isinstance(parent, (cst.Return, cst.Assign, cst.AugAssign, cst.AnnAssign)):
                return (last, parent, numpy_call) if getattr(parent, "value", None) is current else None
            if isinstance(parent, (cst.Element, cst.DictElement)) and parent.value is current:
                current = parent.parent  # the list, tuple or dict
                continue
            if isinstance(parent, cst.Arg):
                call = parent.parent
                if not self._argument_carries(call, parent):
                    return None
                qualname = self.ctx.qualname(call.func) or ""
                if numpy_call is None and qualname.startswith("numpy."):
                    numpy_call = call
                current = last = call
                continue
            following = self._carries(parent, current)
            if following is None:
                return None
            current = last = following

    def _carries(self, parent: cst.CSTNode, child: cst.CSTNode) -> Optional[cst.CSTNode]:
        if isinstance(parent, cst.BinaryOperation) and not isinstance(
                parent.operator, (cst.LeftShift, cst.RightShift, cst.BitOr, cst.BitAnd, cst.BitXor, cst.FloorDivide)):
            return parent
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus)):
            return parent
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            return parent
        if isinstance(parent, cst.Subscript) and parent.value is child:
            return parent
        if isinstance(parent, cst.Attribute) and parent.value is child and parent.attr.value in _VALUE_METHODS:
            if parent.attr.value == "T":
                return parent
            call = parent.parent
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
            if parent.attr.value in ("astype", "type", "to") and any(
                    _INTEGER_DTYPE.search(self.ctx.code(arg.value)) for arg in call.args):
                return None  # an integer conversion: a step function
            return call
        return None

    def _argument_carries(self, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether ``call`` computes its result from the value of ``arg`` (not a size, a
        dimension, or a function of the user's, which may do anything with it)."""
        if arg.star or arg.keyword is not None or call.func is arg:
            return False
        position = next(index for index, other in enumerate(call.args) if other is arg)
        func = call.func
        qualname = self.ctx.qualname(func)
        if qualname is not None:
            root, _, name = qualname.partition(".")
            short = qualname.rsplit(".", 1)[-1]
            if short in _STEP_NAMES:
                return False
            if root == "builtins":
                return name in _VALUE_BUILTINS
            if root in _ARRAY_LIBRARIES:  # `gaussian_filter(a, 1.0)`, `cv2.resize(a, size)`
                return position == 0
            if root not in ("torch", "numpy", "math") or short in _SIZE_FUNCTIONS:
                return False
            return position == 0 or short in _ARITHMETIC_FUNCTIONS
        if isinstance(func, cst.Attribute) and self.ctx.tensor(func.value) is not None:
            return func.attr.value in _ARITHMETIC_METHODS
        callee = self.ctx.infer(func)
        return position == 0 and callee is not None and callee.kind is Kind.MODULE  # a layer's input

    def _bound(self, statement: cst.CSTNode, scope) -> list[Binding]:
        """The bindings of the names ``statement`` assigns (only plain names)."""
        if isinstance(statement, cst.Assign):
            targets = [target.target for target in statement.targets]
        else:
            targets = [statement.target]
        if not all(isinstance(target, cst.Name) for target in targets):
            return []
        return [binding for target in targets for binding in scope.bindings.get(target.value, ())
                if binding.node is target]

    def _loads(self, binding: Binding, scope) -> list[cst.Name]:
        return [load for _seq, load in scope.loads.get(binding.name, ())
                if any(other is binding for other in self.ctx.model.resolve(load))]

    # --- does the tensor itself reach the result? --------------------------------------

    def _sources(self, tensor: cst.BaseExpression, scope):
        """What ``tensor`` is computed from in this function, back to the layers with
        parameters that compute it: (the first such layer, the bindings of the names it
        comes from, the ``self.<name>`` tensors it comes from)."""
        layer = None
        roots: dict[int, Binding] = {}
        attributes: set[str] = set()
        stack = [tensor]
        while stack:
            expression = stack.pop()
            skipped: list[cst.Call] = []
            for node in iter_nodes(expression):
                if any(call.start <= node.start and node.end <= call.end for call in skipped):
                    continue
                if isinstance(node, cst.Call) and self._trainable(node):
                    skipped.append(node)
                    layer = layer or node.func
                elif isinstance(node, cst.Name) and self._may_carry(node):
                    for binding in self.ctx.model.resolve(node):
                        if binding.scope is not scope or id(binding) in roots:
                            continue
                        roots[id(binding)] = binding
                        if binding.kind in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) and binding.value is not None:
                            stack.append(binding.value)
                        if binding.kind is BindingKind.AUGASSIGN:
                            prior = self.ctx.model.prior_binding(binding)
                            if prior is not None and id(prior) not in roots and prior.scope is scope:
                                roots[id(prior)] = prior
                                if prior.value is not None:
                                    stack.append(prior.value)
                elif isinstance(node, cst.Attribute) and dotted(node) and self.ctx.tensor(node) is not None:
                    attributes.add(dotted(node))
        return layer, list(roots.values()), attributes

    def _trainable(self, call: cst.Call) -> bool:
        """A call of a layer with parameters of its own (a module of the user's, a torch layer
        with weights, a module the inference does not know the class of)."""
        callee = self.ctx.infer(call.func)
        if callee is None or callee.kind is not Kind.MODULE:
            return False
        if callee.qualname is None:
            return True
        fact = torch_facts.fact(callee.qualname)
        return fact is not None and (fact.parameters is True or bool(fact.saves) and "c" in fact.saves)

    def _may_carry(self, name: cst.Name) -> bool:
        value = self.ctx.infer(name)
        return value is None or value.kind in _KINDS_CARRYING

    def _reaches_directly(self, roots: list[Binding], attributes: set[str], cut: _Cut,
                          function: cst.FunctionDef, scope) -> bool:
        """Whether the tensor (or what it is computed from, this side of its layer) reaches
        the result other than through the cut: its gradient then still flows."""
        loads: list[cst.CSTNode] = []
        for binding in roots:
            loads += self._loads_anywhere(binding, function)
        if attributes:
            loads += [node for node in iter_nodes(function.body)
                      if isinstance(node, cst.Attribute) and dotted(node) in attributes]
        queue = [load for load in loads if not (cut.node.start <= load.start and load.end <= cut.node.end)]
        seen: set[int] = {id(binding) for binding in roots}
        while queue:
            load = queue.pop()
            statement = self._any_climb(load)
            if statement is None:
                continue
            if statement is True:
                return True
            bound = self._bound(statement, scope)
            if not bound:
                return True  # an attribute, an item, an unpacking: perhaps the result
            for binding in bound:
                if id(binding) not in seen:
                    seen.add(id(binding))
                    queue += self._loads_anywhere(binding, function)
        return False

    def _loads_anywhere(self, binding: Binding, function: cst.FunctionDef) -> list[cst.Name]:
        """The reads of ``binding`` in the function and in the comprehensions and lambdas in it."""
        found = []
        for scope in self.ctx.model.scopes:
            node = scope.node
            if node is function or (function.start <= node.start and node.end <= function.end
                                    and not isinstance(node, (cst.FunctionDef, cst.ClassDef))):
                found += [load for _seq, load in scope.loads.get(binding.name, ())
                          if any(other is binding for other in self.ctx.model.resolve(load))]
        return found

    def _any_climb(self, node: cst.CSTNode):
        """From a use of the tensor up to its statement: None when the use carries no
        gradient to the result (a cut, a condition, a print), True when it may reach the
        result, or the assignment that binds what it computes."""
        current = node
        while True:
            parent = current.parent
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return True
            if isinstance(parent, cst.Call) and self._cut(parent) is not None:
                return None
            if isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value in (
                    "data", "detach", "shape", "size", "dim", "ndim", "ndimension", "numel", "dtype", "device",
                    "requires_grad", "is_cuda", "grad_fn"):
                return None
            if isinstance(parent, (cst.If, cst.While)) and current is parent.test:
                return None
            if isinstance(parent, (cst.Assert, cst.Raise, cst.Del)):
                return None
            if isinstance(parent, cst.Call) and parent.func is not current and \
                    (isinstance(parent.func, (cst.Name, cst.Attribute))) and \
                    (parent.func.value if isinstance(parent.func, cst.Name) else parent.func.attr.value) in _SHOWING:
                return None
            if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                return parent if getattr(parent, "value", None) is current else None
            if isinstance(parent, cst.Return):
                return True
            if isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
                return True
            current = parent


def _training_test(test: cst.BaseExpression) -> Optional[bool]:
    """True for a test that the module is training (``self.training``, ``training``), False
    for its negation, None for any other test."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated = not negated
        test = test.expression
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        other = comparison.comparator
        if isinstance(other, cst.Name) and other.value in ("True", "False") and \
                isinstance(comparison.operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)):
            if isinstance(comparison.operator, (cst.IsNot, cst.NotEqual)):
                negated = not negated
            if other.value == "False":
                negated = not negated
            test = test.left
    name = test.attr.value if isinstance(test, cst.Attribute) else test.value if isinstance(test, cst.Name) else None
    if name not in _TRAINING_FLAGS:
        return None
    return not negated
