"""TL210 scalar-first-overload: ``p.add_(-lr, grad)``, ``v.addcmul_(1 - beta, g, g)``: the
overloads that take the scalar first, deprecated since PyTorch 1.5."""

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Kind, Observation, Rule, Step, Value, Verdict, base_evidence, cst,
    edits, torch_api, walk,
)

# Argument expressions whose evaluation may have effects: moving them after another
# argument changes the order they run in.
_EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)


class ScalarFirstOverload(Rule):
    code = "TL210"
    name = "scalar-first-overload"
    summary = ("`p.add_(-lr, grad)`, `v.addcmul_(1 - b, g, g)`: scalar-first overloads, deprecated since "
               "PyTorch 1.5")
    message = ("scalar-first `{name}({old})` is deprecated since PyTorch 1.5 and warns; pass {keywords} by "
               "keyword: `{name}({new})`")
    fix = Applicability.SAFE
    since = "1.5"
    requires = (r"(?:add|sub)[a-z]*_?\(",)
    references = (
        ("torch.Tensor.add_", "https://pytorch.org/docs/stable/generated/torch.Tensor.add_.html"),
    )
    docs = """
    ## What it does
    Flags the overloads of `add`, `sub`, `addcmul`, `addcdiv`, `addmm`, `addmv`, `addr`,
    `addbmm`, `baddbmm` and `sspaddmm` (and their in-place `_` forms, as tensor methods
    or `torch.*` functions) that take the scalar multiplier as the first positional
    argument: `p.data.add_(-lr, d_p)`, `exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)`,
    `torch.add(x, 2, y)`, `out.addmm_(0, 1, a, b)`. The signatures are those torch lists
    as deprecated (`torchgen/packaged/autograd/deprecated.yaml`); today's take the
    scalars only by keyword, so a call with more positional arguments than today's
    signature allows can only be the old one.

    ## Why is this bad?
    PyTorch 1.5 deprecated them: the first such call of a process warns `This overload
    of add_ is deprecated` (the others go unnoticed). Every optimizer copied from a
    2017-2019 repository (Adam, AdamW, RAdam, LAMB, LARS variants) uses them in its
    inner loop. They still compute the same thing, but they are slated for removal, and
    `x.add(a, b)` reads as adding two things when it multiplies `b` by `a`.

    ## What to do instead
    Pass the tensors positionally and the scalars by keyword:
    `p.add_(d_p, alpha=-lr)`, `exp_avg_sq.addcmul_(grad, grad, value=1 - beta2)`,
    `torch.add(x, y, alpha=2)`, `out.addmm_(a, b, beta=0, alpha=1)`.

    ## Fix
    Safe: the arguments are rearranged, values unchanged. Unsafe where two arguments
    with calls in them change places (they then run in the other order). Where the
    arguments hold comments, it is only shown.
    """
    bad = (
        Bad(
            """
            import torch

            def sgd_step(params, lr):
                for p in params:
                    p.data.add_(-lr, p.grad.data)

            def adam_moments(exp_avg, exp_avg_sq, grad, beta1, beta2):
                exp_avg.mul_(beta1).add_(1 - beta1, grad)
                exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
            """,
            reported=((5, "p.data.add_(-lr, p.grad.data)"), (8, "exp_avg.mul_(beta1).add_(1 - beta1, grad)"),
                      (9, "exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)")),
            fixed="""
            import torch

            def sgd_step(params, lr):
                for p in params:
                    p.data.add_(p.grad.data, alpha=-lr)

            def adam_moments(exp_avg, exp_avg_sq, grad, beta1, beta2):
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            """,
        ),
        Bad(
            """
            import torch

            x, y = torch.zeros(3), torch.ones(3)
            z = torch.add(x, 2, y)
            m = torch.zeros(2, 2).addmm_(0.5, 2, torch.ones(2, 2), torch.ones(2, 2))
            """,
            reported=((4, "torch.add(x, 2, y)"),
                      (5, "torch.zeros(2, 2).addmm_(0.5, 2, torch.ones(2, 2), torch.ones(2, 2))")),
            fixed="""
            import torch

            x, y = torch.zeros(3), torch.ones(3)
            z = torch.add(x, y, alpha=2)
            m = torch.zeros(2, 2).addmm_(torch.ones(2, 2), torch.ones(2, 2), beta=0.5, alpha=2)
            """,
        ),
    )
    good = (
        """
        import torch

        def step(p, exp_avg, grad, lr, beta1):
            p.add_(grad, alpha=-lr)
            exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
            return torch.add(p, grad, alpha=2), torch.addmm(p, grad, grad, beta=0.5)
        """,
        """
        import torch

        def attention(ops, scores, query, key, norm):
            # `beta=` is given: three positional tensors are not the scalar-first overload.
            return ops.baddbmm(scores, query, key.transpose(1, 2), beta=1.0, alpha=1.0 / norm)
        """,
        """
        import torch

        class Meter:
            def add(self, value, n):
                self.total = value * n

        meter = Meter()
        meter.add(3, 2)
        seen = set()
        seen.add(3)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or any(arg.star for arg in node.args):
            return
        name = func.attr.value
        signatures = torch_api.SCALAR_FIRST_OVERLOADS.get(name)
        if signatures is None:
            return
        positional = [arg for arg in node.args if arg.keyword is None]  # before the keywords
        qualname = self.ctx.qualname(func)
        method = qualname != f"torch.{name}"
        if method:
            value = self._receiver_evidence(func.value, name, len(positional))
            if value is None:
                return
            evidence = value.why
        else:
            evidence = self.ctx.origin(func, qualname)
        signature = next((s for s in signatures if len(s) - (1 if method else 0) == len(positional)), None)
        if signature is None:
            return
        parameters = [p for p in signature if not (method and p == "self")]
        scalars = [(p, arg) for p, arg in zip(parameters, positional) if p in torch_api.SCALAR_PARAMETERS]
        given = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        if any(p in given for p, _ in scalars):
            return  # `beta=` given already: not the scalar-first overload (it would be given twice)
        tensors = [arg for p, arg in zip(parameters, positional) if p not in torch_api.SCALAR_PARAMETERS]

        def arguments(text) -> str:  # `text`: shortened for the message, or exact for the fix
            keywords = ", ".join(f"{p}={text(arg.value)}" for p, arg in scalars)
            others = [text(arg) for arg in node.args if arg.keyword is not None]
            return ", ".join([text(arg.value) for arg in tensors] + others + [keywords])

        new = arguments(self.ctx.snippet)
        old = ", ".join(self.ctx.snippet(arg) for arg in node.args)
        fix = self._fix(node, func, arguments(self.ctx.code), scalars, tensors)
        self.report(node, evidence=evidence, fix=fix,
                    name=name if method else self.ctx.snippet(func), old=old, new=new,
                    keywords=" and ".join(f"`{p}`" for p, _ in scalars))

    def _receiver_evidence(self, receiver: cst.BaseExpression, name: str, count: int) -> Optional[Value]:
        value = self.ctx.tensor(receiver)
        if value is not None:
            return value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            value = base_evidence(self.ctx, receiver)
            if value is not None:
                return value
        if name in torch_api.TORCH_ONLY_SCALAR_FIRST_OVERLOADS and self.ctx.inference.uses_torch and self.ctx.infer(receiver) is None:
            return Value(Kind.TENSOR, (Step(receiver, f"`{{code}}.{name}(..)` with {count} positional arguments: "
                                                      f"torch's scalar-first overload, and nothing says `{{code}}` "
                                                      f"is anything but a tensor"),))
        return None

    def _fix(self, call: cst.Call, func: cst.BaseExpression, arguments: str, scalars, tensors) -> Fix:
        title = "Pass the tensors first and the scalars by keyword"
        start, end = self.ctx.span(call)
        opening = self.ctx.span(call.args[0])[0]
        close = end - 1
        if "#" in self.ctx.text[opening:close]:
            return Fix(Applicability.DISPLAY_ONLY, title, ())
        rewritten = self.ctx.text[start:opening] + arguments + self.ctx.text[close:end]
        # Calls keep their order among themselves, or running them in another order may matter.
        before = [arg for arg in call.args if arg.keyword is None and _effectful(arg.value)]
        after = [arg for arg in tensors if _effectful(arg.value)] + [arg for _, arg in scalars if _effectful(arg.value)]
        applicability = Applicability.SAFE if before == after else Applicability.UNSAFE
        if applicability is Applicability.UNSAFE:
            title += " (two arguments with calls now run in the other order)"
        return Fix(applicability, title, (edits.replace(call, rewritten),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or("This overload of", "torch gave no deprecated-overload warning on this line")


def _effectful(root: cst.CSTNode) -> bool:
    found: list[cst.CSTNode] = []
    walk(root, lambda node, parent: found.append(node) if isinstance(node, _EFFECTFUL) else None)
    return bool(found)
