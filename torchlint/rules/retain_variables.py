"""TL206 retain-variables: ``loss.backward(retain_variables=True)``, a TypeError since PyTorch 0.4."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits, torch_api,
)

_OLD, _NEW = "retain_variables", "retain_graph"


class RetainVariables(Rule):
    code = "TL206"
    name = "retain-variables"
    summary = "`backward(retain_variables=...)` raises TypeError since PyTorch 0.4: the argument is `retain_graph`"
    message = (
        "`retain_variables=` was renamed `retain_graph=` in PyTorch 0.2 and removed in 0.4: this call "
        "raises TypeError; use `retain_graph=`"
    )
    fix = Applicability.SAFE
    since = "0.2"
    requires = (_OLD,)
    references = (
        ("torch.Tensor.backward", "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
    )
    docs = """
    ## What it does
    Flags the `retain_variables` argument of `x.backward(...)` and
    `torch.autograd.backward(...)`.

    ## Why is this bad?
    PyTorch 0.2 renamed the argument `retain_graph` (it keeps the graph's buffers
    after the backward pass, for a second one through the same graph) and 0.4 removed
    the old name: today the call raises `TypeError: backward() got an unexpected
    keyword argument 'retain_variables'`, so a 2017 GAN or style-transfer script stops
    at its first training step, and every later line of it is unreachable.

    ## What to do instead
    Pass `retain_graph=` with the same value.

    ## Fix (safe)
    The argument is renamed `retain_graph=`, its value kept. Where the call already
    passes `retain_graph=` too (which only ever raised), the fix is only shown.
    """
    bad = (
        Bad(
            """
            import torch

            def step(d_loss, g_loss):
                d_loss.backward(retain_variables=True)
                g_loss.backward()
            """,
            reported=((4, "retain_variables"),),
            fixed="""
            import torch

            def step(d_loss, g_loss):
                d_loss.backward(retain_graph=True)
                g_loss.backward()
            """,
        ),
    )
    good = (
        """
        import torch

        def step(d_loss, g_loss):
            d_loss.backward(retain_graph=True)
            g_loss.backward()
        """,
        """
        class Trainer:
            def backward(self, loss, retain_variables=False):
                return loss

        Trainer().backward(1.0, retain_variables=True)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        argument = next((arg for arg in node.args if arg.keyword is not None and arg.keyword.value == _OLD), None)
        if argument is None:
            return
        evidence = self._backward(node)
        if evidence is None:
            return
        self.report(argument.keyword, evidence=evidence, fix=self._fix(node, argument))

    def _backward(self, call: cst.Call) -> Optional[tuple[Step, ...]]:
        """Why ``call`` is torch's backward: ``torch.autograd.backward``, or the ``backward``
        method of a tensor (or, in a file that uses torch, of what only a tensor's
        ``backward`` would be called with ``retain_variables``)."""
        qualname = self.ctx.qualname(call.func)
        if qualname in torch_api.AUTOGRAD_BACKWARD_FUNCTIONS:
            return self.ctx.origin(call.func, qualname)
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "backward":
            return None
        value = self.ctx.tensor(func.value)
        if value is not None:
            return value.why
        known = self.ctx.infer(func.value)
        if known is not None or not self.ctx.inference.uses_torch:
            return None  # a class of the project's own, say, with a `backward` of its own
        return (Step(call, "`{code}`: `retain_variables=` is the keyword of torch's `backward()` before "
                           "PyTorch 0.4, and nothing says the receiver is anything but a tensor"),)

    def _fix(self, call: cst.Call, argument: cst.Arg) -> Fix:
        if any(arg.keyword is not None and arg.keyword.value == _NEW for arg in call.args):
            return Fix(Applicability.DISPLAY_ONLY, f"Remove `{_OLD}=`: the call passes `{_NEW}=` already", ())
        return Fix(Applicability.SAFE, f"Rename the argument `{_NEW}=`", (edits.replace(argument.keyword, _NEW),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "TypeError" and _OLD in raised["message"]:
            return Verdict(CONFIRMED, f"TypeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, f"the call did not raise: this `backward` took `{_OLD}=`")
