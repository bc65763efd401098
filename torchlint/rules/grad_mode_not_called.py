"""TL405 grad-mode-not-called: ``with torch.no_grad:`` without the call, a TypeError."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, torch_api,
)


class GradModeNotCalled(Rule):
    code = "TL405"
    name = "grad-mode-not-called"
    summary = "`with torch.no_grad:` without the call: TypeError, the block never runs"
    message = "`{manager}` is a class, not a context manager: `with {manager}:` raises TypeError; call it: `{fixed}`"
    fix = Applicability.SAFE
    requires = (r"(?:no_grad|enable_grad|inference_mode|set_grad_enabled)\s*:",)
    references = (
        ("torch.no_grad", "https://pytorch.org/docs/stable/generated/torch.no_grad.html"),
        ("Locally disabling gradient computation", "https://pytorch.org/docs/stable/notes/autograd.html"
                                                   "#locally-disabling-gradient-computation"),
    )
    docs = """
    ## What it does
    Flags `with torch.no_grad:` (and `torch.enable_grad`, `torch.inference_mode`,
    `torch.set_grad_enabled`, under any name they were imported as) where the class is
    given to `with` without being called.

    ## Why is this bad?
    `torch.no_grad` is a class: its instances are the context managers. `with
    torch.no_grad:` asks the class itself for `__enter__`, which it does not have, and
    raises `TypeError: 'type' object does not support the context manager protocol`
    before the block runs. An evaluation loop written this way never runs; one
    protected by a broad `except` skips its body in silence. (As a decorator, a bare
    `@torch.no_grad` works since PyTorch 2.0; only `with` needs the call.)

    ## What to do instead
    Call it: `with torch.no_grad():`.

    ## Fix (safe)
    `()` is added after the name; `torch.set_grad_enabled` needs its flag, so it only
    gets the advice.
    """
    bad = (
        Bad(
            """
            import torch

            def evaluate(model, batch):
                with torch.no_grad:
                    return model(batch)
            """,
            reported=((4, "torch.no_grad"),),
            fixed="""
            import torch

            def evaluate(model, batch):
                with torch.no_grad():
                    return model(batch)
            """,
        ),
    )
    good = (
        """
        import torch
        from torch import no_grad

        @torch.no_grad
        def evaluate(model, batch):
            with torch.no_grad(), no_grad():
                return model(batch)
        """,
    )

    def visit_WithItem(self, node: cst.WithItem) -> None:
        manager = node.item
        if isinstance(manager, cst.Call):
            return
        qualname = self.ctx.qualname(manager)
        if qualname not in torch_api.GRAD_MODE_CONTEXTS:
            return
        called = f"{self.ctx.code(manager)}()"
        if qualname.endswith("set_grad_enabled"):
            fix = Fix(Applicability.DISPLAY_ONLY, f"Call it with the mode: `{self.ctx.code(manager)}(False)`", ())
            called = f"{self.ctx.code(manager)}(False)"
        else:
            fix = Fix(Applicability.SAFE, f"Call it: `{called}`", (edits.replace(manager, called),))
        self.report(manager, evidence=self.ctx.origin(manager, qualname), fix=fix, manager=manager, fixed=called)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "TypeError" and "context manager" in raised["message"]:
            return Verdict(CONFIRMED, f"TypeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "the `with` statement ran: this name was a context manager here")
