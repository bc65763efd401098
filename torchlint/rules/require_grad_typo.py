"""TL505 require-grad-typo: ``x.require_grad = False``, a typo for ``requires_grad`` that
only adds a Python attribute (TorchFix's TOR002)."""

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, iter_nodes,
)

_TYPO = "require_grad"


class RequireGradTypo(Rule):
    code = "TL505"
    name = "require-grad-typo"
    summary = "`x.require_grad = ...`: a typo for `requires_grad`; it sets a new attribute and freezes nothing"
    message = "`{target}` is likely a typo for `requires_grad`: this only adds an attribute torch never reads"
    fix = Applicability.SAFE
    torchfix = ("TOR002",)
    requires = (r"\.\s*require_grad\b",)
    references = (
        ("TorchFix (the rules it carries over)", "https://github.com/pytorch-labs/torchfix"),
    )
    # The monitor does not watch attribute writes: a run cannot see that `requires_grad`
    # stayed as it was, so the finding is not run.
    runtime_signature = False
    docs = """
    ## What it does
    Flags an assignment to an attribute named `require_grad` (`param.require_grad =
    False`, `x.require_grad = True`): the tensor's flag is `requires_grad`, with an
    `s`. It is TorchFix's TOR002.

    Left alone: `self.require_grad = ...` (a class's own setting of that name, as model
    configurations have), and files that read a `.require_grad` attribute somewhere:
    there it is the project's own attribute, not a typo.

    ## Why is this bad?
    A tensor, like any Python object with a `__dict__`, accepts a new attribute without
    complaint: `param.require_grad = False` stores a boolean nobody reads, and
    `param.requires_grad` stays as it was. The classic case is freezing a backbone
    (`for p in model.parameters(): p.require_grad = False`): every parameter keeps
    training, silently, in every PyTorch version. Nothing warns, and no run fails.

    ## What to do instead
    `param.requires_grad = False`, or `param.requires_grad_(False)`, or
    `module.requires_grad_(False)` for a whole module.

    ## Fix (safe)
    The attribute is renamed `requires_grad`. This changes what the program does (the
    flag is now set), which is what the line meant; nothing else reads `require_grad`
    in the file (a file that does is not reported).

    References: TorchFix TOR002; [pytorch/test-infra#4687](https://github.com/pytorch/test-infra/issues/4687).
    """
    bad = (
        Bad(
            """
            import torch.nn as nn

            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
            for name, param in model.named_parameters():
                param.require_grad = name.startswith("2.")
            """,
            reported=((5, "param.require_grad"),),
            fixed="""
            import torch.nn as nn

            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
            for name, param in model.named_parameters():
                param.requires_grad = name.startswith("2.")
            """,
        ),
    )
    good = (
        """
        import torch.nn as nn

        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        for name, param in model.named_parameters():
            param.requires_grad = name.startswith("2.")
        model[0].requires_grad_(False)
        """,
        """
        class AdapterConfig:
            def __init__(self, require_grad=True):
                self.require_grad = require_grad

        def trainable(config):
            return config.require_grad

        config = AdapterConfig()
        config.require_grad = False
        """,
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            attribute = target.target
            if not isinstance(attribute, cst.Attribute) or attribute.attr.value != _TYPO:
                continue
            if isinstance(attribute.value, cst.Name) and attribute.value.value == "self":
                continue  # a class's own `require_grad` setting
            if self._read_in_file():
                return
            fix = Fix(Applicability.SAFE, "Rename the attribute `requires_grad`",
                      (edits.replace(attribute.attr, "requires_grad"),))
            self.report(attribute, fix=fix, target=attribute)

    def _read_in_file(self) -> bool:
        """Some `.require_grad` in the file is read: the project's own attribute."""
        read = self.ctx.cache.get("TL505-read")
        if read is None:
            stored = {id(target.target) for node in iter_nodes(self.ctx.module) if isinstance(node, cst.Assign)
                      for target in node.targets}
            read = any(isinstance(node, cst.Attribute) and node.attr.value == _TYPO and id(node) not in stored
                       for node in iter_nodes(self.ctx.module))
            self.ctx.cache["TL505-read"] = read
        return read

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: assigning `require_grad` only stores a new Python attribute, which "
                                       "no torch code reads; the tensor's `requires_grad` stays as it was")
