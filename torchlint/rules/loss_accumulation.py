"""TL401 loss-accumulation: a running total of graph-attached tensors across loop iterations."""

from __future__ import annotations

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits,
)


class LossAccumulation(Rule):
    code = "TL401"
    name = "loss-accumulation"
    summary = "`total += loss` of a graph-attached tensor in a loop: every iteration's graph stays alive"
    message = (
        "`{stmt}` keeps the autograd graph of every iteration alive through `{total}` (memory grows with "
        "each step); {instead}"
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
    `total = total + loss`, `losses.append(loss)`, `history["loss"].append(loss)` into the
    lists of a dict, `stats.loss_sum.add_(loss)`) when the
    value added is a loss still attached to the autograd graph: a criterion's result, a
    reduced loss function, a full reduction of something computed from parameters; or a
    value that was back-propagated in the same iteration, which proves it carries a graph:
    `loss.backward()`, `losses["total"].backward()` of the dict kept, `history[-1].backward()`
    of the list appended to, or a backward inside this file's function that returned it
    (`losses = trainer.train_step(batch)`, also through `self.loss.backward()` in a method
    it calls). A total reset every few steps under an `if` still keeps the graphs in
    between; a function that adds into a tensor reached from `self` or a parameter keeps
    them across its calls when this file calls it in a loop, also when what it adds is its
    parameter and a call in a loop passes a value back-propagated there (`meter.update(loss)`
    after `loss.backward()`, into `self.sum += val * n`: the advice is then to pass
    `loss.item()` at the call, as other calls may pass numbers). It stays quiet for `.item()`,
    `.detach()` and `float()` totals, for code under `torch.no_grad()`, when what was
    back-propagated is replaced (`out["loss"] = out["loss"].detach()`) before it is kept,
    and, for a loss not yet back-propagated, when the total, or a value computed from it
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
    author. A dict or list of losses gets the advice only. The fix is unsafe because a total that is back-propagated through some other
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
        # losses.append(loss); statistic.add_(loss)
        func = node.func
        if not (isinstance(func, cst.Attribute) and len(node.args) == 1 and node.args[0].keyword is None):
            return
        if func.attr.value == "append" and isinstance(func.value, cst.Name):
            self._check(node, func.value, node.args[0].value, appended=True)
        elif func.attr.value == "append" and isinstance(func.value, cst.Subscript) \
                and isinstance(func.value.value, cst.Name):
            # `history["loss"].append(loss)`: the lists live as long as the dict holding them.
            self._check(node, func.value.value, node.args[0].value, appended=True)
        elif func.attr.value in ("add_", "sub_"):
            self._check(node, func.value, node.args[0].value, in_place=True)

    def _check(self, statement: cst.CSTNode, total: cst.BaseExpression, added: cst.BaseExpression,
               appended: bool = False, in_place: bool = False) -> None:
        if self.ctx.grad_disabled(statement) is not None:
            return
        lifetime = self.ctx.autograd.lifetime
        loop = lifetime.keeping_loop(statement)
        if loop is None:
            return
        if in_place:
            if not lifetime.outlives(total, loop):
                return
        elif isinstance(total, cst.Name):
            if not lifetime.persists(total, loop):
                return
        elif not (isinstance(total, cst.Attribute) and isinstance(total.value, cst.Name)) \
                or lifetime.attribute_wanted(total):
            return
        value = self.ctx.tensor(added)
        # A loss: in the graph, and 0-dimensional. Collecting per-step outputs of a decoder
        # in a list to concatenate them is how recurrent models are unrolled, not a leak.
        # Or anything back-propagated in the same iteration: it carries the graph it kept.
        backward = lifetime.backpropagated(added, loop, total if appended else None)
        caller = None
        if backward is None and isinstance(loop, cst.FunctionDef) and not isinstance(total, cst.Name):
            found = lifetime.backpropagated_by_callers(added, loop)  # `self.sum += val * n` of `meter.update(loss)`
            if found is not None:
                caller, argument, backward = found
        if backward is None:
            if in_place and self.ctx.tensor(total) is None:
                return
            if value is None or not value.attached or not value.scalar or isinstance(loop, cst.FunctionDef):
                return
        # A total back-propagated or returned may be summed to be differentiated, unless
        # every iteration already back-propagated (and freed) what it adds.
        if isinstance(total, cst.Name) and lifetime.graph_wanted(total.value, statement) \
                and (backward is None or not lifetime.runs_unconditionally(backward, statement, loop)
                     or self.ctx.autograd.retains_graph(backward)):
            return
        related = ((backward, "back-propagated here: it holds that graph"),) if backward is not None else ()
        if caller is not None:
            # Other calls may pass numbers: the change belongs where the tensor is passed.
            related = ((caller, "called here, each iteration, with a value that holds its graph"), *related)
            line = self.ctx.line_index.position(caller.start)[0]
            self.report(statement, stmt=statement, total=total, related=related,
                        instead=f"pass numbers where it is called: `{self.ctx.snippet(argument)}.item()` (line {line})")
            return
        if value is None and not lifetime.is_backpropagated_tensor(added, backward):
            # A dict or list of losses: each tensor in it needs `.item()`; no edit does that.
            self.report(statement, stmt=statement, total=total, related=related,
                        instead="keep numbers instead (`.item()` of the tensor, or of each tensor a container holds)")
            return
        detached = edits.method_call(self.ctx, added, "detach()")
        fix = Fix(Applicability.UNSAFE, f"Accumulate `{self.ctx.receiver(added)}.detach()`",
                  (edits.replace(added, detached),))
        receiver = self.ctx.receiver(added)
        self.report(statement, evidence=value, stmt=statement, total=total, fix=fix, related=related,
                    instead=f"accumulate `{receiver}.item()` (or `{receiver}.detach()`)")

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        # A statement run for several objects (two meters, one given losses and one numbers)
        # measures a graph only where the total holds one: those are the iterations compared.
        sizes = [size for size in run.graph_sizes if size] if 0 in run.graph_sizes[1:] else run.graph_sizes
        growth = [b > a for a, b in zip(sizes, sizes[1:])]
        total = f"`{run.probe}`" if run.probe else "the total the statement writes in place"
        if len(sizes) >= 3 and all(growth[-2:]):
            shown = " -> ".join(str(size) for size in sizes[:6]) + (" -> ..." if len(sizes) > 6 else "")
            without = len(run.graph_sizes) - len(sizes)
            left_out = f" ({without} runs of the statement where it held no graph left out)" if without else ""
            return Verdict(CONFIRMED, f"the autograd graph reachable from {total} grew every iteration: "
                                      f"{shown} nodes over {len(sizes)} iterations (each loss's graph stays "
                                      f"alive){left_out}")
        if sizes:
            return Verdict(NOT_REPRODUCED, f"the graph reachable from {total} did not grow "
                                           f"({', '.join(map(str, sizes[:6]))} nodes)")
        return Verdict(NOT_REPRODUCED, "the running total could not be inspected")
