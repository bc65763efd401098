"""TL211 byte-mask: a ``ByteTensor`` (``.byte()``, ``dtype=torch.uint8``) used as a mask:
``masked_fill`` and mask assignment raise RuntimeError on today's torch, indexing and
``torch.where`` warn."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits,
    is_store_target, keyword, positional_args, torch_api,
)


class ByteMask(Rule):
    code = "TL211"
    name = "byte-mask"
    summary = ("a `uint8` mask (`.byte()`, `ByteTensor`): `masked_fill` and `x[mask] = v` raise RuntimeError on "
               "today's torch, indexing and `torch.where` warn")
    message = ("`{mask}` is a uint8 mask ({origin}): {what}; masks are bool since PyTorch 1.2: use `{fixed}`")
    fix = Applicability.SAFE
    since = "1.2"
    requires = (r"(?:byte\(|ByteTensor|uint8)",)
    references = (
        ("PyTorch 1.2.0 release notes (bool tensors, uint8 masks deprecated)", "https://github.com/pytorch/pytorch/releases/tag/v1.2.0"),
        ("torch.Tensor.masked_fill_", "https://pytorch.org/docs/stable/generated/torch.Tensor.masked_fill_.html"),
    )
    docs = """
    ## What it does
    Flags a mask made as `uint8` (`cond.byte()`, `torch.ByteTensor(..)`,
    `.type(torch.ByteTensor)`, `.to(torch.uint8)`, `torch.zeros(.., dtype=torch.uint8)`,
    directly or through a name, indexing and dtype-keeping methods such as `.cuda()` or
    `.view(..)`) where a mask goes: `masked_fill`, `masked_select`, `masked_scatter`
    (and their `_` forms and `torch.*` functions), `torch.where`, and indexing
    `x[mask]`.

    ## Why is this bad?
    Before PyTorch 1.2 comparisons returned `uint8` tensors and masks were `uint8`;
    1.2 brought `torch.bool` and deprecated `uint8` masks. On today's torch
    `masked_fill`, `masked_select`, `masked_scatter` and `x[mask] = v` raise
    `RuntimeError: masked_fill_ only supports boolean masks`, so a 2018 attention or
    sequence-loss implementation stops at its first batch; `x[mask]` and `torch.where`
    still work but warn that the behaviour will be removed.

    ## What to do instead
    Make the mask bool: `cond` itself (comparisons are bool now) or `mask.bool()`.

    ## Fix (safe)
    Where the mask is written `cond.byte()` at the use, `.byte()` becomes `.bool()`;
    otherwise `.bool()` is added at the use (`x.masked_fill(mask.bool(), 0)`). A
    `uint8` mask selects its nonzero entries, and `.bool()` makes exactly those True.
    """
    bad = (
        Bad(
            """
            import torch

            scores = torch.randn(2, 3)
            lengths = torch.tensor([3, 1])
            pad = (torch.arange(3)[None, :] >= lengths[:, None]).byte()
            scores = scores.masked_fill(pad, float("-inf"))
            kept = scores[(scores > 0).byte()]
            """,
            reported=((6, "pad"), (7, "(scores > 0).byte()")),
            fixed="""
            import torch

            scores = torch.randn(2, 3)
            lengths = torch.tensor([3, 1])
            pad = (torch.arange(3)[None, :] >= lengths[:, None]).byte()
            scores = scores.masked_fill(pad.bool(), float("-inf"))
            kept = scores[(scores > 0).bool()]
            """,
        ),
    )
    good = (
        """
        import torch

        scores = torch.randn(2, 3)
        pad = torch.arange(3)[None, :] >= torch.tensor([3, 1])[:, None]
        scores = scores.masked_fill(pad, float("-inf"))
        pixels = torch.zeros(4, dtype=torch.uint8)
        print(scores[scores > 0], pixels[1:], pixels[torch.tensor([0, 2])], pixels.byte())
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        mask: Optional[cst.BaseExpression] = None
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.MASKING_METHODS \
                and self.ctx.qualname(func) is None:
            arguments = positional_args(node)
            mask = keyword(node, "mask") or (arguments[0].value if arguments else None)
            what = f"`{func.attr.value}` raises RuntimeError on it"
        else:
            position = torch_api.MASKING_FUNCTIONS.get(self.ctx.qualname(func) or "")
            if position is None:
                return
            arguments = positional_args(node)
            mask = keyword(node, "condition" if position == 0 else "mask") or (
                arguments[position].value if position < len(arguments) else None)
            what = "`torch.where` warns that uint8 conditions will be removed" if position == 0 \
                else "it raises RuntimeError on it"
        if mask is not None:
            self._check(mask, what)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return
        stored = is_store_target(self.ctx, node)
        what = "`x[mask] = v` raises RuntimeError on it" if stored else "indexing with it warns (deprecated)"
        self._check(node.slice[0].slice.value, what)

    def _check(self, mask: cst.BaseExpression, what: str) -> None:
        found = self._uint8(mask, 0)
        if found is None:
            return
        origin, steps = found
        fix = Fix(Applicability.SAFE, "Use a bool mask", (edits.replace(mask, _bool_mask(self.ctx, mask)),))
        shown = self.ctx.snippet(mask)
        self.report(mask, evidence=steps, fix=fix, mask=shown, origin=origin, what=what,
                    fixed=shown[:-len(".byte()")] + ".bool()" if shown.endswith(".byte()") else f"{shown}.bool()")

    def _uint8(self, node: cst.BaseExpression, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        """How ``node`` is shown to be a uint8 tensor: a phrase, and the evidence steps."""
        if depth > 4:
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method == "byte" and not node.args:
                return "`.byte()`", (Step(node, "`{code}` is a uint8 tensor"),)
            if method in ("type", "to") and node.args and self._names_uint8(node.args[0].value):
                shown = f"`.{method}({self.ctx.snippet(node.args[0].value)})`"
                return shown, (Step(node, "`{code}` is a uint8 tensor"),)
            dtype = keyword(node, "dtype")
            if method == "to" and dtype is not None and self._names_uint8(dtype):
                return "`.to(dtype=torch.uint8)`", (Step(node, "`{code}` is a uint8 tensor"),)
            if method in torch_api.MASK_DTYPE_KEEPING_METHODS and self.ctx.qualname(node.func) is None:
                inner = self._uint8(node.func.value, depth + 1)
                if inner is not None:
                    keeps = Step(node, f"`{{code}}` keeps the dtype of `{self.ctx.snippet(node.func.value)}`")
                    return inner[0], (keeps, *inner[1])
        if isinstance(node, cst.Call):
            qualname = self.ctx.qualname(node.func) or ""
            if qualname in torch_api.UINT8_TENSOR_TYPES:
                return f"`{qualname}`", (Step(node, "`{code}` is a uint8 tensor"),)
            dtype = keyword(node, "dtype")
            if qualname in torch_api.DTYPE_FACTORIES and dtype is not None and self._names_uint8(dtype):
                return "`dtype=torch.uint8`", (Step(node, "`{code}` is a uint8 tensor"),)
            return None
        if isinstance(node, cst.Subscript):  # `mask[:, None]`: the same dtype
            inner = self._uint8(node.value, depth + 1)
            if inner is not None:
                keeps = Step(node, f"`{{code}}` keeps the dtype of `{self.ctx.snippet(node.value)}`")
                return inner[0], (keeps, *inner[1])
            return None
        if isinstance(node, cst.Name):
            values = self.ctx.assigned_values(node)
            found = [self._uint8(value, depth + 1) for value in values or ()]
            if not found or any(f is None for f in found):
                return None
            origin, steps = found[0]
            return origin, (Step(values[0], f"`{node.value}` = `{{code}}`"),
                            *steps)
        return None

    def _names_uint8(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.SimpleString):
            return node.evaluated_value in ("torch.ByteTensor", "torch.cuda.ByteTensor")
        return (self.ctx.qualname(node) or "") in ("torch.uint8", *torch_api.UINT8_TENSOR_TYPES)

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and ("boolean masks" in raised["message"] or "BoolTensor" in raised["message"]):
            return Verdict(CONFIRMED, f"{raised['type']}: {raised['message']}")
        warned = run.warned("uint8")
        if warned is not None:
            return warned
        return Verdict(NOT_REPRODUCED, "torch neither raised nor warned about a uint8 mask here")


def _bool_mask(ctx, mask: cst.BaseExpression) -> str:
    """``mask`` as a bool mask: ``c.byte()`` -> ``c.bool()``, anything else ``(..).bool()``."""
    if isinstance(mask, cst.Call) and isinstance(mask.func, cst.Attribute) and mask.func.attr.value == "byte" \
            and not mask.args:
        return f"{ctx.code(mask.func.value)}.bool()"
    text = ctx.code(mask)
    simple = isinstance(mask, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))
    return f"{text}.bool()" if simple else f"({text}).bool()"
