"""TL408 backward-without-graph: ``backward()`` on a value that has no autograd graph."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, BindingKind, Fix, Kind, Observation, Rule, Step, Verdict, cst,
    called_name, is_false, iter_nodes, keyword, torch_api, torch_facts,
)

# `torch.autograd.backward(tensors)` and `torch.autograd.grad(outputs, inputs)`: the tensors
# whose graph they walk, by keyword.
_AUTOGRAD_CALLS = {"torch.autograd.backward": "tensors", "torch.autograd.grad": "outputs"}

# Methods that may return their receiver itself (`w.to(device)` when it is there already):
# under no_grad they compute nothing, and a parameter stays one.
_MAYBE_SELF = torch_facts.methods(aliasing="maybe_self") | {"requires_grad_", "view_as", "expand_as", "reshape_as"}
# Methods whose arguments are sizes, dimensions, dtypes or devices, never a tensor whose
# graph the result would join (`x.view(b, -1)`, `x.sum(dim)`, `x.to(other)`, `x.type_as(y)`).
_SHAPE_ARGUMENT_METHODS = frozenset({
    "view", "reshape", "permute", "transpose", "t", "to", "cuda", "cpu", "float", "double", "half", "bfloat16",
    "long", "int", "bool", "type", "type_as", "contiguous", "sum", "mean", "amax", "amin", "prod",
    "std", "var", "logsumexp", "norm", "softmax", "log_softmax", "squeeze", "unsqueeze", "flatten", "expand",
    "expand_as", "view_as", "reshape_as", "repeat", "narrow", "select", "clone", "abs", "exp", "log", "sqrt",
    "sigmoid", "tanh", "relu", "neg", "cumsum", "flip", "roll", "square",
})
# Keyword arguments that never carry a gradient.
_PLAIN_KEYWORDS = frozenset({
    "dim", "keepdim", "dtype", "device", "reduction", "ignore_index", "size_average", "reduce", "inplace", "p",
    "training", "non_blocking", "memory_format", "layout", "pin_memory", "copy", "label_smoothing", "eps",
    "beta", "delta", "log_target", "full", "margin", "out",
})
# Views: made under no_grad, they still reach the graph of the tensor they view.
_VIEW_METHODS = torch_facts.methods(aliasing={"view", "maybe_view"})
_VIEW_FUNCTIONS = torch_facts.functions(aliasing={"view", "maybe_view", "maybe_self"})
# torch functions that may return their (tensor) argument itself.
_MAYBE_ARGUMENT = frozenset({
    "torch.as_tensor", "torch.asarray", "torch.nn.functional.dropout", "torch.nn.functional.dropout1d",
    "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout",
    "torch.nn.functional.feature_alpha_dropout", "torch.dropout", "torch.nn.functional.threshold",
})
# torch.nn modules that may return their input itself or a view of it (in eval mode, with
# inplace=True, or always), from the torch facts.
_MAYBE_INPUT_MODULES = frozenset("torch.nn." + name
                                 for name in torch_facts.module_classes(aliasing={"maybe_self", "view"}))
# Methods that turn a tensor into plain Python values or numpy: a tensor made from them is cut.
_TO_PLAIN = frozenset({"item", "tolist", "numpy"})
# Modules of torch.nn with parameters of their own (a loss among them is not transparent).
_WITH_PARAMETERS = frozenset("torch.nn." + name for name in torch_facts.module_classes(parameters=True))
_RE_ENABLES = re.compile(r"enable_grad|set_grad_enabled|inference_mode\s*\(\s*(?:mode\s*=\s*)?False")
_GUARD_TEST = re.compile(r"requires_grad|grad_fn|is_grad_enabled|is_leaf")
_MAX_DEPTH = 40


@dataclass(frozen=True)
class _Cut:
    """A place where the graph is cut: the expression, a sentence about it, and what a name
    bound to it is ("is computed under `torch.no_grad()` (line 7)")."""

    node: cst.CSTNode
    noun: str  # "`out.detach()` (line 5), detached from the graph"
    predicate: str  # "is `out.detach()` (line 5), detached from the graph"
    advice: str  # what to write instead, for the fix's text


@dataclass(frozen=True)
class _Proof:
    """Evidence that an expression is a tensor without a graph: the steps from it to the
    places the graph is cut (``cuts``), which are empty when it is only made of new
    tensors that never required grad."""

    steps: tuple[Step, ...] = ()
    cuts: tuple[_Cut, ...] = ()

    def then(self, step: Step) -> "_Proof":
        return _Proof((step,) + self.steps, self.cuts) if self.cuts else self


def _join(proofs: list[_Proof], step: Optional[Step] = None) -> _Proof:
    """Several proofs together; only those with a cut add their evidence."""
    steps: list[Step] = [step] if step else []
    cuts: list[_Cut] = []
    for proof in proofs:
        steps += [s for s in proof.steps if s not in steps]
        cuts += [c for c in proof.cuts if c not in cuts]
    return _Proof(tuple(steps) if cuts else (), tuple(cuts))


class BackwardWithoutGraph(Rule):
    code = "TL408"
    name = "backward-without-graph"
    summary = "`backward()` on a value computed under `no_grad` or only from detached tensors: RuntimeError"
    message = "{cause}: it has no autograd graph, so `{call}` raises RuntimeError"
    call_message = (
        "`{call}` runs under {disabled}, and it calls `{backward}` (line {line}) on what it computes: with "
        "gradients off nothing has a graph, and backward raises RuntimeError \"element 0 of tensors does not "
        "require grad\"; call it outside the block, or wrap its body in `with torch.enable_grad():`"
    )
    fix = Applicability.DISPLAY_ONLY
    # A backward run by a function called under no_grad fails inside it, on a related line.
    raised_where_used = True
    requires = (r"(?:backward|grad)\s*\(",
                r"no_grad|inference_mode|set_grad_enabled|detach|\.data\b|\.item\(|numpy|tolist")
    references = (
        ("Locally disabling gradient computation", "https://pytorch.org/docs/stable/notes/autograd.html"
                                                   "#locally-disabling-gradient-computation"),
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
        ("torch.Tensor.backward", "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
    )
    docs = """
    ## What it does
    Flags `x.backward()`, `torch.autograd.backward(x)` and `torch.autograd.grad(x, ..)`
    where `x` has no autograd graph, as the inference shows with its evidence: `x` is
    computed under `torch.no_grad()` or `torch.inference_mode()` (a `with` block or a
    decorator, including a function so decorated whose result `x` is), or every tensor
    it is computed from was cut from the graph (`.detach()`, `.data`, a new tensor made
    from `.item()`, `.tolist()` or numpy) or made without `requires_grad`. Nothing is
    reported when anything on the way may attach it: a module with parameters called
    outside `no_grad`, a value the inference does not know, `torch.enable_grad()`,
    `requires_grad_()` or an in-place write on one of the names, or a test of
    `requires_grad` around the call. A call made under `no_grad` of a function of the
    file that (itself, or through the functions it calls) computes a loss and calls
    `backward()` on it, outside any `if` and without `torch.enable_grad()`, is flagged
    at the call: an adversarial attack run in an evaluation's `no_grad` block. `backward()` inside `no_grad` on a value computed
    outside it is left alone (it works), and so is a view made under `no_grad` (`x[0]`,
    `x.view(..)`), which may still reach the graph of what it views.

    ## Why is this bad?
    Backward starts from the graph that recorded how `x` was computed. Under
    `no_grad` nothing was recorded, and a detached tensor does not require grad, nor
    does anything computed only from it, so torch raises `RuntimeError: element 0 of
    tensors does not require grad and does not have a grad_fn`. The usual causes are
    a training step written inside the evaluation's `with torch.no_grad():`, a loss
    computed from `output.detach()` (or `output.data`, or `torch.tensor(output.item())`)
    to log or to convert it, and a helper decorated with `@torch.no_grad()` whose
    result is then back-propagated.

    ## What to do instead
    Compute the value that is back-propagated outside `no_grad` (or inside
    `with torch.enable_grad():`), from the tensors themselves: detach only the copy
    kept for logging (`loss.item()`, `loss.detach()`), after `backward()`.

    ## Fix (display-only)
    The advice is shown. Where the computation belongs, and which detach was meant
    for logging, only the author knows.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
            with torch.no_grad():
                loss = nn.functional.mse_loss(model(inputs), targets)
            loss.backward()
            """,
            reported=((8, "loss.backward()"),),
        ),
        Bad(
            """
            import torch
            import torch.nn as nn

            model = nn.Linear(4, 1)
            criterion = nn.MSELoss()
            inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
            output = model(inputs)
            loss = criterion(output.detach(), targets)
            loss.backward()
            """,
            reported=((9, "loss.backward()"),),
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        inputs, targets = torch.randn(8, 4), torch.randn(8, 1)
        loss = nn.functional.mse_loss(model(inputs), targets)
        with torch.no_grad():
            loss.backward()  # the graph was recorded outside: this works
            with torch.enable_grad():
                again = nn.functional.mse_loss(model(inputs), targets)
            again.backward()
        """,
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        images = torch.randn(8, 4)
        adversarial = images.detach() + 0.01 * torch.randn(8, 4)
        adversarial.requires_grad_()
        loss = model(adversarial).sum()
        loss.backward()
        """,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._memo: dict[int, Optional[_Proof]] = {}
        self._changed_memo: dict[tuple[int, str], bool] = {}

    def visit_Module(self, node: cst.Module) -> None:
        for found in self.ctx.autograd.backward_without_grad():
            disabled = found.disabled
            shown = disabled.items[0].item if isinstance(disabled, cst.With) else disabled
            where = f"`{self.ctx.snippet(shown)}` (line {self._line(disabled)})"
            self.report(found.call, self.call_message, call=found.call, disabled=where, backward=found.backward,
                        line=self._line(found.backward),
                        related=((found.backward, "the backward it runs"), (disabled, "gradients are off here")),
                        fix=Fix(Applicability.DISPLAY_ONLY, "Call it outside the `no_grad` block, or turn gradients "
                                                            "back on with `torch.enable_grad()` inside it", ()))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if called_name(func) not in ("backward", "grad"):
            return
        qualname = self.ctx.qualname(func)
        if qualname in _AUTOGRAD_CALLS:
            self._check_autograd_call(node, _AUTOGRAD_CALLS[qualname])
        elif qualname is None and isinstance(func, cst.Attribute) and func.attr.value == "backward":
            self._check(func.value, node, node)

    def _check_autograd_call(self, node: cst.Call, name: str) -> None:
        given = keyword(node, name)
        if given is None and node.args and node.args[0].keyword is None and not node.args[0].star:
            given = node.args[0].value
        if given is None:
            return
        if isinstance(given, (cst.List, cst.Tuple)):
            for element in given.elements:
                if not isinstance(element, cst.StarredElement) and self._check(element.value, node, node):
                    return
            return
        self._check(given, node, node)

    def _check(self, target: cst.BaseExpression, call: cst.Call, reported: cst.CSTNode) -> bool:
        if self.ctx.tensor(target) is None or self._guarded(call):
            return False
        proof = self._graphless(target, 0)
        if proof is None or not proof.cuts:
            return False
        cause = self._cause(target, proof)
        advice = "; ".join(dict.fromkeys(cut.advice for cut in proof.cuts[:2]))
        self.report(reported, evidence=proof.steps, fix=Fix(Applicability.DISPLAY_ONLY, advice, ()),
                    cause=cause, call=call)
        return True

    def _cause(self, target: cst.BaseExpression, proof: _Proof) -> str:
        shown = self.ctx.snippet(target)
        cuts = proof.cuts
        if any(cut.node is target for cut in cuts):
            return next(f"`{shown}` {cut.predicate}" for cut in cuts if cut.node is target)
        if isinstance(target, cst.Name):
            values = [binding.value for binding in self.ctx.model.resolve(target)]
            direct = [cut for cut in cuts if any(cut.node is value for value in values)]
            if len(direct) == len(values) == len(cuts) == 1:
                return f"`{shown}` {direct[0].predicate}"
        listed = " and ".join(cut.noun for cut in cuts[:2]) + (" and others" if len(cuts) > 2 else "")
        return f"`{shown}` is computed from {listed}, and from nothing that requires grad"

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.line_index.position(node.start)[0]

    # --- where the call runs ---------------------------------------------------------------

    def _guarded(self, call: cst.Call) -> bool:
        """The call sits under a test of `requires_grad` (or `grad_fn`, `is_grad_enabled()`),
        or in a `try` that catches the RuntimeError: the code expects a value without graph."""
        child: cst.CSTNode = call
        for ancestor in self.ctx.ancestors(call):
            if isinstance(ancestor, (cst.If, cst.While, cst.IfExp)) and child is not ancestor.test \
                    and _GUARD_TEST.search(self.ctx.code(ancestor.test)):
                return True
            if isinstance(ancestor, cst.Try) and child is ancestor.body:
                for handler in ancestor.handlers:
                    if handler.type is None or re.search(r"RuntimeError|Exception", self.ctx.code(handler.type)):
                        return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            child = ancestor
        return False

    def _disabled(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The `with` item or decorator under which ``node`` runs with gradients disabled
        (within its function), when nothing in between or inside enables them again, nor may
        (the inference's strict reading of each mode: `set_grad_enabled(flag)` may enable).
        Stricter than the inference's ``grad_disabled``: a finding here needs the mode off on
        every path, so any enabling call in the block keeps it quiet."""
        child = node
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, cst.With) and child is ancestor.body:
                for item in reversed(ancestor.items):
                    mode = self.ctx.inference.grad_mode(item.item, strict=True)
                    if mode is True:
                        return None
                    if mode is False:
                        return None if _RE_ENABLES.search(self.ctx.code(ancestor.body)) else item.item
            elif isinstance(ancestor, cst.FunctionDef):
                if child is not ancestor.body:
                    return None
                for decorator in reversed(ancestor.decorators):
                    mode = self.ctx.inference.grad_mode(decorator.decorator, strict=True)
                    if mode is True:
                        return None
                    if mode is False:
                        return None if _RE_ENABLES.search(self.ctx.code(ancestor.body)) else decorator
                return None
            elif isinstance(ancestor, (cst.Lambda, cst.ClassDef, cst.GeneratorExp)):
                return None  # runs later, in whatever mode its caller has
            child = ancestor
        return None

    def _under_no_grad(self, node: cst.BaseExpression) -> Optional[_Proof]:
        """``node``, an operation, runs under no_grad: its result has no graph."""
        manager = self._disabled(node)
        if manager is None:
            return None
        line = self._line(manager)
        if isinstance(manager, cst.Decorator):
            function = next(a for a in self.ctx.ancestors(manager) if isinstance(a, cst.FunctionDef))
            where = f"in `{function.name.value}`, decorated `@{self.ctx.snippet(manager.decorator)}` (line {line})"
            step = Step(manager.decorator, f"`{function.name.value}` runs with gradients disabled: `@{{code}}`")
        else:
            where = f"under `{self.ctx.snippet(manager)}` (line {line})"
            step = Step(manager, "`{code}` disables gradient recording")
        manager_code = f"@{self.ctx.snippet(manager.decorator)}" if isinstance(manager, cst.Decorator) \
            else self.ctx.snippet(manager)
        advice = f"Compute `{self.ctx.snippet(node)}` outside `{manager_code}` (line {line})"
        if "inference_mode" not in manager_code:  # enable_grad does not leave inference mode
            advice += ", or inside `with torch.enable_grad():`"
        advice += ", so that its graph is recorded"
        cut = _Cut(node, f"`{self.ctx.snippet(node)}`, computed {where}", f"is computed {where}", advice)
        return _Proof((step,), (cut,))

    # --- what an expression is made from ---------------------------------------------------

    def _graphless(self, node: cst.BaseExpression, depth: int) -> Optional[_Proof]:
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if depth > _MAX_DEPTH:
            return None
        self._memo[key] = None  # a cycle proves nothing
        proof = self._graphless_uncached(node, depth + 1)
        self._memo[key] = proof
        return proof

    def _graphless_uncached(self, node: cst.BaseExpression, depth: int) -> Optional[_Proof]:
        if isinstance(node, cst.Name):
            return self._name(node, depth)
        if isinstance(node, (cst.Call, cst.BinaryOperation)):
            if self._computes_under_no_grad(node):
                proof = self._under_no_grad(node)
                if proof is not None:
                    return proof
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.BinaryOperation):
            return self._operands([node.left, node.right], depth)
        if isinstance(node, cst.UnaryOperation):
            return self._graphless(node.expression, depth)
        if isinstance(node, cst.Subscript):
            if self.ctx.tensor(node.value) is None:
                return None
            return self._graphless(node.value, depth)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, cst.IfExp):
            return self._all([node.body, node.orelse], depth)
        if isinstance(node, (cst.Tuple, cst.List)):
            if any(isinstance(element, cst.StarredElement) for element in node.elements):
                return None
            return self._all([element.value for element in node.elements], depth)
        return None

    def _computes_under_no_grad(self, node: cst.BaseExpression) -> bool:
        """``node`` makes a new tensor when it runs: not a view (a view made under no_grad
        still reaches the graph of its base), nor a call that may hand back an existing
        tensor (`w.to(device)`, `F.dropout(x, training=False)`, an in-place method, a
        function of the user's)."""
        if isinstance(node, cst.Subscript) or self.ctx.tensor(node) is None:
            return False
        if isinstance(node, cst.BinaryOperation):
            return True
        func = node.func
        if any(arg.keyword is not None and arg.keyword.value == "inplace" and not is_false(arg.value)
               for arg in node.args):
            return False
        if isinstance(func, cst.Attribute):
            receiver = self.ctx.infer(func.value)
            if receiver is not None and receiver.kind is Kind.TENSOR:
                method = func.attr.value
                return method not in _MAYBE_SELF and method not in _VIEW_METHODS and not method.endswith("_")
        qualname = self.ctx.qualname(func)
        if qualname is not None:
            name = qualname.rsplit(".", 1)[-1]
            return qualname.startswith("torch.") and qualname not in _MAYBE_ARGUMENT and not name.endswith("_") \
                and not (qualname.count(".") == 1 and name in _VIEW_FUNCTIONS)
        callee = self.ctx.infer(func)
        if callee is None:
            # A callable the inference knows only by its result (a loss criterion called with
            # a prediction and a target): it computes from its arguments.
            return len(node.args) >= 2
        if callee.kind is Kind.MODULE:
            if callee.qualname in _MAYBE_INPUT_MODULES:
                return False
            forward = getattr(callee.cls, "methods", {}).get("forward")  # a class of the user's
            return forward is None or forward.model is not self.ctx.model \
                or not _RE_ENABLES.search(self.ctx.code(forward.node))
        return False

    def _name(self, node: cst.Name, depth: int) -> Optional[_Proof]:
        bindings = self.ctx.model.resolve(node)
        if not bindings or any(b.kind is not BindingKind.ASSIGN or b.value is None or b.iterates
                               for b in bindings):
            return None
        proofs = []
        for binding in bindings:
            if self._changed_later(binding):
                return None
            proof = self._graphless(binding.value, depth)
            if proof is None:
                return None
            proofs.append(proof.then(Step(binding.value, f"`{node.value}` = `{{code}}`")))
        return _join(proofs)

    def _changed_later(self, binding) -> bool:
        """The name's scope sets its `requires_grad`, writes into it in place (which may
        attach it: `total.add_(loss)`, `out[0] = y`) or tests its graph."""
        scope = binding.scope.node
        memo = self._changed_memo
        key = (id(scope), binding.name)
        if key not in memo:
            name = re.escape(binding.name)
            pattern = re.compile(
                rf"(?<![\w.]){name}\s*(?:\.\s*(?:requires_grad|retain_grad|grad_fn|is_leaf|\w*[^\W_]_)\b"
                rf"|\[[^\]\n]*\]\s*(?:[-+*/@%&|^]|//|\*\*)?=(?!=))")
            memo[key] = bool(pattern.search(self.ctx.code(scope)))
        return memo[key]

    def _operands(self, operands: list[cst.BaseExpression], depth: int) -> Optional[_Proof]:
        """Every tensor among ``operands`` has no graph; numbers and other plain values are
        left out; something unknown (perhaps a tensor in the graph) proves nothing."""
        proofs = []
        for operand in operands:
            value = self.ctx.infer(operand)
            if value is not None and (value.kind in (Kind.OTHER, Kind.NONE) or value.kind is Kind.EXTERNAL
                                      and (value.qualname or "").startswith(("torch.", "builtins."))):
                continue  # a number, a string, a dtype
            if value is not None and value.kind is not Kind.TENSOR \
                    and not isinstance(operand, (cst.List, cst.Tuple)):
                return None
            proof = self._graphless(operand, depth)
            if proof is None:
                return None
            proofs.append(proof)
        return _join(proofs)  # with no tensor among them, nothing attaches either

    def _all(self, nodes: list[cst.BaseExpression], depth: int) -> Optional[_Proof]:
        proofs = [self._graphless(node, depth) for node in nodes]
        if not proofs or any(proof is None for proof in proofs):
            return None
        return _join(proofs)

    def _attribute(self, node: cst.Attribute, depth: int) -> Optional[_Proof]:
        attribute = node.attr.value
        if self.ctx.tensor(node.value) is None:
            return None
        if attribute == "data":
            return self._cut(node, "the tensor's data, outside the graph",
                             f"Use `{self.ctx.snippet(node.value)}` itself, not its `.data`, in what is "
                             f"back-propagated")
        if attribute in ("T", "mT", "H", "mH", "real", "imag"):
            return self._graphless(node.value, depth)
        return None

    def _call(self, node: cst.Call, depth: int) -> Optional[_Proof]:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.ctx.infer(func.value)
            if receiver is not None and receiver.kind is Kind.TENSOR:
                return self._method(node, func.value, func.attr.value, depth)
        qualname = self.ctx.qualname(func)
        if qualname is not None:
            return self._torch_call(node, qualname, depth)
        callee = self.ctx.infer(func)
        if callee is None:
            return None
        if callee.kind is Kind.MODULE and callee.qualname and torch_api.is_loss_module_class(callee.qualname) \
                and callee.qualname not in _WITH_PARAMETERS:
            return self._arguments(node, depth)  # a loss of torch.nn: its input and target attach it, if anything
        if callee.kind is Kind.FUNCTION and callee.function is not None:
            return self._function_result(node, callee.function, depth)
        return None

    def _method(self, node: cst.Call, receiver: cst.BaseExpression, method: str,
                depth: int) -> Optional[_Proof]:
        if method in ("detach", "detach_"):
            return self._cut(node, "detached from the graph",
                             f"Compute it from `{self.ctx.snippet(receiver)}`, not `{self.ctx.snippet(node)}`; detach "
                             f"only the copy kept for logging or metrics")
        requires_grad = keyword(node, "requires_grad")
        if method.endswith("_") or method.startswith("_") \
                or (requires_grad is not None and not is_false(requires_grad)):
            return None  # in place, `requires_grad_()`, `new_zeros(.., requires_grad=True)`: may attach it
        if method in torch_api.NOT_DIFFERENTIABLE_METHODS:
            return _Proof()
        if self.ctx.tensor(node) is None:
            return None
        proof = self._graphless(receiver, depth)
        if proof is None:
            return None
        if method in _SHAPE_ARGUMENT_METHODS:
            return proof
        if any(arg.star for arg in node.args):
            return None
        rest = self._operands([arg.value for arg in node.args
                               if not (arg.keyword is not None and arg.keyword.value in _PLAIN_KEYWORDS)], depth)
        return _join([proof, rest]) if rest is not None else None

    def _torch_call(self, node: cst.Call, qualname: str, depth: int) -> Optional[_Proof]:
        requires_grad = keyword(node, "requires_grad")
        if not qualname.startswith("torch.") or qualname in _MAYBE_ARGUMENT \
                or (requires_grad is not None and not is_false(requires_grad)):
            return None
        name = qualname.rsplit(".", 1)[-1]
        if qualname in ("torch.tensor", "torch.from_numpy") or torch_api.is_tensor_type(qualname):
            return self._new_tensor(node)
        if name in torch_api.CREATION_FUNCTIONS and qualname.count(".") == 1 and not name.endswith("_like"):
            return _Proof()
        if self.ctx.tensor(node) is None:
            return None
        return self._arguments(node, depth)

    def _arguments(self, node: cst.Call, depth: int) -> Optional[_Proof]:
        arguments = [arg for arg in node.args if not arg.star
                     and not (arg.keyword is not None and arg.keyword.value in _PLAIN_KEYWORDS)]
        if any(arg.star for arg in node.args) or not arguments:
            return None
        return self._operands([arg.value for arg in arguments], depth)

    def _new_tensor(self, node: cst.Call) -> Optional[_Proof]:
        """`torch.tensor(..)`, `torch.from_numpy(..)`, `torch.FloatTensor(..)`: a new leaf that
        does not require grad; a cut when what it is made from is a tensor's values."""
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return None
        source = node.args[0].value
        for inner in iter_nodes(source):
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) \
                    and inner.func.attr.value in _TO_PLAIN and self.ctx.tensor(inner.func.value) is not None:
                return self._cut(node, f"a new tensor made from the plain values of `{self.ctx.snippet(inner)}`",
                                 "Combine the tensors themselves (not their `.item()`, `.tolist()` or numpy values), "
                                 "so that the result keeps their graph")
        value = self.ctx.infer(source)
        if self.ctx.qualname(node.func) not in ("torch.tensor", "torch.from_numpy"):
            # `torch.Tensor(t)` of a tensor keeps its graph; numbers, lists and arrays have none.
            return _Proof() if value is not None and value.kind in (Kind.OTHER, Kind.NDARRAY) else None
        if value is not None and value.kind is Kind.TENSOR:
            return self._cut(node, "a copy of the values in a new tensor, outside the graph",
                             f"Use `{self.ctx.snippet(source)}` itself, not a copy made by `torch.tensor`")
        return _Proof()

    def _cut(self, node: cst.BaseExpression, what: str, advice: str) -> _Proof:
        line = self._line(node)
        shown = self.ctx.snippet(node)
        cut = _Cut(node, f"`{shown}` (line {line}), {what}", f"is `{shown}` (line {line}), {what}", advice)
        return _Proof((Step(node, f"`{{code}}` is {what}"),), (cut,))

    def _function_result(self, node: cst.Call, function, depth: int) -> Optional[_Proof]:
        """A function of this file: every value it returns has no graph."""
        definition = function.node
        if function.model is not self.ctx.model or not isinstance(definition, cst.FunctionDef) \
                or function.is_generator or not function.returns:
            return None
        proofs = []
        for returned in function.returns:
            proof = self._graphless(returned, depth)
            if proof is None:
                return None
            proofs.append(proof)
        decorator = self._disabled(function.returns[0])
        if isinstance(decorator, cst.Decorator) and all(self._disabled(r) is decorator for r in function.returns):
            # The whole function runs without gradients: that is the reason, said once.
            runs = f"which runs under `@{self.ctx.snippet(decorator.decorator)}` (line {self._line(decorator)})"
            shown = self.ctx.snippet(node)
            advice = (f"For training, call a version of `{function.name}` without "
                      f"`@{self.ctx.snippet(decorator.decorator)}`: the decorator disables gradients whatever "
                      f"the caller does")
            cut = _Cut(node, f"`{shown}` (line {self._line(node)}), {runs}", f"is returned by `{shown}`, {runs}",
                       advice)
            steps = (Step(node, f"`{{code}}` is what `{function.name}` returns"),
                     Step(decorator.decorator, f"`{function.name}` runs with gradients disabled: `@{{code}}`"))
            return _Proof(steps, (cut,))
        step = Step(node, f"`{{code}}` returns what `{function.name}` returns")
        return _join(proofs, step)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.raised_or("RuntimeError", "does not require grad and does not have a grad_fn",
                             "backward ran: the value had a graph on this run")


