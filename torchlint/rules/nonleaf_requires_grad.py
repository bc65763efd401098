"""TL406 nonleaf-requires-grad: setting ``requires_grad`` on a tensor the graph computed."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Verdict, cst, is_store_target,
)


class NonleafRequiresGrad(Rule):
    code = "TL406"
    name = "nonleaf-requires-grad"
    summary = "`y.requires_grad = ...` or `y.requires_grad_()` on a computed (non-leaf) tensor: RuntimeError"
    message = (
        "`{base}` is not a leaf of the autograd graph: setting its `requires_grad` raises RuntimeError; "
        "{advice}"
    )
    fix = Applicability.DISPLAY_ONLY
    requires = (r"requires_grad",)
    references = (
        ("torch.Tensor.requires_grad_", "https://pytorch.org/docs/stable/generated/torch.Tensor.requires_grad_.html"),
        ("torch.Tensor.is_leaf", "https://pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html"),
    )
    docs = """
    ## What it does
    Flags `y.requires_grad = flag` and `y.requires_grad_(..)` where `y` is a tensor
    that the autograd graph computed from a tensor that requires grad (the result of
    an operation on a parameter or on a tensor made with `requires_grad=True`), as the
    inference shows, with its evidence. A module's output is left alone: its
    parameters may all be frozen (`backbone.requires_grad_(False)`), and the output is
    then a leaf whose flag can be set.

    ## Why is this bad?
    Only leaves carry a settable `requires_grad`. On a computed tensor torch raises
    `RuntimeError: you can only change requires_grad flags of leaf variables`, with
    `True` as well as with `False`. Code that means "stop the gradient here" or "I
    want the gradient of this" stops instead.

    ## What to do instead
    To stop the gradient, use `y = y.detach()`. To keep the gradient of an
    intermediate tensor for reading, call `y.retain_grad()` before `backward()`. To
    make a new input that requires grad, use `y.detach().requires_grad_()`.

    ## Fix (display-only)
    The advice is shown. Which of the three the code meant only its author knows.
    """
    bad = (
        Bad(
            """
            import torch

            w = torch.randn(3, requires_grad=True)
            hidden = w * 2
            hidden.requires_grad = False
            """,
            reported=((5, "hidden.requires_grad"),),
        ),
    )
    good = (
        """
        import torch

        w = torch.randn(3, requires_grad=True)
        hidden = (w * 2).detach()
        hidden.requires_grad = True
        inputs = torch.zeros(3)
        inputs.requires_grad_()
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "requires_grad" and is_store_target(self.ctx, node):
            self._check(node.value, node, "to stop its gradient use `.detach()`; to read its gradient call "
                                          "`.retain_grad()` before backward()")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" \
                and self.ctx.qualname(func) is None:
            self._check(func.value, node, "for a new input that requires grad use `.detach().requires_grad_()`")

    def _check(self, base: cst.BaseExpression, node: cst.CSTNode, advice: str) -> None:
        evidence = self.ctx.tensor(base)
        if evidence is None or not evidence.attached or evidence.leaf is not False:
            return
        if any(self._module_output(step.node) for step in evidence.why):
            return  # a module's parameters may all be frozen: its output is then a leaf
        fix = Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ())
        self.report(node, evidence=evidence, base=base, advice=advice, fix=fix)

    def _module_output(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        callee = self.ctx.infer(node.func)
        return callee is not None and callee.kind is Kind.MODULE

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and "leaf variables" in raised["message"]:
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "the flag was set: the tensor was a leaf on this run")
