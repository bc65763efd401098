"""TL204 legacy-constructor: ``torch.Tensor(3)``, ``torch.FloatTensor(2, 3)``, ``x.new(..)``,
``x.type(torch.cuda.FloatTensor)``, ``torch.set_default_tensor_type(..)``."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint import torch_api
from torchlint.data_attribute import base_evidence
from torchlint.nodes import looks_like_size, positional_args
from torchlint.rule import Rule
from torchlint.values import Kind, Step

# The dtype each legacy type stands for (torch.Tensor: the default dtype, float32).
DTYPES = {
    "Tensor": "torch.float32", "FloatTensor": "torch.float32", "DoubleTensor": "torch.float64",
    "HalfTensor": "torch.float16", "BFloat16Tensor": "torch.bfloat16", "ByteTensor": "torch.uint8",
    "CharTensor": "torch.int8", "ShortTensor": "torch.int16", "IntTensor": "torch.int32",
    "LongTensor": "torch.int64", "BoolTensor": "torch.bool",
}


def legacy_type(qualname: Optional[str]) -> Optional[tuple[str, bool]]:
    """(dtype, on CUDA) for ``torch.FloatTensor``, ``torch.cuda.LongTensor``, ``'torch.IntTensor'``..."""
    if not qualname or not torch_api.is_tensor_type(qualname):
        return None
    parts = qualname.split(".")
    if parts[-1] not in DTYPES:
        return None
    return DTYPES[parts[-1]], parts[1] == "cuda"


def _is_storage(ctx, value: cst.BaseExpression) -> bool:
    """`torch.ByteStorage.from_buffer(b)`, `torch.FloatStorage(n)`, `t.storage()`, `t.untyped_storage()`."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value in ("storage", "untyped_storage"):
        return ctx.tensor(value.func.value) is not None
    qualname = ctx.qualname(value.func) or ""
    return qualname.startswith("torch.") and (qualname.endswith("Storage") or qualname.endswith("Storage.from_buffer"))


