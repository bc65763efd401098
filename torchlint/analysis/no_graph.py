"""Values without an autograd graph, and why: the evidence ``backward()`` on them fails.

``NoGraph.graphless(expression)`` answers with a ``Proof`` when the analysis can show that
the tensor ``expression`` has no graph where it is evaluated: it is computed under
``no_grad``/``inference_mode`` (a ``with`` block, a decorator, a ``set_grad_enabled(False)``
statement, the strict reading: anything that may turn gradients back on proves nothing),
or every tensor it is computed from was cut (``.detach()``, ``.data``, a new tensor made
from ``.item()``/``.tolist()``/numpy values) or made without ``requires_grad``, through
assignments, the functions of the file that return it, and layers without parameters (a
torch loss, a module of this file whose ``__init__`` builds no layer).  Something unknown
on the way proves nothing.  The proof names the places the graph is cut (``Cut``), with
the steps from the expression to them, for a finding's evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

from torchlint.analysis import torch_api, torch_facts
from torchlint.analysis.semantic import BindingKind, ClassInfo, FunctionInfo
from torchlint.analysis.values import Kind, Step
from torchlint.syntax import cst
from torchlint.syntax.nodes import decide_test, integer_index, is_false, is_true, keyword, tuple_element
from torchlint.syntax.walk import ancestors, enclosing_code, enclosing_loops, is_descendant, iter_nodes

if TYPE_CHECKING:
    from torchlint.analysis.module_analysis import ModuleAnalysis

_RE_ENABLES = re.compile(r"enable_grad|set_grad_enabled|inference_mode\s*\(\s*(?:mode\s*=\s*)?False")
# A module class that may attach its output to a graph of its own.
_RE_ATTACHES = re.compile(r"requires_grad|Parameter|register_|enable_grad|set_grad_enabled|inference_mode")
# Anything that may turn `requires_grad` back on for a parameter (the keyword of a call that
# makes a new tensor, `Variable(x, requires_grad=True)`, does not).
_RE_UNFREEZES = re.compile(r"\.\s*requires_grad\s*=(?!=)\s*(?![\s]|False)|requires_grad_\(\s*(?![\s]|False)")
_GUARD_TEST = re.compile(r"requires_grad|grad_fn|is_grad_enabled|is_leaf")
_MAX_DEPTH = 40
# Code that makes a tensor to learn (a leaf that requires grad): its values may have a graph after all.
_RE_MAKES_LEAF = re.compile(r"requires_grad|Parameter\b")


@dataclass(frozen=True)
class Cut:
    """A place where the graph is cut: the expression, a sentence about it, and what a name
    bound to it is ("is computed under `torch.no_grad()` (line 7)")."""

    node: cst.CSTNode
    noun: str  # "`out.detach()` (line 5), detached from the graph"
    predicate: str  # "is `out.detach()` (line 5), detached from the graph"
    advice: str  # what to write instead, for the fix's text
    # A round trip through plain values (`torch.tensor(loss.item())`, `torch.from_numpy(
    # out.data.numpy())`), a step no gradient flows through (`argmax`) or the statement that
    # freezes every parameter of the model: written on this line, which is what to change.
    to_change: bool = False
    # A tensor made here without `requires_grad` (`torch.randn(3, 1)`): the cause only when
    # nothing else is, and every such tensor is made where the backward is.
    fresh: bool = False
    # Written after the backward in a loop, it runs before the backward of the next iteration.
    carried: bool = False
    # The decorator, `with` item or `set_grad_enabled(False)` statement that turns gradients
    # off where the value is computed: the line to change, wherever the backward is.
    switch: Optional[cst.CSTNode] = None
    # `.detach()` or `.data`: the line to change when it is written in another function than
    # the backward (a `forward`, a loss function); in the same one, the use of it may be.
    detached: bool = False
    # Values no gradient can come back through, whatever was meant: the gradients of
    # `torch.autograd.grad` without `create_graph=True`, a round trip through plain values, a
    # step function. A term of a loss made only of such values trains nothing.
    inert: bool = False


@dataclass(frozen=True)
class Proof:
    """Evidence that an expression is a tensor without a graph: the steps from it to the
    places the graph is cut (``cuts``), which are empty when it is only made of new
    tensors that never required grad."""

    steps: tuple[Step, ...] = ()
    cuts: tuple[Cut, ...] = ()

    def then(self, step: Step) -> "Proof":
        return Proof((step,) + self.steps, self.cuts) if self.cuts else self


def _join(proofs: list[Proof], step: Optional[Step] = None) -> Proof:
    """Several proofs together; only those with a cut add their evidence."""
    steps: list[Step] = [step] if step else []
    cuts: list[Cut] = []
    for proof in proofs:
        steps += [s for s in proof.steps if s not in steps]
        cuts += [c for c in proof.cuts if c not in cuts]
    return Proof(tuple(steps) if cuts else (), tuple(cuts))


class NoGraph:
    """The graph-absence analysis of one module, answers remembered."""

    def __init__(self, analysis: "ModuleAnalysis", requires_grad_set: bool = True, given=None,
                 branch: Optional[tuple[cst.If, bool]] = None):
        self.analysis = analysis
        # An `if` and the arm taken (True: its body): the values are read on the path through
        # that arm, as when a batch has no target and the loss is made of constants there.
        self.branch = branch
        self._branches: dict[int, Optional[tuple]] = {}
        # False: read as if the code set no `requires_grad` on what it computes (a loss made
        # a leaf that requires grad to silence the error has no graph to the model either).
        self.requires_grad_set = requires_grad_set
        # A function whose parameters are taken to have no graph: asked by another module
        # about a call of it whose arguments have none (`given_arguments`).
        self.given = given
        self._given_flows: dict[int, NoGraph] = {}
        self.model = analysis.model
        self.inference = analysis.inference
        self._memo: dict[int, Optional[Proof]] = {}
        self._changed_memo: dict[tuple[int, str], bool] = {}
        self._scopes_by_node: Optional[dict] = None
        self._create_graph: Optional[bool] = None

    def _code(self, node: cst.CSTNode) -> str:
        start, end = self.analysis.outer_span(node)
        return self.analysis.text[start:end]

    def _line(self, node: cst.CSTNode) -> int:
        return self.analysis.line_index.position(node.start)[0]

    def graphless(self, node: cst.BaseExpression, tensor: bool = False) -> Optional[Proof]:
        """The evidence that the tensor ``node`` has no autograd graph because it was cut
        somewhere (a proof with ``cuts``), or None when that is not shown.  ``tensor``: the
        caller knows ``node`` is a tensor (the `outputs` of `torch.autograd.grad`), though
        the inference may not."""
        if not tensor and self.inference.tensor(node) is None:
            return None
        proof = self._graphless(node, 0)
        if proof is None or not proof.cuts:
            return None
        if all(cut.fresh for cut in proof.cuts):
            return proof if self._made_here_without_grad(node, proof) else None
        fresh = {id(cut.node) for cut in proof.cuts if cut.fresh}
        return Proof(tuple(step for step in proof.steps if id(step.node) not in fresh),
                     tuple(cut for cut in proof.cuts if not cut.fresh))

    def _made_here_without_grad(self, node: cst.BaseExpression, proof: Proof) -> bool:
        """Every tensor ``node`` is computed from was made in the code that runs ``node``,
        which sets no `requires_grad` and makes no `Parameter` (nothing there can attach them)."""
        code = enclosing_code(node)
        if code is None or any(enclosing_code(cut.node) is not code for cut in proof.cuts):
            return False
        return not re.search(r"requires_grad|Parameter|enable_grad", self._code(code))

    def line_to_change(self, proof: Proof, call: cst.Call) -> Optional[cst.CSTNode]:
        """Where the graph of ``proof`` was lost, as the place to change, when that is not the
        backward ``call`` itself: the first of its cuts when every one is a round trip through
        plain values or a step no gradient flows through (written before the backward in its
        function, in another function, or carried to it by a loop), the switch that turned
        gradients off (a decorator, a `with` item, a `set_grad_enabled(False)` statement), or a
        `.detach()`/`.data` written in another function than the backward (its `forward`, a
        loss function).  None when the cuts are of mixed kinds, made without `requires_grad`
        (the fix is at each of them), or a detach beside the backward (which use of it was
        meant is the author's to say)."""
        cuts = [cut for cut in proof.cuts if not cut.fresh]
        if not cuts:
            return None
        here = enclosing_code(call)
        first = min(cuts, key=lambda cut: cut.node.start)
        if all(cut.to_change for cut in cuts):
            if enclosing_code(first.node) is not here or first.node.end <= call.start or first.carried:
                return first.node
            return None
        places = []
        for cut in cuts:
            if cut.switch is not None:
                places.append(cut.switch)
            elif cut.detached and enclosing_code(cut.node) is not here:
                places.append(cut.node)
            else:
                return None
        return min(places, key=lambda place: place.start)

    def inert_terms(self, target: cst.BaseExpression) -> list[tuple[cst.BaseExpression, Proof]]:
        """The terms of the sum ``target`` (`ce + lam * penalty`, through names bound once to a
        sum or to the item of the tuple the one `return` of a function of the file gives) that no gradient comes back through: computed only from gradients of
        `torch.autograd.grad` without `create_graph=True`, from round trips through plain values
        or from step functions, scaled at most by values that are not tensors the inference
        knows.  Empty when ``target`` is no sum, or when every term is such (the whole value
        then has no graph)."""
        terms = self._terms(target, 0)
        if len(terms) < 2:
            return []
        found = []
        for term in terms:
            proof = self._inert_product(term)
            if proof is not None:
                found.append((term, proof))
        return found if len(found) < len(terms) else []

    def _terms(self, node: cst.BaseExpression, hops: int) -> list[cst.BaseExpression]:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
            return self._terms(node.left, hops) + self._terms(node.right, hops)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self._terms(node.expression, hops)
        if isinstance(node, cst.Name) and hops < 3:
            bindings = self.model.resolve(node)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and not bindings[0].path \
                    and not bindings[0].iterates and isinstance(bindings[0].value, cst.BinaryOperation) \
                    and isinstance(bindings[0].value.operator, (cst.Add, cst.Subtract)) \
                    and not self._changed_later(bindings[0]):
                return self._terms(bindings[0].value, hops + 1)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and not bindings[0].iterates \
                    and isinstance(bindings[0].value, cst.Call) and len(bindings[0].path) <= 1 \
                    and None not in bindings[0].path:
                returned = self._returned_item(bindings[0].value, bindings[0].path)
                if returned is not None:  # `loss, aux = step(model, batch)` of `return ce + aux, aux`
                    return self._terms(returned, hops + 1)
        return [node]

    def _returned_item(self, call: cst.Call, path: tuple) -> Optional[cst.BaseExpression]:
        """What the one ``return`` of the function of this file that ``call`` runs gives (item
        ``path[0]`` of the tuple it writes out, when ``path`` names one)."""
        callee = self.inference.infer(call.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not isinstance(function, FunctionInfo) or function.model is not self.model or function.is_generator \
                or not isinstance(function.node, cst.FunctionDef) or len(function.returns) != 1:
            return None
        returned = function.returns[0]
        if not path:
            return returned
        if not isinstance(returned, cst.Tuple) or path[0] >= len(returned.elements) \
                or any(isinstance(element, cst.StarredElement) for element in returned.elements):
            return None
        return returned.elements[path[0]].value

    def _inert_product(self, term: cst.BaseExpression) -> Optional[Proof]:
        """``term`` is a product (or quotient) of factors one of which is shown to carry no
        gradient back (cuts all ``inert``) and none of which is a tensor not shown so."""
        factors, pending = [], [term]
        while pending:
            node = pending.pop()
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
                pending += [node.left, node.right]
            else:
                factors.append(node)
        proofs = []
        for factor in factors:
            value = self.inference.infer(factor)
            known = value is not None and value.kind is Kind.TENSOR
            proof = self._graphless(factor, 0) if known or value is None else None
            if proof is not None and proof.cuts and all(cut.inert for cut in proof.cuts):
                proofs.append(proof)
            elif known or proof is not None and proof.cuts:
                return None
        return _join(proofs) if proofs else None

    def graphless_on_branch(self, target: cst.BaseExpression) -> Optional[tuple[Proof, cst.If, bool]]:
        """The evidence that ``target`` has no graph on the path through one arm of an `if`
        (the arm taken, True for its body): every tensor it is computed from on that path is
        a constant made in that arm without `requires_grad` (`loss = torch.tensor(0.)` when a
        batch has no object), on a value that has a graph on the other paths."""
        for branch in self._constant_arms():
            flow = self._branches.get(id(branch))
            if flow is None:
                flow = self._branches[id(branch)] = NoGraph(self.analysis, self.requires_grad_set, branch=branch)
            proof = flow._graphless(target, 0)
            if proof is not None and proof.cuts and all(cut.fresh and flow._on_branch(cut.node)
                                                        for cut in proof.cuts):
                return proof, branch[0], branch[1]
        return None

    def _constant_arms(self) -> list[tuple[cst.If, bool]]:
        """The arms of the file's `if` statements that make a constant tensor (`torch.tensor(0)`,
        `torch.zeros(1)`) without `requires_grad` in one of their own statements, a few at most."""
        found = self._branches.get(0)
        if found is not None:
            return found
        found = []
        for statement in self.analysis.nodes_of(cst.If):
            for arm, block in ((True, statement.body), (False, statement.orelse)):
                if isinstance(block, cst.Else):
                    block = block.body
                if not isinstance(block, cst.IndentedBlock):
                    continue
                if any(isinstance(node, cst.Call) and self._constant(node) for node in iter_nodes(block)):
                    found.append((statement, arm))
        found = found[:8]
        self._branches[0] = found
        return found

    def _constant(self, call: cst.Call) -> bool:
        """`torch.tensor(0)`, `torch.zeros(1)`, `torch.zeros(())`: a constant made without
        `requires_grad`."""
        qualname = self.inference.qualname(call.func) or ""
        requires_grad = keyword(call, "requires_grad")
        if requires_grad is not None and not is_false(requires_grad):
            return False
        if qualname in ("torch.tensor", "torch.Tensor", "torch.FloatTensor"):
            return bool(call.args) and call.args[0].keyword is None and self._number(call.args[0].value)
        name = qualname.rsplit(".", 1)[-1]
        return qualname.count(".") == 1 and name in ("zeros", "ones", "full")

    def _on_branch(self, node: cst.CSTNode) -> bool:
        """``node`` is in the arm of ``self.branch`` taken."""
        statement, arm = self.branch
        block = statement.body if arm else statement.orelse
        return block is not None and is_descendant(node, block)

    def _off_path(self, node: cst.CSTNode) -> bool:
        """``node`` does not run on the path through the arm of ``self.branch`` taken: it is in
        the other arm, or after the `if` where the arm ends with `continue` (the rest of the
        loop's body) or with `return`/`raise` (the rest of the function)."""
        statement, arm = self.branch
        other = statement.orelse if arm else statement.body
        if other is not None and is_descendant(node, other):
            return True
        block = statement.body if arm else statement.orelse
        if isinstance(block, cst.Else):
            block = block.body
        if not isinstance(block, cst.IndentedBlock) or not block.body or node.start < statement.end:
            return False
        last = block.body[-1]
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        if isinstance(small, (cst.Continue, cst.Break)):
            loops = enclosing_loops(statement)
            return bool(loops) and is_descendant(node, loops[0].body)
        if isinstance(small, (cst.Return, cst.Raise)):
            code = enclosing_code(statement)
            return code is not None and is_descendant(node, code)
        return False

    def trained_under_no_grad(self) -> list["TrainedWithoutGraph"]:
        """Layers made to train that only ever run where gradients are off: `E.requires_grad_(True)`
        (or `requires_grad_()`, or `p.requires_grad = True` for each `p` of `E.parameters()`) in
        a file that runs a backward, where `E` is `m.<name>` of an instance `m` of a module
        class of this file whose `forward` is decorated `@torch.no_grad()` (nothing in it turning
        gradients back on), and `self.<name>(..)` is called in that `forward` and nowhere else in
        the file (nor is `.<name>` handed on): its parameters never get a gradient."""
        text = self.analysis.text
        if "requires_grad" not in text or "backward" not in text:
            return []
        found = []
        for call in self.analysis.nodes_of(cst.Call):
            switched = _switched_on(call)
            if switched is None or not isinstance(switched, cst.Attribute):
                continue
            owner = self.inference.infer(switched.value)
            cls = owner.cls if owner is not None and owner.kind is Kind.MODULE else None
            forward = cls.methods.get("forward") if isinstance(cls, ClassInfo) and cls.model is self.model else None
            if forward is None or not isinstance(forward.node, cst.FunctionDef):
                continue
            decorator = next((d for d in forward.node.decorators
                              if self.inference.grad_mode(d.decorator, strict=True) is False), None)
            if decorator is None or _RE_ENABLES.search(self._code(forward.node)):
                continue
            name = switched.attr.value
            uses = [found for found in re.finditer(rf"\.\s*{re.escape(name)}\b(?!\s*=(?!=))", text)]
            runs = [use for use in uses if re.match(rf"\.\s*{re.escape(name)}\s*\(", text[use.start():])]
            inside = [use for use in runs if forward.node.start <= use.start() < forward.node.end]
            if not inside or len(inside) != len(runs) or any(
                    re.match(r"\s*[,)]", text[use.end():]) for use in uses):  # run elsewhere, or handed on
                continue
            found.append(TrainedWithoutGraph(decorator, forward, cls.name, name, _switch_of(call)))
        return found

    def made_to_require_grad(self, target: cst.BaseExpression) -> bool:
        """The value back-propagated is itself made to require grad: a name whose function
        sets `name.requires_grad = True` or calls `name.requires_grad_()`, or bound to a
        `.requires_grad_()` call (a loss given the flag to silence "does not require grad"),
        rather than a leaf the loss is computed from (an adversarial input, a detached copy
        made to learn, whose own `.grad` is what the code reads)."""
        if not isinstance(target, cst.Name):
            return False
        bindings = self.model.resolve(target)
        if any(isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Attribute)
               and b.value.func.attr.value == "requires_grad_" for b in bindings):
            return True
        name = re.escape(target.value)
        return any(re.search(rf"(?<![\w.]){name}\s*\.\s*requires_grad(?:\s*=(?!=)\s*(?!False\b)|_\(\s*(?!False\b))",
                             self._code(b.scope.node)) for b in bindings)

    def expects_no_graph(self, call: cst.Call) -> bool:
        """The call sits under a test of `requires_grad` (or `grad_fn`, `is_grad_enabled()`),
        or in a `try` that catches the RuntimeError: the code expects a value without graph."""
        child: cst.CSTNode = call
        for ancestor in ancestors(call):
            if isinstance(ancestor, (cst.If, cst.While, cst.IfExp)) and child is not ancestor.test \
                    and _GUARD_TEST.search(self._code(ancestor.test)):
                return True
            if isinstance(ancestor, cst.Try) and child is ancestor.body:
                for handler in ancestor.handlers:
                    if handler.type is None or re.search(r"RuntimeError|Exception", self._code(handler.type)):
                        return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            child = ancestor
        return False

    def _disabled(self, node: cst.CSTNode, hops: int = 0) -> Optional[cst.CSTNode]:
        """The `with` item, decorator or `set_grad_enabled(False)` statement under which
        ``node`` runs with gradients disabled (within its function), when nothing in between
        or inside enables them again, nor may (the inference's strict reading of each mode:
        `set_grad_enabled(flag)` may enable); or the call registering the function it is in
        as a hook autograd runs during backward (``_run_by_backward``).
        Stricter than the inference's ``grad_disabled``: a finding here needs the mode off on
        every path, so any enabling call in the block keeps it quiet."""
        child = node
        for ancestor in ancestors(node):
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                statement = self.inference.mode_statement_before(ancestor, child)
                if statement is not None:
                    if self.inference.grad_mode(statement, strict=True) is not False:
                        return None
                    rest = self.analysis.text[statement.end:ancestor.end]
                    return None if _RE_ENABLES.search(rest) else statement
            elif isinstance(ancestor, cst.With) and child is ancestor.body:
                for item in reversed(ancestor.items):
                    mode = self.inference.grad_mode(item.item, strict=True)
                    if mode is True:
                        return None
                    if mode is False:
                        return None if _RE_ENABLES.search(self._code(ancestor.body)) else item.item
            elif isinstance(ancestor, cst.FunctionDef):
                if child is not ancestor.body:
                    return None
                for decorator in reversed(ancestor.decorators):
                    mode = self.inference.grad_mode(decorator.decorator, strict=True)
                    if mode is True:
                        return None
                    if mode is False:
                        return None if _RE_ENABLES.search(self._code(ancestor.body)) else decorator
                if ancestor.decorators or _RE_ENABLES.search(self._code(ancestor.body)):
                    return None
                return self._run_by_backward(ancestor, hops)
            elif isinstance(ancestor, (cst.Lambda, cst.ClassDef, cst.GeneratorExp)):
                return None  # runs later, in whatever mode its caller has
            child = ancestor
        return None

    def _run_by_backward(self, function: cst.FunctionDef, hops: int) -> Optional[cst.Call]:
        """The call registering ``function`` as a hook autograd runs during backward (a
        module's backward hook, a tensor's hook), or registering the hook every call of
        ``function`` in this file is made from (three calls deep): autograd runs backward with
        gradients disabled, so nothing computed there records a graph. None when a backward
        of the file is asked to `create_graph` (its hooks then run with gradients on), or
        ``function`` is called from another file or from anywhere else."""
        info = self._function_info(function)
        if info is None or hops > 3 or self._creates_graph():
            return None
        for kind, call in self.model.hooks_of(info):
            receiver = self.inference.infer(call.func.value) if isinstance(call.func, cst.Attribute) else None
            if receiver is not None and (kind == "backward" and receiver.kind is Kind.MODULE
                                         or kind == "tensor" and receiver.kind is Kind.TENSOR):
                return call
        calls = self.inference.calls_of(info)
        if not calls or self.analysis.callers_elsewhere(info):
            return None
        found = None
        for call in calls:
            registration = self._disabled(call, hops + 1)
            if not _registers_backward_hook(registration):
                return None
            found = found or registration
        return found

    def _function_info(self, function: cst.FunctionDef) -> Optional[FunctionInfo]:
        scopes = self._scopes_by_node
        if scopes is None:
            scopes = self._scopes_by_node = {id(scope.node): scope for scope in self.model.scopes}
        scope = scopes.get(id(function))
        return scope.function if scope is not None else None

    def _creates_graph(self) -> bool:
        """A `backward()` or `torch.autograd.grad` of this file asks for `create_graph`."""
        if self._create_graph is None:
            self._create_graph = any(
                isinstance(call.func, (cst.Attribute, cst.Name)) and
                (call.func.attr.value if isinstance(call.func, cst.Attribute) else call.func.value)
                in ("backward", "grad") and (lambda flag: flag is not None and not is_false(flag))(
                    keyword(call, "create_graph"))
                for call in self.analysis.nodes_of(cst.Call))
        return self._create_graph

    def _under_no_grad(self, node: cst.BaseExpression) -> Optional[Proof]:
        """``node``, an operation, runs under no_grad: its result has no graph."""
        manager = self._disabled(node)
        if manager is None:
            return None
        line = self._line(manager)
        if _registers_backward_hook(manager):  # a hook autograd runs during backward
            function = next(a for a in ancestors(node) if isinstance(a, cst.FunctionDef))
            where = (f"in `{function.name.value}`, which runs during backward, with gradients disabled, from the "
                     f"hook `{self.analysis.snippet(manager)}` registers (line {line})")
            step = Step(manager, "`{code}` registers a hook: autograd runs it during backward, with gradients "
                                 "disabled")
            advice = (f"Compute `{self.analysis.snippet(node)}` inside `with torch.enable_grad():`: autograd runs "
                      f"backward hooks with gradients disabled")
            cut = Cut(node, f"`{self.analysis.snippet(node)}`, computed {where}", f"is computed {where}", advice)
            return Proof((step,), (cut,))
        if isinstance(manager, cst.Decorator):
            function = next(a for a in ancestors(manager) if isinstance(a, cst.FunctionDef))
            where = f"in `{function.name.value}`, decorated `@{self.analysis.snippet(manager.decorator)}` (line {line})"
            step = Step(manager.decorator, f"`{function.name.value}` runs with gradients disabled: `@{{code}}`")
        else:
            where = f"under `{self.analysis.snippet(manager)}` (line {line})"
            step = Step(manager, "`{code}` disables gradient recording")
        manager_code = f"@{self.analysis.snippet(manager.decorator)}" if isinstance(manager, cst.Decorator) \
            else self.analysis.snippet(manager)
        advice = f"Compute `{self.analysis.snippet(node)}` outside `{manager_code}` (line {line})"
        if "inference_mode" not in manager_code:  # enable_grad does not leave inference mode
            advice += ", or inside `with torch.enable_grad():`"
        advice += ", so that its graph is recorded"
        cut = Cut(node, f"`{self.analysis.snippet(node)}`, computed {where}", f"is computed {where}", advice,
                  switch=manager)
        return Proof((step,), (cut,))

    def _graphless(self, node: cst.BaseExpression, depth: int) -> Optional[Proof]:
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if depth > _MAX_DEPTH:
            return None
        self._memo[key] = None  # a cycle proves nothing
        proof = self._graphless_uncached(node, depth + 1)
        self._memo[key] = proof
        return proof

    def _graphless_uncached(self, node: cst.BaseExpression, depth: int) -> Optional[Proof]:
        if isinstance(node, cst.Name):
            return self._name(node, depth)
        if isinstance(node, (cst.Call, cst.BinaryOperation)):
            if self._computes_under_no_grad(node):
                proof = self._under_no_grad(node)
                if proof is not None:
                    return proof
        if isinstance(node, cst.Call):
            grads = self._gradients_without_graph(node)
            if grads is not None:
                return grads  # `torch.autograd.grad(loss, params)`, and a name unpacked from it
            return self._call(node, depth)
        if isinstance(node, cst.BinaryOperation):
            return self._operands([node.left, node.right], depth)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self._graphless(node.elt, depth)  # `[g.flatten() for g in grads]`
        if isinstance(node, cst.UnaryOperation):
            return self._graphless(node.expression, depth)
        if isinstance(node, cst.Subscript):
            if integer_index(node) == 1 and self._gives_indices(node.value):
                return self._stopped(node.value, indices=True)  # `out.max(1)[1]`
            entries = self._dict_entries(node)
            if entries is not None:  # `losses["total"]` of a dict written out
                return self._all(entries, depth)
            grads = self._gradients_of(node.value)
            if grads is not None:  # `torch.autograd.grad(loss, x)[0]`
                return grads
            returned = self._container_under_no_grad(node.value, depth)
            if returned is not None:  # `losses["loss"]` of `outputs, losses = self.process_batch(x)` under no_grad
                return returned
            if self.inference.tensor(node.value) is None and not self._batch(node.value):
                # A value the inference does not know, shown to be cut from the graph (a parameter
                # every caller passes such a tensor for): an item of it is no less cut.
                known = self._graphless(node.value, depth)
                return known if known is not None and known.cuts else None
            return self._graphless(node.value, depth)  # of a batch: `batch["label"]`, `batch[0]`
        if isinstance(node, cst.Attribute):
            if node.attr.value == "indices" and self._gives_indices(node.value):
                return self._stopped(node.value, indices=True)
            if node.attr.value == "values" and self._gives_indices(node.value):
                return self._graphless(self._reduced(node.value), depth)  # `out.max(-1).values`: as `out`
            return self._attribute(node, depth)
        if isinstance(node, cst.Comparison):
            if any(self.inference.tensor(operand) is not None
                   for operand in (node.left, *(target.comparator for target in node.comparisons))):
                # `pred != target`: booleans
                return self._stopped_on(node, [node.left, *(target.comparator for target in node.comparisons)],
                                        depth)
            return None
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
        if isinstance(node, cst.Subscript) or self.inference.tensor(node) is None:
            return False
        if isinstance(node, cst.BinaryOperation):
            return True
        func = node.func
        if any(arg.keyword is not None and arg.keyword.value == "inplace" and not is_false(arg.value)
               for arg in node.args):
            return False
        if isinstance(func, cst.Attribute):
            receiver = self.inference.infer(func.value)
            if receiver is not None and receiver.kind is Kind.TENSOR:
                method = func.attr.value
                return method not in torch_api.MAYBE_SELF_METHODS and method not in torch_api.VIEWING_METHODS \
                    and not method.endswith("_")
        qualname = self.inference.qualname(func)
        if qualname is not None:
            name = qualname.rsplit(".", 1)[-1]
            return qualname.startswith("torch.") and qualname not in torch_api.ARGUMENT_RETURNING_FUNCTIONS \
                and not name.endswith("_") and not (qualname.count(".") == 1 and name in torch_api.VIEWING_FUNCTIONS)
        callee = self.inference.infer(func)
        if callee is None:
            # A callable the inference knows only by its result (a loss criterion called with
            # a prediction and a target): it computes from its arguments.
            return len(node.args) >= 2
        if callee.kind is Kind.MODULE:
            if callee.qualname in torch_api.INPUT_RETURNING_MODULES:
                return False
            forward = getattr(callee.cls, "methods", {}).get("forward")  # a class of the user's
            return forward is None or forward.model is not self.model \
                or not _RE_ENABLES.search(self._code(forward.node))
        function = callee.function if callee.kind is Kind.FUNCTION else None
        if function is not None and function.name == "forward" and function.cls is not None and \
                function.model is self.model and function.returns:
            base = self.inference.torch_base(function.cls)
            params = {param.name.value for param in function.positional_params()}
            # `self.forward(x)` of a module: its layers make new tensors, unless it hands one back
            return base is not None and torch_api.is_module_class(base) and \
                not _RE_ENABLES.search(self._code(function.node)) and \
                not any(isinstance(value, cst.Name) and value.value in params for value in function.returns)
        return False

    def _name(self, node: cst.Name, depth: int) -> Optional[Proof]:
        bindings = self.model.resolve(node)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
            return self._parameter(bindings[0], depth)
        if bindings and self._loader_batch(node):
            return Proof()
        return self._bindings(bindings, node.value, depth)

    def _bindings(self, bindings, name: str, depth: int) -> Optional[Proof]:
        """Every value these bindings of ``name`` give it has no graph."""
        if self.branch is not None:
            bindings = [binding for binding in bindings if not self._off_path(binding.node)]
        if not bindings or any(b.kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN, BindingKind.FOR)
                               or b.value is None for b in bindings):
            return None
        proofs = []
        for binding in bindings:
            if self._changed_later(binding) or not self.requires_grad_set and self._made_to_learn(binding):
                return None
            if binding.iterates or binding.kind is BindingKind.FOR:  # `for xb, yb in batches:`
                proof = self._items(binding.value, depth)
                if proof is None:
                    return None
                proofs.append(proof.then(Step(binding.value, f"`{name}` is taken from `{{code}}`")))
                continue
            if binding.kind is BindingKind.AUGASSIGN:  # `total += loss.item()`: what it held, and what is added
                before = self.model.lookup(name, binding.scope, binding.seq, use=binding.node)
                adding = [binding] + [other for other in before if other.kind is BindingKind.AUGASSIGN
                                      and other is not binding]
                before = [other for other in before if other.kind is not BindingKind.AUGASSIGN]
                if any(other is binding for other in before) or not before or len(adding) > 4:
                    return None
                held = Proof() if all(other.kind is BindingKind.ASSIGN and not other.path and not other.iterates
                                      and self._number(other.value) for other in before) \
                    else self._bindings(before, name, depth + 1)  # `total = 0`, then `total += ..`
                if held is None:
                    return None
                parts = [held]
                for other in adding:  # each `+=` of a loop adds again what it adds
                    if other.value is None or self._changed_later(other):
                        return None
                    added = self._added(other.value, depth)
                    if added is None:
                        return None
                    parts.append(added.then(Step(other.value, f"`{name}` is added `{{code}}`")))
                proofs.append(_join(parts))
                continue
            if binding.path == (1,) and self._gives_indices(binding.value):
                proofs.append(self._stopped(binding.value, indices=True))  # `_, predicted = torch.max(out, 1)`
                continue
            value = binding.value
            if binding.path and not binding.iterates and isinstance(value, cst.Call):
                function = self._run_by(value)
                if function is not None:
                    # `loss, stats = model.loss(preds, batch)`, `loss, items = criterion(preds, batch)` of a
                    # class of this file with `__call__`: the part of what the function run returns
                    proof = self._returned_under_no_grad(value, depth, binding.path) or \
                        self._function_result(value, function, depth, binding.path)
                    if proof is not None:
                        proofs.append(proof.then(Step(value, f"`{name}` is taken from `{{code}}`")))
                        continue
                    # else: every part of what it returns, when the whole has no graph
            if binding.path and not binding.iterates and isinstance(value, (cst.Tuple, cst.List)):
                value = tuple_element(value, binding.path)  # `pred, y = out.detach(), y`: its own part
                if value is None:
                    return None
            proof = self._graphless(value, depth)
            if proof is None:
                return None
            proofs.append(proof.then(Step(value, f"`{name}` = `{{code}}`")))
        return _join(proofs)

    def _items(self, iterable: cst.BaseExpression, depth: int) -> Optional[Proof]:
        """Every item that iterating ``iterable`` gives has no graph: the rows of a tensor
        without one, the elements of a list or tuple written out (or of a comprehension,
        bound to a name and only appended to), what `zip` and `enumerate` pair them in, the
        batches of a `DataLoader` (of a `TensorDataset`, when its tensors have no graph)."""
        if isinstance(iterable, (cst.List, cst.Tuple)):
            if any(isinstance(element, cst.StarredElement) for element in iterable.elements):
                return None
            return self._all([element.value for element in iterable.elements], depth) \
                if iterable.elements else None
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp)):
            return self._graphless(iterable.elt, depth)
        if isinstance(iterable, cst.Call):
            grads = self._gradients_without_graph(iterable)
            if grads is not None:
                return grads  # `for g in torch.autograd.grad(loss, params):`
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value == "values" and not iterable.args:
            dicts = self._literal_dicts(iterable.func.value, 0)
            if not dicts:
                return None
            return self._all([element.value for found in dicts for element in found.elements], depth)
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value in ("zip", "enumerate") and iterable.args \
                and self.inference.qualname(iterable.func) in (None, f"builtins.{iterable.func.value}") \
                and not any(arg.star or arg.keyword is not None for arg in iterable.args):
            sequences = iterable.args if iterable.func.value == "zip" else iterable.args[:1]
            proofs = [self._items(arg.value, depth) for arg in sequences]
            return None if any(proof is None for proof in proofs) else _join(proofs)
        if isinstance(iterable, cst.Call) and self.inference.qualname(iterable.func) in torch_api.DATA_LOADERS:
            # Batches are collated anew; of a `TensorDataset`, they are rows of its tensors.
            dataset = iterable.args[0].value if iterable.args and iterable.args[0].keyword is None else None
            if isinstance(dataset, cst.Call) and self.inference.qualname(dataset.func) in torch_api.TENSOR_DATASETS:
                return self._all([arg.value for arg in dataset.args], depth) \
                    if dataset.args and not any(arg.star or arg.keyword for arg in dataset.args) else None
            return Proof()
        if isinstance(iterable, cst.Name):
            bindings = self.model.resolve(iterable)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.PARAM:
                passed = self._passed_for(bindings[0])  # `def fit(net, loader)`: the items of what calls pass
                proofs = [self._items(value, depth) for value in passed] if passed else [None]
                return None if any(proof is None for proof in proofs) else _join(proofs)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.FOR and not bindings[0].path \
                    and bindings[0].value is not None and not self._changed_later(bindings[0]):
                # `for grad in grads:` then `zip(grad, ..)`: the items of the items of `grads`
                return self._nested_items(bindings[0].value, depth)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or bindings[0].iterates or bindings[0].value is None:
                return None
            binding = bindings[0]
            if isinstance(binding.value, cst.Call):
                return self._items(binding.value, depth)
            if isinstance(binding.value, (cst.List, cst.ListComp)):
                name = re.escape(binding.name)
                if re.search(rf"(?<![\w.]){name}\s*(?:\.\s*(?:extend|insert|__setitem__)\b|\+=|\[[^\]\n]*\]\s*=(?!=))",
                             self._code(binding.scope.node)):
                    return None  # items added some other way
                appended = [arg.value for arg in self.analysis.appended_to(binding)
                            if self.branch is None or not self._off_path(arg)]
                if appended:
                    written = self._items(binding.value, depth) if not (
                        isinstance(binding.value, cst.List) and not binding.value.elements) else Proof()
                    added = self._all(appended, depth)
                    return None if written is None or added is None else _join([written, added])
                return self._items(binding.value, depth)
        if self.inference.tensor(iterable) is not None:
            return self._graphless(iterable, depth)  # `for row in x:`
        return None

    def _number(self, node: Optional[cst.BaseExpression]) -> bool:
        """``node`` is a number written out (`0`, `0.0`, `-1`)."""
        if isinstance(node, cst.UnaryOperation):
            node = node.expression
        return isinstance(node, (cst.Integer, cst.Float))

    def _nested_items(self, iterable: cst.BaseExpression, depth: int) -> Optional[Proof]:
        """Every item of every item of ``iterable`` has no graph: a list written out, or bound
        to a name once and only appended to (`grads.append(torch.autograd.grad(..))`), whose
        elements each iterate only over values without a graph."""
        if isinstance(iterable, (cst.List, cst.Tuple)):
            elements = [element.value for element in iterable.elements if not isinstance(element, cst.StarredElement)]
            if not elements or len(elements) != len(iterable.elements):
                return None
        elif isinstance(iterable, cst.Name):
            bindings = self.model.resolve(iterable)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].iterates:
                return None
            written = tuple_element(bindings[0].value, bindings[0].path)  # `total, grads = 0, []`
            if not isinstance(written, cst.List) or written.elements:
                return None
            name = re.escape(bindings[0].name)
            if re.search(rf"(?<![\w.]){name}\s*(?:\.\s*(?:extend|insert|__setitem__)\b|\+=|\[[^\]\n]*\]\s*=(?!=))",
                         self._code(bindings[0].scope.node)):
                return None
            elements = [arg.value for arg in self.analysis.appended_to(bindings[0])]
        else:
            return None
        proofs = [self._items(element, depth) for element in elements]
        if not proofs or any(proof is None for proof in proofs):
            return None
        return _join(proofs)

    def _gradients_of(self, node: cst.BaseExpression) -> Optional[Proof]:
        """``node`` is what `torch.autograd.grad` returned without a graph: the call, or a name
        bound to it once."""
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].path \
                    or not isinstance(bindings[0].value, cst.Call) or self._changed_later(bindings[0]):
                return None
            proof = self._gradients_without_graph(bindings[0].value)
            return proof.then(Step(bindings[0].value, f"`{node.value}` = `{{code}}`")) if proof is not None else None
        return self._gradients_without_graph(node) if isinstance(node, cst.Call) else None

    def _gradients_without_graph(self, call: cst.Call) -> Optional[Proof]:
        """``call`` is `torch.autograd.grad(..)` without `create_graph=True`: the gradients it
        returns are new tensors without a graph of their own."""
        if self.inference.qualname(call.func) != "torch.autograd.grad" or any(arg.star for arg in call.args) \
                or len([arg for arg in call.args if arg.keyword is None]) > 4:
            return None
        create = keyword(call, "create_graph")
        if create is not None and not is_false(create):
            return None
        return self._cut(call, "gradients returned without `create_graph=True`, which have no graph of their own",
                         "Pass `create_graph=True` to `torch.autograd.grad`, so that the gradients it returns are "
                         "part of the graph and what is computed from them (a penalty) can be back-propagated",
                         to_change=True, inert=True)

    def _plain_value(self, node: cst.BaseExpression) -> bool:
        """``node`` is a plain value that cannot carry a graph although the inference does not
        know it: a call of the `math` module (`math.log(2)`), or an attribute of the namespace
        `parse_args()` returns (`args.weight`: values of the command line)."""
        if isinstance(node, cst.Call):
            return (self.inference.qualname(node.func) or "").startswith("math.")
        return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
            and self._command_line(node.value, 0)

    def _command_line(self, name: cst.Name, hops: int) -> bool:
        """``name`` is only ever what `parser.parse_args()` (or item 0 of `parse_known_args()`)
        returns: bound to it, or a parameter every call of its function passes such a name for."""
        bindings = self.model.resolve(name)
        if not bindings:
            return False
        for binding in bindings:
            value = binding.value
            if binding.kind is BindingKind.ASSIGN and isinstance(value, cst.Call) \
                    and isinstance(value.func, cst.Attribute) \
                    and (value.func.attr.value == "parse_args" and not binding.path
                         or value.func.attr.value == "parse_known_args" and binding.path == (0,)):
                continue
            if binding.kind is BindingKind.PARAM and hops < 2:
                function = binding.scope.function if binding.scope is not None else None
                param = None if function is None else next(
                    (param for param in function.positional_params() if param.name.value == binding.name), None)
                calls = self.inference.calls_of(function) if param is not None else []
                passed = [self.inference.passed_argument(call, function, param) for call in calls]
                if passed and all(isinstance(value, cst.Name) and self._command_line(value, hops + 1)
                                  for value in passed):
                    continue
            return False
        return True

    def _dict_entries(self, node: cst.Subscript) -> Optional[list[cst.BaseExpression]]:
        """The values ``d["key"]`` may read: the entry of that key of every dict written out
        that ``d`` may be (see ``_literal_dicts``); None when one of them lacks the key."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) \
                or not isinstance(node.slice[0].slice.value, cst.SimpleString):
            return None
        key = node.slice[0].slice.value.evaluated_value
        dicts = self._literal_dicts(node.value, 0)
        if not dicts:
            return None
        entries = []
        for found in dicts:
            entry = next((element.value for element in found.elements if isinstance(element, cst.DictElement)
                          and isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key), None)
            if entry is None:
                return None
            entries.append(entry)
        return entries

    def _literal_dicts(self, node: cst.BaseExpression, hops: int) -> Optional[list[cst.Dict]]:
        """Every dict ``node`` may be, each written out with string keys only (`{"loss": l}`):
        a name bound only to such dicts or to what functions of this file return, itself such
        dicts, and never written into nor updated; None when any of it is something else."""
        if isinstance(node, cst.Dict):
            ok = node.elements and all(isinstance(element, cst.DictElement)
                                       and isinstance(element.key, cst.SimpleString) for element in node.elements)
            return [node] if ok else None
        if isinstance(node, cst.Call) and hops < 2:
            callee = self.inference.infer(node.func)
            function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
            if function is None or function.model is not self.model or function.is_generator or not function.returns:
                return None
            dicts = []
            for returned in function.returns:
                found = self._literal_dicts(returned, hops + 1)
                if found is None:
                    return None
                dicts += found
            return dicts
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if not bindings or any(binding.kind is not BindingKind.ASSIGN or binding.path or binding.iterates
                                   or binding.value is None or self._changed_later(binding) for binding in bindings):
                return None
            name = re.escape(node.value)
            if any(re.search(rf"(?<![\w.]){name}\s*\.\s*(?:update|setdefault|pop)\b", self._code(binding.scope.node))
                   for binding in bindings):
                return None
            dicts = []
            for binding in bindings:
                found = self._literal_dicts(binding.value, hops)
                if found is None:
                    return None
                dicts += found
            return dicts
        return None

    def _made_to_learn(self, binding) -> bool:
        """``w = torch.randn(3)`` then ``w.requires_grad = True`` (or ``requires_grad_()``): a
        new tensor made to be learned, whose flag is no attempt to revive a cut graph."""
        if not self._makes_new_tensor(binding.value):
            return False
        made = self._graphless(binding.value, 0) if self.inference.tensor(binding.value) is not None else None
        if made is not None and any(cut.to_change for cut in made.cuts):
            return False  # `torch.tensor(1 - acc.item())`: a round trip, made a leaf to silence backward
        name = re.escape(binding.name)
        return bool(re.search(rf"(?<![\w.]){name}\s*\.\s*requires_grad(?:\s*=(?!=)|_\s*\()",
                              self._code(binding.scope.node)))

    def _makes_new_tensor(self, node: Optional[cst.BaseExpression]) -> bool:
        """``node`` is a torch factory or legacy constructor call (`torch.randn(3)`)."""
        qualname = self.inference.qualname(node.func) if isinstance(node, cst.Call) else None
        return qualname is not None and (qualname.rsplit(".", 1)[-1] in torch_api.CREATION_FUNCTIONS
                                         or torch_api.is_tensor_type(qualname))

    def _added(self, value: cst.BaseExpression, depth: int) -> Optional[Proof]:
        """What an augmented assignment adds has no graph: numbers, tensors without one, and
        the plain values of a tensor (`loss.item()`), which is where the graph is cut."""
        tensor = self._plain_values_of(value) if isinstance(value, cst.Call) else None
        if tensor is not None:  # `total += loss.item()`, `total += float(loss)`
            return self._cut(value, "a plain number, out of the graph",
                             f"Add `{self.analysis.snippet(tensor)}` itself, not its plain value, to what "
                             f"is back-propagated", to_change=True, inert=True)
        return self._operands([value], depth)

    def _parameter(self, binding, depth: int) -> Optional[Proof]:
        """A parameter of a function of this file (not a method's ``self``): what every call
        site passes has no graph (numbers and other plain values left out); of ``forward``,
        the calls of the module's instances (`criterion(out, y)`) are its call sites."""
        scope = binding.scope
        function = scope.function if scope is not None else None
        if function is None or not isinstance(function.node, cst.FunctionDef) or self._changed_later(binding):
            return None
        param = next((param for param in function.positional_params() if param.name.value == binding.name), None)
        if function is self.given and param is not None and \
                not (function.kind == "method" and param is function.positional_params()[0]):
            return Proof()  # what the caller passes has no graph, as it showed
        passed = self._passed_for(binding)
        return self._operands(passed, depth) if passed else None

    def _passed_for(self, binding) -> Optional[list[cst.BaseExpression]]:
        """What every call of the function of this file whose parameter ``binding`` is (not a
        method's ``self``) passes for it; of ``forward``, the calls of the module's instances
        (`criterion(out, y)`) are its call sites. None when a call is not known or passes
        nothing for it."""
        scope = binding.scope
        function = scope.function if scope is not None else None
        if function is None or not isinstance(function.node, cst.FunctionDef) or self._changed_later(binding):
            return None
        param = next((param for param in function.positional_params() if param.name.value == binding.name), None)
        if function.name == "forward" and not _plain_class(function.cls):
            # `model(x)` runs `forward`, and so does `self.forward(x)` written out
            calls = self._module_calls(function)
            direct = self.inference.calls_of(function)
            if direct and (calls or not self._instances_called(function.cls)):
                calls = calls + [call for call in direct if call not in calls]
        elif function.name == "__call__":
            calls = self._module_calls(function, Kind.INSTANCE)  # `metric(preds, y)` runs `Metric.__call__`
        else:
            calls = self.inference.calls_of(function)  # a `Trainer.forward()` is called by its name
        if param is None or not calls or (function.kind == "method" and param is function.positional_params()[0]):
            return None
        passed = [self.inference.passed_argument(call, function, param) for call in calls]
        return None if any(value is None for value in passed) else passed

    def _module_calls(self, forward, kind: Kind = Kind.MODULE) -> list[cst.Call]:
        """The calls `m(..)` in this file of an instance of the module class whose ``forward``
        this is (none when any call of it passes `*args`, or the class is extended here); with
        ``kind`` INSTANCE, the calls of an instance of the plain class whose `__call__` it is."""
        cls = forward.cls
        if not isinstance(cls, ClassInfo) or cls.model is not self.model or self._in_hierarchy(cls):
            return []
        calls = []
        for call in self.analysis.nodes_of(cst.Call):
            if isinstance(call.func, (cst.Name, cst.Attribute)):
                callee = self.inference.infer(call.func)
                if callee is not None and callee.kind is kind and callee.cls is cls:
                    if any(arg.star for arg in call.args):
                        return []
                    calls.append(call)
        return calls

    def _instances_called(self, cls) -> bool:
        """Some call in this file calls an instance of the module class ``cls``."""
        for call in self.analysis.nodes_of(cst.Call):
            callee = self.inference.infer(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
            if callee is not None and callee.kind is Kind.MODULE and callee.cls is cls:
                return True
        return False

    def _changed_later(self, binding) -> bool:
        """The name's scope sets its `requires_grad`, writes into it in place (which may
        attach it: `total.add_(loss)`, `out[0] = y`) or tests its graph."""
        scope = binding.scope.node
        memo = self._changed_memo
        key = (id(scope), binding.name)
        if key not in memo:
            name = re.escape(binding.name)
            flag, unless = ("requires_grad|", "") if self.requires_grad_set else ("", r"(?!requires_grad_?\b)")
            pattern = re.compile(
                rf"(?<![\w.]){name}\s*(?:\.\s*{unless}(?:{flag}retain_grad|grad_fn|is_leaf|\w*[^\W_]_)\b"
                rf"|\[[^\]\n]*\]\s*(?:[-+*/@%&|^]|//|\*\*)?=(?!=))")
            memo[key] = bool(pattern.search(self._code(scope)))
        return memo[key]

    def _operands(self, operands: list[cst.BaseExpression], depth: int) -> Optional[Proof]:
        """Every tensor among ``operands`` has no graph; numbers and other plain values are
        left out; something unknown (perhaps a tensor in the graph) proves nothing."""
        proofs = []
        for operand in operands:
            value = self.inference.infer(operand)
            if value is not None and (value.kind in (Kind.OTHER, Kind.NONE, Kind.NDARRAY) or value.kind is Kind.EXTERNAL
                                      and (value.qualname or "").startswith(("torch.", "builtins."))):
                continue  # a number, a string, a dtype, a numpy array (numpy records no graph)
            if value is None and self._plain_value(operand):
                continue  # `math.log(2)`, `args.weight`
            if value is not None and value.kind is not Kind.TENSOR \
                    and not isinstance(operand, (cst.List, cst.Tuple)):
                return None
            proof = self._graphless(operand, depth)
            if proof is None:
                return None
            proofs.append(proof)
        return _join(proofs)  # with no tensor among them, nothing attaches either

    def _all(self, nodes: list[cst.BaseExpression], depth: int) -> Optional[Proof]:
        proofs = [self._graphless(node, depth) for node in nodes]
        if not proofs or any(proof is None for proof in proofs):
            return None
        return _join(proofs)

    def _attribute(self, node: cst.Attribute, depth: int) -> Optional[Proof]:
        attribute = node.attr.value
        if self.inference.tensor(node.value) is None:
            return self._self_attribute(node, depth)
        if attribute == "data":
            return self._cut(node, "the tensor's data, outside the graph",
                             f"Use `{self.analysis.snippet(node.value)}` itself, not its `.data`, in what is "
                             f"back-propagated", detached=True)
        if attribute in ("T", "mT", "H", "mH", "real", "imag"):
            return self._graphless(node.value, depth)
        return None

    def _self_attribute(self, node: cst.Attribute, depth: int) -> Optional[Proof]:
        """``self.loss`` in a method of a class of this file that no class of the file extends
        or is extended by: every value the methods assign to it has no graph (a `None` set
        in `__init__` left out), and none writes into it, sets its `requires_grad` or tests it."""
        receiver, attribute = node.value, node.attr.value
        if not isinstance(receiver, cst.Name):
            return None
        function = next((b.scope.function for b in self.model.resolve(receiver) if b.kind is BindingKind.PARAM
                         and b.scope.function is not None and b.scope.function.self_name == receiver.value
                         and b.scope.function.kind == "method"), None)
        cls = function.cls if function is not None else None
        if not isinstance(cls, ClassInfo) or cls.model is not self.model or self._in_hierarchy(cls):
            return None
        values = [tuple_element(a.value, a.path) if a.value is not None else None for a in cls.assignments(attribute)]
        values = [value for value in values if not (isinstance(value, cst.Name) and value.value == "None")]
        name = re.escape(attribute)
        if not values or None in values or re.search(
                rf"\.\s*{name}\s*(?:\.\s*(?:requires_grad|retain_grad|grad_fn|is_leaf|\w*[^\W_]_)\b"
                rf"|\[[^\]\n]*\]\s*(?:[-+*/@%&|^]|//|\*\*)?=(?!=)|(?:[-+*/@%&|^]|//|\*\*)=)", self._code(cls.node)):
            return None
        proofs = []
        for value in values:
            proof = self._operands([value], depth)  # `self.weight = weight`, a number: no graph to give
            if proof is None:
                return None
            proofs.append(proof.then(Step(value, f"`self.{attribute}` = `{{code}}`")))
        return _join(proofs)

    def _in_hierarchy(self, cls: ClassInfo) -> bool:
        """``cls`` extends a class of this file, or one extends it: its attributes may be
        assigned there too."""
        classes = list(self.model.classes.values())
        bases = {self.analysis.snippet(base.value) for base in cls.node.bases}
        return any(other.name in bases for other in classes if other is not cls) or any(
            cls.name in {self.analysis.snippet(base.value).rsplit(".", 1)[-1] for base in other.node.bases}
            for other in classes if other is not cls)

    def _call(self, node: cst.Call, depth: int) -> Optional[Proof]:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.inference.infer(func.value)
            fact = torch_facts.method(func.attr.value)
            if receiver is not None and receiver.kind is Kind.TENSOR or \
                    receiver is None and fact is not None and fact.tensor_only and fact.kind == "method":
                # `model(x).detach()`; a method only tensors have makes a tensor of an unknown receiver
                return self._method(node, func.value, func.attr.value, depth, batch=receiver is None)
            if receiver is None and fact is not None and fact.kind == "method" and fact.returns == "tensor" \
                    and (isinstance(func.value, cst.Subscript) and self._batch(func.value.value)
                         or self._batch(func.value)):
                return self._method(node, func.value, func.attr.value, depth, batch=True)  # `batch["x"].to(dev)`
            if receiver is None and fact is not None and fact.kind == "method" and fact.returns == "tensor":
                # a receiver the inference does not know, shown to be a tensor cut from the graph
                # (`g.pow(2)` of `for g in torch.autograd.grad(..)`)
                known = self._graphless(func.value, depth)
                if known is not None and known.cuts:
                    return self._method(node, func.value, func.attr.value, depth, batch=True)
        qualname = self.inference.qualname(func)
        if isinstance(func, cst.Name) and func.value == "sum" and qualname in (None, "builtins.sum") \
                and 1 <= len(node.args) <= 2 and not any(arg.star or arg.keyword for arg in node.args):
            # `sum(losses)`, `sum(l for l in parts)`, `sum(d.values())`: of items without a graph
            items = self._items(node.args[0].value, depth)
            start = self._operands([node.args[1].value], depth) if len(node.args) == 2 else Proof()
            return None if items is None or start is None else _join([items, start])
        imported = self.inference.project_function(func) if qualname is not None else None
        if imported is not None:
            return self._foreign_call(node, imported, depth)  # `pairwise_loss(a, b)` of `from losses import ..`
        if qualname is not None:
            return self._torch_call(node, qualname, depth)
        callee = self.inference.infer(func)
        if callee is None:
            return None
        if callee.kind is Kind.MODULE and isinstance(callee.cls, ClassInfo) and callee.cls.model is not self.model:
            return self._foreign_call(node, self.inference.method_of(callee.cls, "forward"), depth)
        if callee.kind is Kind.FUNCTION and isinstance(callee.function, FunctionInfo) \
                and callee.function.model is not self.model:
            return self._foreign_call(node, callee.function, depth)
        if callee.kind is Kind.MODULE:
            frozen = self._frozen_before(node) or self._frozen_by_its_class(node, callee) or \
                self._frozen_attribute(node, callee) or self._frozen_where_made(node) or \
                self._frozen_by_parts(node, callee)
            if frozen is not None:
                return frozen
        if callee.kind is Kind.MODULE and callee.qualname and torch_api.is_loss_module_class(callee.qualname) \
                and callee.qualname not in torch_api.PARAMETER_MODULES:
            return self._arguments(node, depth)  # a loss of torch.nn: its input and target attach it, if anything
        if callee.kind is Kind.MODULE and isinstance(callee.cls, ClassInfo) and self._computes_from_inputs(callee.cls):
            # A loss written in this file, without parameters: its inputs attach it, unless
            # its `forward` cuts them (`logits.argmax(1)`).
            proof = self._arguments(node, depth)
            if proof is not None:
                return proof
        if callee.kind is Kind.MODULE and isinstance(callee.cls, ClassInfo):
            forward = self.inference.method_of(callee.cls, "forward")  # what its `forward` returns
            return self._function_result(node, forward, depth) if forward is not None else None
        if callee.kind is Kind.FUNCTION and callee.function is not None:
            return self._returned_under_no_grad(node, depth) or self._function_result(node, callee.function, depth)
        if callee.kind is Kind.INSTANCE and isinstance(callee.cls, ClassInfo):
            method = self.inference.method_of(callee.cls, "__call__")  # an instance called runs its `__call__`
            return self._function_result(node, method, depth) if method is not None else None
        return None

    def _run_by(self, call: cst.Call):
        """The function of this file that ``call`` runs: a function or method called by its name,
        the `__call__` of an instance of a class of this file (`criterion(out, y)`), or the
        `forward` of a module class of this file (`model(x)` runs `forward` through `__call__`)."""
        callee = self.inference.infer(call.func)
        if callee is None:
            return None
        if callee.kind is Kind.FUNCTION:
            return callee.function
        if callee.kind in (Kind.INSTANCE, Kind.MODULE) and isinstance(callee.cls, ClassInfo) \
                and callee.cls.model is self.model:
            return self.inference.method_of(callee.cls, "__call__" if callee.kind is Kind.INSTANCE else "forward")
        return None

    def _frozen_before(self, call: cst.Call) -> Optional[Proof]:
        """``model(x)`` after a statement, in its block or one enclosing it, that turns off
        `requires_grad` of every parameter of ``model`` (`for p in model.parameters():
        p.requires_grad = False`, `model.requires_grad_(False)`), given inputs without a graph,
        when nothing in the file may turn it back on and ``model`` gets no new layer between."""
        func = call.func
        if not isinstance(func, cst.Name) or _RE_UNFREEZES.search(self.analysis.text):
            return None
        reads = self.model.reads_since_binding(func)
        for index, read in enumerate(reads + self._reads_later_in_loop(func, reads)):
            statement = _freezing_statement(read) or self._freezing_call(read)
            if statement is None or not is_descendant(call, statement.parent):
                continue
            if index < len(reads) and any(_may_add_layers(later) for later in reads[index + 1:]):
                return None
            inputs = self._arguments(call, 0)
            if inputs is None:
                return None
            shown = statement.iter if isinstance(statement, cst.For) else statement.body[0].value
            code, line = self.analysis.snippet(shown), self._line(shown)
            carried = index >= len(reads)  # after the call, in the loop: it runs before the next iteration's
            when = " on the iteration before" if carried else ""
            advice = (f"Do not leave `{func.value}` frozen after `{code}`: set `requires_grad` back, or evaluate "
                      f"under `torch.no_grad()` instead of freezing") if carried else \
                (f"Leave `requires_grad` on for the parameters to train (freeze `{func.value}` before adding the "
                 f"layers to train, or freeze only the pretrained part)")
            cut = Cut(shown, f"`{code}` (line {line}), which freezes every parameter of `{func.value}`{when}",
                      f"is computed by `{func.value}`, whose parameters `{code}` (line {line}) freezes{when}",
                      advice, to_change=True, carried=carried)
            frozen = Proof((Step(call, f"`{{code}}` is computed by `{func.value}`, whose parameters are all frozen"),
                            Step(shown, f"`{{code}}` turns off `requires_grad` of every parameter of "
                                        f"`{func.value}`")), (cut,))
            return _join([frozen, inputs])
        return None

    def _frozen_by_parts(self, call: cst.Call, callee) -> Optional[Proof]:
        """``model(x)`` of an instance of a module class of this file (extending `nn.Module`
        itself, making no `Parameter` of its own) after statements, in its block or one
        enclosing it, that freeze every parameter of each submodule its `__init__` builds, one
        part at a time (`for p in model.encoder.parameters(): p.requires_grad = False`,
        `model.head.requires_grad_(False)`): a module's parameters are those of its
        submodules, so all of them are frozen. Given inputs without a graph, when nothing in
        the file may turn `requires_grad` back on and the instance (bound once, to the class
        called) is read before the call only to freeze its parts or in ways that add nothing."""
        cls, func = callee.cls, call.func
        if not isinstance(cls, ClassInfo) or cls.model is not self.model or not isinstance(func, cst.Name) \
                or _RE_UNFREEZES.search(self.analysis.text) or self._in_hierarchy(cls):
            return None
        init = cls.methods.get("__init__")
        base = self.inference.torch_base(cls)
        if init is None or init.self_name is None or base is None or torch_api.normalize(base) != "torch.nn.Module" \
                or re.search(r"Parameter\b|requires_grad|add_module|register_(?:module|parameter)|setattr",
                             self._code(cls.node)):
            return None
        bindings = self.model.resolve(func)
        if len(bindings) != 1 or bindings[0].path or bindings[0].kind is not BindingKind.ASSIGN \
                or not isinstance(bindings[0].value, cst.Call):
            return None
        made = self.inference.infer(bindings[0].value.func)
        if made is None or made.kind is not Kind.CLASS or made.cls is not cls:
            return None
        parts = set()
        for node in iter_nodes(init.node):
            if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) \
                    and isinstance(node.target.value, cst.Name) and node.target.value.value == init.self_name:
                name = node.target.attr.value
                for assignment in cls.assignments(name):
                    value = self.inference.infer(assignment.value) if assignment.value is not None else None
                    if assignment.function is not init or value is None:
                        return None  # built elsewhere, or not known to be a module or a plain value
                    if value.kind is Kind.MODULE:
                        parts.add(name)
                    elif value.kind not in (Kind.OTHER, Kind.NONE, Kind.TENSOR):
                        return None
        if not parts:
            return None
        frozen = {}
        for read in self.model.reads_since_binding(func):
            if read.start >= call.start:
                break
            parent = read.parent
            statement = _freezing_statement(parent) if isinstance(parent, cst.Attribute) and parent.value is read \
                and parent.attr.value in parts else None
            if statement is not None and is_descendant(call, statement.parent):
                frozen[parent.attr.value] = statement
            elif not _only_uses(read):
                return None  # handed on, given a layer, or a part frozen only on some path
        if set(frozen) != parts:
            return None
        inputs = self._arguments(call, 0)
        if inputs is None:
            return None
        last = max(frozen.values(), key=lambda statement: statement.start)
        shown = last.iter if isinstance(last, cst.For) else last.body[0].value
        code, line = self.analysis.snippet(shown), self._line(shown)
        names = ", ".join(f"`{func.value}.{name}`" for name in sorted(frozen, key=lambda n: frozen[n].start))
        cut = Cut(shown, f"`{code}` (line {line}), which freezes the last part of `{func.value}` left to train "
                         f"(frozen: {names})",
                  f"is computed by `{func.value}`, every part of which ({names}) is frozen, the last by `{code}` "
                  f"(line {line})",
                  f"Leave at least the part meant to learn trainable: with {names} frozen, `{func.value}` has "
                  f"no parameter that requires grad", to_change=True)
        proof = Proof((Step(call, f"`{{code}}` is computed by `{func.value}`, a `{cls.name}`, made of {names} only"),
                       Step(shown, "`{code}` turns off `requires_grad` of the last of them")), (cut,))
        return _join([proof, inputs])

    def _frozen_by_its_class(self, call: cst.Call, callee) -> Optional[Proof]:
        """``model(x)`` of an instance of a module class of this file whose ``__init__``
        freezes every parameter of ``self`` (`for p in self.parameters(): p.requires_grad =
        False`, `self.requires_grad_(False)`) in a statement of its body, after every layer it
        builds (no `self.<name> = ..` after it), given inputs without a graph, when nothing in
        the file may turn `requires_grad` back on and the instance (bound once, to the class
        called) is read only to call it or a method that adds nothing to it."""
        cls, func = callee.cls, call.func
        if not isinstance(cls, ClassInfo) or cls.model is not self.model or not isinstance(func, cst.Name) \
                or _RE_UNFREEZES.search(self.analysis.text):
            return None
        init = cls.methods.get("__init__")
        bindings = self.model.resolve(func)
        if init is None or init.self_name is None or len(bindings) != 1 or bindings[0].path \
                or bindings[0].kind is not BindingKind.ASSIGN or not isinstance(bindings[0].value, cst.Call):
            return None
        made = self.inference.infer(bindings[0].value.func)
        if made is None or made.kind is not Kind.CLASS or made.cls is not cls:
            return None
        if any(not _only_uses(read) for read in self.model.reads_since_binding(func)):
            return None
        body = init.node.body.body
        for index, statement in enumerate(body):
            receiver = _receiver_of_statement(statement)
            if not isinstance(receiver, cst.Name) or receiver.value != init.self_name \
                    or _freezing_statement(receiver) is None:
                continue
            if any(isinstance(node, (cst.Return, cst.Raise))
                   for earlier in body[:index] for node in iter_nodes(earlier)) \
                    or any(isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute)
                           and isinstance(node.target.value, cst.Name) and node.target.value.value == init.self_name
                           for later in body[index + 1:] for node in iter_nodes(later)):
                return None  # a layer built after the freezing trains
            inputs = self._arguments(call, 0)
            if inputs is None:
                return None
            shown = statement.iter if isinstance(statement, cst.For) else statement.body[0].value
            code, line = self.analysis.snippet(shown), self._line(shown)
            advice = (f"Freeze only the layers meant to stay fixed (the pretrained part), not every parameter of "
                      f"`{cls.name}`, so that the layers to train get gradients")
            cut = Cut(shown, f"`{code}` (line {line}) in `{cls.name}.__init__`, which freezes every parameter of "
                             f"`{func.value}`",
                      f"is computed by `{func.value}`, whose parameters `{cls.name}.__init__` freezes (`{code}`, "
                      f"line {line})", advice, to_change=True)
            frozen = Proof((Step(call, f"`{{code}}` is computed by `{func.value}`, a `{cls.name}`, whose parameters "
                                       f"are all frozen"),
                            Step(shown, f"`{{code}}` turns off `requires_grad` of every parameter of the "
                                        f"`{cls.name}`")), (cut,))
            return _join([frozen, inputs])
        return None

    def _frozen_attribute(self, call: cst.Call, callee) -> Optional[Proof]:
        """``self.model(x)`` in a method of a class of this file that builds ``self.model``
        once, in ``__init__``, where every parameter of it is frozen after it is built: by a
        statement of that ``__init__`` (`self.model.requires_grad_(False)`, `for p in
        self.model.parameters(): p.requires_grad = False`, also when both arms of an `if` in
        the loop do) or by the ``__init__`` of the model's own class; given inputs without a
        graph, when nothing in the file may turn `requires_grad` back on and nothing gives
        ``self.model`` new layers."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) \
                or _RE_UNFREEZES.search(self.analysis.text):
            return None
        method = next((b.scope.function for b in self.model.resolve(func.value) if b.kind is BindingKind.PARAM
                       and b.scope.function is not None and b.scope.function.self_name == func.value.value
                       and b.scope.function.kind == "method"), None)
        cls = method.cls if method is not None else None
        init = cls.methods.get("__init__") if isinstance(cls, ClassInfo) and cls.model is self.model else None
        name = func.attr.value
        assignments = cls.assignments(name) if init is not None else []
        if init is None or len(assignments) != 1 or assignments[0].function is not init or self._in_hierarchy(cls) \
                or re.search(rf"\.{re.escape(name)}\s*\.\s*\w+\s*=(?!=)|\.{re.escape(name)}\s*\.\s*add_module",
                             self._code(cls.node)):
            return None
        built = assignments[0].node
        freezing = None
        for statement in init.node.body.body:
            if statement.start > built.start and _freezes_attribute(statement, init.self_name, name):
                freezing = statement
                break
        if freezing is None and self._built_frozen(assignments[0].value) is not None:
            freezing = assignments[0].node  # `self.emb = nn.Embedding.from_pretrained(w)`: frozen as built
        if freezing is None and callee.cls is not None and isinstance(callee.cls, ClassInfo) \
                and callee.cls.model is self.model and isinstance(assignments[0].value, cst.Call):
            made = self.inference.infer(assignments[0].value.func)
            own_init = callee.cls.methods.get("__init__")
            if made is not None and made.kind is Kind.CLASS and made.cls is callee.cls and own_init is not None:
                body = own_init.node.body.body
                freezing = next((statement for index, statement in enumerate(body)
                                 if _freezes_attribute(statement, own_init.self_name, None)
                                 and not any(isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute)
                                             for later in body[index + 1:] for node in iter_nodes(later))), None)
        if freezing is None:
            return None
        inputs = self._arguments(call, 0)
        if inputs is None:
            return None
        built = self._built_frozen(assignments[0].value) if freezing is assignments[0].node else None
        if built is not None:
            return self._frozen_as_built(call, built, f"self.{name}", inputs)
        shown = freezing.iter if isinstance(freezing, cst.For) else freezing.body[0].value
        code, line = self.analysis.snippet(shown), self._line(shown)
        cut = Cut(shown, f"`{code}` (line {line}), which freezes every parameter of `self.{name}`",
                  f"is computed by `self.{name}`, whose parameters `{code}` (line {line}) freezes",
                  f"Freeze only the layers meant to stay fixed, not every parameter of `self.{name}`, so that "
                  f"the layers to train get gradients", to_change=True)
        frozen = Proof((Step(call, f"`{{code}}` is computed by `self.{name}`, whose parameters are all frozen"),
                        Step(shown, f"`{{code}}` turns off `requires_grad` of every parameter of `self.{name}`")),
                       (cut,))
        return _join([frozen, inputs])

    def _built_frozen(self, value: Optional[cst.BaseExpression]) -> Optional[cst.Call]:
        """``value`` is a call of a torch constructor that builds its module with every parameter
        frozen unless told otherwise (`nn.Embedding.from_pretrained(w)`, `freeze` left True)."""
        if not isinstance(value, cst.Call):
            return None
        qualname = self.inference.qualname(value.func)
        flag = torch_api.FREEZING_CONSTRUCTORS.get(torch_api.normalize(qualname)) if qualname else None
        if flag is None or any(arg.star for arg in value.args):
            return None
        given = keyword(value, flag)
        if given is None and len(value.args) > 1 and value.args[1].keyword is None:
            given = value.args[1].value
        return value if given is None or is_true(given) else None

    def _frozen_as_built(self, call: cst.Call, built: cst.Call, shown_name: str, inputs: Proof) -> Proof:
        code, line = self.analysis.snippet(built.func), self._line(built)
        flag = torch_api.FREEZING_CONSTRUCTORS[torch_api.normalize(self.inference.qualname(built.func))]
        cut = Cut(built, f"`{code}(..)` (line {line}), which builds `{shown_name}` frozen (`{flag}=True` is its "
                         f"default)",
                  f"is computed by `{shown_name}`, which `{code}(..)` (line {line}) builds with `requires_grad` "
                  f"off (`{flag}=True` is its default)",
                  f"Pass `{flag}=False` to train it, or give the model layers to train", to_change=True)
        frozen = Proof((Step(call, f"`{{code}}` is computed by `{shown_name}`, whose parameters do not require grad"),
                        Step(built, f"`{{code}}` builds a module whose weight has `requires_grad=False` "
                                    f"(`{flag}=True` by default)")), (cut,))
        return _join([frozen, inputs])

    def _frozen_where_made(self, call: cst.Call) -> Optional[Proof]:
        """``model(x)`` of a module made by a function of this file that freezes every parameter
        of what it returns before returning it (`m.requires_grad_(False)`, a loop over
        `m.parameters()`, a call of a freezing function of the file), after the last layer it
        adds: ``model`` bound once to that call, or a parameter every call of its function
        passes such a module for; given inputs without a graph, when nothing in the file may
        turn `requires_grad` back on and no read on the way may give the module new layers."""
        func = call.func
        if not isinstance(func, cst.Name) or _RE_UNFREEZES.search(self.analysis.text):
            return None
        found = self._frozen_module(func, 0)
        if found is None:
            return None
        statement, function, deciding = found
        inputs = self._arguments(call, 0)
        if inputs is None:
            return None
        shown = statement.iter if isinstance(statement, cst.For) else statement.body[0].value
        code, line = self.analysis.snippet(shown), self._line(shown)
        if deciding is not None:
            # the freezing runs on the arm an argument of the call selects: that argument is what to change
            chosen, chosen_line = self.analysis.snippet(deciding), self._line(deciding)
            cut = Cut(deciding, f"`{chosen}` (line {chosen_line}), which makes `{function.name}` run `{code}` (line "
                                f"{line}) and return the module with every parameter frozen",
                      f"is computed by `{func.value}`, whose parameters `{function.name}` freezes (`{code}`, line "
                      f"{line}) because of `{chosen}` (line {chosen_line})",
                      f"With `{chosen}`, `{function.name}` leaves nothing to train: keep some layers trainable (a "
                      f"new head) or do not freeze", to_change=True)
            frozen = Proof((Step(call, f"`{{code}}` is computed by `{func.value}`, which `{function.name}` returns "
                                       f"with every parameter frozen"),
                            Step(deciding, f"`{{code}}` selects `{code}` (line {line}) in `{function.name}`")), (cut,))
            return _join([frozen, inputs])
        cut = Cut(shown, f"`{code}` (line {line}) in `{function.name}`, which freezes every parameter of the module "
                         f"it returns",
                  f"is computed by `{func.value}`, made by `{function.name}`, whose `{code}` (line {line}) freezes "
                  f"every parameter", f"Freeze only the layers meant to stay fixed in `{function.name}` (the "
                                      f"pretrained part), or freeze before adding the layers to train",
                  to_change=True)
        frozen = Proof((Step(call, f"`{{code}}` is computed by `{func.value}`, which `{function.name}` returns with "
                                   f"every parameter frozen"),
                        Step(shown, f"`{{code}}` turns off `requires_grad` of every parameter of what "
                                    f"`{function.name}` returns")), (cut,))
        return _join([frozen, inputs])

    def _frozen_module(self, name: cst.Name, hops: int) -> Optional[tuple]:
        """The freezing statement and the function of the file that made the module ``name``
        holds with every parameter frozen (see ``_frozen_where_made``)."""
        bindings = self.model.resolve(name)
        if hops > 2 or len(bindings) != 1 or not all(self._plain_use(read)
                                                     for read in self.model.reads_since_binding(name)):
            return None
        binding = bindings[0]
        if binding.kind is BindingKind.PARAM:
            function = binding.scope.function if binding.scope is not None else None
            param = next((param for param in function.positional_params() if param.name.value == binding.name),
                         None) if isinstance(function, FunctionInfo) and isinstance(function.node, cst.FunctionDef) \
                else None
            calls = self.inference.calls_of(function) if param is not None else []
            if not calls or function.kind == "method" and param is function.positional_params()[0] \
                    or not all(self._plain_use(load) for _seq, load in binding.scope.loads.get(binding.name, ())):
                return None
            found = None
            for call in calls:
                passed = self.inference.passed_argument(call, function, param)
                origin = self._frozen_module(passed, hops + 1) if isinstance(passed, cst.Name) else \
                    self._made_frozen(passed)  # `fit(make(4), data)`
                if origin is None:
                    return None
                found = found or origin
            return found
        if binding.kind is not BindingKind.ASSIGN or binding.path or binding.iterates:
            return None
        return self._made_frozen(binding.value)

    def _made_frozen(self, value: Optional[cst.BaseExpression]) -> Optional[tuple]:
        """``value`` is a call of a function of this file that returns a module with every
        parameter frozen: the freezing statement and the function."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _PLAIN_MODULE_METHODS and isinstance(value.func.value, cst.Call):
            value = value.func.value  # `build(3).to(device)`: the module itself
        if not isinstance(value, cst.Call):
            return None
        callee = self.inference.infer(value.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        found = self._freezes_what_it_returns(function, value)
        return (found[0], function, found[1]) if found is not None else None

    def _run_body(self, function, call: Optional[cst.Call]) -> list:
        """The statements of ``function``'s body that ``call`` runs, in order, each with the
        argument that selected it (or None): an `if` whose test the call decides (`if freeze:`
        of `to_embedding_model(m, freeze=True)`, `if output_dim:` left to its default None) is
        replaced by the arm it selects; any other `if` is kept."""
        run = []
        for statement in function.node.body.body:
            decided = self._decided(statement.test, call, function, 0) \
                if call is not None and isinstance(statement, cst.If) else None
            if decided is None:
                run.append((statement, None))
                continue
            arm = statement.body if decided[0] else statement.orelse
            if isinstance(arm, cst.If):
                run.append((arm, decided[1]))  # an `elif`: kept whole
            elif arm is not None:
                run += [(inner, decided[1]) for inner in (arm.body.body if isinstance(arm, cst.Else) else arm.body)]
        return run

    def _freezes_what_it_returns(self, function, call: Optional[cst.Call] = None) -> Optional[tuple]:
        """The statement of ``function``'s body (not under an `if`, unless one whose arm
        ``call`` decides, no `return` before it) that freezes every parameter of the local
        module it returns (each `return` names it), after which nothing assigns the name again
        nor may give the module new layers (in what ``call`` runs); with the argument of
        ``call`` that selected it, if one did."""
        if not isinstance(function, FunctionInfo) or function.model is not self.model \
                or not isinstance(function.node, cst.FunctionDef) or function.is_generator or not function.returns \
                or not all(isinstance(returned, cst.Name) for returned in function.returns) \
                or len({returned.value for returned in function.returns}) != 1:
            return None
        local = function.returns[0].value
        run = self._run_body(function, call)
        body = [statement for statement, _deciding in run]
        for index, statement in enumerate(body):
            freezing = None
            for read in (node for node in iter_nodes(statement) if isinstance(node, cst.Name) and node.value == local):
                found = _freezing_statement(read) or self._freezing_call(read)
                if found is statement:
                    freezing = found
                    break
            if freezing is None:
                continue
            if any(isinstance(node, (cst.Return, cst.Raise)) for earlier in body[:index] for node in iter_nodes(earlier)):
                return None
            for later in body[index + 1:]:
                for node in iter_nodes(later):
                    if isinstance(node, cst.Name) and node.value == local and (
                            isinstance(node.parent, cst.AssignTarget) or self._adds_layers(node)):
                        return None
            return freezing, run[index][1]
        return None

    def _adds_layers(self, read: cst.Name) -> bool:
        """``_may_add_layers``, except a module handed to a function of this file that only
        calls it or uses a method of it that adds nothing (`train(model, loader)`)."""
        return _may_add_layers(read) and not self._handed_to_plain_use(read)

    def _plain_use(self, read: cst.Name) -> bool:
        """This read of a module calls it, uses a method of it that changes nothing of its
        parameters (``_only_uses``), or hands it to a function of this file that does only that."""
        return _only_uses(read) or self._handed_to_plain_use(read)

    def _handed_to_plain_use(self, read: cst.Name) -> bool:
        argument = read.parent
        if not isinstance(argument, cst.Arg) or argument.value is not read:
            return False
        receiver = self.inference.receiving_parameter(argument)
        return receiver is not None and all(_only_uses(inner) for inner in receiver[2])

    def _reads_later_in_loop(self, func: cst.Name, reads: list[cst.Name]) -> list[cst.Name]:
        """The reads of the module ``func`` that freeze it, after this call in a loop around
        it (the outermost one the module is bound outside of), when nothing else in the loop
        may add layers to it: the freezing happens before the call of the next iteration."""
        bindings = self.model.resolve(func)
        loops = [loop for loop in enclosing_loops(func) if len(bindings) == 1
                 and not is_descendant(bindings[0].node, loop)]
        if not loops:
            return []
        loop = loops[-1]  # the outermost loop the module outlives
        later = [load for _seq, load in bindings[0].scope.loads.get(func.value, ())
                 if load.start > func.end and is_descendant(load, loop)]
        inside = [read for read in reads if is_descendant(read, loop)]
        freezing = [read for read in later if _freezing_statement(read) or self._freezing_call(read)]
        if not freezing or any(_may_add_layers(read) for read in inside + later if read not in freezing):
            return []
        return freezing

    def _freezing_call(self, read: cst.Name) -> Optional[cst.CSTNode]:
        """The statement line of `freeze(model)`, ``read`` being the argument, when `freeze`
        is a function of this file that freezes every parameter of that parameter of its own
        in a statement of its body that always runs."""
        argument = read.parent
        call = argument.parent if isinstance(argument, cst.Arg) else None
        line = call.parent.parent if isinstance(call, cst.Call) and isinstance(call.parent, cst.Expr) else None
        receiver = self.inference.receiving_parameter(argument) if isinstance(line, cst.SimpleStatementLine) and \
            isinstance(call.func, cst.Name) else None
        if receiver is None or receiver[0].kind != "function":
            return None
        function, _name, reads = receiver
        for inner in reads:
            statement = _freezing_statement(inner)
            if statement is None:
                continue
            guard = statement.parent.parent if isinstance(statement.parent, cst.IndentedBlock) else None
            # `if feature_extracting:` around it, a flag every call here passes True for
            taken = statement.parent is function.node.body or isinstance(guard, cst.If) \
                and guard.parent is function.node.body and statement.parent is guard.body \
                and self._passes_true(call, function, guard.test)
            if taken and not any(isinstance(node, (cst.Return, cst.Raise)) and node.start < statement.start
                                 for node in iter_nodes(function.node.body)):
                return line
        return None

    def _passes_true(self, call: cst.Call, function, test: cst.BaseExpression, hops: int = 0) -> bool:
        """``test`` is a parameter of ``function`` for which ``call`` passes `True`, written out
        or through a parameter of the caller's every call passes `True` for (two calls up)."""
        param = next((param for param in function.positional_params()
                      if isinstance(test, cst.Name) and param.name.value == test.value), None)
        passed = self.inference.passed_argument(call, function, param) if param is not None else None
        if isinstance(passed, cst.Name) and passed.value == "True":
            return True
        bindings = self.model.resolve(passed) if isinstance(passed, cst.Name) and hops < 1 else []
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or self._changed_later(bindings[0]):
            return False
        caller = bindings[0].scope.function
        calls = self.inference.calls_of(caller) if isinstance(caller, FunctionInfo) else []
        return bool(calls) and all(self._passes_true(outer, caller, passed, hops + 1) for outer in calls)

    def _loader_batch(self, name: cst.Name) -> bool:
        """``name`` is (a part of) a batch of a `DataLoader`: a new tensor that requires no grad
        (or the counter `enumerate` pairs it with). The loader is followed through names,
        `enumerate(..)`, the parameter every call of the function passes one for (`train(model,
        loader)`), and `self.<attr>` every assignment of the class sets to one (an `__init__`
        parameter then, as every construction of the class passes it)."""
        bindings = self.model.resolve(name)
        if not bindings or not all(binding.kind is BindingKind.FOR or binding.iterates for binding in bindings):
            return False
        if all(binding.value is not None and self.inference.data_loaders(binding.value) is not None
               for binding in bindings):
            return True
        origin = self.analysis.placement.cpu_origin(name)
        return origin is not None and isinstance(origin[0], cst.Call) and \
            self.inference.qualname(origin[0].func) in torch_api.DATA_LOADERS

    def _computes_from_inputs(self, cls: ClassInfo) -> bool:
        """A module class of this file whose output is computed only from its inputs: a direct
        ``nn.Module`` subclass whose ``__init__`` calls nothing but ``super().__init__()``
        (it builds no layer and no parameter) and whose ``forward`` calls only torch
        functions and tensor methods, never turning gradients on or setting requires_grad."""
        if cls.model is not self.model or len(cls.node.bases) != 1 \
                or self.inference.qualname(cls.node.bases[0].value) != "torch.nn.Module":
            return False
        init, forward = cls.methods.get("__init__"), cls.methods.get("forward")
        if forward is None or _RE_ATTACHES.search(self._code(cls.node)):
            return False
        if init is not None and not all(_is_super_init(call) for call in iter_nodes(init.node.body)
                                        if isinstance(call, cst.Call)):
            return False
        for call in iter_nodes(forward.node.body):
            if not isinstance(call, cst.Call):
                continue
            qualname = self.inference.qualname(call.func)
            if qualname is not None and qualname.startswith("torch.") and not torch_api.is_module_class(qualname):
                continue
            if isinstance(call.func, cst.Attribute) and self.inference.tensor(call.func.value) is not None:
                continue
            return False
        return True

    def _batch(self, node: cst.BaseExpression) -> bool:
        """``node`` is a name bound only by loops over batches shown to have no graph (of a
        `DataLoader`, of a list of tensors without one): a tuple, list or dict of them."""
        if not isinstance(node, cst.Name):
            return False
        bindings = self.model.resolve(node)
        return bool(bindings) and all(b.kind is BindingKind.FOR and b.value is not None for b in bindings) \
            and self._graphless(node, 0) is not None

    def _method(self, node: cst.Call, receiver: cst.BaseExpression, method: str,
                depth: int, batch: bool = False) -> Optional[Proof]:
        if method in ("detach", "detach_"):
            return self._cut(node, "detached from the graph",
                             f"Compute it from `{self.analysis.snippet(receiver)}`, not "
                             f"`{self.analysis.snippet(node)}`; detach only the copy kept for logging or metrics",
                             detached=True)
        requires_grad = keyword(node, "requires_grad") if self.requires_grad_set else None
        if method == "requires_grad_" and not self.requires_grad_set:
            if self._makes_new_tensor(receiver):
                return None  # `torch.randn(3).requires_grad_()`: a new leaf to learn
            return self._graphless(receiver, depth)
        if method.endswith("_") or method.startswith("_") \
                or (requires_grad is not None and not is_false(requires_grad)):
            return None  # in place, `requires_grad_()`, `new_zeros(.., requires_grad=True)`: may attach it
        if method in torch_api.GRADIENT_STOPPING_METHODS:
            return self._stopped_on(node, [receiver], depth)
        if method in torch_api.NOT_DIFFERENTIABLE_METHODS:
            return Proof()
        if self.inference.tensor(node) is None and not batch:
            return None
        proof = self._graphless(receiver, depth)
        if proof is None:
            return None
        if method in torch_api.SHAPE_ARGUMENT_METHODS:
            return proof
        if any(arg.star for arg in node.args):
            return None
        plain = torch_api.PLAIN_KEYWORDS
        rest = self._operands([arg.value for arg in node.args
                               if not (arg.keyword is not None and arg.keyword.value in plain)], depth)
        return _join([proof, rest]) if rest is not None else None

    def _torch_call(self, node: cst.Call, qualname: str, depth: int) -> Optional[Proof]:
        name = qualname.rsplit(".", 1)[-1]
        converts = qualname in ("torch.tensor", "torch.from_numpy") or torch_api.is_tensor_type(qualname)
        # Unread only where values are converted: `torch.randn(.., requires_grad=True)` is a leaf to learn.
        requires_grad = keyword(node, "requires_grad") if self.requires_grad_set or not converts else None
        if not qualname.startswith("torch.") or qualname in torch_api.ARGUMENT_RETURNING_FUNCTIONS \
                or (requires_grad is not None and not is_false(requires_grad)):
            return None
        if qualname in ("torch.tensor", "torch.from_numpy") or torch_api.is_tensor_type(qualname):
            return self._new_tensor(node)
        if name in torch_api.CREATION_FUNCTIONS and qualname.count(".") == 1 and not name.endswith("_like"):
            return self._cut(node, "made without `requires_grad`",
                             "Make the tensors to learn with `requires_grad=True` (or as `nn.Parameter`s of a "
                             "module), so that backward has something to compute gradients for", fresh=True)
        if name in torch_api.GRADIENT_STOPPING_METHODS and qualname.count(".") == 1:
            return self._stopped_on(node, [arg.value for arg in node.args if arg.keyword is None and not arg.star][:1],
                                    depth)
        if self.inference.tensor(node) is None:
            return None
        if qualname in torch_api.TENSOR_JOINING_FUNCTIONS and node.args and node.args[0].keyword is None \
                and not node.args[0].star and isinstance(node.args[0].value, cst.Name):
            return self._items(node.args[0].value, depth)  # `torch.stack(losses)` of a list of losses
        return self._arguments(node, depth)

    def _arguments(self, node: cst.Call, depth: int) -> Optional[Proof]:
        arguments = [arg for arg in node.args if not arg.star
                     and not (arg.keyword is not None and arg.keyword.value in torch_api.PLAIN_KEYWORDS)]
        if any(arg.star for arg in node.args) or not arguments:
            return None
        return self._operands([arg.value for arg in arguments], depth)

    def _new_tensor(self, node: cst.Call) -> Optional[Proof]:
        """`torch.tensor(..)`, `torch.from_numpy(..)`, `torch.FloatTensor(..)`: a new leaf that
        does not require grad; a cut when what it is made from is a tensor's values."""
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return None
        source = node.args[0].value
        sources: list[cst.CSTNode] = [source]
        listed: list[cst.BaseExpression] = []  # what is appended to the list it is made from
        for found in sources:  # grows: the values of the names read, three assignments back at most
            if len(sources) > 12:
                break
            for name in [inner for inner in iter_nodes(found) if isinstance(inner, cst.Name)]:
                for binding in self.model.resolve(name)[:3]:  # `total = 0.0`, `total += float(loss)`
                    if binding.kind not in (BindingKind.ASSIGN, BindingKind.AUGASSIGN) or binding.value is None \
                            or any(binding.value is known for known in sources):
                        continue
                    value = binding.value
                    if isinstance(value, cst.List) and not value.elements:
                        appended = [arg.value for arg in self.analysis.appended_to(binding)]  # `losses.append(..)`
                        sources += appended
                        if found is source and isinstance(source, cst.Name) and name is source:
                            listed += appended
                    elif not binding.path and not binding.iterates:
                        sources.append(value)  # `pred_np = pred.detach().numpy()`
        for inner in (inner for found in sources for inner in iter_nodes(found)):
            if isinstance(inner, cst.Call) and self._plain_values_of(inner) is not None:
                return self._cut(node, f"a new tensor made from the plain values of `{self.analysis.snippet(inner)}`",
                                 "Combine the tensors themselves (not their `.item()`, `.tolist()` or numpy values), "
                                 "so that the result keeps their graph", to_change=True, inert=True)
        written = source
        if isinstance(source, cst.Name) and not listed:  # `losses = [g.get_loss() for g in gates]`
            bindings = self.model.resolve(source)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN and not bindings[0].path \
                    and not bindings[0].iterates and isinstance(bindings[0].value, (cst.List, cst.ListComp, cst.Tuple)) \
                    and not self._changed_later(bindings[0]) and not re.search(
                        rf"(?<![\w.]){re.escape(source.value)}\s*(?:\.\s*(?:append|extend|insert)\b|\+=)",
                        self._code(bindings[0].scope.node)):
                written = bindings[0].value
        if isinstance(written, (cst.List, cst.ListComp, cst.Tuple, cst.Name)):
            elements = [written.elt] if isinstance(written, cst.ListComp) else listed if isinstance(written, cst.Name) \
                else [element.value for element in written.elements if not isinstance(element, cst.StarredElement)]
            if elements and all(self.inference.tensor(element) is not None for element in elements):
                return self._cut(node, "a new tensor made from the values of the tensors listed",
                                 "Combine the tensors themselves (`torch.stack`, `torch.cat`), not copies of their "
                                 "values, so that the result keeps their graph", to_change=True, inert=True)
        if self.branch is not None and self._number(source) and self._on_branch(node):
            return self._cut(node, "a constant made without `requires_grad`",
                             "Make the value returned on this path from the predictions (`pred.sum() * 0`), so "
                             "that it keeps their graph, or skip the backward for it", fresh=True)
        value = self.inference.infer(source)
        if self.inference.qualname(node.func) not in ("torch.tensor", "torch.from_numpy"):
            # `torch.Tensor(t)` of a tensor keeps its graph; numbers, lists and arrays have none.
            return Proof() if value is not None and value.kind in (Kind.OTHER, Kind.NDARRAY) else None
        if value is not None and value.kind is Kind.TENSOR:
            return self._cut(node, "a copy of the values in a new tensor, outside the graph",
                             f"Use `{self.analysis.snippet(source)}` itself, not a copy made by `torch.tensor`")
        return Proof()

    def _plain_values_of(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The tensor whose values ``call`` takes out of torch: `t.item()`, `t.tolist()`,
        `t.numpy()`, `float(t)`, `int(t)`; None for any other call."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.TO_PLAIN_METHODS:
            fact = torch_facts.method(func.attr.value)
            # `.numpy()` is a method of tensors only: its receiver is one, known or not (a parameter)
            known = self.inference.tensor(func.value) is not None or fact is not None and fact.tensor_only
            return func.value if known else None
        if isinstance(func, cst.Name) and func.value in ("float", "int") and len(call.args) == 1 \
                and call.args[0].keyword is None and not call.args[0].star \
                and self.inference.qualname(func) in (None, f"builtins.{func.value}"):
            return call.args[0].value if self.inference.tensor(call.args[0].value) is not None else None
        return None

    def _gives_indices(self, node: cst.BaseExpression) -> bool:
        """``node`` is a call returning `(values, indices)`: `out.max(1)`, `torch.topk(out, 3)`."""
        if not isinstance(node, cst.Call):
            return False
        func = node.func
        qualname = self.inference.qualname(func)
        if qualname is not None:
            name = qualname.rsplit(".", 1)[-1]
            if not (qualname.startswith("torch.") and qualname.count(".") == 1):
                return False
            dimension = node.args[1].value if len(node.args) > 1 and node.args[1].keyword is None else None
        elif isinstance(func, cst.Attribute) and self.inference.tensor(func.value) is not None:
            name = func.attr.value
            dimension = node.args[0].value if node.args and node.args[0].keyword is None else None
        else:
            return False
        if name not in torch_api.VALUES_AND_INDICES:
            return False
        if name not in torch_api.VALUES_AND_INDICES_WITH_DIM:
            return True
        if isinstance(dimension, cst.UnaryOperation):
            dimension = dimension.expression
        return keyword(node, "dim") is not None or isinstance(dimension, cst.Integer)

    def _reduced(self, call: cst.Call) -> cst.BaseExpression:
        """The tensor a `(values, indices)` call (``_gives_indices``) reduces: `out` of `out.max(1)`
        and of `torch.max(out, 1)`; its values carry a graph exactly when it does."""
        if isinstance(call.func, cst.Attribute) and self.inference.qualname(call.func) is None:
            return call.func.value
        return call.args[0].value

    def _stopped_on(self, node: cst.BaseExpression, operands: list[cst.BaseExpression], depth: int) -> Proof:
        """``node`` is a step no gradient flows through (a comparison, `argmax`, `.long()`) of
        ``operands``: where they never had a graph (data, tensors made without
        `requires_grad`), it cuts nothing, and they are the reason (`(torch.rand(n) > 0.5)` as
        a target is no place to change)."""
        data = self._operands(operands, depth) if operands else None
        if data is not None and all(cut.fresh for cut in data.cuts):
            return data
        return self._stopped(node)

    def _stopped(self, node: cst.BaseExpression, indices: bool = False) -> Proof:
        what = "whose indices (its item 1) are integers no gradient flows through" if indices else \
            "a result no gradient flows through (indices, comparisons and integer conversions are not differentiable)"
        return self._cut(node, what,
                         "Compute the loss from the scores themselves (`cross_entropy` on the logits, or a soft "
                         "version with `softmax`), not from `argmax`, comparisons or integer conversions of them",
                         to_change=True, inert=True)

    def _cut(self, node: cst.BaseExpression, what: str, advice: str, to_change: bool = False,
             fresh: bool = False, detached: bool = False, inert: bool = False) -> Proof:
        line = self._line(node)
        shown = self.analysis.snippet(node)
        cut = Cut(node, f"`{shown}` (line {line}), {what}", f"is `{shown}` (line {line}), {what}", advice, to_change,
                  fresh, detached=detached, inert=inert)
        return Proof((Step(node, f"`{{code}}` is {what}"),), (cut,))

    def _foreign_call(self, node: cst.Call, function, depth: int) -> Optional[Proof]:
        """A call of a function (or of the ``forward`` of a module) of another module of the
        project: no graph when every argument here has none and that module shows that what
        the function returns has none once its parameters have none (it computes only from
        them, numbers and attributes without a graph). A graph cut inside it is that
        module's to report."""
        other = self.analysis.defining(function) if function is not None else None
        if other is None or not isinstance(function.node, cst.FunctionDef):
            return None
        other.model.materialize(function)  # (an imported module's bodies are built on demand)
        if function.is_generator or not function.returns or any(arg.star for arg in node.args):
            return None
        flow = other.grad_flow.no_graph if self.requires_grad_set else other.grad_flow.no_graph_but_requires_grad
        given = flow.given_arguments(function)
        for returned in function.returns:
            proof = given._graphless(returned, 0)
            if proof is None or proof.cuts:
                return None
        inputs = self._arguments(node, depth)
        if inputs is None or not inputs.cuts:
            return None
        return inputs.then(Step(node, f"`{{code}}` computes its result from its arguments only "
                                      f"(`{function.name}`, {other.location(function.node)})"))

    def given_arguments(self, function) -> "NoGraph":
        """This analysis, with the parameters of ``function`` taken to have no graph."""
        flow = self._given_flows.get(id(function))
        if flow is None:
            flow = self._given_flows[id(function)] = NoGraph(self.analysis, self.requires_grad_set, function)
        return flow

    def _container_under_no_grad(self, node: cst.BaseExpression, depth: int) -> Optional[Proof]:
        """``node`` is a name bound once (not in a loop's target) to what a call of a function
        of this file returns, or to a part of it, the call made under no_grad: see
        ``_returned_under_no_grad``."""
        if not isinstance(node, cst.Name):
            return None
        bindings = self.model.resolve(node)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].iterates \
                or not isinstance(bindings[0].value, cst.Call) or self._changed_later(bindings[0]):
            return None
        proof = self._returned_under_no_grad(bindings[0].value, depth, bindings[0].path)
        return proof.then(Step(bindings[0].value, f"`{node.value}` is taken from `{{code}}`")) if proof else None

    def _returned_under_no_grad(self, call: cst.Call, depth: int, path: tuple = ()) -> Optional[Proof]:
        """``call`` of a function of this file runs under no_grad (a `with` block, a decorator,
        `set_grad_enabled(False)` around it): everything it computes records no graph, so what
        it returns (with ``path``, the part of the tuple it returns) has none when every value
        in it is made during the call (by torch operations, modules, or this file's functions
        called from it, itself or its part a dict, list or tuple of such values), never an
        argument, attribute or global handed back, and nothing on the way turns gradients on
        or sets `requires_grad`."""
        if self._disabled(call) is None:
            return None
        callee = self.inference.infer(call.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not self._runs_without_grad(function, 0):
            return None
        for returned in function.returns:
            part = tuple_element(returned, path) if path else returned
            if part is None or not self._made_in(part, function, 0):
                return None
        return self._under_no_grad(call)

    def _runs_without_grad(self, function, hops: int) -> bool:
        """``function``, of this file and returning values, turns no gradients on and sets no
        `requires_grad` (nor do the functions of this file it calls, three calls deep)."""
        if not isinstance(function, FunctionInfo) or function.model is not self.model \
                or not isinstance(function.node, cst.FunctionDef) or function.is_generator or not function.returns \
                or hops > 3:
            return False
        code = self._code(function.node)
        return not _RE_ENABLES.search(code) and not _RE_MAKES_LEAF.search(code)

    def _made_in(self, node: cst.BaseExpression, function, hops: int) -> bool:
        """``node``, in ``function``, is a value made while it runs: a tensor computed by a
        torch operation or a module, what a function of this file called there returns when
        that is made in it, a local name bound only to such values, a dict, list or tuple of
        them. Not a parameter, attribute or global, which may hold a graph from before."""
        if hops > 6:
            return False
        if isinstance(node, cst.Dict):
            return bool(node.elements) and all(isinstance(element, cst.DictElement)
                                               and self._made_in(element.value, function, hops + 1)
                                               for element in node.elements)
        if isinstance(node, (cst.Tuple, cst.List)):
            return bool(node.elements) and all(not isinstance(element, cst.StarredElement)
                                               and self._made_in(element.value, function, hops + 1)
                                               for element in node.elements)
        if isinstance(node, cst.Name):
            bindings = self.model.resolve(node)
            if not bindings:
                return False
            for binding in bindings:
                if binding.kind is not BindingKind.ASSIGN or binding.iterates or binding.value is None \
                        or binding.scope is None or binding.scope.function is not function \
                        or self._changed_later(binding):
                    return False
                value = binding.value
                if binding.path:
                    if isinstance(value, (cst.Tuple, cst.List)):
                        value = tuple_element(value, binding.path)
                        if value is None or not self._made_in(value, function, hops + 1):
                            return False
                    elif not self._returns_made(value, binding.path, hops):
                        return False
                elif not self._made_in(value, function, hops + 1):
                    return False
            return True
        if isinstance(node, cst.Call) and self._returns_made(node, (), hops):
            return True
        return isinstance(node, (cst.Call, cst.BinaryOperation)) and self._computes_under_no_grad(node)

    def _returns_made(self, call: cst.BaseExpression, path: tuple, hops: int) -> bool:
        """``call`` is of a function of this file whose every return (its part ``path``) is
        made while it runs (``_made_in``)."""
        if not isinstance(call, cst.Call):
            return False
        callee = self.inference.infer(call.func)
        function = callee.function if callee is not None and callee.kind is Kind.FUNCTION else None
        if not self._runs_without_grad(function, hops // 2):
            return False
        for returned in function.returns:
            part = tuple_element(returned, path) if path else returned
            if part is None or not self._made_in(part, function, hops + 1):
                return False
        return True

    def _function_result(self, node: cst.Call, function, depth: int, path: tuple = ()) -> Optional[Proof]:
        """A function of this file: every value it returns has no graph (with ``path``, the
        part of the tuple it returns that a target of an unpacking gets)."""
        definition = function.node
        if function.model is not self.model or not isinstance(definition, cst.FunctionDef) \
                or function.is_generator or not function.returns:
            return None
        returns = [returned for returned in function.returns if self.branch is None or not self._off_path(returned)]
        whole = returns
        if path:
            returns = [tuple_element(returned, path) for returned in returns]
            if any(returned is None for returned in returns):
                return None
        if not returns:
            return None
        selected, deciding = [], None
        for returned in returns:
            origin = self._off_selected_path(returned, node, function)
            if origin is None:
                selected.append(returned)
            else:
                deciding = deciding or origin
        if deciding is not None and selected:
            returns = selected  # `_threshold(pr, threshold)` of a caller passing a threshold
        else:
            deciding = None
        proofs = []
        for returned in returns:
            proof = self._graphless(returned, depth)
            if proof is None:
                return None
            proofs.append(proof)
        if deciding is not None:
            return self._selected_arm(node, function, deciding, _join(proofs))
        if path and self._given_beside(whole, path, depth):
            # `return loss, loss.detach()`: the function hands back the value to train and, beside
            # it, a copy cut for logging; the cut is deliberate, the caller took the wrong item.
            proofs = [Proof(proof.steps, tuple(replace(cut, detached=False, to_change=False)
                                               for cut in proof.cuts)) for proof in proofs]
        decorator = self._disabled(returns[0])
        if isinstance(decorator, cst.Decorator) and all(self._disabled(r) is decorator for r in returns) \
                and self._inference_entry(function, decorator):
            # `model.generate(..)` beside a `forward` that records the graph: an inference entry
            # point, decorated on purpose; what to change is the call that takes it for training.
            shown = self.analysis.snippet(node)
            runs = f"which runs under `@{self.analysis.snippet(decorator.decorator)}` (line {self._line(decorator)})"
            cut = Cut(node, f"`{shown}` (line {self._line(node)}), {runs}", f"is returned by `{shown}`, {runs}",
                      f"`{function.name}` is for inference: compute what is back-propagated with the model's "
                      f"`forward` (call the model itself), which records the graph", to_change=True)
            steps = (Step(node, f"`{{code}}` is what `{function.name}` returns"),
                     Step(decorator.decorator, f"`{function.name}` runs with gradients disabled: `@{{code}}`"))
            return Proof(steps, (cut,))
        if isinstance(decorator, cst.Decorator) and all(self._disabled(r) is decorator for r in returns):
            # The whole function runs without gradients: that is the reason, said once.
            runs = f"which runs under `@{self.analysis.snippet(decorator.decorator)}` (line {self._line(decorator)})"
            shown = self.analysis.snippet(node)
            advice = (f"For training, call a version of `{function.name}` without "
                      f"`@{self.analysis.snippet(decorator.decorator)}`: the decorator disables gradients whatever "
                      f"the caller does")
            cut = Cut(node, f"`{shown}` (line {self._line(node)}), {runs}", f"is returned by `{shown}`, {runs}",
                      advice, switch=decorator)
            steps = (Step(node, f"`{{code}}` is what `{function.name}` returns"),
                     Step(decorator.decorator, f"`{function.name}` runs with gradients disabled: `@{{code}}`"))
            return Proof(steps, (cut,))
        step = Step(node, f"`{{code}}` returns what `{function.name}` returns")
        return _join(proofs, step)

    def _given_beside(self, returns: list, path: tuple, depth: int) -> bool:
        """Each tuple in ``returns`` holds, beside its item ``path``, an item not shown to be
        without a graph: a function that returns a value to train and a cut copy of it."""
        for returned in returns:
            if not isinstance(returned, cst.Tuple) or len(path) != 1 \
                    or any(isinstance(element, cst.StarredElement) for element in returned.elements):
                return False
            others = [element.value for index, element in enumerate(returned.elements) if index != path[0]]
            if not any(self.inference.tensor(other) is not None and self._graphless(other, depth) is None
                       for other in others):
                return False
        return True

    def _inference_entry(self, function, decorator: cst.Decorator) -> bool:
        """``function`` is a method, decorated by ``decorator`` to run without gradients, of a
        module class of this file whose `forward` is not so decorated: the class offers both
        an inference path and a differentiable one (`generate` beside `forward`)."""
        cls = function.cls
        if not isinstance(cls, ClassInfo) or function.name == "forward":
            return False
        base = self.inference.torch_base(cls)
        forward = self.inference.method_of(cls, "forward")
        return base is not None and torch_api.is_module_class(base) and forward is not None \
            and isinstance(forward.node, cst.FunctionDef) and not forward.node.decorators

    def _selected_arm(self, call: cst.Call, function, deciding: cst.CSTNode, proof: Proof) -> Proof:
        """``proof`` that what ``call`` returns has no graph holds on the arm of ``function``
        that the argument ``deciding`` selects (written at the call or further up): that
        argument is the line to change, the function being right for its other callers."""
        inner = [cut for cut in proof.cuts if not cut.fresh and is_descendant(cut.node, function.node)]
        if not inner:
            return proof
        shown, line = self.analysis.snippet(deciding), self._line(deciding)
        what = inner[0].noun
        cut = Cut(deciding, f"`{shown}` (line {line}), which makes `{function.name}` return {what}",
                  f"is returned by `{function.name}` on the path `{shown}` (line {line}) selects: {what}",
                  f"Do not pass `{shown}` where the result is back-propagated: it takes the path of "
                  f"`{function.name}` that cuts the graph", to_change=True)
        steps = proof.steps + (Step(call, f"`{{code}}` takes the path of `{function.name}` its arguments select"),
                               Step(deciding, "`{code}` selects that path"))
        return Proof(steps, (cut,) + tuple(c for c in proof.cuts if c not in inner))

    def _off_selected_path(self, returned: cst.CSTNode, call: cst.Call, function) -> Optional[cst.CSTNode]:
        """The argument (at ``call`` or further up) that keeps the `return` ``returned`` of
        ``function`` from running on this call: it decides the test of an `if` around it, or of
        an `if` before it whose arm taken ends with `return`; None when it may run."""
        for ancestor in ancestors(returned):
            if ancestor is function.node:
                break
            if isinstance(ancestor, cst.If):
                arm = is_descendant(returned, ancestor.body)
                decided = self._decided(ancestor.test, call, function, 0)
                if decided is not None and decided[0] is not arm:
                    return decided[1]
        body = function.node.body
        for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
            if statement.end > returned.start:
                break
            if isinstance(statement, cst.If):
                decided = self._decided(statement.test, call, function, 0)
                block = None if decided is None else statement.body if decided[0] else statement.orelse
                if isinstance(block, cst.Else):
                    block = block.body
                if isinstance(block, cst.IndentedBlock) and block.body and \
                        isinstance(block.body[-1], cst.SimpleStatementLine) and \
                        any(isinstance(small, (cst.Return, cst.Raise)) for small in block.body[-1].body):
                    return decided[1]
        return None

    def _decided(self, test: cst.BaseExpression, call: cst.Call, function, hops: int
                 ) -> Optional[tuple[bool, cst.CSTNode]]:
        """The value of the `if` test ``test`` of ``function`` when ``call`` runs it, decided by
        what the call passes for a parameter (`if p:`, `if not p:`, `if p is None:`, `if p is
        not None:`), and the argument that decides it."""
        return decide_test(test, lambda name: self._argument_constant(name, call, function, hops))

    def _argument_constant(self, name: str, call: cst.Call, function, hops: int
                           ) -> Optional[tuple[bool, bool, cst.CSTNode]]:
        """(is None, truthy, where it is written) of what ``call`` gives the parameter ``name``
        of ``function``: a literal, the parameter's default, or what every call of the caller
        gives the caller's parameter or the attribute of `self` its `__init__` sets from one."""
        if hops > 3 or not isinstance(function.node, cst.FunctionDef) or any(arg.star for arg in call.args):
            return None
        param = next((param for param in function.positional_params() if param.name.value == name), None)
        if param is None:
            return None
        passed = self.inference.passed_argument(call, function, param)
        if passed is None:
            return None if param.default is None else self._literal_value(param.default, param, hops)
        arg = next((arg for arg in call.args if arg.value is passed), None)
        return self._literal_value(passed, arg if arg is not None and arg.keyword is not None else passed, hops)

    def _literal_value(self, value: cst.BaseExpression, origin: cst.CSTNode, hops: int
                  ) -> Optional[tuple[bool, bool, cst.CSTNode]]:
        """See ``_argument_constant``: ``value`` as the call passes it."""
        if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
            return value.value == "None", value.value == "True", origin
        if isinstance(value, (cst.Integer, cst.Float)):
            return False, bool(value.evaluated_value), origin
        if isinstance(value, cst.SimpleString):
            return False, bool(value.evaluated_value), origin
        if isinstance(value, cst.Name):
            bindings = self.model.resolve(value)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or self._changed_later(bindings[0]):
                return None
            return self._passed_by_every_call(bindings[0].scope.function, value.value, hops)
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name):
            method = next((b.scope.function for b in self.model.resolve(value.value) if b.kind is BindingKind.PARAM
                           and b.scope.function is not None and b.scope.function.kind == "method"
                           and b.scope.function.self_name == value.value.value), None)
            cls = method.cls if method is not None else None
            init = cls.methods.get("__init__") if isinstance(cls, ClassInfo) and cls.model is self.model else None
            assignments = cls.assignments(value.attr.value) if init is not None else []
            if len(assignments) != 1 or assignments[0].function is not init or assignments[0].path \
                    or not isinstance(assignments[0].value, cst.Name) or self._in_hierarchy(cls):
                return None
            bindings = self.model.resolve(assignments[0].value)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.PARAM or bindings[0].scope.function is not init:
                return None
            return self._passed_by_every_call(init, assignments[0].value.value, hops)
        return None

    def _passed_by_every_call(self, function, name: str, hops: int) -> Optional[tuple[bool, bool, cst.CSTNode]]:
        """What every call of ``function`` in the file passes for its parameter ``name``, when
        they agree and no other file calls it."""
        if not isinstance(function, FunctionInfo) or function.model is not self.model \
                or self.analysis.callers_elsewhere(function):
            return None
        calls = self.analysis.grad_flow.call_sites(function)
        found = None
        for call in calls:
            known = self._argument_constant(name, call, function, hops + 1)
            if known is None or found is not None and known[:2] != found[:2]:
                return None
            found = found or known
        return found


@dataclass(frozen=True)
class TrainedWithoutGraph:
    """``switch_on`` turns on `requires_grad` for ``self.<layer>`` of ``cls``, whose ``forward``
    (the only place it runs) is decorated ``decorator``, a `no_grad`."""

    decorator: cst.Decorator
    forward: object
    cls: str
    layer: str
    switch_on: cst.CSTNode


def _registers_backward_hook(node: Optional[cst.CSTNode]) -> bool:
    """``node`` is a call registering a hook autograd runs during backward."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in torch_api.BACKWARD_HOOK_REGISTRATIONS


def _switch_of(call: cst.Call) -> cst.CSTNode:
    """What turns `requires_grad` on, for ``call`` of ``_switched_on``: the call itself, or
    the `p.requires_grad = True` of its loop."""
    if isinstance(call.parent, cst.For):
        for node in iter_nodes(call.parent.body):
            if isinstance(node, cst.Assign) and isinstance(node.targets[0].target, cst.Attribute) \
                    and node.targets[0].target.attr.value == "requires_grad":
                return node
    return call


def _switched_on(call: cst.Call) -> Optional[cst.BaseExpression]:
    """``E`` of `E.requires_grad_(True)` / `E.requires_grad_()`, or of the loop `for p in
    E.parameters(): p.requires_grad = True` whose `.parameters()` call ``call`` is."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "requires_grad_":
        given = call.args[0].value if len(call.args) == 1 and call.args[0].keyword is None else None
        if not call.args or isinstance(given, cst.Name) and given.value == "True":
            return func.value
        return None
    loop = call.parent
    if func.attr.value != "parameters" or call.args or not isinstance(loop, cst.For) or loop.iter is not call \
            or not isinstance(loop.target, cst.Name):
        return None
    for statement in getattr(loop.body, "body", ()):
        for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Attribute) \
                    and small.targets[0].target.attr.value == "requires_grad" \
                    and isinstance(small.targets[0].target.value, cst.Name) \
                    and small.targets[0].target.value.value == loop.target.value \
                    and isinstance(small.value, cst.Name) and small.value.value == "True":
                return func.value
    return None


def _plain_class(cls) -> bool:
    """``cls`` is a class of this file with no base but `object`: not a module, whatever its
    methods are named."""
    return isinstance(cls, ClassInfo) and all(
        isinstance(base.value, cst.Name) and base.value.value == "object" for base in cls.node.bases)


def _freezing_statement(read: cst.BaseExpression, both_arms: bool = False) -> Optional[cst.CSTNode]:
    """The statement around this read of a module (``model``, ``self.net``) that freezes all
    its parameters: the loop `for p in model.parameters():` (or `named_parameters()`) whose
    body sets `p.requires_grad = False` (or calls `p.requires_grad_(False)`) unconditionally
    (or, with ``both_arms``, in both arms of an `if` of the body), or the line
    `model.requires_grad_(False)`."""
    attribute = read.parent
    call = attribute.parent if isinstance(attribute, cst.Attribute) and attribute.value is read else None
    if not isinstance(call, cst.Call) or call.func is not attribute:
        return None
    method = attribute.attr.value
    if method == "requires_grad_":
        line = call.parent.parent
        return line if isinstance(line, cst.SimpleStatementLine) and isinstance(call.parent, cst.Expr) and \
            len(call.args) == 1 and is_false(call.args[0].value) else None
    loop = call.parent
    if method not in ("parameters", "named_parameters") or not isinstance(loop, cst.For) or loop.iter is not call:
        return None
    target = loop.target
    if method == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    if not isinstance(target, cst.Name):
        return None
    return loop if _turns_off_each(loop.body, target.value, both_arms) else None


def _turns_off_each(suite: cst.CSTNode, name: str, both_arms: bool) -> bool:
    """A statement of ``suite`` turns off `requires_grad` of ``name`` (with ``both_arms``,
    also an `if` whose arms both do)."""
    for statement in getattr(suite, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine) and any(
                _turns_off_requires_grad(small, name) for small in statement.body):
            return True
        if both_arms and isinstance(statement, cst.If) and isinstance(statement.orelse, cst.Else) \
                and _turns_off_each(statement.body, name, True) and _turns_off_each(statement.orelse.body, name, True):
            return True
    return False


def _freezes_attribute(statement: cst.CSTNode, self_name: Optional[str], name: Optional[str]) -> bool:
    """``statement`` turns off `requires_grad` of every parameter of ``self.<name>`` (of
    ``self`` itself when ``name`` is None): `self.net.requires_grad_(False)`, or a loop over
    its `parameters()` / `named_parameters()` whose body does it to each, unconditionally or
    in both arms of an `if`."""
    holder = _receiver_of_statement(statement)
    if name is None:
        held = isinstance(holder, cst.Name) and holder.value == self_name
    else:
        held = isinstance(holder, cst.Attribute) and holder.attr.value == name and \
            isinstance(holder.value, cst.Name) and holder.value.value == self_name
    return held and _freezing_statement(holder, both_arms=True) is statement


def _receiver_of_statement(statement: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """``m`` of the statement ``for p in m.parameters():`` or ``m.requires_grad_(False)``."""
    call = None
    if isinstance(statement, cst.For):
        call = statement.iter
    elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Expr):
        call = statement.body[0].value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return call.func.value
    return None


# Methods of a module that add nothing to it: the uses of a model between its making and its call.
_PLAIN_MODULE_METHODS = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "double", "half", "parameters",
                                   "named_parameters", "zero_grad", "state_dict", "modules", "children"})


