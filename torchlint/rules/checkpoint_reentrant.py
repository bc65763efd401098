"""TL506 checkpoint-reentrant: ``torch.utils.checkpoint.checkpoint(fn, x)`` without
``use_reentrant=`` (TorchFix's TOR003)."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, edits,
    torch_api,
)

_CALLED = frozenset(torch_api.CHECKPOINT_FUNCTIONS.values())


class CheckpointReentrant(Rule):
    code = "TL506"
    name = "checkpoint-reentrant"
    summary = "`torch.utils.checkpoint.checkpoint(..)` without `use_reentrant=`: it warns, and the default will change"
    message = "pass `use_reentrant=` to `{function}` explicitly (`use_reentrant=False` is recommended)"
    fix = Applicability.UNSAFE
    since = "2.1"
    torchfix = ("TOR003",)
    requires = (r"checkpoint",)
    references = (
        ("torch.utils.checkpoint", "https://pytorch.org/docs/stable/checkpoint.html"),
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags calls of `torch.utils.checkpoint.checkpoint` and
    `torch.utils.checkpoint.checkpoint_sequential` that do not pass `use_reentrant=`,
    the name resolved through the file's imports (`from torch.utils.checkpoint import
    checkpoint`, `import torch.utils.checkpoint as cp`). A call with `**kwargs` is left
    alone: they may hold it. TorchFix's TOR003 (which flags `checkpoint` only).

    ## Why is this bad?
    Activation checkpointing has two implementations. The old, reentrant one
    (`use_reentrant=True`, still the default) does not record the autograd graph of
    the checkpointed function: it needs at least one input that requires grad (else the
    output has no gradient at all, with only a warning), it does not support
    `torch.autograd.grad`, keyword arguments or inputs whose gradients are not needed,
    and it drops gradients of tensors the function reaches other than through its
    inputs. The non-reentrant one (`use_reentrant=False`) has none of these limits.
    Since PyTorch 2.1 a call that does not choose warns on every call (`the
    use_reentrant parameter should be passed explicitly`), and PyTorch said it would
    make the choice mandatory.

    ## What to do instead
    Pass `use_reentrant=False` (recommended), or `use_reentrant=True` to keep the old
    behaviour on purpose.

    ## Fix (unsafe)
    Adds `use_reentrant=False`. Gradients come out the same for the usual code, but the
    two implementations differ in corner cases (see above, and the `torch.utils.checkpoint`
    docs), so the fix has to be tested, hence unsafe.

    References: TorchFix TOR003;
    [torch.utils.checkpoint](https://pytorch.org/docs/stable/checkpoint.html).
    """
    bad = (
        Bad(
            """
            import torch
            from torch.utils.checkpoint import checkpoint

            layer = torch.nn.Linear(8, 8)
            x = torch.randn(2, 8, requires_grad=True)
            y = checkpoint(layer, x)
            """,
            reported=((6, "checkpoint(layer, x)"),),
            fixed="""
            import torch
            from torch.utils.checkpoint import checkpoint

            layer = torch.nn.Linear(8, 8)
            x = torch.randn(2, 8, requires_grad=True)
            y = checkpoint(layer, x, use_reentrant=False)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch
        import torch.utils.checkpoint as cp

        layer = torch.nn.Linear(8, 8)
        x = torch.randn(2, 8, requires_grad=True)
        y = cp.checkpoint(layer, x, use_reentrant=False)
        z = cp.checkpoint_sequential([layer, layer], 2, x, use_reentrant=True)
        """,
        """
        def checkpoint(model, path):
            print("saving", model, "to", path)

        checkpoint("net", "/tmp/net.pt")
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called not in _CALLED:
            return
        if any(arg.keyword is not None and arg.keyword.value == "use_reentrant" for arg in node.args) \
                or any(arg.star == "**" for arg in node.args):
            return
        qualname = self.ctx.qualname(func)
        function = torch_api.CHECKPOINT_FUNCTIONS.get(qualname or "")
        if function is None:
            return
        fix = Fix(Applicability.UNSAFE, "Pass `use_reentrant=False`",
                  (edits.replace(node, edits.call_text(self.ctx, node, added="use_reentrant=False")),))
        self.report(node, evidence=self.ctx.origin(func, qualname), fix=fix, function=function)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        confirmed = run.warned("use_reentrant")
        if confirmed is not None:
            return confirmed
        raised = run.raised
        if raised is not None and "use_reentrant" in raised["message"]:
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "torch gave no `use_reentrant` warning here")
