"""TL407 missing-zero-grad: a training loop that never clears the gradients it steps with."""

from __future__ import annotations

import re
import sys
from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, BindingKind, Fix, Kind, Observation, Rule, Step, Value,
    Verdict, called_name, cst, dotted, edits, iter_nodes, modules_overlap, where,
)

# In-place methods that can clear a gradient they are called on (`p.grad.zero_()`,
# `p.grad.data.mul_(0)`, `p.grad.detach_()`); clipping ones (`clamp_`) keep it.
_CLEARING_METHODS = frozenset({"zero_", "fill_", "mul_", "detach_", "copy_", "set_", "resize_"})
# Tensor constructors whose names hold "zero" but that clear nothing.
_ZERO_CONSTRUCTORS = frozenset({"zeros", "zeros_like", "new_zeros", "zero_"})
# A function the analysis cannot see into whose name says it may clear gradients:
# `zero_grads(model)`, `torch._foreach_zero_(grads)`, `self.reset_gradients()`.
_CLEARING_NAME = re.compile(r"(?<![a-z])zero|grads?_?(?:reset|clear|none|free|init)|(?:reset|clear|free|init)\w*grad",
                            re.IGNORECASE)
# Expressions whose parts may not run: what is inside them is not on every iteration's path.
_MAY_SKIP = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp, cst.BooleanOperation)
# How far calls to this file's functions are followed when looking for a clearing.
_MAX_DEPTH = 4


