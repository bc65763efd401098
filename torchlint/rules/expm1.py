"""TL511 use-expm1: ``torch.exp(x) - 1``, which loses the precision ``torch.special.expm1(x)``
keeps (TorchFix's TOR107)."""

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Edit, Fix, Observation, Rule, Verdict, cst, edits,
)


def _is_one(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1" or isinstance(node, cst.Float) and node.value == "1.0"


class _Parenthesized(cst.CSTNode):
    """What is reported for a parenthesized subtraction: the subtraction with its own
    parentheses, as TorchFix reports it (libcst's range of the node includes them)."""

    __slots__ = ()

    def __init__(self, node: cst.BaseExpression):
        self.start, self.end, self.parent = node.outer_start, node.outer_end, node


class Expm1(Rule):
    code = "TL511"
    name = "use-expm1"
    summary = "`torch.exp(x) - 1`: imprecise for small `x`; use `torch.special.expm1(x)`"
    message = "use `torch.special.expm1({x})` instead of `{expression}`: it is exact for small values"
    fix = Applicability.UNSAFE
    torchfix = ("TOR107",)
    requires = (r"\bexp\b",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `torch.exp(x) - 1` (with the literal `1` or `1.0`), `torch.exp` resolved
    through the file's imports (`math.exp(x) - 1` and `np.exp(x) - 1` are left alone).
    TorchFix's TOR107. The spellings `x.exp() - 1` and `-1 + torch.exp(x)` are not
    flagged.

    ## Why is this bad?
    For `|x|` much smaller than 1, `exp(x)` is close to 1 and the subtraction cancels
    most of its digits: in float32, `torch.exp(torch.tensor(1e-8)) - 1` is `0`, where
    the answer is `1e-8`. `torch.special.expm1(x)` (PyTorch 1.9; `torch.expm1` since
    0.4) computes `exp(x) - 1` without that cancellation.

    ## What to do instead
    `torch.special.expm1(x)` (or `torch.expm1(x)`).

    ## Fix (unsafe)
    The expression becomes `torch.special.expm1(x)` (importing torch when the file has
    no name for it). It is not marked safe because its results differ from the old
    ones in the last digits (they are more accurate), which a test comparing exact
    values would notice. A `torch.exp` call with more than its one argument gets no
    automatic fix. TorchFix offers no fix.

    References: TorchFix TOR107;
    [torch.special.expm1](https://pytorch.org/docs/stable/special.html#torch.special.expm1).
    """
    bad = (
        Bad(
            """
            import torch

            rate = torch.rand(4) * 1e-6
            growth = (torch.exp(rate) - 1) * 100
            """,
            reported=((4, "(torch.exp(rate) - 1)"),),
            fixed="""
            import torch

            rate = torch.rand(4) * 1e-6
            growth = torch.special.expm1(rate) * 100
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import math
        import numpy as np
        import torch

        rate = torch.rand(4) * 1e-6
        growth = torch.special.expm1(rate) * 100
        shifted = torch.exp(rate) - 2
        a = math.exp(0.5) - 1
        b = np.exp(np.ones(3)) - 1.0
        """,
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, cst.Subtract) or not _is_one(node.right):
            return
        call = node.left
        if not isinstance(call, cst.Call):
            return
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "exp"
                or isinstance(func, cst.Name) and func.value == "exp"):
            return
        qualname = self.ctx.qualname(func)
        if qualname != "torch.exp":
            return
        x = call.args[0].value if len(call.args) == 1 and not call.args[0].star else None
        reported = _Parenthesized(node) if node.lpar else node
        self.report(reported, evidence=self.ctx.origin(func, qualname), fix=self._fix(node, x),
                    x=x if x is not None else "x", expression=node)

    def _fix(self, node: cst.BinaryOperation, x) -> Fix:
        if x is None:
            return Fix(Applicability.DISPLAY_ONLY, "Call `torch.special.expm1(x)`", ())
        torch, imports = edits.torch_name(self.ctx)
        text = f"{torch}.special.expm1({self.ctx.code(x)})"
        # The parentheses around the subtraction go too (the call needs none), unless a
        # keyword or name touches them: `return(torch.exp(x) - 1)`.
        start, end = self.ctx.outer_span(node)
        if start and (self.ctx.text[start - 1].isalnum() or self.ctx.text[start - 1] == "_"):
            start, end = self.ctx.span(node)
        return Fix(Applicability.UNSAFE, f"Call `{text}`", (Edit(node, text, span=(start, end)), *imports))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a precision rule; the run does not compare the result with "
                                       "`torch.special.expm1`")
