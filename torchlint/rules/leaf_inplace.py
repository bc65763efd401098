"""TL417 leaf-inplace: an in-place write to a leaf tensor that requires grad, outside ``no_grad``."""

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, torch_facts, view_source,
    innermost_write, writes_with_grad, written_through_alias,
)


class LeafInplace(Rule):
    code = "TL417"
    # A write made by a function the call runs raises inside it, on the line the finding relates.
    raised_where_used = True
    name = "leaf-inplace"
    summary = ("in-place write to a leaf tensor that requires grad (a parameter, `requires_grad=True`) outside "
               "`torch.no_grad()`: RuntimeError")
    message = (
        "In-place write ({how}) to `{target}`, {what} that requires grad, outside `torch.no_grad()`: RuntimeError "
        "\"a leaf Variable that requires grad is being used in an in-place operation\"; write under "
        "`with torch.no_grad():`"
    )
    hooked_message = (
        "In-place write ({how}) to `{target}`, {what} that requires grad: RuntimeError \"a leaf Variable that "
        "requires grad is being used in an in-place operation\"; write out of place (`{target} = {target} + ..`), "
        "a new tensor in the graph"
    )
    module_message = (
        "`{module}` writes its input in place ({how}), and `{target}` is {what} that requires grad: calling it "
        "outside `torch.no_grad()` raises RuntimeError \"a leaf Variable that requires grad is being used in an "
        "in-place operation\"; pass `{target}.clone()`"
    )
    fix = Applicability.UNSAFE
    requires = (r"_\s*\(|[-+*/%&|^@<>]=|\]\s*=|inplace",)
    references = (
        ("Autograd mechanics: in-place operations",
         "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
    )
    docs = """
    ## What it does
    Flags an in-place write (`w -= lr * w.grad`, `p.add_(..)`, `table[:] += noise`,
    `b[:, 4] += bias` on a view of a parameter) to a leaf tensor that requires grad: a
    parameter of a module (`for p in model.parameters()`, `conv.bias`), an
    `nn.Parameter`, a tensor made with `requires_grad=True`, or the output of a module whose
    parameters the file freezes and on which a forward hook of the file calls
    `output.requires_grad_()` (an embedding readied for gradient checkpointing by
    `enable_input_require_grads`: no operation of the graph makes that output), when the write does not
    run under `torch.no_grad()` (a `with` block or a decorator) and does not go through
    `.data` or `.detach()` (TL102 and TL301 report those). A module's buffers
    (`running_mean`) require no grad and are left alone. `torch.nn.init` functions are
    left alone: they write under `no_grad` themselves. A file that turns gradients off
    for some parameters (`p.requires_grad = False`) is not judged on its parameters.
    A module that writes its input in place, built with `inplace=True` or switched on
    afterwards by `m.inplace = True` in a loop over `model.modules()` (for the classes
    the type tests around it name), is such a write when called on a leaf that requires
    grad (`self.act(self.weight)`); the switch is shown. So is a call of a function of the
    file that writes the parameter receiving the leaf on every call (`init_(layer.weight)` with
    `def init_(t): t[:] = ..`, outside `no_grad` in both), reported at the call with the
    function's write as related (where torch raises), unless that write is reported already.

    ## Why is this bad?
    A leaf that requires grad is where autograd accumulates gradients; an in-place
    write to it would change a value the graph may have used, so torch refuses it:
    `RuntimeError: a leaf Variable that requires grad is being used in an in-place
    operation` (or "a view of a leaf Variable..."). A hand-written SGD step, an
    initialization of a parameter's slice, or a noise added to an embedding table stops
    the program there.

    ## What to do instead
    Do the update under `with torch.no_grad():`, as optimizers do: it is not part of
    the model's computation.

    ## Fix (unsafe)
    Puts the statement under `with torch.no_grad():`; for an in-place module, passes
    `weight.clone()` to it instead. Unsafe: when the write was meant
    to be differentiated, the graph no longer sees it (but that code could not run).
    """
    bad = (
        Bad(
            """
            import torch

            fc = torch.nn.Linear(4, 1)
            loss = fc(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            for param in fc.parameters():
                param.add_(-0.1 * param.grad)
            """,
            reported=((7, "param.add_(-0.1 * param.grad)"),),
            unsafe=True,
            fixed="""
            import torch

            fc = torch.nn.Linear(4, 1)
            loss = fc(torch.randn(8, 4)).pow(2).mean()
            loss.backward()
            for param in fc.parameters():
                with torch.no_grad():
                    param.add_(-0.1 * param.grad)
            """,
        ),
        Bad(
            """
            import torch

            w = torch.randn(3, requires_grad=True)
            (w * 2).sum().backward()
            w -= 0.1 * w.grad
            """,
            reported=((5, "w"),),
            unsafe=True,
            fixed="""
            import torch

            w = torch.randn(3, requires_grad=True)
            (w * 2).sum().backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            """,
        ),
    )
    good = (
        """
        import torch

        fc = torch.nn.Linear(4, 1)
        fc(torch.randn(8, 4)).pow(2).mean().backward()
        with torch.no_grad():
            for param in fc.parameters():
                param.add_(-0.1 * param.grad)
        for param in fc.parameters():
            param.grad.zero_()
        torch.nn.init.zeros_(fc.bias)
        h = fc(torch.randn(8, 4))
        h += 1  # a computed tensor, not a leaf
        w = torch.randn(3)
        w += 1  # does not require grad
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        seen: set[int] = set()
        # A call that writes its argument comes after the writes made in place here: where the
        # callee's own write is reported (its parameter known to be a leaf), the call is not.
        writes = sorted(writes_with_grad(self.ctx), key=lambda found: found[1].by_call)
        for candidate, write in writes:
            if id(write.node) in seen or not self._writes_data(write) or self._reported_inside(write, seen):
                continue
            what = self._leaf(candidate, write.node)
            if what is None:
                continue
            seen.add(id(write.node))
            hooked = self.ctx.autograd.hooked_leaf(candidate)
            if hooked is not None:  # the write belongs to the computation: out of place, not under no_grad
                self.report(write.node, self.hooked_message, how=write.how, target=candidate, what=what,
                            evidence=self.ctx.tensor(candidate), related=(
                                (hooked[0], "the module's output: no operation of the graph makes it"),
                                (hooked[1], "the hook that makes it require grad is registered here")))
                continue
            inner = innermost_write(write)
            # A function that writes its parameter: torch raises there, inside the function.
            related = ((inner.node, "the function writes its parameter in place here"),) if inner is not None else ()
            self.report(write.node, how=write.how, target=candidate, what=what, evidence=self.ctx.tensor(candidate),
                        fix=self._fix(write.node), related=related)
        if "inplace" in self.ctx.text:
            self._module_writes()

    def _module_writes(self) -> None:
        """A module that writes its input in place (`nn.ReLU(inplace=True)`, or switched by
        `m.inplace = True`) called on a leaf that requires grad (`self.act(self.weight)`)."""
        autograd = self.ctx.autograd
        for call in autograd.calls:
            if len(call.args) != 1 or call.args[0].keyword or call.args[0].star \
                    or not isinstance(call.func, (cst.Name, cst.Attribute)):
                continue
            argument = call.args[0].value
            if not isinstance(argument, (cst.Name, cst.Attribute)) or self.ctx.grad_disabled(call) is not None \
                    or self.ctx.inference.runs_without_grad(call):
                continue
            construction = autograd.writes_input(call.func)
            if construction is None:
                continue
            what = self._leaf(argument, call)
            if what is None or what != "a leaf tensor":
                continue
            switch = autograd.inplace_switches().get(self.ctx.qualname(construction.func) or "")
            explicit = any(arg.keyword is not None and arg.keyword.value == "inplace" or arg.keyword is None
                           for arg in construction.args)
            if switch is not None and not explicit:
                how = f"`{switch.targets[0].target.value.value}.inplace = True` switches it on, line " \
                      f"{self.ctx.line_index.position(switch.start)[0]}"
                related = ((switch, "switches the module to work in place"), (construction, "the module is built here"))
            else:
                how = "built with `inplace=True`"
                related = ((construction, "the module is built here"),)
            fix = Fix(Applicability.UNSAFE, f"Pass `{self.ctx.receiver(argument)}.clone()`",
                      (edits.replace(argument, f"{self.ctx.receiver_code(argument)}.clone()"),))
            self.report(call, self.module_message, module=call.func, how=how, target=argument, what=what,
                        evidence=self.ctx.tensor(argument), related=related, fix=fix)

    def _leaf(self, node: cst.BaseExpression, write: cst.CSTNode) -> Optional[str]:
        """What kind of leaf requiring grad ``node`` is ("a leaf tensor", "a view of a leaf
        tensor"), or None."""
        value = self.ctx.tensor(node)
        hooked = self.ctx.autograd.hooked_leaf(node)
        if hooked is not None:
            line = self.ctx.line_index.position(hooked[1].start)[0]
            return (f"the output of `{self.ctx.snippet(hooked[0].func)}`, whose parameters are frozen, made to "
                    f"require grad by the forward hook registered at line {line}: a leaf tensor")
        if value is None or value.attached is not True:
            return None
        if value.leaf is True:
            return None if self._maybe_frozen(node, write) else "a leaf tensor"
        values = self.ctx.assigned_values(node) if isinstance(node, cst.Name) else None
        if values is None or len(values) != 1:
            return None
        base = view_source(self.ctx, values[0])
        if base is None or written_through_alias(self.ctx, base, values[0]):
            return None
        base_value = self.ctx.tensor(base)
        if base_value is not None and base_value.attached is True and base_value.leaf is True \
                and not self._maybe_frozen(base, write):
            return "a view of a leaf tensor"
        return None

    def _maybe_frozen(self, node: cst.BaseExpression, write: cst.CSTNode) -> bool:
        """A parameter in a file that turns gradients off somewhere may not require grad
        (unless what turns them off is its own flag, set after the write)."""
        value = self.ctx.tensor(node)
        made_here = any("requires_grad" in self.ctx.render(step) for step in value.why) if value else False
        if not self.ctx.freezes_parameters or made_here:
            return False
        return not (isinstance(node, cst.Name) and self.ctx.frozen_only_afterwards(node, write))

    @staticmethod
    def _reported_inside(write, seen: set[int]) -> bool:
        inner = write.inner
        while inner is not None:
            if id(inner.node) in seen:
                return True
            inner = inner.inner
        return False

    def _writes_data(self, write) -> bool:
        """An in-place method that changes values (not `requires_grad_()`, `detach_()`), or
        an assignment; `torch.nn.init` functions write under `no_grad` themselves."""
        if write.by_call:
            # A function or module that writes its argument: what its own write does (a layer
            # that works in place is `_module_writes`'s).
            return write.inner is not None and self._writes_data(write.inner)
        node = write.node
        if isinstance(node, cst.Call):
            func = node.func
            if (self.ctx.qualname(func) or "").startswith("torch.nn.init."):
                return False
            if isinstance(func, cst.Attribute):
                fact = torch_facts.method(func.attr.value)
                return fact is not None and fact.in_place == "data"
            return False
        return True

    def _fix(self, write: cst.CSTNode) -> Optional[Fix]:
        line = edits.own_line(self.ctx, write)
        if line is None:
            return None
        return Fix(Applicability.UNSAFE, "Write under `torch.no_grad()`", edits.wrap_in_no_grad(self.ctx, [line]))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.raised_or("RuntimeError", "leaf Variable that requires grad is being used in an in-place operation",
                             "the write ran: the tensor was not a leaf that requires grad on this run")