class MissingZeroGrad(Rule):
    code = "TL407"
    name = "missing-zero-grad"
    summary = ("a loop calls `backward()` and `optimizer.step()` on every iteration but never clears the "
               "gradients: each step applies the sum of all earlier ones")
    message = (
        "`{step}` in a loop that calls `{backward}` but never clears the gradients: backward adds into "
        "`.grad`, so each step applies the sum of all earlier iterations' gradients; call "
        "`{optimizer}.zero_grad()` once per iteration"
    )
    fix = Applicability.UNSAFE
    requires = (r"\.step\s*\(", r"backward")
    references = (
        ("torch.optim.Optimizer.zero_grad",
         "https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html"),
        ("PyTorch tutorial: Optimizing model parameters (the optimization loop)",
         "https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html"),
        ("torch.Tensor.backward: the graph's leaves accumulate their gradients",
         "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
    )
    docs = """
    ## What it does
    Flags `optimizer.step()` (or a gradient scaler's `scaler.step(optimizer)`) in a
    `for` or `while` loop whose body calls `backward()` (`loss.backward()`,
    `torch.autograd.backward(..)`) and `step()` of an object the inference shows to be
    a torch optimizer (built from `torch.optim` in this file, through an assignment, an
    attribute, a function's result or the calls that pass it, also `trainer.fit(opt)`
    on an instance of this file's class), while nothing on the way clears gradients. The
    step may be skipped on some iterations (`if torch.isfinite(norm): optimizer.step()`),
    but not by a condition on the iteration count (`if (i + 1) % k == 0`, accumulation
    on purpose); a function of this file that the loop calls on every iteration and that
    runs the backward and the step counts as the loop's body (`loss = train_step(model,
    opt, x, y)`, advice only: the names there are its parameters).

    Anything that may clear them keeps it quiet: a `zero_grad` of any object (the
    optimizer's, a model's, in a branch, in a nested function or closure; not in the
    other arm of an `if` than the step's, which never runs when it does) but another
    optimizer or module whose parameters are known to be others (`optimizer_E.zero_grad()`
    does not clear what `optimizer_D` steps when they were built over `E` and `D`; an
    optimizer a module's class builds over `self.parameters()`, `self.discriminator.optimizer`,
    is over that module), `p.grad =
    None` or any other assignment or `del` of a `.grad`, an in-place `zero_()`,
    `fill_()`, `mul_()`, `detach_()` on a gradient, a call of this file's functions that
    does one of these, and a call the analysis cannot see into (a function of another
    module, an inherited method) whose name says it clears (`zero_grads(model)`,
    `reset_grad()`), that is given the optimizer or the model (not a method of what
    steps it: `scaler.unscale_(optimizer)`), or that is a method of
    the object holding the optimizer (`self.on_batch_start()` with `self.optimizer`):
    any of those may call `zero_grad()`. Gradient accumulation written on purpose (`if (i + 1) % accum ==
    0: optimizer.step(); optimizer.zero_grad()`) has its `zero_grad` and steps only in
    a branch; an optimizer built inside the loop, an LR scheduler's `step()` and an
    LBFGS `step(closure)` whose closure clears are left alone too.

    The finding is on the `step()` call: that is where the summed gradients do the
    damage, and it names the optimizer to clear when a loop steps several. The
    evidence shows where the optimizer was built and where backward runs.

    ## Why is this bad?
    `backward()` does not replace `.grad`: it adds into it. Without clearing, the
    gradient used at step `k` is the sum of the gradients of steps `1..k`, so the
    updates grow with every iteration and the training swings, diverges or stalls,
    with no error. The mean of a loss over a batch no longer sets the scale of the update.

    ## What to do instead
    Call `optimizer.zero_grad()` once per step: at the start of the iteration, or
    right after `optimizer.step()`. To accumulate gradients over several batches on
    purpose, step and clear together every `n` iterations.

    ## Fix (unsafe)
    `optimizer.zero_grad()` is inserted as the first statement of the loop body when
    the optimizer is a name (or `self.optimizer`) bound before the loop; otherwise the
    advice is shown. Unsafe: code that read the previous step's `.grad` before the
    new backward (logging a gradient norm at the top of the loop) now sees `None`, and
    an author who accumulated on purpose over the whole loop gets per-step updates.
    """
    bad = (
        Bad(
            """
            import torch

            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for inputs, targets in [(torch.randn(8, 3), torch.randn(8, 1))] * 10:
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
                loss.backward()
                optimizer.step()
            """,
            reported=((8, "optimizer.step()"),),
            fixed="""
            import torch

            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for inputs, targets in [(torch.randn(8, 3), torch.randn(8, 1))] * 10:
                optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
                loss.backward()
                optimizer.step()
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5)
        batches = [(torch.randn(8, 3), torch.randn(8, 1))] * 10
        for inputs, targets in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(inputs), targets).backward()
            optimizer.step()
            scheduler.step()
        for index, (inputs, targets) in enumerate(batches):
            (torch.nn.functional.mse_loss(model(inputs), targets) / 4).backward()
            if (index + 1) % 4 == 0:
                optimizer.step()
                optimizer.zero_grad()
        """,
    )

    def visit_For(self, node: cst.For) -> None:
        self._check_loop(node)

    def visit_While(self, node: cst.While) -> None:
        self._check_loop(node)

    # --- the loop ------------------------------------------------------------------------

    def _check_loop(self, loop: cst.CSTNode) -> None:
        # Backwards and steps anywhere in the body: a step may be skipped on some iterations
        # (`if torch.isfinite(norm): optimizer.step()`), and a branch may run backward and
        # step with a scaler while the other clears; the gradients still pile up where
        # nothing clears them on the way.
        anywhere = _loop_calls(loop.body)
        backwards = [call for call in anywhere if self._is_backward(call)]
        lifted: Optional[cst.Call] = None
        if not backwards:
            # One level down: a function of this file that the loop calls on every iteration
            # and that runs the backward (`loss = train_step(model, opt, x, y)`).
            for call in _calls(_every_iteration(loop.body)):
                body = self._local_body(call)
                if body is not None:
                    inner = list(_calls(_every_iteration(body)))
                    if any(self._is_backward(node) for node in inner):
                        backwards = [node for node in inner if self._is_backward(node)]
                        anywhere = _loop_calls(body)
                        lifted = call
                        break
            if not backwards:
                return
        exclusive = self.ctx.model.exclusive
        steps = [(call, found) for call in anywhere
                 for found in (self._stepped_optimizer(call, loop),) if found is not None
                 and not _counted_step(call, loop) and any(not exclusive(b, call) for b in backwards)]
        if not steps:
            return
        # Each optimizer on its own: a `zero_grad()` of another optimizer, over other modules,
        # leaves its gradients to accumulate; one in the other arm of an `if` never runs
        # on the iterations that step.
        steps = [(call, found) for call, found in steps
                 if not self._may_clear_around(loop, lifted, found[1], call)]
        if not steps:
            return
        receivers = [receiver for _, (_, receiver) in steps]
        fix = self._fix(loop, receivers, advice_only=lifted is not None)
        for call, (optimizer, receiver) in steps:
            reported = self.ctx.cache.setdefault("missing_zero_grad", set())
            if id(call) in reported:
                continue
            reported.add(id(call))
            # The backward that feeds this step: the last one before it (else the loop's first).
            feeding = [other for other in backwards if not exclusive(other, call)]
            before = [other for other in feeding if other.start < call.start]
            backward = before[-1] if before else feeding[0]
            evidence = optimizer.why + (
                Step(backward, "`{code}` adds each iteration's gradients into `.grad`"),)
            self.report(call, evidence=evidence, fix=fix, step=call, backward=backward,
                        optimizer=self.ctx.receiver(receiver))

    def _may_clear_around(self, loop: cst.CSTNode, lifted: Optional[cst.Call], optimizer: cst.BaseExpression,
                          step: cst.Call) -> bool:
        """Whether anything may clear ``optimizer``'s gradients on an iteration of ``loop``
        that runs ``step``; when the step is in the body of a function the loop calls
        (``lifted``), that body is read in the step's own names, the rest of the loop apart."""
        if lifted is None:
            return self._may_clear(loop, [optimizer], depth=0, seen=set(), step=step)
        body = self._local_body(lifted)
        return self._may_clear(body, [optimizer], depth=0, seen=set(), step=step) or \
            self._may_clear(loop, [optimizer], depth=0, seen=set(), skip=lifted)

    def _local_body(self, call: cst.Call) -> Optional[cst.CSTNode]:
        value = self.ctx.infer(call.func)
        if value is None or value.kind is not Kind.FUNCTION or not _defined_in(value, self.ctx.model):
            return None
        return value.function.node.body

    def _is_backward(self, call: cst.Call) -> bool:
        func = call.func
        if self.ctx.qualname(func) == "torch.autograd.backward":
            return True
        if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
            return False
        value = self.ctx.infer(func)
        return value is None or value.kind is not Kind.FUNCTION  # a method of this file's: looked into

    def _stepped_optimizer(self, call: cst.Call,
                           loop: cst.CSTNode) -> Optional[tuple[Value, cst.BaseExpression]]:
        """The optimizer whose `step()` ``call`` is (`optimizer.step()`, or a gradient
        scaler's `scaler.step(optimizer)`), built outside ``loop``, with its expression."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
            return None
        receiver = func.value
        value = self.ctx.infer(receiver)
        if value is None or value.kind is not Kind.OPTIMIZER:
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            if len(positional) != 1:
                return None
            receiver = positional[0]
            value = self.ctx.infer(receiver)
            if value is None or value.kind is not Kind.OPTIMIZER:
                return None
        # An optimizer (re)made in the loop: it may be over new parameters every iteration.
        # (A name passed at a call in the loop, `train_step(model, optimizer)`, is not a making.)
        if any(_inside(step.node, loop) and not isinstance(step.node, cst.Name) for step in value.why):
            return None
        return value, receiver

    # --- what may clear the gradients --------------------------------------------------------

    def _may_clear(self, root: cst.CSTNode, optimizers: list[cst.BaseExpression], depth: int,
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
            if skip is not None and (node is skip or _inside(node, skip)):
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
        in a loop that steps `optimizer_D` over `D`)."""
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
        if isinstance(func, cst.Attribute) and name in _CLEARING_METHODS and _mentions_grad(func.value):
            return True  # p.grad.zero_(), p.grad.data.mul_(0), grad.detach_()
        # The function called, and the callables it is given (`opt.step(closure)`, `model.apply(reset)`).
        for callee in (func, *(arg.value for arg in call.args)):
            value = self.ctx.infer(callee)
            if value is not None and value.kind is Kind.FUNCTION and _defined_in(value, self.ctx.model):
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
        if depth >= _MAX_DEPTH:
            return True
        seen.add(id(node))
        return _CLEARING_NAME.search(info.name) is not None or \
            self._may_clear(node, optimizers, depth + 1, seen)

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
        if name and name not in _ZERO_CONSTRUCTORS and _CLEARING_NAME.search(name):
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

    # --- the fix ----------------------------------------------------------------------------

    def _fix(self, loop: cst.CSTNode, receivers: list[cst.BaseExpression], advice_only: bool = False) -> Fix:
        names = list(dict.fromkeys(self.ctx.receiver_code(receiver) for receiver in receivers))
        calls = [f"{name}.zero_grad()" for name in names]
        advice = "Clear the gradients once per step: " + ", ".join(f"`{call}`" for call in calls)
        body = loop.body
        if advice_only or not isinstance(body, cst.IndentedBlock) or not body.body or \
                not all(self._bound_before(receiver, loop) for receiver in receivers):
            return Fix(Applicability.DISPLAY_ONLY, advice, ())
        first = body.body[0]
        indent = self.ctx.line_indent(first)
        text = "".join(call + self.ctx.newline + indent for call in calls)
        return Fix(Applicability.UNSAFE, f"Insert {', '.join(f'`{call}`' for call in calls)} at the start of "
                                         "the loop body", (edits.insert_before(first, text),))

    def _bound_before(self, receiver: cst.BaseExpression, loop: cst.CSTNode) -> bool:
        """``receiver`` is a dotted name whose root no statement of ``loop`` rebinds."""
        if not dotted(receiver):
            return False
        root = receiver
        while isinstance(root, cst.Attribute):
            root = root.value
        bindings = self.ctx.model.resolve(root)
        return bool(bindings) and not any(_inside(binding.node, loop) for binding in bindings
                                          if binding.kind is not BindingKind.IMPORT)

    # --- the runtime check --------------------------------------------------------------------

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        steps = run.every("optimizer-step")
        if not steps:
            return Verdict(NOT_REPRODUCED, "no optimizer step was seen here")
        most = max(steps, key=lambda details: details["kept"])
        if most["kept"]:
            # The longest run of steps each of which still held the one before's gradient.
            longest = run_length = 0
            for details in steps:
                run_length = run_length + 1 if details["kept"] else 0
                longest = max(longest, run_length)
            plural = "s" if most["kept"] != 1 else ""
            return Verdict(CONFIRMED, f"`.grad` of {most['kept']} parameter{plural} still held the previous "
                                      f"step's gradient at {where(most['where'])}: gradients accumulated across "
                                      f"{longest + 1} steps")
        if len(steps) == 1:
            return Verdict(NOT_REPRODUCED, "the optimizer stepped once here: there was nothing to accumulate")
        return Verdict(NOT_REPRODUCED, f"`.grad` was cleared between the {len(steps)} steps seen here")


def _every_iteration(suite: cst.CSTNode):
    """The simple statements of a loop body that run on every iteration: not those in an
    `if`, a nested loop or an `except`, which may be skipped."""
    for statement in getattr(suite, "body", ()):
        if isinstance(statement, cst.SimpleStatementLine) or isinstance(suite, cst.SimpleStatementSuite):
            yield statement
        elif isinstance(statement, cst.With):
            yield from _every_iteration(statement.body)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from _every_iteration(statement.body)
            if statement.finalbody is not None:
                yield from _every_iteration(statement.finalbody.body)


def _loop_calls(body: cst.CSTNode) -> list[cst.Call]:
    """The calls a loop body makes, not those of functions, lambdas or classes defined in it."""
    return [node for node in iter_nodes(body) if isinstance(node, cst.Call)
            and not any(isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef))
                        for ancestor in _up_to(node, body))]


def _counted_step(step: cst.Call, loop: cst.CSTNode) -> bool:
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


def _calls(statements):
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


def _defined_in(value: Value, model) -> bool:
    """``value`` is a function defined in the file of ``model`` (its body is there to read)."""
    info = value.function
    return info is not None and getattr(info, "model", None) is model and isinstance(info.node, cst.FunctionDef) \
        and isinstance(info.node.body, cst.BaseSuite)


def _inside(node: cst.CSTNode, container: cst.CSTNode) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is container:
            return True
        parent = parent.parent
    return False


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
