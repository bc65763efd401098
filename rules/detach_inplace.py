"""TL301 detach-inplace: an in-place write to one side of a ``.detach()`` alias while the
other side is still used."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from torchlint import edits
from torchlint.aliases import AliasWrite, alias_writes
from torchlint.rule import Applicability, Edit, Fix, Rule

if TYPE_CHECKING:
    from torchlint.context import FileContext


class DetachInplace(Rule):
    code = "TL301"
    name = "detach-inplace"
    summary = "in-place write to a `.detach()` alias (or to its original) while the other is still used"
    message = (
        "In-place write ({how}) to `{alias}` also changes `{base}`: `{alias}` = `{made}` shares "
        "its memory, and `{base}` is used afterwards; use `{base}.detach().clone()` for a copy"
    )
    fix = Applicability.UNSAFE
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

    ## Fix (unsafe)
    Makes the alias a copy where it is made: `y = x.detach()` becomes
    `y = x.detach().clone()` (`.copy()` when the alias is a numpy array, as in
    `y = x.detach().numpy()`), so a write to either side no longer reaches the other.
    It is unsafe because code that meant the two to share memory stops doing so. It is
    not offered when the alias is made by tuple unpacking, a chained assignment or any
    other way than `name = ...`, nor when some other write to either side is left
    alone by this rule (under `torch.no_grad()`, or through the alias with the original
    not read afterwards): such a write looks intentional and the copy would cut it.
    For a `.data` alias (`y = x.data`) the copy is offered only for writes to `x`;
    writes through `y` are TL102's.
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
        events = alias_writes(self.ctx)
        for event in events:
            message = self._message(event)
            if message is None:
                continue
            copy = copy_at_alias(self.ctx, event, events, lambda other: self._message(other) is not None)
            fix = copy_fix(self.ctx, event, copy) if copy is not None else None
            self.report(
                event.write.node, message,
                evidence=self.ctx.tensor(event.alias.base),
                related=event.related, fix=fix, **event.fields,
            )

    def _message(self, event: AliasWrite) -> Optional[str]:
        """The message for ``event`` when this rule reports it."""
        if event.reader is None or self.ctx.grad_disabled(event.write.node) is not None:
            return None
        if event.through_alias and event.alias.kind == "detach":
            return self.message
        if not event.through_alias and event.alias.kind in ("detach", "data"):
            return (
                "In-place write ({how}) to `{base}` also changes `{alias}` (= `{made}`, the same memory), "
                "which is read afterwards; use `{base}.detach().clone()` if `{alias}` should keep its values"
            )
        return None


# Shared with TL303 and TL304, which fix their aliases the same way.
def copy_at_alias(ctx: "FileContext", event: AliasWrite, events: list[AliasWrite],
                  reported: Callable[[AliasWrite], bool]) -> Optional[Edit]:
    """The edit that makes ``event``'s alias a copy where it is made (``.clone()``, or
    ``.copy()`` for a numpy array), or None when the alias is not made by a plain
    ``name = ...`` or when a copy would also cut sharing that the calling rule does not
    report (``reported`` says which events it reports) and that may be intended."""
    alias = event.alias
    made_by = alias.made_by
    statement = ctx.parent(made_by)
    if isinstance(statement, cst.Assign):
        if len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
            return None
    elif not (isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name)):
        return None
    for other in events:
        # Writes through the alias, and writes to the base that the alias sees later.
        if other.alias is alias and (other.through_alias or other.reader is not None) and not reported(other):
            return None
    return edits.insert_after(made_by, ".copy()" if _makes_array(ctx, made_by) else ".clone()")


def copy_fix(ctx: "FileContext", event: AliasWrite, copy: Edit) -> Fix:
    made = ctx.snippet(event.alias.made_by) + copy.content
    return Fix(Applicability.UNSAFE, f"Make `{event.alias.name}` a copy: `{event.alias.name} = {made}`", (copy,))


def _makes_array(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """``node``, an alias chain (``t.detach().numpy()[0]``), ends in a numpy array."""
    current = node
    while True:
        if isinstance(current, cst.Call):
            if ctx.qualname(current.func) == "torch.from_numpy":
                return False
            if not isinstance(current.func, cst.Attribute):
                return False
            if current.func.attr.value == "numpy":
                return True
            current = current.func.value
        elif isinstance(current, cst.Attribute):
            current = current.value
        elif isinstance(current, cst.Subscript):
            current = current.value
        else:
            return False
