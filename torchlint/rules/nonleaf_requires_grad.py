"""TL406 nonleaf-requires-grad: setting ``requires_grad`` on a tensor the graph computed."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Step, Value, Verdict, cst,
    is_store_target, torch_facts,
)


class NonleafRequiresGrad(Rule):
    code = "TL406"
    name = "nonleaf-requires-grad"
    summary = "`y.requires_grad = ...` or `y.requires_grad_()` on a computed (non-leaf) tensor: RuntimeError"
    message = (
        "`{base}` is not a leaf of the autograd graph: setting its `requires_grad` raises RuntimeError; "
        "{advice}"
    )
    fix = Applicability.DISPLAY_ONLY
    requires = (r"requires_grad",)
    references = (
        ("torch.Tensor.requires_grad_", "https://pytorch.org/docs/stable/generated/torch.Tensor.requires_grad_.html"),
        ("torch.Tensor.is_leaf", "https://pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html"),
    )
    docs = """
    ## What it does
    Flags `y.requires_grad = flag` and `y.requires_grad_(..)` where `y` is a tensor
    that the autograd graph computed from a tensor that requires grad (the result of
    an operation on a parameter or on a tensor made with `requires_grad=True`), as the
    inference shows, with its evidence. A module's output is left alone (its parameters
    may all be frozen, `backbone.requires_grad_(False)`, and the output is then a leaf
    whose flag can be set) unless it is a torch layer built with parameters (`nn.Linear`,
    `nn.Conv2d`, `nn.Embedding`, `nn.LSTM`...; not `from_pretrained`, frozen by default)
    called outside `no_grad` in a file that freezes nothing (the flag being set does not
    count: `target = teacher(x); target.requires_grad = False` freezes no layer): perturbing
    an embedding's output for adversarial training is the usual case.

    ## Why is this bad?
    Only leaves carry a settable `requires_grad`. On a computed tensor torch raises
    `RuntimeError: you can only change requires_grad flags of leaf variables`, with
    `True` as well as with `False`. Code that means "stop the gradient here" or "I
    want the gradient of this" stops instead.

    ## What to do instead
    To stop the gradient, use `y = y.detach()`. To keep the gradient of an
    intermediate tensor for reading, call `y.retain_grad()` before `backward()`. To
    make a new input that requires grad, use `y.detach().requires_grad_()`.

    ## Fix (display-only)
    The advice is shown. Which of the three the code meant only its author knows.
    """
    bad = (
        Bad(
            """
            import torch

            w = torch.randn(3, requires_grad=True)
            hidden = w * 2
            hidden.requires_grad = False
            """,
            reported=((5, "hidden.requires_grad"),),
        ),
    )
    good = (
        """
        import torch

        w = torch.randn(3, requires_grad=True)
        hidden = (w * 2).detach()
        hidden.requires_grad = True
        inputs = torch.zeros(3)
        inputs.requires_grad_()
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "requires_grad" and is_store_target(self.ctx, node):
            self._check(node.value, node, "to stop its gradient use `.detach()`; to read its gradient call "
                                          "`.retain_grad()` before backward()")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" \
                and self.ctx.qualname(func) is None:
            self._check(func.value, node, "for a new input that requires grad use `.detach().requires_grad_()`")

    def _check(self, base: cst.BaseExpression, node: cst.CSTNode, advice: str) -> None:
        evidence = self.ctx.tensor(base)
        if evidence is None or not evidence.attached or evidence.leaf is not False:
            return
        outputs = [step.node for step in evidence.why if self._module(step.node) is not None]
        if outputs:
            # A module's parameters may all be frozen: its output is then a leaf.  Unless it
            # is a torch layer whose parameters require grad and nothing in the file freezes any.
            why = self._trainable_output(outputs[0], node)
            if why is None:
                return
            evidence = (why, *evidence.why)
        fix = Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:], ())
        self.report(node, evidence=evidence, base=base, advice=advice, fix=fix)

    def _module(self, node: cst.CSTNode) -> Optional[Value]:
        if not isinstance(node, cst.Call):
            return None
        callee = self.ctx.infer(node.func)
        return callee if callee is not None and callee.kind is Kind.MODULE else None

    def _trainable_output(self, call: cst.Call, flagged: cst.CSTNode) -> Optional[Step]:
        """Evidence that the output of the module ``call`` is not a leaf whatever its input:
        a torch layer built with parameters (its facts' ``parameters``: an `nn.Embedding`, an
        `nn.LSTM`, an `nn.Linear`; `from_pretrained` is not read as one), which require grad,
        called outside ``no_grad``, in a file that freezes nothing."""
        module = self._module(call)
        fact = torch_facts.fact(module.qualname) if module is not None and module.qualname else None
        if fact is None or not fact.parameters or self.ctx.grad_disabled(call) is not None \
                or self.ctx.freezes_parameters_besides(flagged):
            return None
        return Step(call, f"`{{code}}` is the output of `{module.qualname}`, whose parameters require grad "
                          "(nothing in this file freezes them), so it is computed by the graph")

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and "leaf variables" in raised["message"]:
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "the flag was set: the tensor was a leaf on this run")
