"""TL103 data-assign: ``x.data = y``."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    LATENT, NOT_REPRODUCED, Applicability, Bad, DataUse, FileContext, Fix, Kind, Observation, Rule, Verdict,
    base_evidence, cst, data_access, edits, iter_nodes, only_read, quote, tensor_data_use, torch_api,
)


class DataAssign(Rule):
    code = "TL103"
    name = "data-assign"
    summary = "`x.data = y` swaps a tensor's storage behind autograd (the shape may change silently)"
    message = (
        "Assigning to `{base}.data` swaps its storage behind autograd's back and may change its "
        "shape silently; use `with torch.no_grad(): {base}.copy_(...)`"
    )
    fix = Applicability.UNSAFE
    since = "0.4"
    requires = (r"\.[\s\\]*data\b",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
        ("torch.Tensor.set_", "https://pytorch.org/docs/stable/generated/torch.Tensor.set_.html"),
    )
    docs = """
    ## What it does
    Flags assignments to the `.data` attribute of a tensor: `w.data = new_w`.

    ## Why is this bad?
    Assigning `.data` replaces the tensor's storage without autograd knowing: any
    graph that saved the old tensor now computes gradients from something else, and
    nothing checks that the new value has the same shape, dtype or device. A
    parameter can silently change shape (the optimizer's state then no longer
    matches it), or move to another device.

    ## What to do instead
    Copy the values in place under `torch.no_grad()`: `with torch.no_grad():
    w.copy_(new_w)`. `copy_` checks that the shapes are compatible. To really give a
    parameter a new shape, create a new `nn.Parameter` and rebuild the optimizer.

    ## Fix (unsafe)
    Rewrites `x.data = y` to `x.copy_(y)` under `with torch.no_grad():` (importing
    torch if needed); under `torch.no_grad()` already, only rewrites the statement.
    `copy_` keeps `x`'s shape, dtype, device and storage where `.data =` replaced
    them, so the fix is only applied where `y` provably has `x`'s shape and dtype: `y`
    is computed from `x` itself (`x.data`, `x.detach()`, `x.grad`) by element-wise
    operations with Python numbers (`x.data.clamp(0, 1)`, `p.data - lr * p.grad.data`
    with `lr` a number), or is `torch.zeros_like(x)` and the like; operations that
    may change the dtype of an integer tensor count only when `x` requires grad (so is
    floating point). It is unsafe because the write becomes visible to autograd (a
    graph that saved `x` now raises instead of silently using the new values), and
    other views of `x`'s old storage now see the new values. Everywhere else the
    rewrite is display-only, and no fix is offered for `x.data` among several targets.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn as nn

            layer = nn.Linear(4, 2)
            layer.weight.data = torch.zeros(2, 4)
            """,
            reported=((5, "layer.weight.data"),),
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        layer = nn.Linear(4, 2)
        with torch.no_grad():
            layer.weight.copy_(torch.zeros(2, 4))
        """,
        """
        class Batch:
            def __init__(self, data):
                self.data = data
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        found = tensor_data_use(self.ctx, node, (DataUse.ASSIGN,))
        if found is not None:
            self.report(node, evidence=found[1], base=node.value, fix=self._fix(node))

    def _fix(self, node: cst.Attribute) -> Optional[Fix]:
        assign = _assignment(self.ctx, node)
        if assign is None:
            return None
        provable = _provable(self.ctx, assign)
        applicability = Applicability.UNSAFE if provable else Applicability.DISPLAY_ONLY
        message = f"Copy into `{self.ctx.snippet(node.value)}` with `copy_`"
        if self.ctx.grad_disabled(node) is not None:
            return Fix(applicability, message, (edits.replace(assign, _copy(self.ctx, assign, provable)),))
        line = edits.own_line(self.ctx, node)
        if line is None:
            return None
        lines, assigns = [line], [assign]
        if provable and self._provable_line(line) is not None:
            # Consecutive provable assignments (`w.data = ..; b.data = ..`) share one block.
            lines = edits.statement_run(self.ctx, line, lambda other: self._provable_line(other) is not None)
            assigns = [self._provable_line(other) for other in lines]
        return Fix(applicability, message + " under `torch.no_grad()`",
                   edits.wrap_in_no_grad(self.ctx, lines, [(a, _copy(self.ctx, a, provable)) for a in assigns]))

    def _provable_line(self, line: cst.SimpleStatementLine) -> Optional[cst.Assign]:
        """The statement of ``line`` when it is a `x.data = y` this rule would fix as unsafe."""
        if edits.has_noqa(self.ctx, line):
            return None
        statement = line.body[0] if len(line.body) == 1 else None
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return None
        target = statement.targets[0].target
        if not (isinstance(target, cst.Attribute) and target.attr.value == "data"
                and base_evidence(self.ctx, target) is not None):
            return None
        return statement if _provable(self.ctx, statement) else None

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        swap = run.first("swap")
        if swap is None:
            return Verdict(NOT_REPRODUCED, "the assignment did not run on a tensor")
        shape = ""
        if swap["new_shape"] is not None and swap["new_shape"] != swap["old_shape"]:
            shape = f"; the shape changed from {list(swap['old_shape'])} to {list(swap['new_shape'])} without autograd"
        if swap["saved"]:
            return Verdict(LATENT, f"`.data =` swapped the storage of a tensor saved for backward at "
                                   f"{quote(swap['saved'][0])}, but no backward used it on this run{shape}")
        return Verdict(NOT_REPRODUCED, f"the storage was swapped while no tensor saved for backward used it{shape}")


def _assignment(ctx: "FileContext", node: cst.Attribute) -> Optional[cst.Assign]:
    """The `node = y` statement, when `node` is its only target and `y` can be an argument."""
    target = ctx.parent(node)
    assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    if isinstance(assign.value, (cst.Yield, cst.Await)) and not assign.value.lpar:
        return None
    return assign


def _copy(ctx: "FileContext", assign: cst.Assign, provable: bool) -> str:
    """`x.copy_(y)` for `x.data = y`, made of the source of `x` and `y` (comments and all).
    When `y` is provably computed from `x`, its `x.data` reads lose `.data` too: under
    `torch.no_grad()` nothing records them."""
    x = assign.targets[0].target.value
    value = assign.value
    if provable:
        value, source = _without_data(ctx, x, value)
    else:
        source = ctx.code(value)
    if len(value.lpar) == 1:
        # `x.data = (\n  a\n  + b\n)`: the call's parentheses take over the value's.
        return f"{ctx.code(x)}.copy_{source}"
    if isinstance(value, cst.Tuple) and not value.lpar:
        source = f"({source})"
    return f"{ctx.code(x)}.copy_({source})"


def _without_data(ctx: "FileContext", x: cst.BaseExpression,
                  value: cst.BaseExpression) -> tuple[cst.BaseExpression, str]:
    """`x.data` -> `x` (and `x.grad.data` -> `x.grad`) in ``value``: the node that stands
    for ``value`` afterwards (``x`` when ``value`` is `x.data`), and the source of the
    result.  A dropped `.data` takes the parentheses around `x.data` with it."""
    while _drops_data(ctx, x, value):
        value = value.value
    start, end = ctx.outer_span(value)
    cuts = []
    for node in iter_nodes(value):
        if node is not value and _drops_data(ctx, x, node):
            (outer_start, outer_end), (kept_start, kept_end) = ctx.outer_span(node), ctx.outer_span(node.value)
            cuts += [(outer_start, kept_start), (kept_end, outer_end)]
    parts, offset = [], start
    for cut_start, cut_end in sorted(cuts):
        parts.append(ctx.text[offset:cut_start])
        offset = cut_end
    parts.append(ctx.text[offset:end])
    return value, "".join(parts)


def _drops_data(ctx: "FileContext", x: cst.BaseExpression, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "data" and _is_x(ctx, x, node.value)


def _provable(ctx: "FileContext", assign: cst.Assign) -> bool:
    """`y` in `x.data = y` provably has `x`'s shape and dtype, and `x` is a plain reference
    (`x[0].data = y` changes a temporary view, where `x[0].copy_(y)` would write into `x`)."""
    x = assign.targets[0].target.value
    if not _plain_reference(ctx, x):
        return False
    value = ctx.tensor(x)
    # A leaf that requires grad is floating point: Python numbers keep its dtype.
    floating = value is not None and bool(value.attached) and bool(value.leaf)
    return _like(ctx, x, assign.value, floating) and not _storage_kept(ctx, assign, x)


def _storage_kept(ctx: "FileContext", assign: cst.Assign, x: cst.BaseExpression) -> bool:
    """Elsewhere in the function (or module), `x.data`, `x.detach()` or a view of `x` may be
    kept: `.data =` leaves such an alias on the old storage, where `copy_` writes through it
    (`saved = x.data; x.data = zeros; ...; x.data = saved` restores nothing after the fix)."""
    scope = ctx.enclosing_function(assign) or ctx.module
    inside = {id(node) for node in iter_nodes(assign)}
    for node in iter_nodes(scope):
        if id(node) in inside or not _same(ctx, node, x):
            continue
        parent = ctx.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            name = parent.attr.value
            if name == "grad" or name.endswith("_"):
                continue  # another tensor, or an in-place method that returns `x` itself
            if name == "data" and data_access(ctx, parent).use in (DataUse.ASSIGN, DataUse.WRITE):
                continue
            if not only_read(ctx, parent if name == "data" else node):
                return True
        elif isinstance(parent, cst.Subscript) and parent.value is node and not only_read(ctx, node):
            return True
    return False


def _plain_reference(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """A name, or attributes of a name and of submodules picked by index (`net[0].weight`)."""
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript):
            value = ctx.infer(node)
            if value is None or value.kind is not Kind.MODULE:
                return False
        node = node.value
    return isinstance(node, cst.Name)


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


def _like(ctx: "FileContext", x: cst.BaseExpression, node: cst.BaseExpression, floating: bool) -> bool:
    """``node`` evaluates to a tensor with ``x``'s shape, dtype and device."""
    if _is_x(ctx, x, node):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _like(ctx, x, node.expression, floating)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left, right = (_like(ctx, x, side, floating) for side in (node.left, node.right))
        if left and right:
            return floating or isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply))
        return floating and (left and _number(ctx, node.right) or right and _number(ctx, node.left))
    if not isinstance(node, cst.Call) or any(arg.star for arg in node.args):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and _like(ctx, x, func.value, floating):
        if func.attr.value in torch_api.PLAIN_COPY_METHODS:
            return not node.args
        return floating and func.attr.value in torch_api.ELEMENTWISE_METHODS \
            and all(_number(ctx, a.value) for a in node.args)
    if ctx.qualname(func) in torch_api.LIKE_FACTORIES:
        args = node.args
        return bool(args) and args[0].keyword is None and _like(ctx, x, args[0].value, floating) \
            and all(a.keyword is None and _number(ctx, a.value) for a in args[1:])
    return False


def _is_x(ctx: "FileContext", x: cst.BaseExpression, node: cst.BaseExpression) -> bool:
    """``node`` is ``x``, ``x.data``, ``x.detach()`` or ``x.grad`` (which autograd keeps at
    ``x``'s shape and dtype)."""
    while not _same(ctx, node, x):
        if isinstance(node, cst.Attribute) and node.attr.value in ("data", "grad"):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value == "detach" and not node.args:
            node = node.func.value
        else:
            return False
    return True


def _same(ctx: "FileContext", a: cst.CSTNode, b: cst.BaseExpression) -> bool:
    """``a`` and ``b`` are the same expression, written alike (parentheses, blanks and
    comments included)."""
    return type(a) is type(b) and ctx.code(a) == ctx.code(b)


def _number(ctx: "FileContext", node: cst.BaseExpression) -> bool:
    """A real Python number (never a tensor, never complex)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _number(ctx, node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        return _number(ctx, node.left) and _number(ctx, node.right)
    if isinstance(node, cst.Name):
        value = ctx.infer(node)
        return value is not None and value.kind is Kind.OTHER and node.value not in ("True", "False")
    return False
