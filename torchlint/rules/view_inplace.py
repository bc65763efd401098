"""TL303 view-inplace: an in-place write to a tensor while a view of it is used later, or
through a ``reshape`` that may or may not be a view."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, AliasWrite, AliasWriteRule, Applicability, Bad, Edit, Fix, Observation, Verdict, cst,
    innermost_write, shape_writes_with_grad, writes_with_grad,
)


class ViewInplace(AliasWriteRule):
    code = "TL303"
    # A write made by a module or function the call runs raises inside it (the related line).
    raised_where_used = True
    name = "view-inplace"
    summary = "in-place write to a tensor while a `view`/slice/`transpose` of it is used later (or through a `reshape`)"
    message = (
        "In-place write ({how}) to `{base}` also changes `{alias}`, a view of it (`{alias}` = "
        "`{made}`), which is read afterwards; `.clone()` the view if it should keep its values"
    )
    fix = Applicability.UNSAFE
    # Some in-place write: a `*_()` call, `+=`..., an item assignment, `out=` or `inplace=`.
    requires = (r"_\s*\(|[-+*/%&|^@<>]=|\]|\bout\b|\binplace\b",)
    # Writing through a view to fill its base is meant, unless autograd saved the base.
    saved_kinds = ("view", "reshape", "maybe_self")
    references = (
        ("Tensor views", "https://pytorch.org/docs/stable/tensor_view.html"),
        ("Autograd mechanics: in-place operations", "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
    )
    docs = """
    ## What it does
    Flags an in-place write to a tensor when a view of it (`y = x.view(4)`,
    `row = x[0]`, `xt = x.t()`, `x.permute(..)`, `x.expand(..)`...) made earlier is read
    afterwards, and an in-place write through `y = x.reshape(..)` (or `flatten`) or
    `y = x.contiguous()` (or `.to(..)`, `.float()`...) when `x` is read afterwards.

    ## Why is this bad?
    A view shares its base's memory: after `y = x.view(4); x += 1`, `y` has changed too,
    which code that meant `y` as a reshaped copy does not expect. `reshape` is worse:
    it returns a view when the memory layout allows and a copy otherwise, so whether a
    write through it reaches `x` depends on how `x` was made; `contiguous()`, `to()`,
    `float()`, `cpu()` return `x` itself when it already is contiguous, of that dtype, on
    that device. When autograd saved the
    tensor, the write also makes `backward()` raise.

    Writing *through* a `view()` or a slice to fill the base is the intended use of
    views and stays quiet, as do writes under `torch.no_grad()` and slices that are
    copied right away (`.clone()`), unless autograd saved the base (or the view) for a
    `backward()` that runs after the write: `e = w.exp(); flat = e.view(-1); flat[0] = 0`
    before `e.sum().backward()` is reported, with `exp` as the saving operation (TL409
    says how saved tensors are known).

    A function that returns several views (`a, b = x.chunk(2)`, `x.split(3)`,
    `x.unbind()`, and a `for row in x` loop, which unbinds `x`) gives views autograd will
    not let be written at all when `x` requires grad: an in-place write to one of them,
    outside `no_grad`, is flagged whatever is read afterwards (torch raises "Output 0 of
    SplitBackward0 is a view and is being modified inplace"). So is a view of one of them
    (`flat = u.reshape(-1)`), a loop target of `zip(x, ..)`, and any item of the tuple such
    a call returns, whatever the index (`hx = h.unbind(0)`, then `hx[i].squeeze_(0)`), and
    one handed to a call that writes it: a layer that works in place, a module of the file
    whose `forward` writes its input on every call (`self.block(half)` where `Block.forward`
    starts with `self.act(h)`, `self.act = nn.ReLU(inplace=True)`), a function of the file
    that writes its parameter; the callee's write is shown, where torch raises. A
    change of shape in place (`squeeze_`, `unsqueeze_`, `t_`, `transpose_`) counts: autograd
    treats it as an in-place operation on the view, though it writes no element. (`tensor_split`,
    `hsplit`, `vsplit`, `dsplit` slice instead: their outputs may be written.) Whether `x`
    requires grad is followed through the calls of the file, and `t.requires_grad = True`
    (or `t.requires_grad_()`) makes `t` require grad from there on.

    A view made under `torch.no_grad()` of a tensor that requires grad (`row = emb.weight[0]`
    in a `no_grad` block) may not be written in place once grad mode is back on either: torch
    raises "A view was created in no_grad mode and is being modified inplace with grad mode
    enabled".

    ## What to do instead
    `.clone()` the view when it should keep its values; use `.view()` when a shared
    view is meant and `.clone()` when a copy is. Write one of several views out of place
    (`u = u * scale`), or `.clone()` it first.
    """
    bad = (
        Bad(
            """
            import torch

            x = torch.rand(2, 2)
            y = x.view(4)
            x += 1
            print(y)  # meant to hold x's values before the += 1
            """,
            reported=((5, "x"),),
            fixed="""
            import torch

            x = torch.rand(2, 2)
            y = x.view(4).clone()
            x += 1
            print(y)  # meant to hold x's values before the += 1
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        x = torch.rand(2, 2)
        x_copy = x.clone().view(4)
        x += 1
        print(x_copy)

        out = torch.zeros(3, 4)
        row = out[0]
        row.fill_(1.0)
        print(out)
        """,
    )

    multi_view_message = (
        "In-place write ({how}) to `{name}`, one of the views `{made}` returns of `{base}`, which requires grad: "
        "autograd refuses it (RuntimeError \"is a view and is being modified inplace\"); write out of place or "
        "`.clone()` the view first"
    )

    unbound_view_message = (
        "In-place write ({how}) to `{name}`, one of the views that iterating over `{base}` (which requires grad) "
        "unbinds it into: autograd refuses it (RuntimeError \"is a view and is being modified inplace\"); write "
        "out of place or `.clone()` the view first"
    )

    no_grad_view_message = (
        "In-place write ({how}) to `{name}`, a view of `{base}` made under `no_grad` (line {line}), with grad "
        "mode on: autograd refuses it (RuntimeError \"A view was created in no_grad mode and is being modified "
        "inplace with grad mode enabled\"); write under `no_grad` too, or `.clone()` the view"
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        seen: set[int] = set()
        # A change of shape in place (`squeeze_`, `t_`) is an in-place operation to autograd too.
        for candidate, write in [*writes_with_grad(self.ctx), *shape_writes_with_grad(self.ctx)]:
            if not isinstance(candidate, cst.Name) or id(write.node) in seen:
                continue
            made = self.ctx.autograd.multi_output_view(candidate)
            parent = self.ctx.parent(candidate)
            if made is None and isinstance(parent, cst.Subscript) and parent.value is candidate:
                made = self.ctx.autograd.held_multi_output_views(candidate)  # `hx[i].squeeze_(0)`, hx = h.unbind(0)
            if made is None:
                quiet = self.ctx.autograd.no_grad_view(candidate)
                if quiet is not None:
                    seen.add(id(write.node))
                    view, base, disabled = quiet
                    self.report(write.node, self.no_grad_view_message, how=write.how, name=candidate, base=base,
                                line=self.ctx.line_index.position(view.start)[0], evidence=self.ctx.tensor(base),
                                related=((view, "the view is made here"), (disabled, "gradients are off here")))
                continue
            seen.add(id(write.node))
            # Iterating a tensor unbinds it: the loop made the views, not a call.
            message = self.unbound_view_message if made[0] is made[1] else self.multi_view_message
            inner = innermost_write(write)
            # A module or function that writes the view it is given: torch raises inside it.
            related = ((inner.node, "the write the call runs"),) if inner is not None else ()
            self.report(write.node, message, how=write.how, name=candidate, made=made[0],
                        base=made[1], evidence=self.ctx.tensor(made[1]), related=related)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and (
                "is a view and is being modified inplace" in raised["message"]
                or "view was created in no_grad mode and is being modified inplace" in raised["message"]):
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return super().judge(run)

    def fix_for(self, event: AliasWrite, copy: Optional[Edit]) -> Optional[Fix]:
        if copy is not None and event.through_alias:  # a reshape: a copy is one of two readings
            return Fix(Applicability.DISPLAY_ONLY,
                       f"Make the copy explicit (`{self.ctx.snippet(event.alias.made_by)}.clone()`), "
                       "or use `.view()` if the write should reach the base", (copy,))
        return super().fix_for(event, copy)

    def message_for(self, event: AliasWrite) -> Optional[str]:
        if event.alias.kind not in ("view", "reshape", "maybe_self"):
            return None
        if event.alias.kind == "maybe_self":
            return (
                "In-place write ({how}) to `{%s}` may or may not change `{%s}` (`{alias}` = `{made}`), "
                "which is read afterwards: `{made}` is `{base}` itself when nothing needs converting "
                "and a copy otherwise; use `.clone()` for a copy"
            ) % (("alias", "base") if event.through_alias else ("base", "alias"))
        if not event.through_alias:
            return self.message
        if event.alias.kind == "reshape":
            return (
                "In-place write ({how}) to `{alias}` = `{made}` may or may not change `{base}`, which is "
                "read afterwards: reshape returns a view when it can and a copy otherwise; use `.view()` "
                "to share memory or `.clone()` for a copy"
            )
        return None
