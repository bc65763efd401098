"""TL202 volatile: ``Variable(x, volatile=True)`` and ``x.volatile``, ignored since PyTorch 0.4."""

import libcst as cst

from torchlint import torch_api
from torchlint.rule import Rule
from torchlint.writes import is_store_target


class Volatile(Rule):
    code = "TL202"
    name = "volatile"
    summary = "`volatile=True` is silently ignored since PyTorch 0.4: the graph is built and memory grows"
    message = (
        "`volatile=` has had no effect since PyTorch 0.4: the graph is still built and kept in "
        "memory; run the code under `with torch.no_grad():` instead"
    )
    docs = """
    ## What it does
    Flags the `volatile` argument of `torch.autograd.Variable(...)`, and reads or
    writes of the `.volatile` attribute of a tensor.

    ## Why is this bad?
    `volatile=True` used to switch off graph building for inference. PyTorch 0.4
    removed it: the argument is accepted and ignored (with a `UserWarning: volatile
    was removed and now has no effect`), so evaluation code that relied on it now
    builds the whole autograd graph, keeps every intermediate activation alive and
    runs out of memory on large inputs. `x.volatile` is always `False`.

    ## What to do instead
    Run inference under `with torch.no_grad():` (or `torch.inference_mode()`), and
    test `torch.is_grad_enabled()` instead of `.volatile`.
    """
    bad = (
        """
        import torch
        from torch.autograd import Variable

        def evaluate(model, images):
            return model(Variable(images, volatile=True))
        """,
    )
    good = (
        """
        import torch

        def evaluate(model, images):
            with torch.no_grad():
                return model(images)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) != torch_api.VARIABLE:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "volatile":
                self.report(arg, evidence=self.ctx.origin(node.func, torch_api.VARIABLE))
                return

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "volatile":
            return
        evidence = self.ctx.tensor(node.value)
        if evidence is None:
            return
        if is_store_target(self.ctx, node):
            message = "Setting `{base}.volatile` has had no effect since PyTorch 0.4; use `with torch.no_grad():`"
        else:
            message = (
                "`{base}.volatile` is always False since PyTorch 0.4; "
                "use `torch.is_grad_enabled()` or `{base}.requires_grad`"
            )
        self.report(node, message, evidence=evidence, base=node.value)
