"""TL203 data-index-scalar: ``loss.data[0]`` on a 0-dim tensor."""

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, DataUse, Fix, Observation, Rule, Verdict, cst, data_access, edits,
    integer_index, is_store_target, tensor_data_use,
)


class DataIndexScalar(Rule):
    code = "TL203"
    name = "data-index-scalar"
    summary = "`loss.data[0]` (or `prec1[0]`) on a 0-dim tensor: `IndexError` since PyTorch 0.5"
    message = "`{base}.data[0]` raises IndexError on a 0-dim tensor since PyTorch 0.5; use `{base}.item()`"
    index_message = "`{base}[0]` raises IndexError: `{base}` is a 0-dim tensor (since PyTorch 0.5); use `{base}.item()`"
    fix = Applicability.SAFE
    since = "0.5"
    requires = (r"\.[\s\\]*data\b|\[\s*0\s*\]",)
    references = (
        ("PyTorch 0.4.0 migration guide", "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/"),
        ("torch.Tensor.item", "https://pytorch.org/docs/stable/generated/torch.Tensor.item.html"),
    )
    docs = """
    ## What it does
    Flags `x.data[0]` where `x` is a 0-dimensional tensor: a loss returned by a
    criterion or `F.*_loss`, a full reduction like `x.sum()`, or a tensor on which
    `.backward()` is called without a gradient argument. The fact follows the value:
    a running total that starts from a number and adds only 0-dim values is 0-dim, and
    so is a value added to a total that is back-propagated (`total += loss`, then
    `total.backward()`); a function or method returns it (alone or inside a tuple);
    `self.loss(..)` is 0-dim wherever its class calls it when the class back-propagates
    the result of another `self.loss(..)` call; and a module whose `forward` returns a
    full reduction on every path gives 0-dim outputs. A value read back by its key
    from a mapping the code does not show (`state['loss']` in a hook given the
    engine's state) is 0-dim when every value the file stores under that key is (None
    aside); the store is shown. The number of dimensions is
    counted where the code shows it: `torch.zeros(3, 4)`, `x.view(n, -1)` and
    `x.repeat(1, k)` have one per size given, `x.t()` at most 2, `x.nonzero()` 2;
    an integer index (`t[i, 0]` with `i` from `range`), an iteration and a reduction
    over one dimension (`x.sum(1)` without `keepdim`) each take one away, and
    elementwise arithmetic has as many as its widest operand. Each step is shown as
    evidence.

    ## Why is this bad?
    Before PyTorch 0.4, losses were 1-element vectors and `loss.data[0]` was the way
    to get a Python number. Since then losses are 0-dimensional, and indexing one
    raises `IndexError: invalid index of a 0-dim tensor. Use tensor.item()`. The
    old code fails as soon as it runs on a modern PyTorch.

    The same read without `.data` (`prec1[0]` of an accuracy computed as `correct_k.mul_(100.0
    / batch_size)`, the 0-dim result of a full reduction) is flagged too, also when the value
    comes out of the list a helper fills with `res.append(..)` and returns (`prec1, prec5 =
    accuracy(output, target, topk=(1, 5))`).

    `x.data[0]` on a tensor with a batch dimension (`output.data[0]`, the first
    sample) is a plain `.data` read and reported as TL101 instead.

    ## What to do instead
    `loss.item()` returns the Python number, and keeps nothing of the graph alive.

    ## Fix (safe)
    `loss.data[0]` becomes `loss.item()`. Where something is looked up on the result
    (`loss.data[0].cpu()`), the fix is unsafe: a Python number has no such attribute.
    """
    bad = (
        Bad(
            """
            import torch.nn as nn

            criterion = nn.CrossEntropyLoss()

            def train_step(model, images, labels):
                loss = criterion(model(images), labels)
                loss.backward()
                return loss.data[0]
            """,
            reported=((8, "loss.data[0]"),),
            fixed="""
            import torch.nn as nn

            criterion = nn.CrossEntropyLoss()

            def train_step(model, images, labels):
                loss = criterion(model(images), labels)
                loss.backward()
                return loss.item()
            """,
        ),
    )
    good = (
        """
        import torch.nn as nn

        criterion = nn.CrossEntropyLoss()

        def train_step(model, images, labels):
            loss = criterion(model(images), labels)
            loss.backward()
            return loss.item()
        """,
        """
        def first_row(model, images):
            output = model(images)
            return output.detach()[0]
        """,
    )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        found = tensor_data_use(self.ctx, node, (DataUse.INDEX_ZERO,))
        if found is None and isinstance(node.value, cst.Subscript) and node.attr.value == "data":
            # `state['loss'].data[0]` in a hook: the file stores only 0-dim tensors under 'loss'.
            stored = self.ctx.inference.keyed_item(node.value)
            access = data_access(self.ctx, node)
            if stored is not None and access.use is DataUse.INDEX_ZERO:
                found = (access, stored)
        if found is None or not found[1].scalar:
            return
        access, evidence = found
        steps = evidence.why
        scalar_why = evidence.scalar_why
        if scalar_why is not None:
            # The step that bounded the dimensions may be in the chain already: say once that none are left.
            steps = tuple(step for step in steps
                          if step.node is not scalar_why.node or not scalar_why.text.startswith(step.text)) + (scalar_why,)
        self.report(access.subscript, evidence=steps, base=node.value, fix=self._item_fix(access.subscript, node.value))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """`prec1[0]` without `.data`: the old way to read a 1-element accuracy, now 0-dim."""
        base = node.value
        if not isinstance(base, cst.Name) or integer_index(node) != 0 or len(node.slice) != 1 or \
                is_store_target(self.ctx, node):
            return
        evidence = self.ctx.tensor(base)
        if evidence is None or not evidence.scalar or evidence.scalar_why is None:
            return
        self.report(node, self.index_message, evidence=evidence.why + (evidence.scalar_why,), base=base,
                    fix=self._item_fix(node, base))

    def _item_fix(self, indexed: cst.Subscript, base: cst.BaseExpression) -> Fix:
        """``indexed`` (`loss.data[0]`, `prec1[0]`) becomes `base.item()`: a Python number, safe
        where the old value is used as one, not where something is looked up on it
        (`loss.data[0].data`, `.cpu()`: AttributeError then)."""
        item = edits.method_call(self.ctx, base, "item()")
        parent = self.ctx.parent(indexed)
        used_as_tensor = isinstance(parent, cst.Attribute) and parent.value is indexed
        return Fix(Applicability.UNSAFE if used_as_tensor else Applicability.SAFE, f"Replace with `{item}`",
                   (edits.replace(indexed, item),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        if run.raised is not None and run.raised["type"] == "IndexError":
            return Verdict(CONFIRMED, f"IndexError: {run.raised['message']}")
        return Verdict(NOT_REPRODUCED, "indexing worked: the value was not 0-dimensional on this run")