def _from_buffer_argument(ctx, storage: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`b` in `torch.ByteStorage.from_buffer(b)`."""
    if isinstance(storage, cst.Call) and (ctx.qualname(storage.func) or "").endswith("Storage.from_buffer"):
        args = positional_args(storage)
        return args[0].value if len(args) == 1 else None
    return None


class LegacyConstructor(Rule):
    code = "TL204"
    name = "legacy-constructor"
    summary = "`torch.Tensor(3)`, `torch.FloatTensor(2, 3)`, `x.new(..)`, `.type(torch.cuda.FloatTensor)`: legacy constructors (uninitialized memory, hidden dtype)"
    message = "`{call}` is a legacy constructor; use `{modern}`"
    docs = """
    ## What it does
    Flags the legacy tensor constructors and type conversions: `torch.Tensor(...)`,
    `torch.FloatTensor(...)` and the other typed classes (`torch.LongTensor`,
    `torch.cuda.FloatTensor`...), `x.new(...)` on a tensor, `x.type(torch.cuda.FloatTensor)`,
    and `torch.set_default_tensor_type(...)`, and names the modern spelling that keeps
    the same dtype and device.

    ## Why is this bad?
    The legacy constructors mean two different things depending on their argument:
    `torch.Tensor(3)` is an *uninitialized* tensor of 3 elements (whatever was in memory:
    different garbage on every run), `torch.Tensor([3, 1])` a float tensor holding 3 and 1.
    Code that passes a variable cannot be read without knowing its type. Their dtype is
    implicit too: `torch.Tensor([3, 1])` is float32 while `torch.tensor([3, 1])` is int64,
    so a naive rewrite changes the arithmetic. `x.type(torch.LongTensor)` converts *and*
    silently moves a CUDA tensor to the CPU.

    ## What to do instead
    `torch.empty(2, 3)` (or `torch.zeros`) for a size, `torch.tensor(data, dtype=...)` for
    data, `dtype=` and `device=` instead of the class name, `x.new_empty(...)` /
    `x.new_tensor(...)` for `x.new(...)`, `x.to(device, dtype)` for `.type(...)`, and
    `torch.set_default_dtype` / `torch.set_default_device`.
    """
    bad = (
        """
        import torch

        buffer = torch.Tensor(3)            # uninitialized
        weights = torch.Tensor([3, 1])      # float32 data
        ids = torch.LongTensor([1, 2, 3])
        mask = torch.cuda.ByteTensor(4, 4) if torch.cuda.is_available() else None
        """,
        """
        import torch

        x = torch.ones(2)
        y = x.new(2, 3)
        z = x.type(torch.cuda.FloatTensor)
        """,
    )
    good = (
        """
        import torch

        buffer = torch.zeros(3)
        weights = torch.tensor([3, 1], dtype=torch.float32)
        ids = torch.tensor([1, 2, 3], dtype=torch.int64)
        y = weights.new_zeros(2, 3)
        z = weights.to("cuda") if torch.cuda.is_available() else weights
        """,
        """
        import torch

        def is_tensor(x) -> bool:
            return isinstance(x, torch.Tensor)

        def scale(x: torch.Tensor) -> torch.Tensor:
            return x * 2
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qualname = self.ctx.qualname(func)
        if qualname == "torch.set_default_tensor_type":
            self._default_type(node)
            return
        kind = legacy_type(qualname)
        if kind is not None:
            self._constructor(node, kind, qualname)
            return
        if isinstance(func, cst.Attribute) and func.attr.value in ("new", "type"):
            self._method(node, func)

    def _constructor(self, node: cst.Call, kind: tuple[str, bool], qualname: str) -> None:
        if any(arg.star for arg in node.args):
            return
        dtype, cuda = kind
        args = positional_args(node)
        # torch.Tensor follows the default dtype; the typed classes name theirs.
        explicit_dtype = [] if qualname.rsplit(".", 1)[-1] == "Tensor" else [f"dtype={dtype}"]
        rest = (['device="cuda"'] if cuda else []) + [
            self.ctx.snippet(arg) for arg in node.args if arg.keyword is not None
        ]
        code_args = ", ".join(self.ctx.snippet(arg.value) for arg in args)
        evidence = self.ctx.origin(node.func, qualname)
        shape = self._argument_kind(args)
        if shape == "none":
            self.report(node, "`{call}` creates an empty legacy tensor; use `{modern}`", evidence=evidence,
                        call=node, modern=_call("torch.empty", ["0", *explicit_dtype, *rest]))
        elif shape == "size":
            self.report(
                node,
                "`{call}` allocates uninitialized memory (different garbage on every run); use `{modern}`, "
                "or `torch.zeros` if the values are read before being written",
                evidence=evidence, call=node, modern=_call("torch.empty", [code_args, *explicit_dtype, *rest]),
            )
        elif shape == "tensor":
            target = ", ".join([*explicit_dtype, *rest])
            self.report(node, "`{call}` is a legacy conversion; use `{modern}`", evidence=evidence,
                        call=node, modern=f"{code_args}.to({target})" if target else code_args)
        elif shape == "storage":
            storage = args[0].value
            buffer = _from_buffer_argument(self.ctx, storage)
            modern = (_call("torch.frombuffer", [self.ctx.snippet(buffer), f"dtype={dtype}"]) if buffer is not None
                      else f"torch.empty(0, {', '.join([f'dtype={dtype}', *rest])}).set_({code_args})")
            self.report(node, "`{call}` wraps a storage with a legacy constructor (the tensor shares the "
                              "storage's memory); use `{modern}`", evidence=evidence, call=node, modern=modern)
        elif shape == "data":
            # Always name the dtype: torch.tensor([3, 1]) would be int64, torch.Tensor([3, 1]) is float32.
            self.report(node, "`{call}` is a legacy constructor; use `{modern}` (without `dtype=`, "
                              "torch.tensor would infer the dtype from the data)", evidence=evidence,
                        call=node, modern=_call("torch.tensor", [code_args, f"dtype={dtype}", *rest]))
        else:
            self.report(
                node,
                "`{call}` is either an uninitialized tensor of that size or a copy of that data, "
                "depending on the argument's type; use `{empty}` or `{data}`",
                evidence=evidence, call=node,
                empty=_call("torch.empty", [code_args, *explicit_dtype, *rest]),
                data=_call("torch.tensor", [code_args, f"dtype={dtype}", *rest]),
            )

    def _argument_kind(self, args: list[cst.Arg]) -> str:
        """"none", "size" (integers), "data" (a sequence), "tensor", "storage", or "unknown"."""
        if not args:
            return "none"
        if len(args) > 1:
            return "size"
        value = args[0].value
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)):
            return "data"
        if looks_like_size(value):
            return "size"
        if _is_storage(self.ctx, value):
            return "storage"
        inferred = self.ctx.infer(value)
        if inferred is not None:
            if inferred.kind is Kind.TENSOR:
                return "tensor"
            if inferred.kind in (Kind.NDARRAY, Kind.SEQUENCE, Kind.TUPLE):
                return "data"
        return "unknown"

    def _method(self, node: cst.Call, func: cst.Attribute) -> None:
        receiver = func.value
        evidence = self.ctx.tensor(receiver)
        if evidence is None and isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            evidence = base_evidence(self.ctx, receiver)
        if func.attr.value == "new":
            if evidence is None:
                return
            args = positional_args(node)
            shape = self._argument_kind(args)
            receiver_code = self.ctx.snippet(receiver)
            code_args = ", ".join(self.ctx.snippet(arg.value) for arg in args)
            if shape == "none":
                modern = f"{receiver_code}.new_empty(0)"
            elif shape == "size":
                modern = f"{receiver_code}.new_empty({code_args})"
            elif shape == "data":
                modern = f"{receiver_code}.new_tensor({code_args})"
            else:
                modern = f"{receiver_code}.new_empty(...)` or `{receiver_code}.new_tensor(...)"
            self.report(node, evidence=evidence, call=node, modern=modern)
            return
        args = positional_args(node)
        if len(args) != 1:
            return
        target = args[0].value
        kind = legacy_type(self.ctx.qualname(target) or _string_type(target))
        if kind is None:
            return
        known = self.ctx.infer(receiver)
        if known is not None and known.kind not in (Kind.TENSOR, Kind.MODULE):
            return
        dtype, cuda = kind
        device = '"cuda"' if cuda else '"cpu"'
        steps = (evidence.why if evidence else ()) + (Step(target, "`{code}` is a legacy tensor type"),)
        self.report(
            node,
            "`{call}` converts with a legacy type name, and also moves the tensor to {where}; "
            "use `{modern}`",
            evidence=steps, call=node, where="the GPU" if cuda else "the CPU",
            modern=f"{self.ctx.snippet(receiver)}.to({device}, {dtype})",
        )

    def _default_type(self, node: cst.Call) -> None:
        args = positional_args(node)
        if not args:
            return
        kind = legacy_type(self.ctx.qualname(args[0].value) or _string_type(args[0].value))
        modern = "torch.set_default_dtype(...)"
        if kind is not None:
            dtype, cuda = kind
            modern = f"torch.set_default_dtype({dtype})" + ('` and `torch.set_default_device("cuda")' if cuda else "")
        self.report(node, "`{call}` is deprecated; use `{modern}`",
                    evidence=self.ctx.origin(node.func, "torch.set_default_tensor_type"), call=node, modern=modern)


def _call(function: str, arguments: list[str]) -> str:
    return f"{function}({', '.join(a for a in arguments if a)})"


def _string_type(node: cst.BaseExpression) -> Optional[str]:
    """``'torch.cuda.FloatTensor'`` written as a string, as `.type()` also accepts."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None
