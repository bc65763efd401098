"""TL204 legacy-constructor: ``torch.Tensor(3)``, ``torch.FloatTensor(2, 3)``, ``x.new(..)``,
``x.type(torch.cuda.FloatTensor)``, ``torch.set_default_tensor_type(..)``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

from torchlint.framework.api import (
    NOT_REPRODUCED, Applicability, Bad, FileContext, Fix, Kind, Observation, Rule, Step, Verdict,
    base_evidence, cst, edits, iter_nodes, looks_like_size, positional_args, torch_api, torch_facts, uninitialized_read,
)


# The dtype each legacy type stands for (torch_facts; torch.Tensor: the default dtype,
# float32 unless changed).
DTYPES = {name: torch_facts.fact(f"torch.{name}").legacy_dtype for name in torch_facts.types()}
FLOATING = frozenset({"float32", "float64", "float16", "bfloat16"})

Text = Callable[[cst.CSTNode], str]


@dataclass(frozen=True)
class LegacyType:
    dtype: str  # the name in torch: "float32"
    cuda: bool
    default: bool  # torch.Tensor itself: follows the default dtype and tensor type


def legacy_type(qualname: Optional[str]) -> Optional[LegacyType]:
    """The type ``torch.FloatTensor``, ``torch.cuda.LongTensor``, ``'torch.IntTensor'``... stand for."""
    if not qualname or not torch_api.is_tensor_type(qualname):
        return None
    parts = qualname.split(".")
    if parts[-1] not in DTYPES:
        return None
    return LegacyType(DTYPES[parts[-1]], parts[1] == "cuda", parts[-1] == "Tensor")


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


@dataclass(frozen=True)
class Spelling:
    """The modern spellings of one legacy constructor call, written with ``text`` and
    ``receiver`` (shortened snippets for messages, the exact source for fixes) and the
    file's name for torch."""

    torch: str
    kind: LegacyType
    args: str  # the positional arguments
    receiver: str  # the single argument as the receiver of a method call
    rest: tuple[str, ...]  # device= (named, or implied by a cuda type) and other keywords
    default_changed: bool  # the file changes the default dtype, which torch.Tensor follows

    @classmethod
    def of(cls, node: cst.Call, kind: LegacyType, torch: str, text: Text,
           receiver: Callable[[cst.BaseExpression], str], default_changed: bool = False) -> "Spelling":
        args = _data_arguments(node)
        keywords = tuple(f"{arg.keyword.value}={text(arg.value)}" for arg in node.args
                         if arg.keyword is not None and arg not in args)
        device = () if any(k.startswith("device=") for k in keywords) or not kind.cuda else ('device="cuda"',)
        return cls(torch, kind, ", ".join(text(arg.value) for arg in args),
                   receiver(args[0].value) if len(args) == 1 else "", device + keywords, default_changed)

    @property
    def dtype(self) -> str:
        if self.kind.default and self.default_changed:
            return f"dtype={self.torch}.get_default_dtype()"  # whatever the file made it
        return f"dtype={self.torch}.{self.kind.dtype}"

    def empty(self) -> str:
        """Uninitialized memory; torch.Tensor follows the default dtype, like torch.empty."""
        typed = [] if self.kind.default else [self.dtype]
        return _call(f"{self.torch}.empty", [self.args or "0", *typed, *self.rest])

    def data(self) -> str:
        # Always name the dtype: torch.tensor([3, 1]) would be int64, torch.Tensor([3, 1]) is float32.
        return _call(f"{self.torch}.tensor", [self.args, self.dtype, *self.rest])

    def conversion(self) -> str:
        target = ", ".join([*([] if self.kind.default else [self.dtype]), *self.rest])
        return f"{self.receiver}.to({target})" if target else self.receiver

    def modern(self, shape: str) -> str:
        return {"none": self.empty, "size": self.empty, "tensor": self.conversion, "data": self.data}[shape]()


