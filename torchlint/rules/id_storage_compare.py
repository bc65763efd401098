"""TL305 id-storage-compare: ``id(a) == id(b)`` to decide whether tensors share memory."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Kind, Observation, Rule, Step, Value, Verdict, cst, edits,
    torch_facts,
)


_STORAGE = "untyped_storage().data_ptr()"


class IdStorageCompare(Rule):
    code = "TL305"
    name = "id-storage-compare"
    summary = "`id(a) == id(b)` on tensors to decide memory sharing: views and detached aliases have other ids"
    message = (
        "`{expr}` compares Python objects, not memory: a view or `.detach()` of a tensor shares its "
        "storage under a different id; compare `{a}.untyped_storage().data_ptr()` instead"
    )
    fix = Applicability.UNSAFE
    requires = (r"\bid\b",)
    references = (
        ("torch.Tensor.untyped_storage", "https://pytorch.org/docs/stable/generated/torch.Tensor.untyped_storage.html"),
    )
    docs = """
    ## What it does
    Flags comparisons of `id()` of tensors (`id(a) == id(b)`, `id(a) != id(b)`,
    `id(a) is id(b)`).

    ## Why is this bad?
    `id()` identifies the Python object, not the memory behind it. `b = a.detach()`,
    `b = a.view(4)` or `b = a[0]` make a new tensor object (a new id) over the *same*
    storage, so writes through one show up in the other while `id(a) != id(b)`. Code
    that uses ids to decide whether it may write in place, or whether two tensors are
    independent, gets it wrong exactly in those cases.

    ## What to do instead
    Compare storages: `a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`,
    or use `a.is_set_to(b)` for "the very same tensor view".

    ## Fix (unsafe)
    Rewrites `id(a) == id(b)` to
    `a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()`, and `!=`
    likewise; `is` becomes `==` and `is not` becomes `!=`, since the storage addresses
    are numbers. It is unsafe because it changes what the comparison means — which
    is the point: a view or a `.detach()` of `a` now counts as sharing `a`'s memory.
    Code that really wanted object identity (the very same tensor object) should
    keep `a is b` instead. It is not offered when the other side is known not to be a
    tensor.
    """
    bad = (
        Bad(
            """
            import torch

            a = torch.tensor([1.0, 2.0], requires_grad=True)
            b = a.detach()
            shared = id(a) == id(b)  # do they share memory? (they do)
            """,
            reported=((5, "id(a) == id(b)"),),
            fixed="""
            import torch

            a = torch.tensor([1.0, 2.0], requires_grad=True)
            b = a.detach()
            shared = a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()  # do they share memory? (they do)
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.detach()
        shared = a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        seen = {id(a)}
        """,
    )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
            return
        left = self._id_argument(node.left)
        right = self._id_argument(target.comparator)
        if left is None or right is None:
            return
        evidence: Optional[Value] = self.ctx.tensor(left) or self.ctx.tensor(right)
        if evidence is not None:
            subject = left if self.ctx.tensor(left) is not None else right
            self.report(node, evidence=evidence, expr=node, a=self.ctx.receiver(subject),
                        fix=self._fix(node, left, right))
            return
        for subject, other in ((left, right), (right, left)):
            evidence = self._alias_of_itself(subject, other)
            if evidence is not None:
                self.report(node, evidence=evidence, expr=node, a=self.ctx.receiver(subject),
                        fix=self._fix(node, left, right))
                return

    def _alias_of_itself(self, subject: cst.BaseExpression, other: cst.BaseExpression) -> Optional[Value]:
        """``id(a) == id(a.detach())`` where nothing says what ``a`` is (a parameter of an
        unannotated function): ``other`` calls a method that only tensors have, and that
        shares memory, on ``subject`` itself."""
        if not (isinstance(other, cst.Call) and isinstance(other.func, cst.Attribute)):
            return None
        method = other.func.attr.value
        fact = torch_facts.method(method)
        if fact is None or not fact.tensor_only or fact.aliasing not in ("view", "maybe_self") \
                or self.ctx.code(other.func.value) != self.ctx.code(subject):
            return None
        return Value(Kind.TENSOR, (Step(other, f"`{{code}}` calls `{method}()` on it, which only tensors have "
                                               f"(and which shares its memory)"),))

    def _fix(self, node: cst.Comparison, left: cst.BaseExpression, right: cst.BaseExpression) -> Optional[Fix]:
        if self._not_tensor(left) or self._not_tensor(right):
            return None
        target = node.comparisons[0]
        operator = target.operator
        changes = [
            edits.replace(node.left, edits.method_call(self.ctx, left, _STORAGE)),
            edits.replace(target.comparator, edits.method_call(self.ctx, right, _STORAGE)),
        ]
        if isinstance(operator, (cst.Is, cst.IsNot)):  # addresses are ints: compare them by value
            changes.append(edits.replace(operator, "==" if isinstance(operator, cst.Is) else "!="))
        return Fix(Applicability.UNSAFE, "Compare the storages' data pointers", tuple(changes))

    def _not_tensor(self, node: cst.BaseExpression) -> bool:
        value = self.ctx.infer(node)
        return value is not None and value.kind is not Kind.TENSOR

    def _id_argument(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        if isinstance(node, cst.Call) and len(node.args) == 1 and self.ctx.qualname(node.func) == "builtins.id":
            return node.args[0].value
        return None

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        ids = run.first("ids")
        if ids is not None and ids["shared"] and not ids["same_id"]:
            return Verdict(CONFIRMED, f"`{ids['left']}` and `{ids['right']}` share memory, yet their ids differ: "
                                      "the comparison says they do not")
        if ids is not None:
            return Verdict(NOT_REPRODUCED, "the id comparison agreed with the storage on this run")
        return Verdict(NOT_REPRODUCED, "the compared values were not tensors on this run")
