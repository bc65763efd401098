"""TL208 legacy-reduction: ``nn.MSELoss(size_average=False)``, ``F.nll_loss(.., reduce=False)``."""

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, torch_api,
)

_LEGACY = ("size_average", "reduce")
_CONSTANTS = {"True": True, "False": False, "None": None}


class LegacyReduction(Rule):
    code = "TL208"
    name = "legacy-reduction"
    summary = "`size_average=`/`reduce=` of a loss: deprecated since PyTorch 0.4.1 for `reduction=`; it warns"
    message = "the `{arg}` argument of `{loss}` is deprecated since PyTorch 0.4.1; use `reduction={reduction}`"
    fix = Applicability.SAFE
    since = "0.4.1"
    requires = (r"size_average|reduce\s*=|elementwise_mean",)
    references = (
        ("torch.nn.CrossEntropyLoss (reduction)", "https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html"),
    )
    docs = """
    ## What it does
    Flags `size_average` and `reduce` passed to a torch loss, by keyword or by
    position: a criterion class (`nn.MSELoss(size_average=False)`,
    `nn.NLLLoss2d(weight, False)`) or a functional loss (`F.nll_loss(out, y,
    reduce=False)`), resolved through the file's imports; and
    `reduction='elementwise_mean'`, 0.4.1's name for `'mean'`, which 1.0 renamed and
    which warns too.

    ## Why is this bad?
    PyTorch 0.4.1 replaced the pair with one argument, `reduction=`; the old ones
    still work but warn (`size_average and reduce args will be deprecated, please use
    reduction='sum' instead`), once per criterion built and on every call of a
    functional loss, and the pair is easy to misread (`size_average=False` sums,
    `reduce=False` wins over it and gives one loss per element).

    ## What to do instead
    Pass `reduction=` with the value torch computes from the pair: `'mean'` when both
    are true or absent, `'sum'` when only `size_average` is false, `'none'` when
    `reduce` is false (whatever `size_average` says).

    ## Fix (safe)
    Where both are literals (`True`, `False`, `None`) or absent and passed by keyword,
    they are replaced by `reduction=` with exactly that value. A computed value, a
    value passed by position, or a call that passes `reduction=` as well, gets the
    advice without an automatic fix. `'elementwise_mean'` becomes `'mean'`.
    """
    bad = (
        Bad(
            """
            import torch.nn as nn
            import torch.nn.functional as F

            criterion = nn.MSELoss(size_average=False)

            def per_sample(logits, target):
                return F.nll_loss(logits, target, reduce=False)
            """,
            reported=((4, "size_average=False"), (7, "reduce=False")),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F

            criterion = nn.MSELoss(reduction="sum")

            def per_sample(logits, target):
                return F.nll_loss(logits, target, reduction="none")
            """,
        ),
        Bad(
            """
            import torch.nn as nn

            criterion = nn.L1Loss(reduction='elementwise_mean')
            """,
            reported=((3, "reduction='elementwise_mean'"),),
            fixed="""
            import torch.nn as nn

            criterion = nn.L1Loss(reduction='mean')
            """,
        ),
    )
    good = (
        """
        import torch.nn as nn
        import torch.nn.functional as F

        criterion = nn.MSELoss(reduction="sum")

        def per_sample(logits, target):
            return F.nll_loss(logits, target, reduction="none")
        """,
        """
        from functools import reduce

        def total(values, size_average=True):
            return reduce(lambda a, b: a + b, values) / (len(values) if size_average else 1)

        print(total([1, 2, 3], size_average=False))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        renamed = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == "reduction"
                        and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "elementwise_mean"),
                       None)
        if renamed is not None:
            self._elementwise_mean(node, renamed)
        legacy = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value in _LEGACY]
        positional = [arg for arg in node.args if arg.keyword is None]
        if not legacy and (not positional or any(arg.star for arg in node.args)):
            return
        qualname = self.ctx.qualname(node.func)
        positions = None
        if not legacy:
            positions = torch_api.LEGACY_REDUCTION_POSITIONS.get(qualname or "")
            if positions is None or len(positional) <= positions[0]:
                return
            # `nn.NLLLoss2d(weight, size_average, ignore_index)`: by position.
            legacy = [positional[index] for index in positions if index is not None and index < len(positional)]
        if not self._is_loss(qualname):
            return
        names = [arg.keyword.value if arg.keyword is not None else _LEGACY[i] for i, arg in enumerate(legacy)]
        reduction = _reduction(legacy, names)
        shown = f'"{reduction}"' if reduction is not None else "'mean'|'sum'|'none'"
        fix = self._fix(node, legacy, reduction) if positions is None else \
            Fix(Applicability.DISPLAY_ONLY, f"Pass `reduction={shown}` by keyword instead of `size_average`/`reduce` "
                                            f"by position", ())
        self.report(legacy[0], evidence=self.ctx.origin(node.func, qualname), fix=fix,
                    arg=names[0], loss=qualname.rsplit(".", 1)[1], reduction=shown)

    def _elementwise_mean(self, call: cst.Call, argument: cst.Arg) -> None:
        """`reduction='elementwise_mean'`, 0.4.1's name for what 1.0 calls `'mean'`."""
        qualname = self.ctx.qualname(call.func)
        if not self._is_loss(qualname):
            return
        written = self.ctx.code(argument.value)
        quote = written[0] if written[:1] in ("'", '"') else '"'
        fix = Fix(Applicability.SAFE, "Replace with `'mean'`", (edits.replace(argument.value, f"{quote}mean{quote}"),))
        self.report(argument, f"`reduction='elementwise_mean'` of `{qualname.rsplit('.', 1)[1]}` was renamed "
                              f"`'mean'` in PyTorch 1.0; it warns", evidence=self.ctx.origin(call.func, qualname), fix=fix)

    @staticmethod
    def _is_loss(qualname: Optional[str]) -> bool:
        return qualname is not None and (torch_api.is_loss_module_class(qualname) or (
            qualname.startswith("torch.nn.functional.") and qualname.rsplit(".", 1)[1] in torch_api.LOSS_FUNCTIONS))

    def _fix(self, call: cst.Call, legacy: list[cst.Arg], reduction: Optional[str]) -> Fix:
        if reduction is None or any(arg.keyword is not None and arg.keyword.value == "reduction" for arg in call.args) \
                or any(arg.star for arg in call.args):
            return Fix(Applicability.DISPLAY_ONLY, "Replace `size_average=`/`reduce=` with `reduction=`", ())
        replacement = f'reduction="{reduction}"'
        rewritten = edits.call_text(self.ctx, call, lambda arg: any(arg is old for old in legacy), replacement)
        return Fix(Applicability.SAFE, f"Replace with `{replacement}`", (edits.replace(call, rewritten),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned("elementwise_mean") or run.warned_or(
            "size_average and reduce", "torch gave no `size_average`/`reduce`/`elementwise_mean` warning here (a "
                                       "loss module built with `'elementwise_mean'` warns where it is called)")


def _reduction(legacy: list[cst.Arg], names: list[str]) -> Optional[str]:
    """The `reduction` torch computes from the legacy pair (`_Reduction.legacy_get_string`),
    when each is a literal; None when one is computed."""
    values: dict[str, Optional[bool]] = {"size_average": None, "reduce": None}
    for arg, name in zip(legacy, names):
        value = arg.value
        if not isinstance(value, cst.Name) or value.value not in _CONSTANTS:
            return None
        values[name] = _CONSTANTS[value.value]
    size_average = True if values["size_average"] is None else values["size_average"]
    reduce = True if values["reduce"] is None else values["reduce"]
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"
