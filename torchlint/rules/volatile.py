"""TL202 volatile: ``Variable(x, volatile=True)`` and ``x.volatile``, ignored since PyTorch 0.4."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, is_false,
    is_store_target, is_true, iter_nodes, torch_api,
)

_UNDER_NO_GRAD = ("`volatile=` has had no effect since PyTorch 0.4; here `torch.no_grad()` already keeps the graph "
                  "from being recorded: drop the argument")

# Statements that can be put under `with torch.no_grad():` as they are.
_WRAPPABLE = (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr)


class Volatile(Rule):
    code = "TL202"
    name = "volatile"
    summary = "`volatile=True` is silently ignored since PyTorch 0.4: the graph is built and memory grows"
    message = (
        "`volatile=` has had no effect since PyTorch 0.4: the graph is still built and kept in "
        "memory; run the code under `with torch.no_grad():` instead"
    )
    fix = Applicability.SAFE  # the best it offers: dropping `volatile=False`; most of its fixes are unsafe
    since = "0.4"
    requires = (r"volatile",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
    )
    docs = """
    ## What it does
    Flags the `volatile` argument of `torch.autograd.Variable(...)`, and reads or
    writes of the `.volatile` attribute of a tensor.

    ## Why is this bad?
    `volatile=True` used to switch off graph building for inference. PyTorch 0.4
    removed it: the argument is accepted and ignored (with a `UserWarning: volatile
    was removed and now has no effect`), so evaluation code that relied on it now
    builds the whole autograd graph, keeps every intermediate activation alive and
    runs out of memory on large inputs. `x.volatile` is always `False`.

    ## What to do instead
    Run inference under `with torch.no_grad():` (or `torch.inference_mode()`), and
    test `torch.is_grad_enabled()` instead of `.volatile`.

    ## Fix (unsafe; safe where nothing changes)
    Where the code to run without a graph is plain to see, a statement that passes
    the volatile `Variable` to a model or function (`output =
    model(Variable(x, volatile=True))`, `return net(Variable(x, volatile=True))`), the
    statement goes under `with torch.no_grad():` (importing torch if needed) and
    `volatile=True` is dropped; TL201 then unwraps the `Variable`. It is unsafe:
    `volatile` also made everything computed later from the result graph-free,
    whereas `no_grad` covers only that statement, and anything else the statement
    computes is now graph-free too.

    Under `torch.no_grad()` already, and for `volatile=False`, the argument is just
    dropped (safe). Where the variable is only made (`x = Variable(t, volatile=True)`,
    then `x` used further on), the region that should run without a graph is not
    known: the fix is only shown, as advice to put the code that uses `x` under
    `torch.no_grad()`. `volatile=<expression>` and the `.volatile` attribute get no
    automatic fix either.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.autograd import Variable

            def evaluate(model, images):
                return model(Variable(images, volatile=True))
            """,
            reported=((5, "volatile=True"),),
            fixed="""
            import torch
            from torch.autograd import Variable

            def evaluate(model, images):
                with torch.no_grad():
                    return model(Variable(images))
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        def evaluate(model, images):
            with torch.no_grad():
                return model(images)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != torch_api.VARIABLE:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "volatile":
                # Under `torch.no_grad()` nothing is recorded anyway: the argument is only dead.
                message = _UNDER_NO_GRAD if self.ctx.grad_disabled(node) is not None else None
                self.report(arg, message, evidence=self.ctx.origin(node.func, torch_api.VARIABLE),
                            fix=self._fix(node, arg))
                return

    def _fix(self, call: cst.Call, arg: cst.Arg) -> Optional[Fix]:
        if is_false(arg.value):
            return Fix(Applicability.SAFE, "Remove `volatile=False`",
                       (edits.replace(call, _without(self.ctx, call, arg)),))
        if not is_true(arg.value):
            return Fix(Applicability.DISPLAY_ONLY,
                       f"Run the code that uses this tensor under `with torch.set_grad_enabled(not "
                       f"({self.ctx.snippet(arg.value)})):` and remove `volatile=`", ())
        if self.ctx.grad_disabled(call) is not None:
            return Fix(Applicability.SAFE, "Remove `volatile=True`: the code already runs under `torch.no_grad()`",
                       (edits.replace(call, _without(self.ctx, call, arg)),))
        line = edits.own_line(self.ctx, call)
        if line is None or not self._wrappable(line, call):
            return Fix(Applicability.DISPLAY_ONLY, self._advice(call), ())
        # Consecutive such statements share one block, and every volatile `Variable` in
        # them loses `volatile=True`: the findings of the run all get this same fix.
        lines = edits.statement_run(self.ctx, line, lambda other: not edits.has_noqa(self.ctx, other) and any(
            self._wrappable(other, volatile_call) for volatile_call, _ in self._volatile_calls(other)))
        replacements = [(other, _without(self.ctx, other, volatile))
                        for each in lines for other, volatile in self._volatile_calls(each)]
        return Fix(Applicability.UNSAFE, "Run the statement under `with torch.no_grad():` and remove `volatile=True`",
                   edits.wrap_in_no_grad(self.ctx, lines, replacements))

    def _wrappable(self, line: cst.SimpleStatementLine, call: cst.Call) -> bool:
        return isinstance(line.body[0], _WRAPPABLE) and self._consumed(call, line)

    def _volatile_calls(self, line: cst.SimpleStatementLine) -> list[tuple[cst.Call, cst.Arg]]:
        """The `Variable(.., volatile=True)` calls of ``line`` that this rule reports."""
        found = []
        for node in iter_nodes(line):
            if isinstance(node, cst.Call) and self.ctx.qualname(node.func) == torch_api.VARIABLE:
                volatile = next((a for a in node.args if a.keyword is not None and a.keyword.value == "volatile"), None)
                if volatile is not None and is_true(volatile.value):
                    found.append((node, volatile))
        return found

    def _consumed(self, call: cst.Call, line: cst.SimpleStatementLine) -> bool:
        """The volatile ``call`` is passed (directly or inside an expression) to a model or
        function of the user's, in ``line``: that call is what ran without a graph.  A
        statement that only makes the variable (``x = Variable(t, volatile=True).cuda()``,
        ``torch.cat([..])``) says nothing about where it is used."""
        child: cst.CSTNode = call
        for parent in self.ctx.ancestors(call):
            if parent is line:
                return False
            if isinstance(parent, cst.Arg) and not isinstance(child, cst.Arg):
                consumer = self.ctx.parent(parent)
                if isinstance(consumer, cst.Call) and self._user_call(consumer):
                    return True
            if isinstance(parent, (cst.Lambda, cst.FunctionDef)):
                return False
            child = parent
        return False

    def _user_call(self, call: cst.Call) -> bool:
        qualname = self.ctx.qualname(call.func)
        if qualname is not None and (qualname == torch_api.VARIABLE or qualname.startswith("torch.")
                                     or qualname.startswith("builtins.")):
            return False
        # A tensor method (`x.index_select(0, idx)`) computes nothing worth a graph on its own.
        return not (isinstance(call.func, cst.Attribute) and self.ctx.tensor(call.func.value) is not None)

    def _advice(self, call: cst.Call) -> str:
        target = self._assigned_name(call)
        uses = f"the code that uses `{target}`" if target else "the code that uses this tensor"
        return f"Run {uses} under `with torch.no_grad():` and remove `volatile=True`"

    def _assigned_name(self, call: cst.Call) -> Optional[str]:
        for parent in self.ctx.ancestors(call):
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                return self.ctx.snippet(parent.targets[0].target)
            if isinstance(parent, cst.BaseStatement):
                return None
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "volatile":
            return
        evidence = self.ctx.tensor(node.value)
        if evidence is None:
            return
        if is_store_target(self.ctx, node):
            message = "Setting `{base}.volatile` has had no effect since PyTorch 0.4; use `with torch.no_grad():`"
        else:
            message = (
                "`{base}.volatile` is always False since PyTorch 0.4; "
                "use `torch.is_grad_enabled()` or `{base}.requires_grad`"
            )
        self.report(node, message, evidence=evidence, base=node.value)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        warning = run.warning("volatile")
        if warning is not None:
            if warning.get("grad_enabled") is False:
                return Verdict(NOT_REPRODUCED, f"torch warned \"{warning['message']}\", but the code ran with "
                                               "gradients disabled (`torch.no_grad()`): no graph was recorded")
            return Verdict(CONFIRMED, f"torch warned \"{warning['message']}\": the argument is ignored, autograd "
                                      "still records the graph")
        return Verdict(NOT_REPRODUCED, "torch gave no volatile warning here")


def _without(ctx, call: cst.Call, arg: cst.Arg) -> str:
    """The source of ``call`` without the argument ``arg`` (with its comma; a comma after
    the last argument stays last), continuation lines as indented in the file."""
    return edits.call_text(ctx, call, lambda other: other is arg)
