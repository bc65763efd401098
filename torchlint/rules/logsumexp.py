"""TL512 logsumexp: ``torch.log(torch.sum(torch.exp(x), dim))``, which overflows where
``torch.logsumexp(x, dim)`` does not (TorchFix's TOR108)."""

from typing import Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits,
)

_SUM_ARGUMENTS = ("input", "dim", "keepdim")  # what torch.logsumexp takes too, in its order


def _argument(call: cst.Call, name: str, position: int) -> Optional[cst.Arg]:
    """The argument ``name`` of ``call``, by keyword or at ``position`` among the positional
    ones (as TorchFix counts them)."""
    index = 0
    for arg in call.args:
        if arg.keyword is None:
            if index == position:
                return arg
            index += 1
        elif arg.keyword.value == name:
            return arg
    return None


class Logsumexp(Rule):
    code = "TL512"
    name = "logsumexp"
    summary = "`torch.log(torch.sum(torch.exp(x), dim))`: overflows for large `x`; use `torch.logsumexp(x, dim)`"
    message = "use the numerically stable `torch.logsumexp({x}, {dim})` instead of `{call}`"
    fix = Applicability.UNSAFE
    torchfix = ("TOR108",)
    requires = (r"\blog\b", r"\bsum\b", r"\bexp\b")
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags `torch.log(torch.sum(torch.exp(x), dim))` where `torch.sum` is given a `dim`
    (second positional argument or `dim=`) that is not `None`, each name resolved
    through the file's imports. TorchFix's TOR108. Without a `dim` (or with `dim=None`)
    it is not flagged: `torch.logsumexp` has no reduce-over-everything form to match
    ([pytorch#144339](https://github.com/pytorch/pytorch/issues/144339)).

    ## Why is this bad?
    `torch.exp` overflows to `inf` for float32 inputs above about 88 (and underflows to
    0 below about -103), so the log of the sum is `inf` (or `-inf`) where the true
    value is an ordinary number: logits of a few hundred are common. `torch.logsumexp`
    (PyTorch 0.4) subtracts the maximum before exponentiating, and is exact wherever
    the result is representable.

    ## What to do instead
    `torch.logsumexp(x, dim)`, with `keepdim=` as `torch.sum` had it.

    ## Fix (unsafe)
    The expression becomes `torch.logsumexp(x, dim[, keepdim])` (through the file's
    name for torch, imported when missing), when `torch.sum` is passed only `input`,
    `dim` and `keepdim`, and `torch.log` and `torch.exp` only their input. It is not
    marked safe because results differ: finite where the old expression gave `inf`, and
    different in the last digits elsewhere. TorchFix offers no fix.

    References: TorchFix TOR108;
    [torch.logsumexp](https://pytorch.org/docs/stable/generated/torch.logsumexp.html).
    """
    bad = (
        Bad(
            """
            import torch

            logits = torch.randn(4, 10) * 100
            log_z = torch.log(torch.sum(torch.exp(logits), dim=1, keepdim=True))
            """,
            reported=((4, "torch.log(torch.sum(torch.exp(logits), dim=1, keepdim=True))"),),
            fixed="""
            import torch

            logits = torch.randn(4, 10) * 100
            log_z = torch.logsumexp(logits, dim=1, keepdim=True)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import numpy as np
        import torch

        logits = torch.randn(4, 10) * 100
        log_z = torch.logsumexp(logits, dim=1, keepdim=True)
        total = torch.log(torch.sum(torch.exp(logits)))
        same = torch.log(torch.sum(torch.exp(logits), dim=None))
        shifted = torch.log(torch.sum(torch.exp(logits), 1) + 1e-6)
        a = np.log(np.sum(np.exp(np.ones(3)), 0))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _named(node.func, "log") or not node.args:
            return
        total = node.args[0].value
        if not isinstance(total, cst.Call) or not _named(total.func, "sum") or not total.args:
            return
        exp = total.args[0].value
        if not isinstance(exp, cst.Call) or not _named(exp.func, "exp"):
            return
        dim = _argument(total, "dim", 1)
        if dim is None or isinstance(dim.value, cst.Name) and dim.value.value == "None":
            return
        if not (self.ctx.qualname(node.func) == "torch.log" and self.ctx.qualname(total.func) == "torch.sum"
                and self.ctx.qualname(exp.func) == "torch.exp"):
            return
        x = exp.args[0].value if exp.args else "x"
        self.report(node, evidence=self.ctx.origin(node.func, "torch.log"), fix=self._fix(node, total, exp),
                    x=x, dim=dim.value, call=node)

    def _fix(self, log: cst.Call, total: cst.Call, exp: cst.Call) -> Fix:
        advice = Fix(Applicability.DISPLAY_ONLY, "Call `torch.logsumexp(x, dim)`", ())
        if len(log.args) != 1 or len(exp.args) != 1 or any(arg.star for call in (log, total, exp) for arg in call.args):
            return advice
        if exp.args[0].keyword is not None and exp.args[0].keyword.value != "input":
            return advice
        positional = [arg for arg in total.args if arg.keyword is None]
        if len(positional) > len(_SUM_ARGUMENTS) or any(
                arg.keyword is not None and arg.keyword.value not in _SUM_ARGUMENTS for arg in total.args):
            return advice
        torch, imports = edits.torch_name(self.ctx)
        # torch.sum's own arguments after its input, as they are written, and its `)`.
        rest = edits.call_text(self.ctx, total, lambda arg: arg is total.args[0])
        arguments = rest[self.ctx.span(total.args[0])[0] - self.ctx.span(total)[0]:]
        text = f"{torch}.logsumexp({self.ctx.code(exp.args[0].value)}, {arguments}"
        return Fix(Applicability.UNSAFE, "Call `torch.logsumexp`", (edits.replace(log, text), *imports))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a precision rule; the run does not compare the result with "
                                       "`torch.logsumexp`")


def _named(func: cst.BaseExpression, name: str) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value == name or isinstance(func, cst.Name) and \
        func.value == name
