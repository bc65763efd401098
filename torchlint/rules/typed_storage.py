"""TL216 typed-storage: ``x.storage()``, ``torch.FloatStorage(..)``, ``torch.ByteStorage.from_buffer(..)``:
typed storages, deprecated since PyTorch 2.0 (torch warns)."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, Observation, Rule, Verdict, called_name, cst, edits,
    torch_api, torch_facts,
)

_WARNING = "TypedStorage is deprecated"


class TypedStorage(Rule):
    code = "TL216"
    name = "typed-storage"
    summary = ("`x.storage()`, `torch.FloatStorage(..)`, `torch.ByteStorage.from_buffer(..)`: typed storages, "
               "deprecated since PyTorch 2.0 (torch warns)")
    message = ("`{call}` returns a `TypedStorage`, deprecated since PyTorch 2.0 (torch warns); use "
               "`{receiver}.untyped_storage()`, whose sizes and indexes count bytes, not elements")
    fix = Applicability.UNSAFE
    since = "2.0"
    requires = (r"\.[\s\\]*storage(?:_type)?[\s\\]*\(|Storage\b",)  # a call of `.storage()`, or a class
    references = (
        ("torch.TypedStorage (deprecated)", "https://pytorch.org/docs/stable/storage.html"),
        ("torch.Tensor.untyped_storage", "https://pytorch.org/docs/stable/generated/torch.Tensor.untyped_storage.html"),
    )
    docs = """
    ## What it does
    Flags what makes a typed storage: `x.storage()` and `x.storage_type()` where `x` is
    a tensor by the linter's inference (an object of another class with a `storage()`
    method is left alone), and calls of the typed storage classes resolved through the
    file's imports: `torch.FloatStorage(..)`, `torch.LongStorage()`,
    `torch.cuda.FloatStorage(..)`, `torch.Storage(..)`, `torch.TypedStorage(..)`, and
    their `from_buffer`, `from_file` and `_new_shared`. A class of the project's own
    named `FloatStorage` is not reported, nor is a mere mention of a class
    (`isinstance(s, torch.FloatStorage)` does not warn), nor `x.storage_offset()`, which
    is not deprecated. Nor is a call in a branch kept for older torch: of a version
    test, of `if hasattr(x, "untyped_storage")`, or the `except` of a `try` that calls
    `untyped_storage()`.

    ## Why is this bad?
    PyTorch 2.0 made `UntypedStorage` (bytes) the storage of every tensor and kept the
    typed storages (`FloatStorage`: elements of one dtype) as a deprecated wrapper over
    it, to be removed. Each of these calls warns `TypedStorage is deprecated. It will be
    removed in the future and UntypedStorage will be the only storage class` -- once
    per process, so the warning points at whichever use ran first and hides the others.

    ## What to do instead
    Use the tensor, or its untyped storage, and count in bytes:
    `x.untyped_storage()`; `x.untyped_storage().nbytes() // x.element_size()` for the
    number of elements `x.storage().size()` gave; `x.untyped_storage().resize_(n *
    x.element_size())` for `x.storage().resize_(n)` (or no pre-growing at all: `x.resize_()`
    grows the storage itself); `x.dtype` for `x.storage_type()`. The empty tensor of the
    old meters, `torch.FloatTensor(torch.FloatStorage())`, is
    `torch.empty(0, dtype=torch.float32)`, and `torch.ByteTensor(torch.ByteStorage.from_buffer(b))`
    is `torch.frombuffer(b, dtype=torch.uint8)` (which warns on a read-only buffer such
    as `bytes`: pass a `bytearray`).

    ## Fix (unsafe)
    Only where the storage's answer does not depend on its element type:
    `x.storage().data_ptr()` becomes `x.untyped_storage().data_ptr()`, and likewise
    `.nbytes()`, `.is_shared()`, `.is_pinned()`, `.device` and `.is_cuda` (comparing
    two tensors' `storage().data_ptr()` is the common case). Both storages give the same
    values there; the fix is unsafe because what the linter takes for a tensor might be
    another object with a `storage()` method, or a tensor subclass that handles the two
    methods differently. Every other use counts or indexes elements (`size()`, `len()`,
    `resize_(n)`, `s[i]`, `tolist()`), which the untyped storage does in bytes: no
    automatic fix.
    """
    bad = (
        Bad(
            """
            import torch

            weight = torch.randn(4, 3)
            view = weight.t()
            shared = weight.storage().data_ptr() == view.storage().data_ptr()
            capacity = weight.storage().size()
            empty = torch.FloatTensor(torch.FloatStorage())
            """,
            reported=((5, "weight.storage()"), (5, "view.storage()"), (6, "weight.storage()"),
                      (7, "torch.FloatStorage()")),
            fixed="""
            import torch

            weight = torch.randn(4, 3)
            view = weight.t()
            shared = weight.untyped_storage().data_ptr() == view.untyped_storage().data_ptr()
            capacity = weight.storage().size()
            empty = torch.FloatTensor(torch.FloatStorage())
            """,
            unsafe=True,
        ),
    )
    good = (
        """
        import torch

        weight = torch.randn(4, 3)
        view = weight.t()
        shared = weight.untyped_storage().data_ptr() == view.untyped_storage().data_ptr()
        elements = weight.untyped_storage().nbytes() // weight.element_size()
        offset = view.storage_offset()
        empty = torch.empty(0, dtype=torch.float32)
        """,
        """
        class FloatStorage:
            def __init__(self, size=0):
                self.items = [0.0] * size

        class Bucket:
            def storage(self):
                return "s3://bucket"

        def location(bucket):
            return bucket.storage()

        buffer = FloatStorage(3)
        where = Bucket().storage()
        """,
        """
        import torch

        def storage_ptr(tensor: torch.Tensor) -> int:
            try:
                return tensor.untyped_storage().data_ptr()
            except Exception:  # torch before 2.0
                return tensor.storage().data_ptr()
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        # `from torch import LongStorage as Longs`
        self.aliases = self.ctx.imported_aliases(torch_api.TYPED_STORAGE_CLASSES)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("storage", "storage_type"):
            if not node.args:
                self._tensor_method(node, func)
            return
        called = called_name(func)
        if not (called.endswith("Storage") or called in torch_api.STORAGE_BUILDERS or called in self.aliases):
            return  # most calls: no need to resolve the name
        qualname = self.ctx.qualname(func)
        if qualname is None:
            return
        storage = qualname.rsplit(".", 1)[0] if qualname.rsplit(".", 1)[-1] in torch_api.STORAGE_BUILDERS else qualname
        if storage in torch_api.TYPED_STORAGE_CLASSES and not self._for_old_torch(node):
            self.report(node, "`{call}` makes a `{storage}`, a typed storage: deprecated since PyTorch 2.0 "
                              "(torch warns); {advice}",
                        evidence=self.ctx.origin(func, qualname), call=node, storage=storage,
                        advice=self._advice(node, qualname, storage))

    def _tensor_method(self, node: cst.Call, func: cst.Attribute) -> None:
        evidence = self.ctx.tensor(func.value)
        if evidence is None or self._for_old_torch(node):
            return
        if func.attr.value == "storage_type":
            self.report(node, "`{call}` returns a `TypedStorage` class, deprecated since PyTorch 2.0 (torch "
                              "warns); use `{receiver}.dtype`", evidence=evidence, call=node,
                        receiver=self.ctx.receiver(func.value))
            return
        self.report(node, evidence=evidence, fix=self._fix(node, func), call=node,
                    receiver=self.ctx.receiver(func.value))

    def _for_old_torch(self, node: cst.Call) -> bool:
        """``node`` is in the branch kept for torch before 2.0: of a version test, of a test
        that names ``untyped_storage`` (``if hasattr(x, "untyped_storage")``, or such an ``if``
        earlier in the same block: it returns), or in the ``except`` of a ``try`` that calls it."""
        if self.ctx.version_dispatched(node) is not None:
            return True
        child = node
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)) and child is not ancestor.test \
                    and "untyped_storage" in self.ctx.code(ancestor.test):
                return True
            if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
                earlier = ancestor.body[:next(i for i, statement in enumerate(ancestor.body) if statement is child)]
                if any(isinstance(statement, cst.If) and "untyped_storage" in self.ctx.code(statement.test)
                       for statement in earlier):
                    return True
            if isinstance(ancestor, cst.Try) and any(child is handler for handler in ancestor.handlers) \
                    and "untyped_storage" in self.ctx.code(ancestor.body):
                return True
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            child = ancestor
        return False

    def _fix(self, node: cst.Call, func: cst.Attribute) -> Optional[Fix]:
        """``x.untyped_storage()`` for ``x.storage()`` when only an answer both storages give
        alike is read from it: ``x.storage().data_ptr()``, ``x.storage().device``."""
        use = self.ctx.parent(node)
        if not (isinstance(use, cst.Attribute) and use.value is node):
            return None
        called = self.ctx.parent(use)
        if isinstance(called, cst.Call) and called.func is use:
            same = use.attr.value in torch_api.STORAGE_BYTE_METHODS and not called.args
        else:
            same = use.attr.value in torch_api.STORAGE_BYTE_PROPERTIES
        if not same:
            return None
        return Fix(Applicability.UNSAFE, f"Read `{use.attr.value}` of `untyped_storage()`: the same value",
                   (edits.replace(func.attr, "untyped_storage"),))

    def _advice(self, node: cst.Call, qualname: str, storage: str) -> str:
        torch, _ = edits.torch_name(self.ctx)
        dtype = _dtype(storage)
        if dtype is None:
            return f"use a tensor or a `{torch}.UntypedStorage` sized in bytes"
        if qualname.endswith(".from_buffer") and len(node.args) == 1 and node.args[0].keyword is None \
                and not node.args[0].star:
            return (f"read the buffer with `{torch}.frombuffer({self.ctx.snippet(node.args[0].value)}, "
                    f"dtype={torch}.{dtype})`")
        if qualname.endswith(".from_file"):
            return f"map the file to a tensor with `{torch}.from_file(..., dtype={torch}.{dtype})`"
        typed = f"dtype={torch}.{dtype}" + (', device="cuda"' if storage.startswith("torch.cuda.") else "")
        if not node.args and self._wrapped_by_legacy_constructor(node):
            return f"the empty tensor it makes is `{torch}.empty(0, {typed})`"
        return f"use a tensor (`{torch}.empty(n, {typed})`) or a `{torch}.UntypedStorage` sized in bytes"

    def _wrapped_by_legacy_constructor(self, node: cst.Call) -> bool:
        """``torch.FloatTensor(torch.FloatStorage())``: the storage is the constructor's only argument."""
        arg = self.ctx.parent(node)
        call = self.ctx.parent(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(call, cst.Call) and len(call.args) == 1 and \
            torch_api.is_tensor_type(self.ctx.qualname(call.func) or "")

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        for kind, details in run.events:
            if kind == "warning" and _WARNING in details["message"]:
                return Verdict(CONFIRMED, f"torch warned \"{details['message']}\"")
        return Verdict(NOT_REPRODUCED, "torch gave no TypedStorage warning here")


def _dtype(storage: str) -> Optional[str]:
    """The dtype of a typed storage class, from its legacy tensor type: ``torch.LongStorage`` -> ``int64``."""
    name = storage.rsplit(".", 1)[1].replace("Storage", "Tensor")
    fact = torch_facts.fact(f"torch.{name}")
    return fact.legacy_dtype if fact is not None else None
