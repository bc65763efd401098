"""TL209 implicit-softmax-dim: ``F.softmax(x)``, ``nn.LogSoftmax()`` without ``dim``: torch
guesses the dimension from the input's number of dimensions, and warns."""

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Kind, Observation, Rule, Verdict, called_name, cst, edits, torch_api,
)

_NAMES = frozenset(qualname.rsplit(".", 1)[1] for qualname in torch_api.IMPLICIT_DIM_SOFTMAX)


class ImplicitSoftmaxDim(Rule):
    code = "TL209"
    name = "implicit-softmax-dim"
    summary = ("`F.softmax(x)`, `nn.Softmax()` without `dim`: deprecated since PyTorch 0.3; torch guesses the "
               "dimension and warns")
    message = ("`{call}` without `dim` is deprecated since PyTorch 0.3: torch picks dim 0 for 0-, 1- and "
               "3-dimensional inputs and 1 otherwise, and warns; pass `dim=`")
    fix = Applicability.SAFE
    since = "0.3"
    requires = (r"oft(?:max|min)",)  # softmax, LogSoftmax, Softmin...
    references = (
        ("torch.nn.functional.softmax", "https://pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html"),
    )
    docs = """
    ## What it does
    Flags `F.softmax`, `F.log_softmax` and `F.softmin` called without `dim` (or with
    `dim=None`), and the modules `nn.Softmax`, `nn.LogSoftmax` and `nn.Softmin` built
    without it, resolved through the file's imports (`from torch.nn import functional
    as F`; a project's own `softmax` is not torch's).

    ## Why is this bad?
    Which dimension is normalized depends on the input: torch's `_get_softmax_dim`
    picks 0 for 0-, 1- and 3-dimensional inputs and 1 for every other, and warns
    `Implicit dimension choice for softmax has been deprecated` on every call. A
    `(batch, classes)` score gets the classes normalized, but the same layer given
    a `(time, batch, classes)` sequence, or a single unbatched 3-D image, normalizes
    across the batch or the channels instead, silently. PyTorch 0.3 deprecated the
    implicit choice.

    ## What to do instead
    Say which dimension: `F.softmax(scores, dim=1)`, `nn.LogSoftmax(dim=-1)`.

    ## Fix
    Safe where the input is known to have at most one dimension (torch picks `dim=0`
    there, so `dim=0` changes nothing). Where the input may have 3 dimensions or more
    (`torch.randn(4, 2, 3)`), none: which dimension holds the classes is for the author
    to say. Elsewhere the fix adds `dim=1`, torch's choice for the usual 2- and
    4-dimensional inputs, and is unsafe: for a 3-dimensional input torch picks 0.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            classify = nn.Sequential(nn.Linear(8, 3), nn.LogSoftmax())
            weights = F.softmax(torch.zeros(5))

            def probabilities(scores):
                return F.softmax(scores)
            """,
            reported=((5, "nn.LogSoftmax()"), (6, "F.softmax(torch.zeros(5))"), (9, "F.softmax(scores)")),
            fixed="""
            import torch
            import torch.nn as nn
            import torch.nn.functional as F

            classify = nn.Sequential(nn.Linear(8, 3), nn.LogSoftmax())
            weights = F.softmax(torch.zeros(5), dim=0)

            def probabilities(scores):
                return F.softmax(scores)
            """,
        ),
    )
    good = (
        """
        import torch.nn as nn
        import torch.nn.functional as F

        head = nn.LogSoftmax(dim=1)
        attention = nn.Softmax(-1)

        def probabilities(scores):
            return F.softmax(scores, dim=-1), F.log_softmax(scores, 1), scores.softmax(-1)
        """,
        """
        import numpy as np

        def softmax(x):
            e = np.exp(x - x.max())
            return e / e.sum()

        probabilities = softmax(np.arange(3.0))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called not in _NAMES:
            return
        qualname = self.ctx.qualname(func)
        position = torch_api.IMPLICIT_DIM_SOFTMAX.get(qualname or "")
        if position is None or any(arg.star for arg in node.args):
            return
        dim = _dim_argument(node, position)
        if dim is not None and not (isinstance(dim.value, cst.Name) and dim.value.value == "None"):
            return
        self.report(node, evidence=self.ctx.origin(func, qualname), fix=self._fix(node, position, dim),
                    call=self.ctx.snippet(node))

    def _fix(self, call: cst.Call, position: int, given: Optional[cst.Arg]) -> Fix:
        dims = None
        if position == 1:
            arguments = [arg for arg in call.args if arg.keyword is None]
            received = arguments[0].value if arguments else next(
                (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "input"), None)
            value = self.ctx.inference.tensor(received) if received is not None else None
            dims = value.dims_at_most if value is not None and value.kind is Kind.TENSOR else None
            if value is not None and value.scalar:
                dims = 0
        dropped = (lambda arg: arg is given) if given is not None else (lambda arg: False)
        if dims is not None and dims <= 1:
            rewritten = edits.call_text(self.ctx, call, dropped, "dim=0")
            return Fix(Applicability.SAFE, "Pass `dim=0` (what torch picks for this input)",
                       (edits.replace(call, rewritten),))
        if dims is not None and dims >= 3:
            # torch picks 0 for a 3-dimensional input, 1 for a 4-dimensional one: which one
            # holds the classes is for the author to say.
            return Fix(Applicability.DISPLAY_ONLY, "Pass the dimension that holds the classes (`dim=-1`?)", ())
        rewritten = edits.call_text(self.ctx, call, dropped, "dim=1")
        return Fix(Applicability.UNSAFE, "Pass `dim=1` (torch's choice for 2- and 4-dimensional inputs; "
                                         "it picks 0 for 3-dimensional ones)", (edits.replace(call, rewritten),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or(
            "Implicit dimension choice",
            "torch gave no implicit-dimension warning on this line (a module built "
            "without `dim` warns where it is called, not where it is built)",
        )


def _dim_argument(call: cst.Call, position: int) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dim":
            return arg
    positional = [arg for arg in call.args if arg.keyword is None]
    return positional[position] if position < len(positional) else None
