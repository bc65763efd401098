"""TL207 renamed-function: ``nn.init.xavier_uniform(w)``, ``clip_grad_norm``, ``F.upsample``:
functions torch renamed, which still run and warn on every call."""

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, edits, torch_api,
)


_OLD_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in torch_api.RENAMED_FUNCTIONS)


class RenamedFunction(Rule):
    code = "TL207"
    name = "renamed-function"
    summary = ("`nn.init.xavier_uniform`, `clip_grad_norm`, `F.upsample`...: renamed in PyTorch 0.4, they warn "
               "on every call")
    message = "`{old}` is deprecated since PyTorch {since}, renamed `{new}`; it warns on every call"
    fix = Applicability.SAFE
    since = "0.4.1"
    requires = (r"\binit\b|clip_grad_norm\b|upsample|NLLLoss2d",)
    references = (
        ("torch.nn.init", "https://pytorch.org/docs/stable/nn.init.html"),
        ("torch.nn.functional.interpolate", "https://pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html"),
    )
    docs = """
    ## What it does
    Flags calls of the functions PyTorch renamed but kept, with a warning, for old code:
    the `torch.nn.init` functions without their trailing underscore (`xavier_uniform`,
    `kaiming_normal`, `normal`, `constant`, `orthogonal`... renamed with `_` in 0.4,
    because they fill the tensor in place), `torch.nn.utils.clip_grad_norm`
    (`clip_grad_norm_`, 0.4, also from `torch.nn.utils.clip_grad`), `nn.NLLLoss2d`
    (`nn.NLLLoss`, which takes 2-D inputs and the same arguments, 0.4), and `F.upsample`,
    `F.upsample_bilinear` and `F.upsample_nearest` (`F.interpolate`, 0.4.1). The name is resolved through the
    file's imports: `from torch.nn import init` then `init.xavier_uniform(..)` is found,
    a function of the project's own called `normal` is not.

    ## Why is this bad?
    Each call prints a `FutureWarning` or `UserWarning` (a weight-init loop over every
    layer, a clipping call every step: the log fills up and hides the warnings that
    matter), and the old names are on their way out.

    ## What to do instead
    Call the new name. `F.upsample_bilinear(x, size)` is
    `F.interpolate(x, size, mode="bilinear", align_corners=True)` and
    `F.upsample_nearest(x, size)` is `F.interpolate(x, size, mode="nearest")`, exactly
    as torch implements the old names.

    ## Fix (safe)
    The attribute is renamed (`init.xavier_uniform(` becomes `init.xavier_uniform_(`),
    and for the two `upsample_*` functions the mode arguments are added. The signatures
    are the same, so nothing else changes. A function imported by its old name (`from
    torch.nn.init import xavier_uniform`) gets no automatic fix: the import would have to
    change too.
    """
    bad = (
        Bad(
            """
            import torch.nn as nn
            import torch.nn.functional as F

            def init_weights(m):
                if isinstance(m, nn.Conv2d):
                    nn.init.xavier_uniform(m.weight)

            def upscale(x):
                return F.upsample_bilinear(x, scale_factor=2)
            """,
            reported=((6, "nn.init.xavier_uniform(m.weight)"), (9, "F.upsample_bilinear(x, scale_factor=2)")),
            fixed="""
            import torch.nn as nn
            import torch.nn.functional as F

            def init_weights(m):
                if isinstance(m, nn.Conv2d):
                    nn.init.xavier_uniform_(m.weight)

            def upscale(x):
                return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
            """,
        ),
    )
    good = (
        """
        import torch.nn as nn
        import torch.nn.functional as F

        def init_weights(m):
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

        def upscale(x):
            return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
        """,
        """
        import numpy as np

        def normal(mean, std):
            return np.random.normal(mean, std)

        def upsample(image):
            return image.repeat(2, axis=0)

        noise = normal(0.0, 1.0)
        bigger = upsample(np.ones((2, 2)))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called not in _OLD_NAMES:
            return  # most calls: no need to resolve the name
        qualname = self.ctx.qualname(node.func)
        renamed = torch_api.RENAMED_FUNCTIONS.get(qualname or "")
        if renamed is None:
            return
        new, since, keywords = renamed
        self.report(node, evidence=self.ctx.origin(node.func, qualname), fix=self._fix(node, new, keywords),
                    old=node.func, new=new, since=since, holds_from=since)

    def _fix(self, call: cst.Call, new: str, keywords: tuple[tuple[str, str], ...]) -> Fix:
        if not isinstance(call.func, cst.Attribute):
            return Fix(Applicability.DISPLAY_ONLY, f"Call `{new}` (and import it instead)", ())
        given = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if any(arg.star for arg in call.args) or any(name in given for name, _ in keywords):
            return Fix(Applicability.DISPLAY_ONLY, f"Call `{new}`", ())
        if not keywords:
            return Fix(Applicability.SAFE, f"Call `{new}`", (edits.replace(call.func.attr, new),))
        # `F.upsample_bilinear(x, 2)` -> `F.interpolate(x, 2, mode="bilinear", align_corners=True)`
        added = ", ".join(f"{name}={value}" for name, value in keywords)
        rewritten = edits.call_text(self.ctx, call, added=added)
        start = self.ctx.span(call)[0]
        name_start, name_end = self.ctx.span(call.func.attr)
        rewritten = rewritten[:name_start - start] + new + rewritten[name_end - start:]
        return Fix(Applicability.SAFE, f"Call `{new}` with `{added}`", (edits.replace(call, rewritten),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or("deprecated", "torch gave no deprecation warning here")
