"""What may clear the gradients an optimizer steps with, on the iterations of a training
loop that run the step (TL407's question): a `zero_grad()` of anything but an optimizer
or module known to be over other parameters, an assignment or `del` of a `.grad`, an
in-place clearing method called on a gradient (`p.grad.zero_()`), a call of this file's
functions that does one of these (followed ``MAX_DEPTH`` calls deep), and a call the
analysis cannot see into whose name says it clears or that can reach the optimizer or
the model.  "May" is the safe side: a rule that reports a missing clearing asks it, so
anything that might clear counts.

Also here: the loop-shape helpers such a question needs (the statements that run on
every iteration, the calls a body makes, a step under a condition on the iteration
count) and where a name is bound relative to a loop.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Iterable, Iterator, Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import called_name, dotted
from torchlint.syntax.walk import is_descendant, iter_nodes
from torchlint.analysis import torch_api
from torchlint.analysis.autograd import modules_overlap
from torchlint.analysis.semantic import BindingKind
from torchlint.analysis.values import Kind, Value

if TYPE_CHECKING:
    from torchlint.framework.context import FileContext

# A function the analysis cannot see into whose name says it may clear gradients:
# `zero_grads(model)`, `torch._foreach_zero_(grads)`, `self.reset_gradients()`.  (A naming
# convention of user code, not a torch name.)
_CLEARING_NAME = re.compile(r"(?<![a-z])zero|grads?_?(?:reset|clear|none|free|init)|(?:reset|clear|free|init)\w*grad",
                            re.IGNORECASE)
# Expressions whose parts may not run: what is inside them is not on every iteration's path.
_MAY_SKIP = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)
# How far calls to this file's functions are followed when looking for a clearing.
MAX_DEPTH = 4


class GradientClearing:
    """The may-clear query over one file (``ctx``)."""

    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx

    def local_body(self, call: cst.Call) -> Optional[cst.CSTNode]:
        """The body of the function of this file that ``call`` calls, if it is one."""
        value = self.ctx.infer(call.func)
        if value is None or value.kind is not Kind.FUNCTION or not defined_in(value, self.ctx.model):
            return None
        return value.function.node.body

    def may_clear_around(self, loop: cst.CSTNode, lifted: Optional[cst.Call], optimizer: cst.BaseExpression,
                         step: cst.Call) -> bool:
        """Whether anything may clear ``optimizer``'s gradients on an iteration of ``loop``
        that runs ``step``; when the step is in the body of a function the loop calls
        (``lifted``), that body is read in the step's own names, the rest of the loop apart."""
        if lifted is None:
            return self.may_clear(loop, [optimizer], depth=0, seen=set(), step=step)
        body = self.local_body(lifted)
        return self.may_clear(body, [optimizer], depth=0, seen=set(), step=step) or \
            self.may_clear(loop, [optimizer], depth=0, seen=set(), skip=lifted)

    def may_clear(self, root: cst.CSTNode, optimizers: list[cst.BaseExpression], depth: int,
                  seen: set[int], step: Optional[cst.Call] = None, skip: Optional[cst.CSTNode] = None) -> bool:
        """Whether anything in ``root`` (a loop, or a function it calls) may clear gradients."""
        given = {self.ctx.code(optimizer) for optimizer in optimizers}
        if step is not None and isinstance(step.func, cst.Attribute):
            # What steps the optimizer (`scaler.step(opt)`): its methods (`scaler.unscale_(opt)`,
            # `scaler.update()`) drive the step, as the optimizer's own do.
            given.add(self.ctx.code(step.func.value))
        for node in iter_nodes(root):
            if step is not None and self.ctx.model.exclusive(node, step):
                continue
            if skip is not None and is_descendant(node, skip):
                continue
            if isinstance(node, cst.Attribute):
                if node.attr.value == "zero_grad" and not (depth == 0 and self._clears_others(node.value, optimizers)):
                    return True
                if node.attr.value == "grad" and _assigned(node):
                    return True
            elif isinstance(node, cst.Call) and self._call_may_clear(node, optimizers, given, depth, seen):
                return True
        return False

    def _clears_others(self, receiver: cst.BaseExpression, optimizers: list[cst.BaseExpression]) -> bool:
        """``receiver.zero_grad()`` clears the parameters of other modules than those of every
        one of ``optimizers``: an optimizer (or a module) whose modules are known and share no
        parameter with the known modules of each stepped optimizer (`optimizer_E.zero_grad()`
        in a loop that steps `optimizer_D` over `D`). With no optimizer known, any may clear."""
        if not optimizers:
            return False
        value = self.ctx.infer(receiver)
        if value is not None and value.kind is Kind.OPTIMIZER:
            cleared = self.ctx.autograd.optimizer_updates(receiver)
        elif value is not None and value.kind is Kind.MODULE and dotted(receiver):
            cleared = (dotted(receiver),)
        else:
            return False
        stepped = [self.ctx.autograd.optimizer_updates(optimizer) for optimizer in optimizers]
        return bool(cleared) and all(stepped) and not any(modules_overlap(cleared, one) for one in stepped)

    def _call_may_clear(self, call: cst.Call, optimizers, given: set[str], depth: int, seen: set[int]) -> bool:
        func = call.func
        name = called_name(func)
        if name == "zero_grad" and isinstance(func, cst.Attribute) and depth == 0 \
                and self._clears_others(func.value, optimizers):
            return False
        if isinstance(func, cst.Attribute) and name in torch_api.GRADIENT_CLEARING_METHODS \
                and _mentions_grad(func.value):
            return True  # p.grad.zero_(), p.grad.data.mul_(0), grad.detach_()
        # The function called, and the callables it is given (`opt.step(closure)`, `model.apply(reset)`).
        for callee in (func, *(arg.value for arg in call.args)):
            value = self.ctx.infer(callee)
            if value is not None and value.kind is Kind.FUNCTION and defined_in(value, self.ctx.model):
                if self._function_may_clear(value, optimizers, depth, seen):
                    return True
            elif callee is func and self._unseen_may_clear(call, value, name, optimizers, given):
                return True
        return False

    def _function_may_clear(self, value: Value, optimizers, depth: int, seen: set[int]) -> bool:
        """A function of this file: its name, and what its body does."""
        info = value.function
        node = info.node
        if id(node) in seen:
            return False
        if depth >= MAX_DEPTH:
            return True
        seen.add(id(node))
        return _CLEARING_NAME.search(info.name) is not None or \
            self.may_clear(node, optimizers, depth + 1, seen)

    def _unseen_may_clear(self, call: cst.Call, value: Optional[Value], name: str, optimizers,
                          given: set[str]) -> bool:
        """A call the analysis cannot see into may clear when its name says so, and when it can
        reach the optimizer or the model: given one of them (`callback(optimizer)`,
        `train_step(model, batch)`), or a method of the object that holds the optimizer
        (`self.backward_step()` inherited from another module, for `self.optimizer`)."""
        qualname = self.ctx.qualname(call.func)
        root = qualname.split(".")[0] if qualname else None
        if root in ("torch", "numpy", "builtins") or root in sys.stdlib_module_names:
            return qualname.rsplit(".", 1)[-1].startswith("_foreach_zero")
        if value is not None and value.kind in (Kind.MODULE, Kind.CLASS):
            return False  # a forward pass, or building an object
        if name and name not in torch_api.ZERO_NAMED_NON_CLEARING and _CLEARING_NAME.search(name):
            return True
        if isinstance(call.func, cst.Attribute):
            receiver = self.ctx.code(call.func.value)
            if receiver in given:
                return False  # the optimizer's own methods: step(), add_param_group()...
            holders = {self.ctx.code(o.value) for o in optimizers if isinstance(o, cst.Attribute)}
            if isinstance(call.func.value, cst.Name) and receiver in holders and not self._stored(call.func):
                return True
        for arg in call.args:
            if self.ctx.code(arg.value) in given:
                return True
            argument = self.ctx.infer(arg.value)
            if argument is not None and argument.kind in (Kind.OPTIMIZER, Kind.MODULE):
                return True
        return False

    def _stored(self, attribute: cst.Attribute) -> bool:
        """``self.net`` that a method of the class assigns: a stored callable (a network, a
        loss), not a method inherited from a class the analysis cannot see."""
        function = self.ctx.enclosing_function(attribute)
        info = self.ctx.model.functions.get(id(function)) if function is not None else None
        cls = getattr(info, "cls", None)
        return cls is not None and bool(cls.assignments(attribute.attr.value))

    def bound_before(self, receiver: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """``receiver`` is a dotted name whose root no statement of ``loop`` rebinds."""
        if not dotted(receiver):
            return False
        root = receiver
        while isinstance(root, cst.Attribute):
            root = root.value
        bindings = self.ctx.model.resolve(root)
        return bool(bindings) and not any(is_descendant(binding.node, loop) for binding in bindings
                                          if binding.kind is not BindingKind.IMPORT)


def every_iteration(suite: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The simple statements of a loop body that run on every iteration: not those in an
    `if`, a nested loop or an `except`, which may be skipped."""
    for statement in getattr(suite, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine) or isinstance(suite, cst.SimpleStatementSuite):
            yield statement
        elif isinstance(statement, cst.With):
            yield from every_iteration(statement.body)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from every_iteration(statement.body)
            if statement.finalbody is not None:
                yield from every_iteration(statement.finalbody.body)


def loop_calls(body: cst.CSTNode) -> list[cst.Call]:
    """The calls a loop body makes, not those of functions, lambdas or classes defined in it."""
    return [node for node in iter_nodes(body) if isinstance(node, cst.Call)
            and not any(isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
                        for ancestor in _up_to(node, body))]


def counted_step(step: cst.Call, loop: cst.CSTNode) -> bool:
    """``step`` runs under a condition on the iteration count (`if (i + 1) % k == 0`,
    `if index == len(batches) - 1`, `if steps >= n`): gradients accumulated over several
    backwards on purpose.  A condition on anything else (`if torch.isfinite(norm)`) lets
    the step run on most iterations."""
    counters = set()
    if isinstance(loop, cst.For):
        counters.update(node.value for node in iter_nodes(loop.target) if isinstance(node, cst.Name))
    counters.update(node.target.value for node in iter_nodes(loop.body)
                    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name))
    parent = step.parent
    while parent is not None and parent is not loop:
        if isinstance(parent, cst.If) and any(isinstance(node, cst.Name) and node.value in counters
                                              for node in iter_nodes(parent.test)):
            return True
        parent = parent.parent
    return False


def unconditional_calls(statements: Iterable[cst.CSTNode]) -> Iterator[cst.Call]:
    """The calls that ``statements`` make whenever they run: not those in a lambda, a
    comprehension, a conditional expression or a short-circuit operand."""
    for statement in statements:
        for node in iter_nodes(statement):
            if isinstance(node, cst.Call) and not any(isinstance(a, _MAY_SKIP) for a in _up_to(node, statement)):
                yield node


def _up_to(node: cst.CSTNode, top: cst.CSTNode):
    parent = node.parent
    while parent is not None and parent is not top:
        yield parent
        parent = parent.parent


def defined_in(value: Value, model) -> bool:
    """``value`` is a function defined in the file of ``model`` (its body is there to read)."""
    info = value.function
    return info is not None and getattr(info, "model", None) is model and isinstance(info.node, cst.FunctionDef) \
        and isinstance(info.node.body, cst.BaseSuite)


def _assigned(node: cst.Attribute) -> bool:
    """``node`` is assigned, augmented or deleted: `p.grad = None`, `p.grad *= 0`, `del p.grad`."""
    current, parent = node, node.parent
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        current, parent = parent, parent.parent
    if isinstance(parent, cst.AssignTarget):
        return parent.target is current
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign, cst.Del)):
        return parent.target is current
    return False


def _mentions_grad(node: cst.BaseExpression) -> bool:
    """``node`` reads a `.grad` or a name that says it holds one (`grad`, `grads[i]`, `p_grad`)."""
    for part in iter_nodes(node):
        if isinstance(part, cst.Attribute) and "grad" in part.attr.value.lower() \
                and part.attr.value != "requires_grad":
            return True
        if isinstance(part, cst.Name) and "grad" in part.value.lower():
            return True
    return False
