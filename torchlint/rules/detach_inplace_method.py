"""TL302 detach-inplace-method: ``detach_()`` on a view, or on a tensor autograd saved."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst,
    edits, view_source,
)

# Operations that save their inputs for backward (addition and subtraction do not).
_SAVING_OPERATORS = (cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power)


class DetachInplaceMethod(Rule):
    code = "TL302"
    name = "detach-inplace-method"
    summary = "`detach_()` on a view, or on a tensor saved for backward: RuntimeError"
    message = (
        "`{call}` detaches a view of `{base}` in place, which raises RuntimeError "
        "(Can't detach views in-place); {advice}"
    )
    fix = Applicability.UNSAFE
    requires = (r"detach_",)
    references = (
        ("torch.Tensor.detach_", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach_.html"),
        ("Autograd mechanics: in-place operations", "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
    )
    docs = """
    ## What it does
    Flags `t.detach_()` when `t` is a view of another tensor (`t = x[0]`,
    `t = x.view(-1)`, `x.t().detach_()`), and when `t` was computed in the graph, used
    in an operation that saves its inputs (a product, a division, a call), and a
    `backward()` follows in the same loop or block.

    ## Why is this bad?
    `detach_()` changes the tensor itself rather than returning a new one. On a view
    it raises at once ("Can't detach views in-place. Use detach() instead"). On a
    tensor that autograd saved for the backward pass, the later `backward()` raises
    ("Trying to use a saved tensor that has been detached in-place"). Both are easy to
    write when `detach_()` is used to "save memory".

    Truncated back-propagation through time, `h.detach_()` *after* `loss.backward()`,
    is the intended use and stays quiet, as does `detach_()` on a leaf such as a
    parameter after an optimizer step.

    ## What to do instead
    Rebind instead: `t = t.detach()`.

    ## Fix (unsafe)
    Rewrites the statement `t.detach_()` to `t = t.detach()`: the name now holds a new,
    detached tensor over the same memory, and the view or saved tensor is left as it
    was, so nothing raises. It is unsafe because other names for the same tensor stay
    attached to the graph, which `detach_()` would have cut. It is offered only when
    `t.detach_()` is a statement on its own and `t` is a plain name bound in the same
    scope by an assignment or as a parameter: rebinding a loop variable, a name from
    an enclosing scope or an attribute would not do the same.
    """
    bad = (
        Bad(
            """
            import torch

            x = torch.randn(4, requires_grad=True)
            first = (x * 2)[:2]
            first.detach_()
            """,
            reported=((5, "first.detach_()"),),
            fixed="""
            import torch

            x = torch.randn(4, requires_grad=True)
            first = (x * 2)[:2]
            first = first.detach()
            """,
            unsafe=True,
        ),
        Bad(
            """
            import torch

            x = torch.randn(3, requires_grad=True)
            y = x.sigmoid()
            z = (y * y).sum()
            y.detach_()
            z.backward()
            """,
            reported=((6, "y.detach_()"),),
            fixed="""
            import torch

            x = torch.randn(3, requires_grad=True)
            y = x.sigmoid()
            z = (y * y).sum()
            y = y.detach()
            z.backward()
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        rnn = nn.RNNCell(4, 4)
        h = torch.zeros(1, 4)
        for step in range(3):
            h = rnn(torch.randn(1, 4), h)
            loss = h.pow(2).sum()
            loss.backward()
            h.detach_()
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "detach_" and not node.args):
            return
        receiver = func.value
        view = self._view_of(receiver)
        if view is not None:
            base, made = view
            advice = f"use `{receiver.value} = {receiver.value}.detach()`" if isinstance(receiver, cst.Name) \
                else "use `.detach()`, which returns a new tensor"
            self.report(
                node,
                evidence=self.ctx.tensor(base),
                related=((made, "the view is made here"),) if made is not receiver else (),
                call=node, base=base, advice=advice, fix=self._fix(node),
            )
            return
        if isinstance(receiver, cst.Name):
            backward = self._saved_then_backward(receiver)
            if backward is not None:
                self.report(
                    node,
                    "`{call}` detaches in place a tensor that autograd saved for the backward() that "
                    "follows, which then raises RuntimeError; use `{name} = {name}.detach()`",
                    evidence=self.ctx.tensor(receiver),
                    related=((backward, "backward() runs here"),),
                    call=node, name=receiver, fix=self._fix(node),
                )

    def _fix(self, node: cst.Call) -> Optional[Fix]:
        """`t.detach_()` as a statement, `t` a local name: `t = t.detach()`."""
        receiver = node.func.value
        statement = self.ctx.parent(node)
        if not isinstance(receiver, cst.Name) or not isinstance(statement, cst.Expr):
            return None
        if not self.ctx.bound_only_here(receiver):
            return None
        name = receiver.value
        rebind = f"{name} = {name}.detach()"
        return Fix(Applicability.UNSAFE, f"Rebind: `{rebind}`", (edits.replace(node, rebind),))

    def _view_of(self, receiver: cst.BaseExpression):
        """(the tensor viewed, the view expression) when ``receiver`` is a view."""
        base = view_source(self.ctx, receiver)
        if base is not None:
            return base, receiver
        value = self.ctx.only_value(receiver) if isinstance(receiver, cst.Name) else None
        base = view_source(self.ctx, value) if value is not None else None
        return (base, value) if base is not None else None

    def _saved_then_backward(self, receiver: cst.Name) -> Optional[cst.CSTNode]:
        value = self.ctx.tensor(receiver)
        if value is None or not value.attached or value.leaf is not False:
            return None
        if not any(self._saves(load) for load in self.ctx.reads_since_binding(receiver)):
            return None
        block = self._block(receiver)
        return next((node for node in self.ctx.attribute_uses_after(receiver, "backward")
                     if self._block(node) is block), None)

    def _saves(self, load: cst.Name) -> bool:
        """`load` is an operand that autograd saves: of a product or a call."""
        parent = self.ctx.parent(load)
        if isinstance(parent, cst.BinaryOperation):
            return isinstance(parent.operator, _SAVING_OPERATORS)
        if isinstance(parent, cst.Arg):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is load:
            call = self.ctx.parent(parent)
            return isinstance(call, cst.Call) and call.func is parent and parent.attr.value not in ("detach_", "backward")
        return False

    def _block(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The innermost loop or function around ``node``."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)):
                return ancestor
        return None

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        if run.raised is not None:
            return Verdict(CONFIRMED, f"{run.raised['type']}: {run.raised['message']}")
        return Verdict(NOT_REPRODUCED, "`detach_()` ran, and no backward needed the tensor afterwards")
