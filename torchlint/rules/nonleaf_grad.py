"""TL404 nonleaf-grad: reading ``.grad`` of a tensor that is not a leaf of the graph."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, cst,
    edits, is_store_target, is_true, keyword, torch_api, torch_facts,
)

# Conversions that return the tensor itself or a copy (`to`, `cuda`, `double`, `type`): a copy
# of a leaf that requires grad is computed from it, so it is not a leaf.
_CONVERSIONS = torch_facts.methods(aliasing="maybe_self")


class NonleafGrad(Rule):
    code = "TL404"
    name = "nonleaf-grad"
    summary = ("reading `.grad` of a non-leaf tensor (e.g. a `clone()` result): always `None`; a non-leaf given to an "
               "optimizer")
    message = (
        "`{expr}` is always None: `{base}` is not a leaf of the autograd graph, so backward() does not "
        "store its gradient; call `{base}.retain_grad()` before backward(), or read the leaf's `.grad`"
    )
    copy_message = (
        "`{conversion}` converts a tensor that requires grad, and the converted copy is not a leaf: "
        "{consequence}; make the tensor where it is used (`device=`, `dtype=`, "
        "`requires_grad=True` in one call), or call `.requires_grad_()` after the conversion"
    )
    computed_message = (
        "`{conversion}` computes a new tensor from one made with `requires_grad=True`, and the result is not a "
        "leaf: {consequence}; make the leaf from the computed value: `({made}).requires_grad_()`"
    )
    optimizer_message = (
        "`{tensor}` is not a leaf of the autograd graph ({why}): `{optimizer}` raises ValueError \"can't optimize a "
        "non-leaf Tensor\"; give the optimizer the leaf, or make `{tensor}` a leaf (`.detach().requires_grad_()`)"
    )
    fix = Applicability.DISPLAY_ONLY
    # Warnings come from the `.grad` read, a line the finding names as related when it is on the conversion.
    raised_where_used = True
    requires = (r"\.[\s\\]*grad\b|optim",)
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

    A tensor made with `requires_grad=True` and computed on at once
    (`W = torch.randn(784, 10, requires_grad=True) * 0.01`) is reported there too, and a
    tensor that is no leaf in the list an optimizer of torch is built with
    (`torch.optim.SGD([W, b], ..)`) or among the entries of a dict it is built with
    (`list(store.values())`, also a tensor a function of the file stores there for its
    parameter: `def param(name, init): store[name] = init`), which raises `ValueError: can't
    optimize a non-leaf Tensor` (on the line that made it, when that line made it from a leaf).

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
        Bad(
            """
            import torch

            W = torch.randn(4, 2, requires_grad=True) * 0.01
            opt = torch.optim.SGD([W], lr=0.1)  # ValueError: can't optimize a non-leaf Tensor
            """,
            reported=((3, "torch.randn(4, 2, requires_grad=True) * 0.01"),),
        ),
    )
    good = (
        """
        import torch

        W = (torch.randn(4, 2) * 0.01).requires_grad_()
        opt = torch.optim.SGD([W], lr=0.1)
        """,
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
                line = self.ctx.line_index.position(node.start)[0]
                self._report_creation(conversion, f"`{self.ctx.snippet(node)}` (line {line}) stays None", evidence,
                                      ((node, "`.grad` is read here: None"),))
            return
        self.report(node, evidence=evidence, expr=node, base=node.value, fix=self._fix(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        """A tensor that is no leaf in the parameters an optimizer of torch is built with."""
        qualname = self.ctx.qualname(node.func)
        if qualname is None or not torch_api.is_optimizer_class(qualname):
            return
        params = keyword(node, "params") or (node.args[0].value if node.args and node.args[0].keyword is None
                                              and not node.args[0].star else None)
        if params is None:
            return
        for tensor, steps in self.ctx.grad_flow.optimized_tensors(params):
            evidence = self.ctx.tensor(tensor)
            if evidence is None or evidence.attached is not True or evidence.leaf is not False or \
                    not isinstance(tensor, cst.Name) or self.ctx.is_parameter(tensor):
                continue
            made = self._converted_leaf(tensor)
            if made is not None:
                if id(made) not in self._conversions:
                    self._conversions.add(id(made))
                    self._report_creation(made, f"`{self.ctx.snippet(node)}` raises ValueError \"can't optimize a "
                                          f"non-leaf Tensor\"", (*evidence.why, *steps) if steps else evidence,
                                          ((node, "the optimizer is built with it here"),))
                continue
            assignment = self.ctx.single_assignment(tensor)
            why = f"`{tensor.value} = {self.ctx.snippet(assignment[0])}` computes it" if assignment else \
                "it is computed from a tensor that requires grad"
            self.report(tensor, self.optimizer_message, evidence=(*evidence.why, *steps) if steps else evidence,
                        tensor=tensor, why=why, optimizer=node)
            return

    def _report_creation(self, made: cst.BaseExpression, consequence: str, evidence,
                         related: tuple[tuple[cst.CSTNode, str], ...]) -> None:
        """The finding on the conversion (`.to(device)`, `.double()`) or the arithmetic that made
        the non-leaf from a leaf made there."""
        if isinstance(made, cst.Call):
            self.report(made, self.copy_message, evidence=evidence, conversion=made, consequence=consequence,
                        related=related, fix=Fix(Applicability.DISPLAY_ONLY, "Make the tensor where it is used, with "
                                                 "`requires_grad=True`, or call `.requires_grad_()` after the conversion",
                                                 ()))
            return
        made_plain = self.ctx.snippet(made).replace(", requires_grad=True", "")
        self.report(made, self.computed_message, evidence=evidence, conversion=made, consequence=consequence,
                    made=made_plain, related=related,
                    fix=Fix(Applicability.DISPLAY_ONLY, "Make the leaf from the computed value", ()))

    def _converted_leaf(self, base: cst.BaseExpression) -> Optional[cst.Call]:
        """The conversion whose copy ``base`` holds (``x = leaf.to(device)``), when what it
        converts is a leaf that requires grad."""
        assignment = self.ctx.single_assignment(base) if isinstance(base, cst.Name) else None
        if assignment is None:
            return None
        value = assignment[0]
        if isinstance(value, cst.BinaryOperation) and self._leaf_made_in(value) is not None:
            return value  # `torch.randn(n, requires_grad=True) * 0.01`
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in _CONVERSIONS):
            return None
        converted = self.ctx.tensor(value.func.value)
        if converted is None or converted.attached is not True or converted.leaf is not True:
            return None
        return value

    def _leaf_made_in(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The operand of arithmetic with a number that makes a leaf requiring grad right there
        (`torch.randn(4, 2, requires_grad=True)` in `torch.randn(4, 2, requires_grad=True) / 2`)."""
        if not isinstance(value, cst.BinaryOperation):
            return None
        for operand, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(operand, cst.Call) and is_true(keyword(operand, "requires_grad")) and \
                    isinstance(other, (cst.Integer, cst.Float)) and self.ctx.tensor(operand) is not None:
                return operand
        return None

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
        refused = run.raised_or("ValueError", "can't optimize a non-leaf Tensor", "")
        if refused.verdict == CONFIRMED:
            return refused
        warning = run.warning("not a leaf")
        if warning is not None:
            return Verdict(CONFIRMED, "`.grad` of a non-leaf tensor was read and is None; torch warned \"The .grad "
                                      "attribute of a Tensor that is not a leaf Tensor is being accessed\"")
        return Verdict(NOT_REPRODUCED, "torch gave no non-leaf `.grad` warning on this run: the tensor was a leaf, "
                                       "or kept its gradient with `retain_grad()`")
