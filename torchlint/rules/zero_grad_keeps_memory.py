"""TL514 zero-grad-keeps-memory: ``optimizer.zero_grad(set_to_none=False)`` (TorchFix's
TOR402)."""

from typing import Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, edits,
)


def _set_to_none(call: cst.Call) -> Optional[cst.Arg]:
    """``set_to_none`` by keyword or as the first positional argument."""
    for index, arg in enumerate(call.args):
        if arg.keyword is None:
            if not arg.star and not any(a.keyword is None for a in call.args[:index]):
                return arg
        elif arg.keyword.value == "set_to_none":
            return arg
    return None


class ZeroGradKeepsMemory(Rule):
    code = "TL514"
    name = "zero-grad-keeps-memory"
    summary = "`zero_grad(set_to_none=False)`: fills every gradient with zeros instead of freeing it"
    message = "`{call}` writes zeros into every gradient: `set_to_none=True` (the default since PyTorch 2.0) frees them"
    fix = Applicability.UNSAFE
    since = "2.0"
    torchfix = ("TOR402",)
    default_enabled = False
    requires = (r"zero_grad",)
    references = (
        ("torch.optim.Optimizer.zero_grad", "https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html"),
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags a call of a `zero_grad` method (an optimizer's or a module's; any receiver,
    as in TorchFix) that passes `set_to_none=False`, by keyword or as its first
    positional argument. TorchFix's TOR402, the static form of PyTorch profiler's
    `GradNotSetToNonePattern`. Off by default, as in TorchFix; enable it with
    `--select TL514` (or `TOR402`).

    ## Why is this bad?
    `set_to_none=False` keeps every `.grad` tensor allocated and launches a kernel per
    parameter to fill it with zeros; the next backward then adds into them. With
    `set_to_none=True` the gradients are freed (memory is returned until backward) and
    backward writes them afresh, with no zeroing and no read-add. PyTorch made `True`
    the default in 2.0.

    ## What to do instead
    `optimizer.zero_grad()` (PyTorch 2.0 and later), or `zero_grad(set_to_none=True)`.

    ## Fix (unsafe)
    `False` becomes `True`. Unsafe: code that reads `.grad` between `zero_grad` and
    the next backward (logging gradient norms, a parameter that gets no gradient in
    some steps and is then stepped by an optimizer) now sees `None` instead of zeros,
    and optimizers skip a parameter whose `.grad` is `None`, which changes what
    momentum and weight decay do to it.

    References: TorchFix TOR402;
    [torch.optim.Optimizer.zero_grad](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html);
    `torch.profiler._pattern_matcher.GradNotSetToNonePattern`.
    """
    bad = (
        Bad(
            """
            import torch

            model = torch.nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.zero_grad(set_to_none=False)
            model.zero_grad(False)
            """,
            reported=((5, "optimizer.zero_grad(set_to_none=False)"), (6, "model.zero_grad(False)")),
            fixed="""
            import torch

            model = torch.nn.Linear(4, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            optimizer.zero_grad(set_to_none=True)
            model.zero_grad(True)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer.zero_grad()
        model.zero_grad(set_to_none=True)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called != "zero_grad":
            return
        argument = _set_to_none(node)
        if argument is None or not (isinstance(argument.value, cst.Name) and argument.value.value == "False"):
            return
        fix = Fix(Applicability.UNSAFE, "Pass `set_to_none=True`", (edits.replace(argument.value, "True"),))
        self.report(node, fix=fix, call=node)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a performance rule; zeroed and freed gradients give the same "
                                       "next step for the usual loop")
