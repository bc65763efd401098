"""TL301 detach-inplace: an in-place write to one side of a ``.detach()`` alias while the
other side is still used."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import AliasWrite, AliasWriteRule, Applicability, Bad, argument_writes, cst


class DetachInplace(AliasWriteRule):
    code = "TL301"
    name = "detach-inplace"
    summary = "in-place write to a `.detach()` alias (or to its original) while the other is still used"
    message = (
        "In-place write ({how}) to `{alias}` also changes `{base}`: `{alias}` = `{made}` shares "
        "its memory, and `{base}` is used afterwards; use `{base}.detach().clone()` for a copy"
    )
    fix = Applicability.UNSAFE
    # A `.detach()` or `.data` alias.
    # A `.detach()` or `.data` alias, or an in-place write (one in a helper may reach its caller's tensor).
    requires = (r"detach|\.[\s\\]*data\b|_\s*\(|[-+*/]=|\]\s*=",)
    references = (
        ("torch.Tensor.detach", "https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html"),
        ("Autograd mechanics: in-place operations", "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd"),
    )
    docs = """
    ## What it does
    Flags an in-place write (`y.zero_()`, `y[0] = v`, `y += 1`, `out=y`...) to a name
    bound to `x.detach()` when `x` is used afterwards, and an in-place write to `x`
    when a `.detach()` (or `.data`) alias of it is read afterwards. The alias is tracked
    through the function in the order the code runs; the place it was made is shown
    as a related location. Backward counts as a reader: a write to either side when an
    operation saved the other for a `backward()` that runs after the write (TL409
    says how saved tensors are known) is reported with the saving operation as evidence.

    A write inside a helper of the file is followed back to the caller: when the
    written name is (a view of) the helper's parameter on some paths and a new tensor on
    others (`if ..: t = torch.cat(..)`, or the result of another helper that returns its
    argument for a single image and a new tensor otherwise), and a caller passes
    `w.data`/`w.detach()` or a tensor it reads afterwards, the write is reported where it
    is made, with the call and the later read as related locations. A helper that
    writes its argument on every path (`init_(w)`) means to; one that writes what it made
    with `t.detach()` of its parameter (`img = t.detach(); img -= img.min()`) took it for a
    copy, and is reported like a write on some paths. So is a helper that writes its
    argument on every path when a caller passes it `x.detach()` of a computed tensor `x`
    that it reads afterwards (`normalize_(features.detach())`, then `features` in the
    loss): the detach made no copy (a leaf written so, `init_(w.detach())`, is being
    initialized, and is left alone).

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
        Bad(
            """
            import torch

            a = torch.tensor(1.0, requires_grad=True)
            b = a * 2
            b_detach = b.detach()
            b_detach.zero_()
            print(b)  # meant to be tensor(2., grad_fn=<MulBackward0>)
            """,
            reported=((6, "b_detach.zero_()"),),
            fixed="""
            import torch

            a = torch.tensor(1.0, requires_grad=True)
            b = a * 2
            b_detach = b.detach().clone()
            b_detach.zero_()
            print(b)  # meant to be tensor(2., grad_fn=<MulBackward0>)
            """,
            unsafe=True,
        ),
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

    argument_message = (
        "In-place write ({how}) to `{name}` changes the caller's `{argument}` (passed at line {line}){path}: "
        "{reader}; write out of place or `.clone()` first"
    )

    passed_detached_message = (
        "In-place write ({how}) to `{name}` changes the caller's `{base}`: `{passed}` (passed at line {line}) is "
        "its memory, no copy, and `{base}` is read afterwards; pass `{passed}.clone()` there"
    )

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        for found in argument_writes(self.ctx):
            if found.read is not None and found.via is not None and any(
                    isinstance(arg, cst.Arg) and arg.value is found.via for arg in found.call.args):
                # `normalize_(x.detach())`: the helper means to write what it is given; the
                # caller's detach is what goes wrong.
                self.report(found.write.node, self.passed_detached_message, name=found.written,
                            how=found.write.how, line=self.ctx.line_index.position(found.via.start)[0],
                            passed=found.via, base=found.argument,
                            related=((found.via, "passed here: the same memory"), (found.read, "read afterwards")))
                continue
            related = [(found.call, "the call that passes it")]
            detached = isinstance(found.via, cst.Call) and isinstance(found.via.func, cst.Attribute) \
                and found.via.func.attr.value == "detach"
            if found.via is not None:
                related.append((found.via, "the same memory, detached here" if detached
                                else "where it is an alias on some paths only"))
            if found.read is not None:
                related.append((found.read, "read afterwards"))
                reader = f"the caller reads `{self.ctx.snippet(found.argument)}` afterwards"
            else:
                base = found.argument.value if isinstance(found.argument, cst.Attribute) else found.argument.func.value
                reader = f"it is the memory of `{self.ctx.snippet(base)}`, which is still used"
            if found.via is None:
                path = ""
            elif detached:
                path = f" (`{self.ctx.snippet(found.via)}` shares its memory: it is no copy)"
            else:
                path = f" on the paths where `{found.written.value}` is (a view of) it, not a new tensor"
            self.report(found.write.node, self.argument_message, how=found.write.how, name=found.written,
                        argument=found.argument, line=self.ctx.line_index.position(self.ctx.span(found.call)[0])[0],
                        path=path, reader=reader, related=tuple(related))

    def covers_saved(self, event: AliasWrite) -> bool:
        # A write through a `.data` alias is TL102's, whatever reads it.
        return event.alias.kind == "detach" or (event.alias.kind == "data" and not event.through_alias)

    def message_for(self, event: AliasWrite) -> Optional[str]:
        if event.through_alias and event.alias.kind == "detach":
            return self.message
        if not event.through_alias and event.alias.kind in ("detach", "data"):
            return (
                "In-place write ({how}) to `{base}` also changes `{alias}` (= `{made}`, the same memory), "
                "which is read afterwards; use `{base}.detach().clone()` if `{alias}` should keep its values"
            )
        return None