class LegacyConstructor(Rule):
    code = "TL204"
    name = "legacy-constructor"
    summary = "`torch.Tensor(3)`, `torch.FloatTensor(2, 3)`, `x.new(..)`, `.type(torch.cuda.FloatTensor)`: legacy constructors (uninitialized memory, hidden dtype)"
    message = "`{call}` is a legacy constructor; use `{modern}`"
    fix = Applicability.SAFE
    since = "0.4"
    # A legacy type or storage, `set_default_tensor_type`, or `.new(..)` / `.type(..)`.
    requires = (r"Tensor|Storage|set_default|\.[\s\\]*(?:new|type)\b",)
    references = (
        ("Tensor creation ops", "https://pytorch.org/docs/stable/torch.html#creation-ops"),
        ("torch.empty", "https://pytorch.org/docs/stable/generated/torch.empty.html"),
    )
    requires_may_be_imported = True
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

    ## Fix (safe)
    Rewrites the call to the spelling the message names, with the file's name for torch:
    `torch.Tensor(2, 3)` → `torch.empty(2, 3)` (both follow the default dtype),
    `torch.LongTensor(n)` → `torch.empty(n, dtype=torch.int64)`,
    `torch.cuda.FloatTensor(n)` → `torch.empty(n, dtype=torch.float32, device="cuda")`,
    `torch.LongTensor([1, 2])` → `torch.tensor([1, 2], dtype=torch.int64)`,
    `x.new(2, 3)` → `x.new_empty(2, 3)`, `x.new(data)` → `x.new_tensor(data)` (the
    receiver's dtype and device, as before), `x.type(torch.LongTensor)` on a tensor →
    `x.to("cpu", torch.int64)`, and `torch.set_default_tensor_type(torch.DoubleTensor)` →
    `torch.set_default_dtype(torch.float64)`.

    The fix is unsafe where the two spellings can differ:
    - `torch.Tensor([3, 1])` → `torch.tensor([3, 1], dtype=torch.float32)`: the legacy call
      follows the default dtype (float64 after `torch.set_default_dtype(torch.float64)`),
      which another module may change. In a file that changes it itself
      (`set_default_dtype`, `set_default_tensor_type`), the fix and the message say
      `dtype=torch.get_default_dtype()` instead.
    - A tensor argument, `torch.FloatTensor(t)` → `t.to(dtype=torch.float32)`: the legacy
      call returns a new alias of `t` when `t` already has that dtype and device and raises
      otherwise; `.to()` returns `t` itself, or converts it.
    - `x.type(torch.cuda.FloatTensor)` → `x.to("cuda", torch.float32)`: `.type()` leaves a
      tensor on the GPU it is on, `.to("cuda")` moves it to the current one. On a module (or
      what may be one) `.type()` converts every parameter and buffer, `.to()` only the
      floating-point ones; a module converted to an integer type gets no fix.
    - The CPU classes in a file that sets a default device (`torch.set_default_device`,
      `with torch.device(...)`, a CUDA `set_default_tensor_type`): the legacy classes ignore
      it, `torch.empty` and `torch.tensor` follow it. The fixes assume the default device
      is the CPU otherwise.
    - A comment inside the call, which the rewrite would drop.

    `torch.set_default_tensor_type(torch.cuda.FloatTensor)` has no exact modern spelling
    (it also decides where the legacy constructors allocate): the display-only fix shows
    `torch.set_default_dtype(torch.float32); torch.set_default_device("cuda")`. No fix is
    offered where the argument may be a size or data (`torch.FloatTensor(x)` for an `x` of
    unknown type), for storages, `x.new(t)` of a tensor, a constructor with keyword
    arguments other than `device=`, `.type()` with `non_blocking=`, `x.type(torch.Tensor)`,
    or a non-floating default type (which torch refuses).
    """
    bad = (
        Bad(
            """
            import torch

            buffer = torch.Tensor(3)            # uninitialized
            weights = torch.Tensor([3, 1])      # float32 data
            ids = torch.LongTensor([1, 2, 3])
            mask = torch.cuda.ByteTensor(4, 4) if torch.cuda.is_available() else None
            """,
            reported=(
                (3, "torch.Tensor(3)"),
                (4, "torch.Tensor([3, 1])"),
                (5, "torch.LongTensor([1, 2, 3])"),
                (6, "torch.cuda.ByteTensor(4, 4)"),
            ),
            fixed="""
            import torch

            buffer = torch.empty(3)            # uninitialized
            weights = torch.tensor([3, 1], dtype=torch.float32)      # float32 data
            ids = torch.tensor([1, 2, 3], dtype=torch.int64)
            mask = torch.empty(4, 4, dtype=torch.uint8, device="cuda") if torch.cuda.is_available() else None
            """,
            unsafe=True,
        ),
        Bad(
            """
            import torch

            x = torch.ones(2)
            y = x.new(2, 3)
            z = x.type(torch.cuda.FloatTensor)
            """,
            reported=(
                (4, "x.new(2, 3)"),
                (5, "x.type(torch.cuda.FloatTensor)"),
            ),
            fixed="""
            import torch

            x = torch.ones(2)
            y = x.new_empty(2, 3)
            z = x.to("cuda", torch.float32)
            """,
            unsafe=True,
        ),
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
        switched = _switched_types(self.ctx, func)
        if switched:
            self.report(node, "`{call}` calls a legacy constructor: `{name}` is {types}; make the tensor with "
                              "`{torch}.empty`, `{torch}.zeros` or `{torch}.tensor` and `dtype=`, `device=`",
                        evidence=_alias_evidence(self.ctx, func, switched), call=node, name=func, types=_either(switched),
                        torch=edits.torch_name(self.ctx)[0])
            return
        if isinstance(func, cst.Attribute) and func.attr.value in ("new", "type"):
            self._method(node, func)

    def _constructor(self, node: cst.Call, kind: LegacyType, qualname: str) -> None:
        if any(arg.star for arg in node.args):
            return
        args = _data_arguments(node)
        torch, _ = edits.torch_name(self.ctx)
        spelling = Spelling.of(node, kind, torch, self.ctx.snippet, self.ctx.receiver, self._default_dtype_changed())
        evidence = self.ctx.origin(node.func, qualname)
        shape = self._argument_kind(args)
        if shape in _CONSTRUCTOR_MESSAGES:
            self.report(node, _CONSTRUCTOR_MESSAGES[shape], evidence=evidence, call=node, torch=torch,
                        modern=spelling.modern(shape), fix=self._constructor_fix(node, kind, shape))
        elif shape == "storage":
            storage = args[0].value
            buffer = _from_buffer_argument(self.ctx, storage)
            empty = f"{torch}.empty(0, {', '.join([spelling.dtype, *spelling.rest])})"
            if buffer is not None:
                modern = _call(f"{torch}.frombuffer", [self.ctx.snippet(buffer), spelling.dtype])
            elif isinstance(storage, cst.Call) and not storage.args and \
                    (self.ctx.qualname(storage.func) or "").endswith("Storage"):
                modern = empty  # `torch.FloatTensor(torch.FloatStorage())`: an empty tensor to grow
            else:
                modern = f"{empty}.set_({spelling.args})"
            self.report(node, "`{call}` wraps a storage with a legacy constructor (the tensor shares the "
                              "storage's memory); use `{modern}`", evidence=evidence, call=node, modern=modern)
        else:
            self.report(
                node,
                "`{call}` is either an uninitialized tensor of that size or a copy of that data, "
                "depending on the argument's type; use `{empty}` or `{data}`",
                evidence=evidence, call=node, empty=spelling.empty(), data=spelling.data(),
            )

    def _constructor_fix(self, node: cst.Call, kind: LegacyType, shape: str) -> Optional[Fix]:
        if any(arg.keyword is not None and arg.keyword.value not in ("device", "data") for arg in node.args):
            return None
        torch, imports = edits.torch_name(self.ctx)
        code = Spelling.of(node, kind, torch, self.ctx.code, self.ctx.receiver_code,
                           self._default_dtype_changed()).modern(shape)
        if shape == "tensor":
            # The legacy call returns an alias of a tensor that already has its dtype and device
            # and raises for any other; `.to()` returns the tensor itself, or converts it.
            applicability = Applicability.UNSAFE
            imports = imports if not kind.default else ()
        elif shape == "data" and kind.default:
            # dtype=float32 is right only while the default dtype is; another module may change it.
            # (In a file that changes it, the fix says `dtype=torch.get_default_dtype()`.)
            applicability = Applicability.UNSAFE
        elif not kind.cuda and self._default_device_changed():
            applicability = Applicability.UNSAFE  # the factory functions follow it, the CPU classes do not
        else:
            applicability = _safe_unless_comments(self.ctx, node)
        message = {"tensor": "Replace with `.to(...)`", "data": f"Replace with `{torch}.tensor(..., dtype=...)`"}
        return Fix(applicability, message.get(shape, f"Replace with `{torch}.empty(...)`"),
                   (edits.replace(node, code), *imports))

    def _default_dtype_changed(self) -> bool:
        """This file calls `torch.set_default_dtype` or `torch.set_default_tensor_type`."""
        if not hasattr(self, "_changes_dtype"):
            self._changes_dtype = "set_default_" in self.ctx.text and any(
                isinstance(node, cst.Call) and self.ctx.qualname(node.func) in torch_api.DEFAULT_DTYPE_SETTERS
                for node in iter_nodes(self.ctx.module))
        return self._changes_dtype

    def _default_device_changed(self) -> bool:
        """This file sets a default device, or a default tensor type that may be a CUDA one."""
        if not hasattr(self, "_changes_device"):
            self._changes_device = any(isinstance(node, cst.Call) and self._sets_device(node)
                                      for node in iter_nodes(self.ctx.module))
        return self._changes_device

    def _sets_device(self, call: cst.Call) -> bool:
        qualname = self.ctx.qualname(call.func)
        if qualname in ("torch.set_default_device", "torch.device"):
            return qualname == "torch.set_default_device" or isinstance(self.ctx.parent(call), cst.WithItem)
        if qualname == "torch.set_default_tensor_type" and call.args:
            kind = legacy_type(self.ctx.qualname(call.args[0].value) or _string_type(call.args[0].value))
            return kind is None or kind.cuda
        return False

    def _argument_kind(self, args: list[cst.Arg]) -> str:
        """"none", "size" (integers), "data" (a sequence), "tensor", "storage", or "unknown"."""
        if not args:
            return "none"
        if len(args) > 1:
            return "size"
        value = args[0].value
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp)) or _repeated_sequence(value):
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
            if evidence is not None:
                self._new(node, receiver, evidence)
            return
        args = positional_args(node)
        if len(args) != 1:
            return
        target = args[0].value
        kind = legacy_type(self.ctx.qualname(target) or _string_type(target))
        if kind is None:
            switched = _switched_types(self.ctx, target)
            known = self.ctx.infer(receiver)
            if switched and (evidence is not None or known is None or known.kind is Kind.TENSOR):
                steps = (evidence.why if evidence else ()) + _alias_evidence(self.ctx, target, switched)
                self.report(node, "`{call}` converts with a legacy type name: `{name}` is {types}; use "
                                  "`.to(device, dtype)`", evidence=steps, call=node, name=target,
                            types=_either(switched))
            return
        known = self.ctx.infer(receiver)
        if known is not None and known.kind not in (Kind.TENSOR, Kind.MODULE):
            return
        torch, _ = edits.torch_name(self.ctx)
        steps = (evidence.why if evidence else ()) + (Step(target, "`{code}` is a legacy tensor type"),)
        self.report(
            node,
            "`{call}` converts with a legacy type name, and also moves the tensor to {where}; "
            "use `{modern}`",
            evidence=steps, call=node, where="the GPU" if kind.cuda else "the CPU",
            modern=_to(self.ctx.receiver(receiver), kind, torch),
            fix=self._type_fix(node, receiver, kind, module=known is not None and known.kind is Kind.MODULE),
        )

    def _type_fix(self, node: cst.Call, receiver: cst.BaseExpression, kind: LegacyType, module: bool) -> Optional[Fix]:
        if kind.default or len(node.args) != 1 or (module and kind.dtype not in FLOATING):
            return None  # torch.Tensor is the default type; Module.to() takes floating dtypes only
        torch, imports = edits.torch_name(self.ctx)
        code = _to(self.ctx.receiver_code(receiver), kind, torch)
        # `.type()` keeps a tensor on the GPU it is on, `.to("cuda")` moves it to the current one;
        # on a module (or what may be one) `.type()` also converts integer buffers, `.to()` does not.
        exact = self.ctx.tensor(receiver) is not None and not kind.cuda
        applicability = _safe_unless_comments(self.ctx, node) if exact else Applicability.UNSAFE
        return Fix(applicability, "Replace with `.to(device, dtype)`", (edits.replace(node, code), *imports))

    def _new(self, node: cst.Call, receiver: cst.BaseExpression, evidence) -> None:
        args = positional_args(node)
        shape = self._argument_kind(args)
        method = {"none": "new_empty", "size": "new_empty", "data": "new_tensor"}.get(shape)
        modern = _new(node, receiver, method, self.ctx.snippet, self.ctx.receiver)
        fix = None
        if method is not None and not any(arg.star for arg in node.args):
            # new_empty and new_tensor take the receiver's dtype and device, as new() does.
            code = _new(node, receiver, method, self.ctx.code, self.ctx.receiver_code)
            fix = Fix(_safe_unless_comments(self.ctx, node), f"Replace with `.{method}(...)`", (edits.replace(node, code),))
        self.report(node, evidence=evidence, call=node, modern=modern, fix=fix)

    def _default_type(self, node: cst.Call) -> None:
        args = positional_args(node)
        if not args:
            return
        torch, imports = edits.torch_name(self.ctx)
        kind = legacy_type(self.ctx.qualname(args[0].value) or _string_type(args[0].value))
        modern, fix = f"{torch}.set_default_dtype(...)", None
        if kind is not None:
            modern = f"{torch}.set_default_dtype({torch}.{kind.dtype})"
            if kind.cuda:
                modern += f'` and `{torch}.set_default_device("cuda")'
            fix = self._default_type_fix(node, kind, torch, imports)
        self.report(node, "`{call}` is deprecated; use `{modern}`",
                    evidence=self.ctx.origin(node.func, "torch.set_default_tensor_type"), call=node, modern=modern,
                    fix=fix)

    def _default_type_fix(self, node: cst.Call, kind: LegacyType, torch: str, imports) -> Optional[Fix]:
        if kind.default or kind.dtype not in FLOATING or len(node.args) != 1:
            return None  # torch refuses other default types
        code = f"{torch}.set_default_dtype({torch}.{kind.dtype})"
        if not kind.cuda:
            # Exact unless a CUDA default was set before, which this call undoes and set_default_dtype keeps.
            changed = self._default_device_changed()
            return Fix(Applicability.UNSAFE if changed else _safe_unless_comments(self.ctx, node),
                       f"Replace with `{torch}.set_default_dtype`", (edits.replace(node, code), *imports))
        if not isinstance(self.ctx.parent(node), cst.Expr):
            return None
        # The CUDA type also decides where the legacy constructors allocate: nothing says that now.
        code += f'; {torch}.set_default_device("cuda")'
        return Fix(Applicability.DISPLAY_ONLY, f"Replace with `{torch}.set_default_dtype` and "
                   f"`{torch}.set_default_device`", (edits.replace(node, code), *imports))

    @classmethod
    def runs(cls, diagnostic) -> bool:
        # Only uninitialized memory can go wrong at run time (the monitor fills it with a
        # sentinel and sees it read); `torch.Tensor([1, 2])`, `.type(..)` and `.new(data)`
        # only modernize.
        return "uninitialized" in diagnostic.message or _SIZED_EMPTY.search(diagnostic.message) is not None

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        verdict = uninitialized_read(run, "this constructor")
        if verdict is not None:
            return verdict
        return Verdict(NOT_REPRODUCED, "the constructor initialized its values (the finding is about the spelling "
                                       "and dtype)")


def _switched_types(ctx: "FileContext", node: cst.BaseExpression) -> tuple[str, ...]:
    """The legacy tensor types ``node`` may be, when it is a switchable alias of them
    (``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``); else ()."""
    alternatives = ctx.alternatives(node)
    return alternatives if alternatives and all(legacy_type(name) for name in alternatives) else ()


def _alias_evidence(ctx: "FileContext", node: cst.BaseExpression, switched: tuple[str, ...]) -> tuple[Step, ...]:
    """Where the switchable alias ``node`` gets its values."""
    value = ctx.infer(node)
    if value is not None and value.why:
        return value.why
    if isinstance(node, cst.Name):
        steps = tuple(Step(value, f"`{node.value}` = `{{code}}`")
                      for value in ctx.binding_values(node) if value is not None)
        if steps:
            return steps
    return (Step(node, f"`{{code}}` is {_either(switched)}, depending on the path the code takes"),)


def _either(names: tuple[str, ...]) -> str:
    quoted = [f"`{name}`" for name in names]
    return " or ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)


_SIZED_EMPTY = re.compile(r"new_empty\((?!\))")
_CONSTRUCTOR_MESSAGES = {
    "none": "`{call}` creates an empty legacy tensor; use `{modern}`",
    "size": "`{call}` allocates uninitialized memory (different garbage on every run); use `{modern}`, "
            "or `{torch}.zeros` if the values are read before being written",
    "tensor": "`{call}` is a legacy conversion; use `{modern}`",
    "data": "`{call}` is a legacy constructor; use `{modern}` (without `dtype=`, torch.tensor would infer "
            "the dtype from the data)",
}


def _safe_unless_comments(ctx: "FileContext", node: cst.Call) -> Applicability:
    """Safe, or unsafe when the rewrite would lose a comment: one inside the call but not
    inside an argument (arguments are copied with their comments)."""
    kept = sum(ctx.comment_count(arg.value) for arg in node.args)
    return Applicability.UNSAFE if ctx.comment_count(node) > kept else Applicability.SAFE


def _to(receiver: str, kind: LegacyType, torch: str) -> str:
    return f'{receiver}.to("{"cuda" if kind.cuda else "cpu"}", {torch}.{kind.dtype})'


def _new(node: cst.Call, receiver: cst.BaseExpression, method: Optional[str], text: Text,
         as_receiver: Callable[[cst.BaseExpression], str]) -> str:
    """`x.new_empty(..)` / `x.new_tensor(..)` for `x.new(..)`, written with ``text``."""
    if method is None:
        return f"{as_receiver(receiver)}.new_empty(...)` or `{as_receiver(receiver)}.new_tensor(...)"
    arguments = [f"{arg.keyword.value}={text(arg.value)}" if arg.keyword else f"{arg.star}{text(arg.value)}"
                 for arg in node.args]
    # `x.new(*size)` passes a size; `x.new()` and `x.new(**options)` none.
    if method == "new_empty" and not any(arg.keyword is None and arg.star != "**" for arg in node.args):
        arguments.insert(0, "0")
    return _call(f"{as_receiver(receiver)}.{method}", arguments)


def _data_arguments(node: cst.Call) -> list[cst.Arg]:
    """The positional arguments of a legacy constructor call, or its `data=` keyword
    (`torch.LongTensor(data=[a, b])` holds `[a, b]`)."""
    args = positional_args(node)
    if not args:
        args = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value == "data"]
    return args


def _repeated_sequence(node: cst.BaseExpression) -> bool:
    """`[0.] * n`, `n * [0]`: a list."""
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) and (
        isinstance(node.left, (cst.List, cst.Tuple)) or isinstance(node.right, (cst.List, cst.Tuple)))


def _call(function: str, arguments: list[str]) -> str:
    return f"{function}({', '.join(a for a in arguments if a)})"


def _string_type(node: cst.BaseExpression) -> Optional[str]:
    """``'torch.cuda.FloatTensor'`` written as a string, as `.type()` also accepts."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None