def _only_uses(read: cst.Name) -> bool:
    """This read of a module calls it, or a method of it that adds nothing (`model.eval()`,
    `model.parameters()` handed to an optimizer)."""
    parent = read.parent
    if isinstance(parent, cst.Call) and parent.func is read:
        return True
    return isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in _PLAIN_MODULE_METHODS \
        and isinstance(parent.parent, cst.Call) and parent.parent.func is parent


def _turns_off_requires_grad(statement: cst.CSTNode, name: str) -> bool:
    """``name.requires_grad = False`` or ``name.requires_grad_(False)``."""
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        return isinstance(target, cst.Attribute) and target.attr.value == "requires_grad" and \
            isinstance(target.value, cst.Name) and target.value.value == name and is_false(statement.value)
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        call = statement.value
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and \
            isinstance(func.value, cst.Name) and func.value.value == name and len(call.args) == 1 and \
            is_false(call.args[0].value)
    return False


def _may_add_layers(read: cst.Name) -> bool:
    """This read of a module may give it new parameters: an attribute assigned (`model.fc =
    nn.Linear(..)`), a method that adds (`add_module`, `append`), the module handed to a call."""
    parent = read.parent
    if isinstance(parent, cst.Arg):
        return True
    if not isinstance(parent, cst.Attribute) or parent.value is not read:
        return False
    top = parent  # `model.blocks`, `model.encoder.layers[0]`: the submodule read
    while isinstance(top.parent, (cst.Attribute, cst.Subscript)) and top.parent.value is top:
        top = top.parent
    holder = top.parent
    if isinstance(holder, (cst.AssignTarget, cst.Arg)) or isinstance(holder, cst.Assign) and holder.value is top:
        return True  # replaced, handed to a call (`setattr(model.encoder, ..)`), or kept under another name
    if isinstance(holder, cst.For) and holder.iter is top:
        # `for block in model.blocks: block.proj = Adapter(block.proj)`: layers added to its parts
        return any(isinstance(node, cst.AssignTarget) and isinstance(node.target, (cst.Attribute, cst.Subscript))
                   or isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "setattr"
                   for node in iter_nodes(holder.body))
    return isinstance(top, cst.Attribute) and top.attr.value in (
        "add_module", "register_module", "register_parameter", "append", "extend", "insert", "apply", "__setattr__")


def _is_super_init(call: cst.Call) -> bool:
    """``super().__init__()`` (or ``super(Cls, self).__init__()``) and the ``super(..)`` in it."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value == "super"
    return isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call) \
        and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"
