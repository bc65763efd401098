"""TL205 async-argument: ``x.cuda(async=True)``, a syntax error since Python 3.7."""

from torchlint.framework.api import (
    COULD_NOT_RUN, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits, torch_api,
)


class AsyncArgument(Rule):
    code = "TL205"
    name = "async-argument"
    summary = "`.cuda(async=True)` is a syntax error since Python 3.7: the whole file fails; use `non_blocking=True`"
    message = "`async=` is a syntax error since Python 3.7 (`async` is a keyword): use `non_blocking=`"
    fix = Applicability.SAFE
    fix_since = "0.4"
    requires = (r"\basync\b",)
    references = (
        ("torch.Tensor.cuda (non_blocking)", "https://pytorch.org/docs/stable/generated/torch.Tensor.cuda.html"),
        ("PEP 492: async and await are keywords (Python 3.7)", "https://peps.python.org/pep-0492/"),
    )
    runtime_signature = False
    docs = """
    ## What it does
    Flags the `async=` argument of a tensor's `.cuda()`, `.to()`, `.copy_()` and
    `.type()`, as scripts written for PyTorch 0.3 pass it:
    `target.cuda(async=True)`.

    ## Why is this bad?
    `async` became a reserved keyword in Python 3.7, so such a file no longer parses:
    Python refuses to run any of it, and a linter that only reads valid Python loses
    every finding in it. PyTorch 0.4 renamed the argument `non_blocking=` (same
    meaning: copy to the GPU without waiting, from pinned memory).

    torchlint still reads such a file: it reads `async` there as a plain name (each
    offset, line and column stays as in the file), lints the rest, and reports each
    `async=` with this rule. Other constructs Python 3 refuses (Python 2's `print x`,
    `except E, e:`...) are read the same way and named in a TL000 note; in such a
    file no fix is offered, since none would make it Python 3.

    ## What to do instead
    `target.cuda(non_blocking=True)`.

    ## Fix (safe)
    Renames the argument `non_blocking=`. When `async=` is all that kept the file from
    parsing, the fixed file is Python 3 again, and the other rules' fixes are applied
    with it.
    """
    bad = (
        Bad(
            """
            import torch

            for images, target in loader:
                target = target.cuda(async=True)
            """,
            reported=((4, "async"),),
            fixed="""
            import torch

            for images, target in loader:
                target = target.cuda(non_blocking=True)
            """,
        ),
    )
    good = (
        """
        import torch

        for images, target in loader:
            target = target.cuda(non_blocking=True)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in torch_api.NON_BLOCKING_METHODS:
            return
        for arg in node.args:
            if arg.keyword is not None and self.ctx.code(arg.keyword) == "async":
                evidence = (Step(arg.keyword, "`async` has been a reserved keyword since Python 3.7: Python refuses "
                                              "the whole file"),)
                self.report(arg.keyword, evidence=evidence,
                            fix=Fix(Applicability.SAFE, "Rename the argument `non_blocking=`",
                                    (edits.replace(arg.keyword, "non_blocking"),)))

    @classmethod
    def runs(cls, diagnostic) -> bool:
        # Not a style finding: the file cannot run on Python 3.7+, which its verdict says.
        return True

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(COULD_NOT_RUN, "Python 3.7 and later refuse `async=`: the file cannot run until it is fixed")
