"""TL102 data-inplace: writing into a tensor through ``.data``."""

import re

from torchlint.framework.api import (
    LATENT, NOT_REPRODUCED, Applicability, Bad, DataUse, Fix, Observation, Rule, Verdict, alias_writes,
    base_evidence, cst, data_access, edits, quote, tensor_data_use, walk,
)


# Functions that initialize or reset weights: no graph exists yet when they run.
_INITIALIZER = re.compile(r"(^|_)(init|initialize|reset)", re.IGNORECASE)


class DataInplace(Rule):
    code = "TL102"
    name = "data-inplace"
    summary = "in-place write through `.data` (`p.data.add_(..)`, `w.data[i] = v`): silent wrong gradients"
    message = (
        "In-place write ({how}) through `{base}.data` is invisible to autograd: gradients "
        "computed from `{base}` can be silently wrong; write to `{base}` under `torch.no_grad()`"
    )
    fix = Applicability.UNSAFE
    since = "0.4"
    requires = (r"\.[\s\\]*data\b",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
        ("Autograd mechanics: in-place operations", "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
    )
    docs = """
    ## What it does
    Flags in-place writes into a tensor through its `.data` attribute: in-place
    methods (`p.data.add_(..)`, `w.data.normal_()`), item assignment
    (`w.data[i] = v`), augmented assignment (`x.data *= 3`), `out=x.data`,
    `torch.nn.init.*(w.data)`, and the same through a view (`w.data[0].fill_(0)`).

    ## Why is this bad?
    Autograd saves tensors it needs for the backward pass and checks, through a
    version counter, that nobody changed them. Writes through `.data` do not bump
    that counter: if `x` was saved for backward, the gradient is computed from the
    overwritten values and is silently wrong. With `x = torch.tensor([1., 2., 3.],
    requires_grad=True)`, `y = x ** 2`, then `x.data *= 10`, `y.sum().backward()`
    gives `x.grad == [20, 40, 60]` instead of `[2, 4, 6]`, and no error.

    Optimizer-style updates after `backward()` (`p.data.add_(-lr * p.grad)`) happen
    not to corrupt anything, but they are the same pattern: the modern spelling is
    `with torch.no_grad(): p.add_(-lr * p.grad)`, under which autograd does count
    the write and raises if it would corrupt a saved tensor.

    The same holds for a write through a name bound to `x.data` (`y = x.data;
    y[0, 0] = 0.5`), which is reported at the write with the alias as a related
    location.

    ## What to do instead
    Wrap the write in `with torch.no_grad():` and drop `.data`.

    ## Fix (unsafe)
    Puts the statement under `with torch.no_grad():` (importing torch if needed) and
    drops `.data`; under `torch.no_grad()` already, only drops `.data`. Consecutive
    writes share one block, and a block that would be a loop's whole body (through `if`s
    that are) goes around the loop instead, once. A write that records nothing anyway
    only loses `.data`: a `torch.nn.init` function (each fills its tensor under
    `torch.no_grad()` itself) and a write to a `.grad` (which requires no grad). It is unsafe
    because the write becomes visible to autograd: code whose gradients were silently
    wrong now raises autograd's in-place error instead, which is the point, but a
    behaviour change all the same. Writes through an alias of `.data` are not fixed.
    """
    bad = (
        Bad(
            """
            import torch

            a = torch.tensor(1.0, requires_grad=True)
            a.data *= 3
            """,
            reported=((4, "a.data"),),
            fixed="""
            import torch

            a = torch.tensor(1.0, requires_grad=True)
            with torch.no_grad():
                a *= 3
            """,
            unsafe=True,
        ),
        Bad(
            """
            import torch

            def sgd_step(model, lr):
                for p in model.parameters():
                    p.data.add_(-lr, p.grad.data)
            """,
            reported=((5, "p.data"),),
            fixed="""
            import torch

            def sgd_step(model, lr):
                with torch.no_grad():
                    for p in model.parameters():
                        p.add_(-lr, p.grad.data)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        def sgd_step(model, lr):
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-lr)
        """,
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        # Per statement line, by id: its fixable writes, and the fix of its run of lines
        # (every write of a run gets the same fix).
        self._writes: dict[int, list[cst.Attribute]] = {}
        self._run_fixes: dict[int, Fix] = {}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        found = tensor_data_use(self.ctx, node, (DataUse.WRITE,))
        if found is None:
            return
        access, evidence = found
        message = None
        function = self.ctx.enclosing_function(node)
        if self.ctx.grad_disabled(node) is not None:
            message = (
                "In-place write ({how}) through `{base}.data` under `torch.no_grad()`: `.data` is "
                "redundant there and hides the write from autograd's checks; write to `{base}` directly"
            )
        elif function is not None and _INITIALIZER.search(function.name.value):
            message = (
                "In-place write ({how}) through `{base}.data` hides the write from autograd's checks; "
                "initialize under `torch.no_grad()` (or with `torch.nn.init`) and drop `.data`"
            )
        self.report(node, message, evidence=evidence, base=node.value, how=access.write.how,
                    fix=self._fix(node))

    def _fix(self, node: cst.Attribute):
        if self.ctx.grad_disabled(node) is not None:
            return Fix(Applicability.UNSAFE, "Drop `.data`", (edits.replace(node, self.ctx.code(node.value)),))
        line = edits.own_line(self.ctx, node)
        if line is None:
            return None
        if not self._needs_no_grad(line):
            return Fix(Applicability.UNSAFE, "Drop `.data`: this write records no graph, without `torch.no_grad()` too",
                       (edits.replace(node, self.ctx.code(node.value)),))
        fix = self._run_fixes.get(id(line))
        if fix is None:
            # Consecutive writes through `.data` (an init function) share one block, and a
            # block that would hold a loop's whole body goes around the loop.
            lines = edits.statement_run(self.ctx, line, self._needs_no_grad)
            writes = [write for other in lines for write in self._fixable_writes(other)]
            fix = Fix(Applicability.UNSAFE, "Write under `torch.no_grad()` without `.data`",
                      edits.wrap_in_no_grad(self.ctx, _around_loop(self.ctx, lines),
                                            [(write, write.value) for write in writes]))
            for other in lines:
                self._run_fixes[id(other)] = fix
        return fix

    def _needs_no_grad(self, line: cst.SimpleStatementLine) -> bool:
        """Whether a write of ``line`` would record in the graph without `.data`: not a
        `torch.nn.init` function (they write under `no_grad` themselves) nor a write to a
        `.grad` (which requires no grad)."""
        return any(not self._records_nothing(write) for write in self._fixable_writes(line))

    def _records_nothing(self, write: cst.Attribute) -> bool:
        base = write.value
        if isinstance(base, cst.Attribute) and base.attr.value == "grad":
            return True
        argument = self.ctx.parent(write)
        call = self.ctx.parent(argument) if isinstance(argument, cst.Arg) else None
        # Every `torch.nn.init` function fills its tensor under `torch.no_grad()` itself.
        return isinstance(call, cst.Call) and bool(call.args) and call.args[0] is argument \
            and (self.ctx.qualname(call.func) or "").startswith("torch.nn.init.")

    def _fixable_writes(self, line: cst.SimpleStatementLine) -> list[cst.Attribute]:
        """The `.data` writes this rule reports in ``line``, outermost first."""
        if id(line) in self._writes:
            return self._writes[id(line)]
        outermost: list[cst.Attribute] = []
        around: list[cst.Attribute] = []  # the writes the walk is inside of

        def enter(node: cst.CSTNode, parent) -> None:
            if isinstance(node, cst.Attribute) and node.attr.value == "data" \
                    and data_access(self.ctx, node).use is DataUse.WRITE \
                    and base_evidence(self.ctx, node) is not None:
                if not around:
                    outermost.append(node)
                around.append(node)

        def leave(node: cst.CSTNode) -> None:
            if around and around[-1] is node:
                around.pop()

        walk(line, enter, leave)
        self._writes[id(line)] = outermost
        return outermost

    def visit_Module(self, node: cst.Module) -> None:
        """Writes through a name bound to `x.data`."""
        for event in alias_writes(self.ctx):
            alias = event.alias
            if not event.through_alias or alias.kind != "data":
                continue
            evidence = self.ctx.tensor(alias.base)
            if evidence is None:
                continue
            self.report(
                event.write.node,
                "In-place write ({how}) to `{alias}`, an alias of `{base}.data`, is invisible to autograd: "
                "gradients computed from `{base}` can be silently wrong; write to `{base}` under "
                "`torch.no_grad()`",
                evidence=evidence,
                related=((alias.made_by, f"`{alias.name}` = `{self.ctx.snippet(alias.made_by)}` here"),),
                how=event.write.how, alias=alias.name, base=alias.base,
            )

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        write = run.first("saved-write")
        if write is not None:
            return Verdict(LATENT, f"{quote(write['write']['where'])} changed a tensor saved for backward at "
                                   f"{quote(write['saved_at'])}, but no backward used it on this run")
        if run.has("write"):
            return Verdict(NOT_REPRODUCED, "the write happened but changed no tensor saved for backward "
                                           "(for example an optimizer step after backward())")
        return Verdict(NOT_REPRODUCED, "no write happened on this run")


def _around_loop(ctx, lines: list) -> list:
    """``lines``, or the loop they are the whole body of (through `if`s that are the whole
    body of it): `with torch.no_grad():` once around `for p in model.parameters():`, not
    once per iteration inside it."""
    statements, crossed = list(lines), None
    while True:
        block = ctx.parent(statements[0])
        if not isinstance(block, cst.IndentedBlock) or list(block.body) != statements:
            break
        owner = ctx.parent(block)
        if isinstance(owner, (cst.For, cst.While)) and owner.orelse is None:
            crossed = [owner]
        elif not (isinstance(owner, cst.If) and owner.orelse is None):
            break
        statements = [owner]
    return crossed or list(lines)
