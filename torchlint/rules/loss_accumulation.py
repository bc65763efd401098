"""TL401 loss-accumulation: a running total of graph-attached tensors across loop iterations."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, BindingKind, Fix, Observation, Rule, Verdict, cst, edits,
    iter_nodes,
)


class LossAccumulation(Rule):
    code = "TL401"
    name = "loss-accumulation"
    summary = "`total += loss` of a graph-attached tensor in a loop: every iteration's graph stays alive"
    message = (
        "`{stmt}` keeps the autograd graph of every iteration alive through `{total}` (memory grows with "
        "each step); accumulate `{value}.item()` (or `{value}.detach()`)"
    )
    fix = Applicability.UNSAFE
    # A loop, and something added or appended.
    requires = (r"\b(?:for|while)\b", r"[-+]|\bappend\b")
    references = (
        ("PyTorch FAQ: do not accumulate history across your training loop", "https://pytorch.org/docs/stable/notes/faq.html"),
    )
    docs = """
    ## What it does
    Flags a running total that persists across loop iterations (`total += loss`,
    `total = total + loss`, `losses.append(loss)`) when the value added is a loss still
    attached to the autograd graph: a criterion's result, a reduced loss function, a
    full reduction of something computed from parameters. It stays quiet for `.item()`, `.detach()` and `float()` totals,
    for code under `torch.no_grad()`, and when the total, or a value computed from it
    (`mean = total / n`), is later passed to `backward()` or returned (summing losses to
    back-propagate them together is fine).

    ## Why is this bad?
    A tensor keeps its whole computation graph alive, with the activations it saved.
    Adding it to a total links every iteration's graph to the next: memory grows with
    each step until the process runs out, typically in a validation loop or an epoch
    loss meant for logging. Nothing warns.

    ## What to do instead
    Accumulate a Python number with `loss.item()` (or a detached tensor with
    `loss.detach()` to avoid a device sync on every step).

    ## Fix (unsafe)
    Detaches what is added: `total += loss` becomes `total += loss.detach()`,
    `total = total + loss` becomes `total = total + loss.detach()`, and
    `losses.append(loss)` becomes `losses.append(loss.detach())`. The total stays a
    tensor with the same value on the same device, so everything done with it
    afterwards keeps working (`total.item()`, `total / n`, formatting,
    `torch.stack(losses)`), and no device sync is added to the loop. `.item()` would
    make it a Python number and break exactly those tensor uses, so it is left to the
    author. The fix is unsafe because a total that is back-propagated through some other
    name (`mean = sum(losses) / n; mean.backward()`) loses its gradient, and because
    the total no longer shows a `grad_fn`.
    """
    bad = (
        Bad(
            """
            import torch.nn as nn

            criterion = nn.CrossEntropyLoss()

            def evaluate(model: nn.Module, batches):
                total = 0.0
                for images, labels in batches:
                    total += criterion(model(images), labels)
                print("validation loss", total / len(batches))
            """,
            reported=((8, "total += criterion(model(images), labels)"),),
            fixed="""
            import torch.nn as nn

            criterion = nn.CrossEntropyLoss()

            def evaluate(model: nn.Module, batches):
                total = 0.0
                for images, labels in batches:
                    total += criterion(model(images), labels).detach()
                print("validation loss", total / len(batches))
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss()

        def evaluate(model: nn.Module, batches):
            total = 0.0
            for images, labels in batches:
                total += criterion(model(images), labels).item()
            return total / len(batches)

        def train_step(model: nn.Module, optimizer, chunks):
            optimizer.zero_grad()
            loss = 0.0
            for images, labels in chunks:
                loss = loss + criterion(model(images), labels)
            loss.backward()
            optimizer.step()

        def train_epoch(model: nn.Module, optimizer, batches):
            for chunks in batches:
                total = 0
                for images, labels in chunks:
                    total = total + criterion(model(images), labels)
                mean = total / len(chunks)
                optimizer.zero_grad()
                mean.backward()
                optimizer.step()
        """,
    )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._check(node, node.target, node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        # total = total + loss
        value = node.value
        if len(node.targets) != 1 or not isinstance(value, cst.BinaryOperation):
            return
        if not isinstance(value.operator, (cst.Add, cst.Subtract)):
            return
        target = node.targets[0].target
        if isinstance(target, cst.Name) and isinstance(value.left, cst.Name) and value.left.value == target.value:
            self._check(node, value.left, value.right)  # the read of `total` resolves to its bindings

    def visit_Call(self, node: cst.Call) -> None:
        # losses.append(loss)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(node.args) == 1 \
                and isinstance(func.value, cst.Name):
            self._check(node, func.value, node.args[0].value, appended=True)

    def _check(self, statement: cst.CSTNode, total: cst.BaseExpression, added: cst.BaseExpression,
               appended: bool = False) -> None:
        value = self.ctx.tensor(added)
        # A loss: in the graph, and 0-dimensional. Collecting per-step outputs of a decoder
        # in a list to concatenate them is how recurrent models are unrolled, not a leak.
        if value is None or not value.attached or not value.scalar:
            return
        if self.ctx.grad_disabled(statement) is not None:
            return
        loop = self._innermost_loop(statement)
        if loop is None:
            return
        if isinstance(total, cst.Name):
            if not self._persists(total, loop):
                return
            if self._feeds_backward_or_escapes(total.value, statement):
                return
        elif not (isinstance(total, cst.Attribute) and isinstance(total.value, cst.Name)):
            return
        detached = edits.method_call(self.ctx, added, "detach()")
        fix = Fix(Applicability.UNSAFE, f"Accumulate `{self.ctx.receiver(added)}.detach()`",
                  (edits.replace(added, detached),))
        self.report(statement, evidence=value, stmt=statement, total=total, value=added, fix=fix)

    def _innermost_loop(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        child = node
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)) and child is ancestor.body:
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
            child = ancestor
        return None

    def _persists(self, total: cst.Name, loop: cst.CSTNode) -> bool:
        """The total was set before the loop and is not reset inside it."""
        bindings = self.ctx.model.resolve(total)
        if not bindings:
            return False
        scope = bindings[0].scope
        for binding in scope.bindings.get(total.value, ()):
            if binding.kind in (BindingKind.ASSIGN, BindingKind.FOR, BindingKind.WITH) \
                    and self._inside(binding.node, loop) and not self._is_accumulation(binding):
                return False
        return True

    def _is_accumulation(self, binding) -> bool:
        value = binding.value
        return isinstance(value, cst.BinaryOperation) and isinstance(value.left, cst.Name) \
            and value.left.value == binding.name

    def _inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return any(ancestor is container for ancestor in self.ctx.ancestors(node))

    def _feeds_backward_or_escapes(self, name: str, statement: cst.CSTNode) -> bool:
        """`total.backward()`, `(total / n).backward()`, `torch.autograd.backward(total)`,
        `sum(losses).backward()` or `return total`: the graph is wanted."""
        function = self.ctx.enclosing_function(statement) or self.ctx.module
        cache = self.ctx.cache.setdefault("loss_accumulation", {})
        key = id(function)
        if key not in cache:
            cache[key] = self._graph_consumers(function)
        return name in cache[key]

    def _graph_consumers(self, function: cst.CSTNode) -> set[str]:
        """The names whose graph is wanted: in what is back-propagated or returned, and in
        what those names were computed from (`mean = total / n; mean.backward()`)."""
        names: set[str] = set()
        sources: dict[str, set[str]] = {}
        for node in iter_nodes(function):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                sources.setdefault(node.targets[0].target.value, set()).update(
                    n.value for n in iter_nodes(node.value) if isinstance(n, cst.Name))
            consumed: Optional[cst.CSTNode] = None
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == "backward":
                consumed = node.func.value
            elif isinstance(node, cst.Call) and self.ctx.qualname(node.func) in (
                "torch.autograd.backward", "torch.autograd.grad"
            ):
                consumed = node
            elif isinstance(node, (cst.Return, cst.Yield)) and node.value is not None:
                consumed = node.value
            if consumed is not None:
                names.update(n.value for n in iter_nodes(consumed) if isinstance(n, cst.Name))
        pending = list(names)
        while pending:
            for source in sources.get(pending.pop(), ()):
                if source not in names:
                    names.add(source)
                    pending.append(source)
        return names

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        sizes = run.graph_sizes
        growth = [b > a for a, b in zip(sizes, sizes[1:])]
        if len(sizes) >= 3 and all(growth[-2:]):
            shown = " -> ".join(str(size) for size in sizes[:6]) + (" -> ..." if len(sizes) > 6 else "")
            return Verdict(CONFIRMED, f"the autograd graph reachable from `{run.probe}` grew every iteration: "
                                      f"{shown} nodes over {len(sizes)} iterations (each loss's graph stays alive)")
        if sizes:
            return Verdict(NOT_REPRODUCED, f"the graph reachable from `{run.probe}` did not grow "
                                           f"({', '.join(map(str, sizes[:6]))} nodes)")
        return Verdict(NOT_REPRODUCED, "the running total could not be inspected")
