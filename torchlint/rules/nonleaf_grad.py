"""TL404 nonleaf-grad: reading ``.grad`` of a tensor that is not a leaf of the graph."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, cst,
    edits, is_store_target, torch_facts,
)

# Conversions that return the tensor itself or a copy (`to`, `cuda`, `double`, `type`): a copy
# of a leaf that requires grad is computed from it, so it is not a leaf.
_CONVERSIONS = torch_facts.methods(aliasing="maybe_self")


class NonleafGrad(Rule):
    code = "TL404"
    name = "nonleaf-grad"
    summary = "reading `.grad` of a non-leaf tensor (e.g. a `clone()` result): always `None`"
    message = (
        "`{expr}` is always None: `{base}` is not a leaf of the autograd graph, so backward() does not "
        "store its gradient; call `{base}.retain_grad()` before backward(), or read the leaf's `.grad`"
    )
    copy_message = (
        "`{conversion}` converts a tensor that requires grad, and the converted copy is not a leaf: "
        "`{read}` (line {line}) stays None; make the tensor where it is used (`device=`, `dtype=`, "
        "`requires_grad=True` in one call), or call `.requires_grad_()` after the conversion"
    )
    fix = Applicability.DISPLAY_ONLY
    # Warnings come from the `.grad` read, a line the finding names as related when it is on the conversion.
    raised_where_used = True
    requires = (r"\.[\s\\]*grad\b",)
    references = (
        ("torch.Tensor.retain_grad", "https://pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html"),
        ("torch.Tensor.is_leaf", "https://pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html"),
    )
    docs = """
    ## What it does
    Flags reads of `.grad` on a tensor that the autograd graph computed (the result
    of an operation such as `a.clone()`, `a * 2` or a module's output) rather than
    created (a leaf: a parameter, or a tensor made with `requires_grad=True`), when
    nothing calls `retain_grad()` on it.

    ## Why is this bad?
    `backward()` only fills `.grad` of leaves. On an intermediate tensor it stays
    `None` (PyTorch warns once: "The .grad attribute of a Tensor that is not a leaf
    Tensor is being accessed"), so code that reads it gets `None`, or crashes on
    `None.norm()`, or silently skips an update guarded by `if t.grad is not None`.

    When the tensor is a converted copy of one made with `requires_grad=True`
    (`x = torch.randn(3, requires_grad=True).to(device)`, `.cuda()`, `.double()`,
    `.type(..)`), the finding is on the conversion, which is what must change: the
    copy is computed from the leaf, so only the leaf gets a gradient.

    ## What to do instead
    Read the gradient of the leaf it was computed from, or call `t.retain_grad()`
    before `backward()` if the intermediate gradient is really wanted. Make a tensor to
    optimize on its device and dtype in one call (`torch.randn(3, device=device,
    requires_grad=True)`), or convert first and call `.requires_grad_()` after.

    ## Fix (display-only)
    Shows `t.retain_grad()` on the line after `t` is assigned (when `t` is a name
    assigned once, on a line of its own without a comment). It is never applied: the
    code may have wanted the leaf's gradient instead, and only its author knows which.
    """
    bad = (
        Bad(
            """
            import torch

            a = torch.tensor(1.0, requires_grad=True)
            a_ = a.clone()
            (a_ * 3).backward()
            print(a_.grad)  # None
            """,
            reported=((6, "a_.grad"),),
        ),
        Bad(
            """
            import torch

            x = torch.randn(3, requires_grad=True).double()
            (x * 2).sum().backward()
            print(x.grad)  # None: x is the converted copy
            """,
            reported=((3, "torch.randn(3, requires_grad=True).double()"),),
        ),
    )
    good = (
        """
        import torch

        a = torch.tensor(1.0, requires_grad=True)
        a_ = a.clone()
        a_.retain_grad()
        (a_ * 3).backward()
        print(a.grad, a_.grad)
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._conversions: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "grad" or is_store_target(self.ctx, node):
            return
        evidence = self.ctx.tensor(node.value)
        if evidence is None or not evidence.attached or evidence.leaf is not False:
            return
        if self._retains_grad(node.value):
            return
        conversion = self._converted_leaf(node.value)
        if conversion is not None:
            if id(conversion) not in self._conversions:
                self._conversions.add(id(conversion))
                self.report(conversion, self.copy_message, evidence=evidence, conversion=conversion, read=node,
                            line=self.ctx.line_index.position(node.start)[0], related=((node, "`.grad` is read here: None"),),
                            fix=Fix(Applicability.DISPLAY_ONLY, "Make the tensor where it is used, with "
                                    "`requires_grad=True`, or call `.requires_grad_()` after the conversion", ()))
            return
        self.report(node, evidence=evidence, expr=node, base=node.value, fix=self._fix(node.value))

    def _converted_leaf(self, base: cst.BaseExpression) -> Optional[cst.Call]:
        """The conversion whose copy ``base`` holds (``x = leaf.to(device)``), when what it
        converts is a leaf that requires grad."""
        assignment = self.ctx.single_assignment(base) if isinstance(base, cst.Name) else None
        if assignment is None:
            return None
        value = assignment[0]
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _CONVERSIONS):
            return None
        converted = self.ctx.tensor(value.func.value)
        if converted is None or converted.attached is not True or converted.leaf is not True:
            return None
        return value

    def _fix(self, base: cst.BaseExpression) -> Fix:
        retain = self._retain_grad_edit(base)
        return Fix(Applicability.DISPLAY_ONLY,
                   f"Call `{self.ctx.receiver(base)}.retain_grad()` before backward(), or read the leaf's `.grad`",
                   (retain,) if retain is not None else ())

    def _retain_grad_edit(self, base: cst.BaseExpression) -> Optional[Edit]:
        """`base.retain_grad()` on a new line after the one assignment of ``base``."""
        assignment = self.ctx.single_assignment(base) if isinstance(base, cst.Name) else None
        if assignment is None:
            return None
        line = edits.own_line(self.ctx, assignment[1])
        if line is None or edits.trailing_comment(self.ctx, line) is not None:
            return None
        return edits.insert_after(line, f"{self.ctx.newline}{self.ctx.line_indent(line)}{base.value}.retain_grad()")

    def _retains_grad(self, base: cst.BaseExpression) -> bool:
        # A parameter: whoever passes it in may have called retain_grad().
        return isinstance(base, cst.Name) and (self.ctx.is_parameter(base)
                                               or self.ctx.attribute_used(base, "retain_grad"))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        warning = run.warning("not a leaf")
        if warning is not None:
            return Verdict(CONFIRMED, "`.grad` of a non-leaf tensor was read and is None; torch warned \"The .grad "
                                      "attribute of a Tensor that is not a leaf Tensor is being accessed\"")
        return Verdict(NOT_REPRODUCED, "torch gave no non-leaf `.grad` warning on this run: the tensor was a leaf, "
                                       "or kept its gradient with `retain_grad()`")
