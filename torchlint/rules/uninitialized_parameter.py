"""TL412 uninitialized-parameter: a parameter or buffer made with ``torch.empty`` that nothing fills."""

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, uninitialized,
    uninitialized_read,
)


class UninitializedParameter(Rule):
    code = "TL412"
    name = "uninitialized-parameter"
    summary = ("a parameter or buffer allocated with `torch.empty` that nothing in the file initializes: it holds "
               "whatever was in memory")
    message = (
        "the {kind} `{holder}` is allocated with `{allocation}` and nothing in this file fills it (no `nn.init` "
        "call, in-place write or load of every key): it holds whatever was in memory, garbage or NaN that differs "
        "from run to run; initialize it (`nn.init.kaiming_uniform_`, `.zero_()` in a `reset_parameters`) or "
        "allocate it with `torch.zeros`"
    )
    fix = Applicability.UNSAFE
    requires = (r"\bempty", r"Parameter|register_buffer|requires_grad")
    references = (
        ("torch.empty: uninitialized data", "https://pytorch.org/docs/stable/generated/torch.empty.html"),
        ("torch.nn.init", "https://pytorch.org/docs/stable/nn.init.html"),
        ("torch.nn.Module.register_buffer",
         "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer"),
    )
    docs = """
    ## What it does
    Flags `torch.empty(..)` kept as a parameter (`self.w = nn.Parameter(torch.empty(..))`,
    `register_parameter`, or a weight trained by hand, `W = torch.empty(784, 10,
    requires_grad=True)`) or a buffer (`register_buffer("n", torch.empty(..))`) that is read
    somewhere and that nothing in the file may write: no `nn.init.*_` call or other function
    given it, no in-place method on it (also through `.data`), no indexed, augmented or second
    assignment, no loop over the module's parameters or buffers that writes, no
    `module.apply(fn)`, and no `load_state_dict` that loads every key (`strict=False` may
    leave it out). The allocation is the finding; the evidence shows where it is read.

    ## Why is this bad?
    `torch.empty` does not initialize memory: the values are whatever the allocator handed
    back, zeros on one run, huge numbers or NaN on another. A parameter made from it trains
    from garbage (or NaN from the first step); a buffer such as a scale or zero point makes
    every output wrong. torch's own layers fill theirs in `reset_parameters`; a module
    written by hand that copied the `torch.empty` and not the initialization does not.

    ## What to do instead
    Initialize it where the module is built (a `reset_parameters` method called from
    `__init__`, with `nn.init.kaiming_uniform_`, `nn.init.zeros_`, ...), or allocate it with
    `torch.zeros`/`torch.ones` when a constant start is meant.

    ## Fix (unsafe)
    Replaces `torch.empty` with `torch.zeros`. Unsafe: zeros are a defined start, but not
    always a good one (a weight of zeros makes the units of a layer identical); the author may
    want a random initialization instead.
    """
    bad = (
        Bad(
            """
            import torch
            from torch import nn

            class Scale(nn.Module):
                def __init__(self, features):
                    super().__init__()
                    self.gain = nn.Parameter(torch.empty(features))

                def forward(self, x):
                    return x * self.gain
            """,
            reported=((7, "torch.empty(features)"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            class Scale(nn.Module):
                def __init__(self, features):
                    super().__init__()
                    self.gain = nn.Parameter(torch.zeros(features))

                def forward(self, x):
                    return x * self.gain
            """,
        ),
    )
    good = (
        """
        import torch
        from torch import nn

        class Scale(nn.Module):
            def __init__(self, features):
                super().__init__()
                self.gain = nn.Parameter(torch.empty(features))
                self.register_buffer("offset", torch.empty(features))
                self.reset_parameters()

            def reset_parameters(self):
                nn.init.ones_(self.gain)
                self.offset.zero_()

            def forward(self, x):
                return x * self.gain + self.offset
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in uninitialized(self.ctx.analysis):
            allocation = found.allocation
            fix = None
            func = allocation.func
            if isinstance(func, cst.Attribute) and func.attr.value == "empty":
                fix = Fix(Applicability.UNSAFE, "Allocate it with `torch.zeros`",
                          (edits.replace(func.attr, "zeros"),))
            self.report(allocation, kind=found.kind, holder=found.holder, allocation=allocation, fix=fix,
                        related=((found.read, f"`{found.holder}` is read here"),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return uninitialized_read(run, "this allocation") or Verdict(
            NOT_REPRODUCED, "the allocation was not seen, or its dtype cannot hold the sentinel")
