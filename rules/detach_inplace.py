"""TL301 detach-inplace: an in-place write to one side of a ``.detach()`` alias while the
other side is still used."""

import libcst as cst

from torchlint.aliases import alias_writes
from torchlint.rule import Rule


class DetachInplace(Rule):
    code = "TL301"
    name = "detach-inplace"
    summary = "in-place write to a `.detach()` alias (or to its original) while the other is still used"
    message = (
        "In-place write ({how}) to `{alias}` also changes `{base}`: `{alias}` = `{made}` shares "
        "its memory, and `{base}` is used afterwards; use `{base}.detach().clone()` for a copy"
    )
    docs = """
    ## What it does
    Flags an in-place write (`y.zero_()`, `y[0] = v`, `y += 1`, `out=y`...) to a name
    bound to `x.detach()` when `x` is used afterwards, and an in-place write to `x`
    when a `.detach()` (or `.data`) alias of it is read afterwards. The alias is tracked
    through the function in the order the code runs; the place it was made is shown
    as a related location.

    ## Why is this bad?
    `x.detach()` is not a copy: it shares `x`'s memory. Writing to one changes the
    other, which surprises code that treated the detached tensor as a snapshot. When
    autograd saved `x` for backward, the write makes `backward()` raise ("one of the
    variables needed for gradient computation has been modified by an inplace
    operation"); otherwise the change is silent.

    Intentional aliasing stays quiet: `w.detach().normal_()` on one line,
    `p.grad.detach().zero_()`, writes under `torch.no_grad()`, and
    `x.detach().clone()`, which is a copy.

    ## What to do instead
    `x.detach().clone()` when a separate copy is meant.
    """
    bad = (
        """
        import torch

        a = torch.tensor(1.0, requires_grad=True)
        b = a * 2
        b_detach = b.detach()
        b_detach.zero_()
        print(b)  # tensor(0., grad_fn=<MulBackward0>)
        """,
    )
    good = (
        """
        import torch

        a = torch.tensor(1.0, requires_grad=True)
        b = a * 2
        snapshot = b.detach().clone()
        snapshot.zero_()
        print(b)
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for event in alias_writes(self.ctx):
            alias = event.alias
            if event.reader is None or self.ctx.grad_disabled(event.write.node) is not None:
                continue
            if event.through_alias and alias.kind == "detach":
                message = self.message
            elif not event.through_alias and alias.kind in ("detach", "data"):
                message = (
                    "In-place write ({how}) to `{base}` also changes `{alias}` (= `{made}`, the same memory), "
                    "which is read afterwards; use `{base}.detach().clone()` if `{alias}` should keep its values"
                )
            else:
                continue
            self.report(
                event.write.node, message,
                evidence=self.ctx.tensor(alias.base),
                related=event.related, **event.fields,
            )
