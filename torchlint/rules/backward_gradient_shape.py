"""TL214 backward-gradient-shape: ``loss.backward(one)`` with ``one = torch.FloatTensor([1])``
on a 0-dim loss, the WGAN idiom of PyTorch 0.3 that raises RuntimeError since 1.0."""

import ast
from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits,
    keyword, positional_args, torch_api,
)

_VARIABLE = frozenset({torch_api.VARIABLE, "torch.autograd.Variable"})


class BackwardGradientShape(Rule):
    code = "TL214"
    name = "backward-gradient-shape"
    summary = ("`loss.backward(one)` with a `[1]`-shaped gradient (`torch.FloatTensor([1])`) on a 0-dim loss: "
               "RuntimeError since PyTorch 1.0")
    message = ("`{output}` is 0-dimensional but the gradient `{gradient}` has shape {shape}: `backward` raises "
               "RuntimeError (mismatch in shape) since PyTorch 1.0; pass a 0-dim gradient: `{fixed}`")
    fix = Applicability.SAFE
    since = "1.0"
    requires = (r"backward\(",)
    references = (
        ("torch.Tensor.backward (gradient)", "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html"),
        ("caogang/wgan-gp#42: the error in a WGAN-GP training script", "https://github.com/caogang/wgan-gp/issues/42"),
    )
    docs = """
    ## What it does
    Flags `out.backward(g)` (and `torch.autograd.backward(out, g)`) where `out` is a
    0-dimensional tensor (a full reduction such as `D(x).mean()`, a loss) and `g` is a
    tensor whose shape the code fixes with at least one dimension: `torch.FloatTensor([1])`,
    `torch.tensor([-1.0])`, `torch.ones(1)`, directly or through names bound only to such
    values and to shape-keeping forms of them (`one * -1`, `-one`, `.cuda()`, `.to(device)`,
    `Variable(..)`). Both facts are shown as evidence.

    ## Why is this bad?
    This is how WGAN and WGAN-GP code of 2017 flips the sign of a critic's output:
    `one = torch.FloatTensor([1]); mone = one * -1; D_real.mean().backward(mone)`. Up to
    PyTorch 0.3 every reduction returned a 1-element vector, and the `[1]` gradient matched
    it. PyTorch 0.4 made reductions 0-dimensional, and since 1.0 `backward` refuses a
    gradient of another shape: `RuntimeError: Mismatch in shape: grad_output[0] has a shape
    of torch.Size([1]) and output[0] has a shape of torch.Size([])` (1.0 said "invalid
    gradient at index 0 - expected shape [] but got [1]"). The training loop stops at its
    first critic step.

    ## What to do instead
    Give a gradient of the output's shape: `D_real.backward(mone.squeeze())`, or make
    the constant 0-dimensional where it is made (`one = torch.tensor(1.0)`), or write the
    sign into the loss (`(-D_real).backward()`).

    ## Fix (safe)
    At the call, the gradient becomes `g.squeeze()`: the same single value with no
    dimensions, which is what the 1-element gradient meant. The constant itself is left
    alone, since other code may use it with its shape.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn

            netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
            one = torch.FloatTensor([1])
            mone = one * -1

            def critic_step(real, fake):
                D_real = netD(real).mean()
                D_real.backward(mone)
                D_fake = netD(fake).mean()
                D_fake.backward(one)
            """,
            reported=((10, "mone"), (12, "one")),
            fixed="""
            import torch
            import torch.nn as nn

            netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
            one = torch.FloatTensor([1])
            mone = one * -1

            def critic_step(real, fake):
                D_real = netD(real).mean()
                D_real.backward(mone.squeeze())
                D_fake = netD(fake).mean()
                D_fake.backward(one.squeeze())
            """,
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
        one = torch.tensor(1.0)
        mone = one * -1

        def critic_step(real, fake):
            D_real = netD(real).mean()
            D_real.backward(mone)
            D_fake = netD(fake).mean()
            D_fake.backward(one)
        """,
        """
        import torch
        import torch.nn as nn

        netD = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
        one = torch.tensor([1.0])

        def critic_step(real):
            D_real = netD(real).mean(0).view(1)
            D_real.backward(one)
            scores = netD(real)
            scores.backward(torch.ones_like(scores))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        found = self._output_and_gradient(node)
        if found is None:
            return
        output, gradient = found
        value = self.ctx.tensor(output)
        if value is None or not value.scalar:
            return
        shaped = self._shape(gradient, 0)
        if shaped is None:
            return
        shape, gradient_steps = shaped
        if any(size != 1 for size in shape):
            return  # not the 1-element idiom: squeezing would not give the output's shape
        output_steps = value.why + ((value.scalar_why,) if value.scalar_why is not None
                                    and value.scalar_why not in value.why else ())
        fixed = edits.method_call(self.ctx, gradient, "squeeze()")
        fix = Fix(Applicability.SAFE, f"Pass `{fixed}`, a 0-dim gradient", (edits.replace(gradient, fixed),))
        self.report(gradient, evidence=output_steps + gradient_steps, fix=fix, output=self.ctx.snippet(output),
                    gradient=self.ctx.snippet(gradient), shape=_shown(shape), fixed=fixed)

    def _output_and_gradient(self, call: cst.Call) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression]]:
        """The tensor back-propagated and the gradient given for it, when the call is a backward."""
        if any(arg.star for arg in call.args):
            return None
        arguments = positional_args(call)
        if self.ctx.qualname(call.func) in torch_api.AUTOGRAD_BACKWARD_FUNCTIONS:
            output = arguments[0].value if arguments else keyword(call, "tensors")
            gradient = arguments[1].value if len(arguments) > 1 else keyword(call, "grad_tensors")
            if isinstance(output, (cst.List, cst.Tuple)) or isinstance(gradient, (cst.List, cst.Tuple)):
                return None  # several outputs: each needs its own gradient, not judged here
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
            output = call.func.value
            gradient = arguments[0].value if arguments else keyword(call, "gradient")
        else:
            return None
        if output is None or gradient is None:
            return None
        return output, gradient

    def _shape(self, node: cst.BaseExpression, depth: int) -> Optional[tuple[tuple[int, ...], tuple[Step, ...]]]:
        """The shape the code gives ``node``, when it is a tensor of at least one dimension."""
        if depth > 6:
            return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self._kept(node, node.expression, depth)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
            if _is_number(node.right):
                return self._kept(node, node.left, depth)
            if _is_number(node.left) and isinstance(node.operator, cst.Multiply):
                return self._kept(node, node.right, depth)
            return None
        if isinstance(node, cst.Call):
            return self._called(node, depth)
        if isinstance(node, cst.Name):
            return self._named(node, depth)
        return None

    def _called(self, call: cst.Call, depth: int) -> Optional[tuple[tuple[int, ...], tuple[Step, ...]]]:
        func = call.func
        qualname = self.ctx.qualname(func) or ""
        arguments = positional_args(call)
        if qualname in _VARIABLE and arguments:
            return self._kept(call, arguments[0].value, depth)
        if isinstance(func, cst.Attribute) and not qualname and func.attr.value in torch_api.SHAPE_KEEPING_METHODS:
            if func.attr.value in ("mul", "div") and not (len(arguments) == 1 and _is_number(arguments[0].value)):
                return None
            return self._kept(call, func.value, depth)
        if any(arg.star or (arg.keyword is not None and arg.keyword.value not in torch_api.SHAPELESS_FACTORY_KEYWORDS)
               for arg in call.args):
            return None  # other keywords (`out=`, `size=`) are not read here
        shape: Optional[tuple[int, ...]] = None
        if (torch_api.is_tensor_type(qualname) and qualname not in _VARIABLE or qualname in torch_api.DATA_FACTORIES) \
                and len(arguments) == 1 and isinstance(arguments[0].value, cst.List):
            elements = arguments[0].value.elements
            if elements and all(_is_number(e.value) and not isinstance(e, cst.StarredElement) for e in elements):
                shape = (len(elements),)
        elif torch_api.creates_from_sizes(qualname) and qualname not in _VARIABLE \
                or qualname in torch_api.SHAPE_FACTORIES:
            shape = _sizes(arguments)
        if not shape:
            return None
        return shape, (Step(call, f"`{{code}}` is a tensor of shape {_shown(shape)}"),)

    def _named(self, name: cst.Name, depth: int) -> Optional[tuple[tuple[int, ...], tuple[Step, ...]]]:
        values = self.ctx.assigned_values(name)
        found = [self._shape(value, depth + 1) for value in values or ()]
        if not found or any(f is None for f in found) or len({f[0] for f in found}) != 1:
            return None
        shape, steps = found[0]
        return shape, (Step(values[0], f"`{name.value}` = `{{code}}`"), *steps)

    def _kept(self, node: cst.BaseExpression, source: cst.BaseExpression,
              depth: int) -> Optional[tuple[tuple[int, ...], tuple[Step, ...]]]:
        found = self._shape(source, depth + 1)
        if found is None:
            return None
        keeps = Step(node, f"`{{code}}` has the shape of `{self.ctx.snippet(source)}`")
        return found[0], (keeps, *found[1])

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and (
                "Mismatch in shape" in raised["message"] or "invalid gradient" in raised["message"]):
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "`backward` took this gradient: the output was not 0-dimensional on this run")


def _is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _sizes(arguments) -> Optional[tuple[int, ...]]:
    """``torch.ones(1)``, ``torch.ones(1, 1)``, ``torch.ones([1])``, ``torch.ones((1,))``: literal sizes."""
    values = [arg.value for arg in arguments]
    if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
        values = [element.value for element in values[0].elements]
    if not values or not all(isinstance(v, cst.Integer) for v in values):
        return None
    return tuple(ast.literal_eval(v.value) for v in values)


def _shown(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(size) for size in shape) + "]"
