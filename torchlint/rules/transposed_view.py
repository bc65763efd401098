"""TL215 transposed-view: ``correct[:k].view(-1)`` where ``correct`` has the layout of
``pred.t()``: the top-k accuracy of the 2017 ImageNet example, a RuntimeError since PyTorch 1.7."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Step, Verdict, cst, edits,
    positional_args, torch_api,
)

_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_SWAPPED = ({0, 1}, {-1, -2})


class TransposedView(Rule):
    code = "TL215"
    name = "transposed-view"
    summary = ("`correct[:k].view(-1)` on the transposed layout of `pred.t()` (top-k accuracy): RuntimeError "
               "since PyTorch 1.7 when k > 1")
    message = ("`{call}` raises RuntimeError{when}: `{tensor}` has the transposed layout of `{origin}`, "
               "so its first rows are not one block of memory; use `{fixed}`")
    fix = Applicability.SAFE
    since = "1.7"
    requires = (r"\.view\(", r"(?:\.t\(\)|\.transpose\(|\.T\b)")
    references = (
        ("torch.Tensor.view", "https://pytorch.org/docs/stable/generated/torch.Tensor.view.html"),
        ("bearpaw/pytorch-classification#53: the error in the top-k accuracy", "https://github.com/bearpaw/pytorch-classification/issues/53"),
    )
    docs = """
    ## What it does
    Flags `x[:k].view(...)` where `x` has the memory layout of a transposed 2-d tensor:
    `x` is `p.t()` (or `p.transpose(0, 1)`, `p.T`), or an elementwise result whose
    receiver is one (`p.eq(..)`, `p == ..`, `.float()`), directly or through names bound
    only to such values, and `k` is not the literal 1. This is the top-k accuracy that
    the PyTorch ImageNet example shipped and thousands of repositories copied:

    ```python
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    correct_k = correct[:k].view(-1).float().sum(0)
    ```

    ## Why is this bad?
    `pred.t()` is a `(maxk, batch)` view whose rows are strided across memory. Up to
    PyTorch 1.6, `pred.eq(..)` returned a new contiguous tensor, and viewing its first
    `k` rows as one vector worked. Since 1.7 elementwise operations give their result the
    layout of their input, so `correct` is transposed too, and for `k > 1` its first rows
    cannot be seen as one vector without a copy: `RuntimeError: view size is not
    compatible with input tensor's size and stride (at least one dimension spans across
    two contiguous subspaces). Use .reshape(...) instead.` Top-5 accuracy, and the
    training loop that logs it, stop at the first batch. (With `k = 1` the single row
    can still be viewed, which is why top-1 alone keeps working.)

    ## What to do instead
    `correct[:k].reshape(-1)`, which views where it can and copies where it must (the
    PyTorch example's own fix), or `correct[:k].contiguous().view(-1)`.

    ## Fix (safe)
    `.view(` becomes `.reshape(`. Where `view` succeeds, `reshape` returns the same view;
    where it raises, `reshape` returns a copy with the same values.
    """
    bad = (
        Bad(
            """
            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                pred = pred.t()
                correct = pred.eq(target.view(1, -1).expand_as(pred))
                return [correct[:k].view(-1).float().sum(0) for k in topk]
            """,
            reported=((6, "correct[:k].view(-1)"),),
            fixed="""
            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                pred = pred.t()
                correct = pred.eq(target.view(1, -1).expand_as(pred))
                return [correct[:k].reshape(-1).float().sum(0) for k in topk]
            """,
        ),
    )
    good = (
        """
        def accuracy(output, target, topk=(1,)):
            maxk = max(topk)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            top1 = correct[:1].view(-1).float().sum(0)
            return [correct[:k].reshape(-1).float().sum(0) for k in topk], top1
        """,
        """
        def accuracy(output, target, k):
            _, pred = output.topk(k, 1, True, True)
            correct = pred.eq(target.view(-1, 1).expand_as(pred)).t().contiguous()
            return correct[:k].view(-1).float().sum(0)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "view" or self.ctx.qualname(func) is not None:
            return
        rows = func.value
        if not isinstance(rows, cst.Subscript):
            return
        bound = _leading_rows(rows)
        if bound is None:
            return
        found = self._transposed(rows.value, 0)
        if found is None:
            return
        origin, steps = found
        taken = Step(rows, f"`{{code}}` takes the first `{self.ctx.snippet(bound)}` rows of that layout")
        reshaped = f"{self.ctx.code(rows)}.reshape{self.ctx.code(node)[len(self.ctx.code(func)):]}"
        fix = Fix(Applicability.SAFE, "Use `reshape`, which copies where a view cannot be made",
                  (edits.replace(func.attr, "reshape"),))
        self.report(node, evidence=(*steps, taken), fix=fix, call=self.ctx.snippet(node),
                    when="" if isinstance(bound, cst.Integer) else f" when `{self.ctx.snippet(bound)}` > 1",
                    tensor=self.ctx.snippet(rows.value), origin=origin, fixed=reshaped)

    def _transposed(self, node: cst.BaseExpression, depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        """How ``node`` has the layout of a transposed 2-d tensor: the transposing code, and the evidence."""
        if depth > 6:
            return None
        if isinstance(node, cst.Attribute) and node.attr.value == "T" and self.ctx.qualname(node) is None:
            return self.ctx.code(node), (Step(node, "`{code}` is a transposed view: its rows are strided"),)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and self.ctx.qualname(node.func) is None:
            method = node.func.attr.value
            if _transposes(node, method):
                return self.ctx.code(node), (Step(node, "`{code}` is a transposed view: its rows are strided"),)
            if method in torch_api.LAYOUT_KEEPING_METHODS:
                return self._kept(node, node.func.value, depth)
            return None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 \
                and isinstance(node.comparisons[0].operator, _COMPARISONS):
            return self._kept(node, node.left, depth)
        if isinstance(node, cst.Name):
            values = self.ctx.assigned_values(node)
            found = [self._transposed(value, depth + 1) for value in values or ()]
            if not found or any(f is None for f in found):
                return None
            origin, steps = found[0]
            return origin, (Step(values[0], f"`{node.value}` = `{{code}}`"),
                            *steps)
        return None

    def _kept(self, node: cst.BaseExpression, source: cst.BaseExpression,
              depth: int) -> Optional[tuple[str, tuple[Step, ...]]]:
        found = self._transposed(source, depth + 1)
        if found is None:
            return None
        keeps = Step(node, f"`{{code}}` is elementwise: since PyTorch 1.7 its result has the layout of "
                           f"`{self.ctx.snippet(source)}`")
        return found[0], (keeps, *found[1])

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        raised = run.raised
        if raised is not None and raised["type"] == "RuntimeError" and "view size is not compatible" in \
                raised["message"]:
            return Verdict(CONFIRMED, f"RuntimeError: {raised['message']}")
        return Verdict(NOT_REPRODUCED, "`view` worked here: the rows taken were one block of memory on this run")


def _transposes(call: cst.Call, method: str) -> bool:
    """``p.t()``, ``p.transpose(0, 1)``, ``p.transpose(-1, -2)``: the two dimensions of a 2-d tensor swapped."""
    arguments = positional_args(call)
    if method == "t":
        return not call.args
    if method != "transpose" or len(arguments) != 2 or len(call.args) != 2:
        return False
    dims = set()
    for argument in arguments:
        value = argument.value
        negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
        if negative:
            value = value.expression
        if not isinstance(value, cst.Integer):
            return False
        dims.add(-int(value.value) if negative else int(value.value))
    return dims in _SWAPPED


def _leading_rows(subscript: cst.Subscript) -> Optional[cst.BaseExpression]:
    """``k`` of ``x[:k]`` or ``x[:k, :]``, unless it is the literal 0 or 1 (one row can be viewed)."""
    elements = subscript.slice
    if not elements or len(elements) > 2 or not isinstance(elements[0].slice, cst.Slice):
        return None
    rows = elements[0].slice
    if rows.lower is not None or rows.step is not None or rows.upper is None:
        return None
    if isinstance(rows.upper, cst.Integer) and rows.upper.value in ("0", "1"):
        return None
    if len(elements) == 2:
        rest = elements[1].slice
        if not isinstance(rest, cst.Slice) or rest.lower is not None or rest.upper is not None or \
                rest.step is not None:
            return None
    return rows.upper
