"""TL212 legacy-autograd-function: ``MyFn()(x)``, calling an instance of a
``torch.autograd.Function`` subclass: the pre-0.4 style, a RuntimeError on today's torch."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Bad, Kind, Observation, Rule, Step, Verdict, cst, torch_api,
)


class LegacyAutogradFunction(Rule):
    code = "TL212"
    name = "legacy-autograd-function"
    summary = ("`MyFn()(x)`: calling an instance of a `torch.autograd.Function` (the pre-0.4 style) raises "
               "RuntimeError on today's torch")
    message = ("`{call}` calls an instance of the autograd Function `{cls}`: legacy Functions are deprecated "
               "since PyTorch 0.4 and raise RuntimeError today; make `forward` and `backward` static methods "
               "taking `ctx` and call `{cls}.apply(..)`")
    since = "0.4"
    requires = (r"Function",)
    references = (
        ("Extending torch.autograd", "https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd"),
    )
    docs = """
    ## What it does
    Flags a call of an instance of a class derived from `torch.autograd.Function`
    (directly, through the project's own classes, or from another module of the
    project): `Sqrt()(x)`, or `f = Sqrt()` then `f(x)`, or `self.fn = Sqrt()` then
    `self.fn(x)`.

    ## Why is this bad?
    Before PyTorch 0.4 an autograd Function was an object: `forward(self, x)` and
    `backward(self, grad)` were methods, state lived on `self`, and the instance was
    called. 0.4 introduced static `forward(ctx, ...)`/`backward(ctx, ...)` called
    through `Function.apply`, and deprecated the old style; today `Function.__call__`
    raises `RuntimeError: Legacy autograd function with non-static forward method is
    deprecated`, so the first forward pass of such a model stops, and building the
    instance already warns.

    ## What to do instead
    Decorate `forward` and `backward` with `@staticmethod`, give them `ctx` as their
    first argument (`ctx.save_for_backward(..)`, `ctx.saved_tensors`, and attributes on
    `ctx` for what was kept on `self`), pass what `__init__` took as extra arguments of
    `forward` (returning one `None` gradient for each from `backward`), and call
    `Sqrt.apply(x)`.

    ## Fix
    None: moving state from `self` to `ctx` and `__init__` arguments into `forward`
    is a rewrite of the class for its author.
    """
    bad = (
        Bad(
            """
            import torch
            from torch.autograd import Function

            class Square(Function):
                def forward(self, x):
                    self.save_for_backward(x)
                    return x * x

                def backward(self, grad):
                    x, = self.saved_tensors
                    return 2 * x * grad

            y = Square()(torch.ones(2, requires_grad=True))
            square = Square()
            z = square(torch.ones(2))
            """,
            reported=((13, "Square()(torch.ones(2, requires_grad=True))"), (15, "square(torch.ones(2))")),
        ),
    )
    good = (
        """
        import torch
        from torch.autograd import Function

        class Square(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return 2 * x * grad

        y = Square.apply(torch.ones(2, requires_grad=True))

        class Function:
            def __call__(self, x):
                return x

        print(Function()(3))
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, (cst.Name, cst.Attribute, cst.Call)):
            return
        value = self.ctx.infer(node.func)
        if value is None or value.kind is not Kind.INSTANCE or value.cls is None:
            return
        cls = value.cls
        if self.ctx.inference.torch_base(cls) not in torch_api.AUTOGRAD_FUNCTION_CLASSES:
            return
        where = "" if cls.model is self.ctx.model else " of another module"
        line = cls.model.analysis.line_index.position(cls.node.start)[0] if cls.model.analysis is not None else 0
        step = Step(node.func, f"`{{code}}` is an instance of `{cls.name}`, a torch.autograd.Function subclass "
                               f"(class{where} at line {line})")
        self.report(node, evidence=(step,), call=self.ctx.snippet(node), cls=cls.name)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and "Legacy autograd function" in raised["message"]:
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "calling the Function raised nothing here")
