"""TL507 unsafe-load: ``torch.load(path)`` without ``weights_only=`` (TorchFix's TOR102)."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, edits,
    positional_args,
)


class UnsafeLoad(Rule):
    code = "TL507"
    name = "unsafe-load"
    summary = ("`torch.load(f)` without `weights_only=`: before PyTorch 2.6 it unpickles anything, running code "
               "from the file")
    message = ("`torch.load` without `weights_only=`: pass `weights_only=True` (or `weights_only=False` only for "
               "files you trust and that need full pickle)")
    fix = Applicability.UNSAFE
    fix_since = "1.13"
    torchfix = ("TOR102",)
    requires = (r"\bload\b",)
    references = (
        ("torch.load (weights_only)", "https://pytorch.org/docs/stable/generated/torch.load.html"),
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    docs = """
    ## What it does
    Flags calls of `torch.load` that do not pass `weights_only=`, the name resolved
    through the file's imports (`from torch import load` too; a project's own `load`,
    `np.load` or `pickle.load` are left alone), unless the call passes `**kwargs`.
    TorchFix's TOR102.

    ## Why is this bad?
    `torch.load` reads a pickle. Until PyTorch 2.6 its default was `weights_only=False`:
    full unpickling, which runs whatever code the file names, so loading a checkpoint
    downloaded from the internet could run arbitrary code
    ([pytorch#31875](https://github.com/pytorch/pytorch/issues/31875)). PyTorch 2.4
    and 2.5 warned (`FutureWarning: You are using torch.load with weights_only=False`).
    From 2.6 the default is `weights_only=True`, which only rebuilds tensors, plain
    containers and allow-listed types: the same call is then safe but refuses files
    that pickle other objects (a whole `nn.Module`, an `argparse.Namespace`, a numpy
    array...), with `UnpicklingError: Weights only load failed`. Code that does not say
    which it wants is unsafe on older torch and may break on newer torch.

    ## What to do instead
    `torch.load(path, weights_only=True)` for state dicts and tensors (add the types it
    needs with `torch.serialization.add_safe_globals`); `weights_only=False` only for a
    file you trust that needs full pickle.

    ## Fix (unsafe)
    Adds `weights_only=True`: on PyTorch 2.6 and later that is the default, so nothing
    changes there; on older versions a file that pickles other objects no longer loads,
    so the fix must be tested. A call that passes a `pickle_module` (by keyword or as
    third positional argument) gets no automatic fix: `weights_only=True` refuses a
    custom pickle module, and choosing `weights_only=False` has to be a person's
    decision.

    References: TorchFix TOR102; [torch.load](https://pytorch.org/docs/stable/generated/torch.load.html);
    [the weights_only default change in 2.6](https://dev-discuss.pytorch.org/t/bc-breaking-change-torch-load-is-being-flipped-to-use-weights-only-true-by-default-in-the-nightlies-after-137602/2573).
    """
    bad = (
        Bad(
            """
            import torch

            torch.save({"weight": torch.ones(2)}, "model.pt")
            state = torch.load("model.pt", map_location="cpu")
            """,
            reported=((4, 'torch.load("model.pt", map_location="cpu")'),),
            fixed="""
            import torch

            torch.save({"weight": torch.ones(2)}, "model.pt")
            state = torch.load("model.pt", map_location="cpu", weights_only=True)
            """,
            unsafe=True,
        ),
        Bad(
            """
            import pickle
            from torch import load

            state = load("model.pt", "cpu", pickle)
            """,
            reported=((4, 'load("model.pt", "cpu", pickle)'),),
        ),
    )
    good = (
        """
        import torch

        state = torch.load("model.pt", map_location="cpu", weights_only=True)
        full = torch.load("trusted.pt", weights_only=False)
        """,
        """
        import json
        import numpy as np

        def load(path):
            with open(path) as f:
                return json.load(f)

        config = load("config.json")
        array = np.load("array.npy")
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        called = called_name(func)
        if called != "load":
            return
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        if "weights_only" in keywords or any(arg.star == "**" for arg in node.args):
            return
        qualname = self.ctx.qualname(func)
        if qualname != "torch.load":
            return
        if "pickle_module" in keywords or len(positional_args(node)) >= 3 or any(arg.star for arg in node.args):
            fix = Fix(Applicability.DISPLAY_ONLY, "Pass `weights_only=` explicitly (`False` only for a trusted file)",
                      ())
        else:
            fix = Fix(Applicability.UNSAFE, "Pass `weights_only=True`",
                      (edits.replace(node, edits.call_text(self.ctx, node, added="weights_only=True")),))
        self.report(node, evidence=self.ctx.origin(func, qualname), fix=fix)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and "Weights only load failed" in raised["message"]:
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']} -- this torch defaults to "
                                      "`weights_only=True` and refused the file; older torch would have unpickled "
                                      "it in full")
        confirmed = run.warned("weights_only")
        if confirmed is not None:
            return confirmed
        return Verdict(NOT_REPRODUCED, "the file loaded without a warning: this torch defaults to "
                                       "`weights_only=True`, and the file holds only what that allows")
