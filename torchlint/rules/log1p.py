"""TL510 use-log1p: ``torch.log(1 + x)``, which loses the precision ``torch.log1p(x)`` keeps
(TorchFix's TOR106)."""

from typing import Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits,
)


def is_one(node: cst.BaseExpression) -> bool:
    """The literal `1` or `1.0`, as TorchFix matches it."""
    return isinstance(node, cst.Integer) and node.value == "1" or isinstance(node, cst.Float) and node.value == "1.0"


class Log1p(Rule):
    code = "TL510"
    name = "use-log1p"
    summary = "`torch.log(1 + x)`: imprecise for small `x`; use `torch.log1p(x)`"
    message = "use `torch.log1p({x})` instead of `{call}`: it is exact for small values"
    fix = Applicability.UNSAFE
    torchfix = ("TOR106",)
    requires = (r"\blog\b",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `torch.log(1 + x)` and `torch.log(x + 1)` (with the literal `1` or `1.0`),
    `torch.log` resolved through the file's imports (`np.log(1 + x)` and
    `math.log(1 + x)` are left alone). TorchFix's TOR106. The method spelling
    `(1 + x).log()` is not flagged.

    ## Why is this bad?
    For `|x|` much smaller than 1, `1 + x` rounds away most of `x`'s digits before the
    logarithm is taken: in float32, `torch.log(1 + torch.tensor(1e-8))` is `0`, where
    the answer is `1e-8`; for `|x| < 1e-3` about half the significant digits are
    lost. Losses, log-probabilities and softplus-like terms meet such values all the
    time. `torch.log1p(x)` (PyTorch 0.4; also `torch.special.log1p`) computes
    `log(1 + x)` without forming `1 + x`.

    ## What to do instead
    `torch.log1p(x)`.

    ## Fix (unsafe)
    The call becomes `torch.log1p(x)` (through the same module name). It is not marked
    safe because its results differ from the old ones in the last digits (they are more
    accurate), which a test comparing exact values would notice. A call through a bare
    imported `log` name, or with more arguments, gets no automatic fix. TorchFix offers
    no fix.

    References: TorchFix TOR106; [torch.log1p](https://pytorch.org/docs/stable/generated/torch.log1p.html).
    """
    bad = (
        Bad(
            """
            import torch

            p = torch.rand(4) * 1e-6
            nll = -torch.log(1 + p)
            """,
            reported=((4, "torch.log(1 + p)"),),
            fixed="""
            import torch

            p = torch.rand(4) * 1e-6
            nll = -torch.log1p(p)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import math
        import numpy as np
        import torch

        p = torch.rand(4) * 1e-6
        nll = -torch.log1p(p)
        two = torch.log(2 + p)
        a = np.log(1 + np.ones(3))
        b = math.log(1 + 0.5)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "log"
                or isinstance(func, cst.Name) and func.value == "log"):
            return
        if len(node.args) != 1 or node.args[0].star:
            return
        value = node.args[0].value
        if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, cst.Add):
            return
        other = value.right if is_one(value.left) else value.left if is_one(value.right) else None
        if other is None:
            return
        qualname = self.ctx.qualname(func)
        if qualname != "torch.log":
            return
        self.report(node, evidence=self.ctx.origin(func, qualname), fix=self._fix(node, other),
                    x=other, call=node)

    def _fix(self, call: cst.Call, x: cst.BaseExpression) -> Optional[Fix]:
        func = call.func
        if not isinstance(func, cst.Attribute) or call.args[0].keyword is not None:
            return Fix(Applicability.DISPLAY_ONLY, "Call `torch.log1p(x)`", ())
        text = f"{self.ctx.code(func.value)}.log1p({self.ctx.code(x)})"
        return Fix(Applicability.UNSAFE, f"Call `{text}`", (edits.replace(call, text),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a precision rule; the run does not compare the result with "
                                       "`torch.log1p`")
