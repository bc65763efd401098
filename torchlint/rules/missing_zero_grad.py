"""TL407 missing-zero-grad: a training loop that never clears the gradients it steps with."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, GradientClearing, Kind, Observation, Rule, Step, Value,
    Verdict, FileContext, counted_step, cst, edits, enclosing_loops, every_iteration, is_descendant, loop_calls,
    unconditional_calls, where,
)


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
    elsewhere_message = (
        "`{step}` runs on every iteration of a loop in {where} (`{call}`) that calls `{backward}` through "
        "`{function}`, and nothing clears the gradients: backward adds into `.grad`, so each step applies the sum "
        "of all earlier iterations' gradients; call `{optimizer}.zero_grad()` in `{function}` before the backward"
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
    opt, x, y)`, advice only: the names there are its parameters). The loop may be in a
    script beside this module that imports the function (`from utils import train_step` in
    train.py): the finding is then on the step in this module, and names the loop's call.

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

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A training step of this module that a script beside it calls on every iteration of
        its loop (`loss = train_step(model, opt, x, y)` in train.py): the loop is there, the
        backward and the step here, and neither clears the gradients."""
        function = self.ctx.model.functions.get(id(node))
        if function is None or "backward" not in self.ctx.analysis.text[node.start:node.end]:
            return
        callers = self.ctx.analysis.callers_elsewhere(function)
        if not callers:
            return
        backwards = [call for call in unconditional_calls(every_iteration(node.body)) if self._is_backward(call)]
        if not backwards:
            return
        exclusive = self.ctx.model.exclusive
        steps = [(call, found) for call in loop_calls(node.body)
                 if not any(is_descendant(loop, node) for loop in enclosing_loops(call))
                 for found in (self._stepped_optimizer(call, node.body),) if found is not None
                 and any(not exclusive(backward, call) for backward in backwards)
                 and not self._clearing.may_clear(node.body, [found[1]], depth=0, seen=set(), step=call)]
        if not steps:
            return
        for other, call in callers:
            loop = next((loop for loop in enclosing_loops(call)
                         if any(inner is call for inner in unconditional_calls(every_iteration(loop.body)))), None)
            if loop is None or GradientClearing(FileContext(other)).may_clear(loop, [], depth=0, seen=set(),
                                                                               skip=call):
                continue
            for step, (_optimizer, receiver) in steps:
                backward = next(backward for backward in backwards if not exclusive(backward, step))
                optimizer = self.ctx.receiver(receiver)
                self.report(step, self.elsewhere_message, step=step, where=other.location(call), call=other.snippet(call),
                            backward=backward, function=f"{function.name}()", optimizer=optimizer,
                            fix=Fix(Applicability.DISPLAY_ONLY, f"Call `{optimizer}.zero_grad()` in "
                                                                f"`{function.name}` before the backward", ()))
            return

    @property
    def _clearing(self) -> GradientClearing:
        """What may clear gradients in this file (framework/gradient_clearing.py)."""
        return GradientClearing(self.ctx)

    # --- the loop ------------------------------------------------------------------------

    def _check_loop(self, loop: cst.CSTNode) -> None:
        # Backwards and steps anywhere in the body: a step may be skipped on some iterations
        # (`if torch.isfinite(norm): optimizer.step()`), and a branch may run backward and
        # step with a scaler while the other clears; the gradients still pile up where
        # nothing clears them on the way.
        anywhere = loop_calls(loop.body)
        backwards = [call for call in anywhere if self._is_backward(call)]
        lifted: Optional[cst.Call] = None
        if not backwards:
            # One level down: a function of this file that the loop calls on every iteration
            # and that runs the backward (`loss = train_step(model, opt, x, y)`).
            for call in unconditional_calls(every_iteration(loop.body)):
                body = self._clearing.local_body(call)
                if body is not None:
                    inner = list(unconditional_calls(every_iteration(body)))
                    if any(self._is_backward(node) for node in inner):
                        backwards = [node for node in inner if self._is_backward(node)]
                        anywhere = loop_calls(body)
                        lifted = call
                        break
            if not backwards:
                return
        exclusive = self.ctx.model.exclusive
        steps = [(call, found) for call in anywhere
                 for found in (self._stepped_optimizer(call, loop),) if found is not None
                 and not counted_step(call, loop) and any(not exclusive(b, call) for b in backwards)]
        if not steps:
            return
        # Each optimizer on its own: a `zero_grad()` of another optimizer, over other modules,
        # leaves its gradients to accumulate; one in the other arm of an `if` never runs
        # on the iterations that step.
        steps = [(call, found) for call, found in steps
                 if not self._clearing.may_clear_around(loop, lifted, found[1], call)]
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
        if any(is_descendant(step.node, loop) and not isinstance(step.node, cst.Name) for step in value.why):
            return None
        return value, receiver

    # --- the fix ----------------------------------------------------------------------------

    def _fix(self, loop: cst.CSTNode, receivers: list[cst.BaseExpression], advice_only: bool = False) -> Fix:
        names = list(dict.fromkeys(self.ctx.receiver_code(receiver) for receiver in receivers))
        calls = [f"{name}.zero_grad()" for name in names]
        advice = "Clear the gradients once per step: " + ", ".join(f"`{call}`" for call in calls)
        body = loop.body
        if advice_only or not isinstance(body, cst.IndentedBlock) or not body.body or \
                not all(self._clearing.bound_before(receiver, loop) for receiver in receivers):
            return Fix(Applicability.DISPLAY_ONLY, advice, ())
        first = body.body[0]
        indent = self.ctx.line_indent(first)
        text = "".join(call + self.ctx.newline + indent for call in calls)
        return Fix(Applicability.UNSAFE, f"Insert {', '.join(f'`{call}`' for call in calls)} at the start of "
                                         "the loop body", (edits.insert_before(first, text),))

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

