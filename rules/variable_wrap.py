"""TL201 variable-wrap: ``torch.autograd.Variable``, a no-op since PyTorch 0.4."""

import libcst as cst

from torchlint import torch_api
from torchlint.nodes import is_true, keyword
from torchlint.rule import Rule
from torchlint.values import Step


class VariableWrap(Rule):
    code = "TL201"
    name = "variable-wrap"
    summary = "`Variable(t)`, `isinstance(x, Variable)` and its import: a no-op wrapper since PyTorch 0.4"
    message = "`Variable(...)` is a no-op since PyTorch 0.4: tensors track gradients themselves; use the tensor directly"
    docs = """
    ## What it does
    Flags every use of `torch.autograd.Variable`: calls (`Variable(t)`,
    `Variable(t, requires_grad=True)`), type checks (`isinstance(x, Variable)`), other
    references (annotations, base classes) and its import. Only the `Variable` of
    `torch.autograd` is reported, however it was imported (`from torch.autograd
    import Variable as V`, `import torch.autograd as ag`, `from torch.autograd import *`);
    the `Variable` of TensorFlow, SymPy or your own code is not.

    ## Why is this bad?
    Since PyTorch 0.4, `Variable` and `Tensor` are the same class: `Variable(t)`
    returns `t` itself (or a tensor sharing its data), `isinstance(x, Variable)` is
    `isinstance(x, torch.Tensor)`. The wrapper does nothing but suggests that it
    does, and its extra argument `volatile` is silently ignored (TL202).

    ## What to do instead
    Use the tensor directly; `Variable(t, requires_grad=True)` becomes
    `t.requires_grad_()`, and `isinstance(x, Variable)` becomes
    `isinstance(x, torch.Tensor)`. Drop the import once nothing uses it.
    """
    bad = (
        """
        import torch
        from torch.autograd import Variable

        x = Variable(torch.ones(2, 2), requires_grad=True)
        """,
        """
        import torch.autograd as ag

        def is_variable(x):
            return isinstance(x, ag.Variable)
        """,
    )
    good = (
        """
        import torch

        x = torch.ones(2, 2, requires_grad=True)
        """,
        """
        import tensorflow as tf
        from sympy import Variable

        v = tf.Variable(0.0)
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = self.ctx.code(node.module)
        for alias in node.names:
            qualname = torch_api.normalize(f"{module}.{self.ctx.code(alias.name)}")
            if qualname == torch_api.VARIABLE:
                self.report(
                    alias,
                    "`torch.autograd.Variable` is deprecated: tensors track gradients themselves since "
                    "PyTorch 0.4; use `torch.Tensor`",
                    evidence=(Step(alias, f"`{{code}}` is imported from `{module}`"),),
                )

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "Variable":
            self._reference(node)

    def _reference(self, node: cst.BaseExpression) -> None:
        value = self.ctx.infer(node)
        if value is None or value.qualname != torch_api.VARIABLE:
            return
        evidence = self.ctx.origin(node, torch_api.VARIABLE)
        parent = self.ctx.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            self._call(parent, evidence)
        elif self._in_type_check(node):
            self.report(
                node,
                "`{ref}` is `torch.Tensor` since PyTorch 0.4; check against `torch.Tensor`",
                evidence=evidence,
                ref=node,
            )
        else:
            self.report(
                node,
                "`{ref}` is deprecated since PyTorch 0.4 and is the same as `torch.Tensor`; use `torch.Tensor`",
                evidence=evidence,
                ref=node,
            )

    def _call(self, call: cst.Call, evidence) -> None:
        wrapped = call.args[0].value if call.args and call.args[0].keyword is None else None
        if wrapped is not None and is_true(keyword(call, "requires_grad")):
            self.report(
                call,
                "`Variable(..., requires_grad=True)` is deprecated since PyTorch 0.4; use `{arg}.requires_grad_()`",
                evidence=evidence,
                arg=wrapped,
            )
        else:
            self.report(call, evidence=evidence)

    def _in_type_check(self, node: cst.BaseExpression) -> bool:
        current = node
        parent = self.ctx.parent(current)
        while isinstance(parent, (cst.Element, cst.Tuple)):
            current, parent = parent, self.ctx.parent(parent)
        if not isinstance(parent, cst.Arg):
            return False
        call = self.ctx.parent(parent)
        return isinstance(call, cst.Call) and self.ctx.qualname(call.func) in (
            "builtins.isinstance",
            "builtins.issubclass",
        )
