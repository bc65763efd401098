"""TL218 sparse-constructor: ``torch.sparse.FloatTensor(indices, values, size)`` and the other
legacy sparse tensor types, deprecated for ``torch.sparse_coo_tensor`` (they warn)."""

from __future__ import annotations

from typing import Optional

from torchlint.framework.api import (
    Applicability, Bad, Fix, Observation, Rule, Verdict, cst, edits, looks_like_size, positional_args, torch_facts,
    torch_api,
)

# Given indices and values, torch ignores the type's dtype and device: the message says so.
_TENSORS_MESSAGE = ("`{call}` is a legacy sparse constructor, deprecated (torch warns); use `{modern}` (the tensor "
                    "takes the dtype and device of the values, as it did: the type name never converted them)")


class SparseConstructor(Rule):
    code = "TL218"
    name = "sparse-constructor"
    summary = ("`torch.sparse.FloatTensor(indices, values, size)`, `torch.cuda.sparse.LongTensor(..)`: legacy "
               "sparse constructors, deprecated for `torch.sparse_coo_tensor`; they warn")
    message = "`{call}` is a legacy sparse constructor, deprecated (torch warns); use `{modern}`"
    fix = Applicability.SAFE
    since = "2.1"
    requires = (r"sparse", r"Tensor")
    references = (
        ("torch.sparse_coo_tensor", "https://pytorch.org/docs/stable/generated/torch.sparse_coo_tensor.html"),
        ("torch.sparse: sparse COO tensors", "https://pytorch.org/docs/stable/sparse.html#sparse-coo-tensors"),
        ("pytorch/pytorch#94850: the deprecation warnings of the legacy sparse constructors",
         "https://github.com/pytorch/pytorch/pull/94850"),
        ("pytorch/pytorch#73832: torch.cuda.sparse.FloatTensor(indices, values) keeps the values' device",
         "https://github.com/pytorch/pytorch/issues/73832"),
    )
    docs = """
    ## What it does
    Flags calls of the legacy sparse tensor types: `torch.sparse.FloatTensor`,
    `torch.sparse.LongTensor`, `torch.sparse.DoubleTensor` and the others of
    `torch.sparse` and `torch.cuda.sparse`, resolved through the file's imports, in each
    of their forms: `(indices, values, size)`, `(indices, values)`, a size
    (`torch.sparse.FloatTensor(2, 3)`) and no argument. (TL204 legacy-constructor reports
    the dense types, `torch.FloatTensor(..)` and `torch.cuda.FloatTensor(..)`; the two
    rules never report the same call.)

    ## Why is this bad?
    These classes are the pre-0.4 way of naming a dtype, a device and a layout at once.
    They are deprecated for `torch.sparse_coo_tensor`, and each form warns
    ("torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated. Please
    use torch.sparse_coo_tensor(indices, values, shape, dtype=, device=)"). They also say
    less than they seem to: given indices and values, the type's dtype and device are
    ignored. `torch.sparse.FloatTensor(i, v, size)` with float64 values is a float64
    tensor, with int64 values an int64 one, and `torch.cuda.sparse.FloatTensor(i, v, size)`
    leaves CPU values on the CPU (torch passes `i` and `v` to `sparse_coo_tensor` as they
    are). Only the size forms allocate with the type's dtype and device.

    ## What to do instead
    `torch.sparse_coo_tensor(indices, values, size)`, with `dtype=` and `device=` where a
    conversion is meant; `torch.sparse_coo_tensor((2, 3), dtype=torch.float32)` for an
    empty sparse tensor of a size.

    ## Fix (safe)
    Rewrites each form to what torch builds for it (measured on torch 2.13):
    - `torch.sparse.FloatTensor(i, v, size)` and `(i, v)` → `torch.sparse_coo_tensor(i, v,
      size)`, the arguments kept: same dtype (the values'), device, sharing of `i` and `v`,
      uncoalesced result and gradient. No `dtype=` is added: the legacy call never converted
      the values, and `dtype=torch.float32` would.
    - `torch.sparse.FloatTensor(2, 3)` → `torch.sparse_coo_tensor((2, 3), dtype=torch.float32)`,
      one size argument (`torch.Size`, `x.size()`) passed as it is;
      `torch.sparse.LongTensor()` → `torch.sparse_coo_tensor((0,), dtype=torch.int64)`, as
      torch's warning says. A CUDA type adds `device="cuda"`.

    No `check_invariants=` is added either: like the legacy call, `sparse_coo_tensor` then
    follows `torch.sparse.check_sparse_tensor_invariants`. (torch 2.13 warns once that the
    checks are "implicitly disabled" until a program opts in or out; pass
    `check_invariants=True` or `False` to say which.)

    The fix is unsafe for a CUDA type with indices and values (the rewrite keeps them where
    they are, as torch does, which a reader of `torch.cuda.sparse...` may not expect; this
    was read from torch's source, not run on a GPU), for the size forms of a CPU type in a
    file that sets a default device (which `sparse_coo_tensor` follows and the legacy type
    ignores), and where a comment inside the call would be lost. A call with `device=` and
    indices, or whose arguments could be either a size or tensors (`FloatTensor(a, b)` with
    `a` of unknown type), gets the advice without a fix.
    """
    bad = (
        Bad(
            """
            import torch

            i = torch.tensor([[0, 1, 1], [2, 0, 2]])
            v = torch.tensor([3.0, 4.0, 5.0])
            adjacency = torch.sparse.FloatTensor(i, v, torch.Size([2, 3]))
            empty = torch.sparse.LongTensor(2, 3)
            """,
            reported=((5, "torch.sparse.FloatTensor(i, v, torch.Size([2, 3]))"), (6, "torch.sparse.LongTensor(2, 3)")),
            fixed="""
            import torch

            i = torch.tensor([[0, 1, 1], [2, 0, 2]])
            v = torch.tensor([3.0, 4.0, 5.0])
            adjacency = torch.sparse_coo_tensor(i, v, torch.Size([2, 3]))
            empty = torch.sparse_coo_tensor((2, 3), dtype=torch.int64)
            """,
        ),
    )
    good = (
        """
        import torch

        i = torch.tensor([[0, 1, 1], [2, 0, 2]])
        v = torch.tensor([3.0, 4.0, 5.0])
        adjacency = torch.sparse_coo_tensor(i, v, (2, 3))
        dense = torch.sparse.mm(adjacency, torch.ones(3, 1))
        """,
        """
        class FloatTensor:
            def __init__(self, *shape):
                self.shape = shape

        class Formats:
            FloatTensor = FloatTensor

        sparse = Formats()
        table = sparse.FloatTensor(2, 3)
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func)
        kind = torch_api.LEGACY_SPARSE_TYPES.get(qualname or "")
        if kind is None or any(arg.star for arg in node.args):
            return
        name, cuda = kind
        torch, imports = edits.torch_name(self.ctx)
        form = self._form(node)
        evidence = self.ctx.origin(node.func, qualname)
        if form is None:
            self.report(node, "`{call}` is a legacy sparse constructor, deprecated (torch warns); use "
                              "`{torch}.sparse_coo_tensor(indices, values, size)` or "
                              "`{torch}.sparse_coo_tensor(size, dtype=...)`", evidence=evidence, call=node, torch=torch)
            return
        modern = self._modern(node, form, name, cuda, torch, self.ctx.snippet)
        fix = None
        if form != "tensors" or not any(arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
            code = self._modern(node, form, name, cuda, torch, self.ctx.code)
            fix = Fix(self._applicability(node, form, cuda), f"Replace with `{torch}.sparse_coo_tensor`",
                      (edits.replace(node, code), *imports))
        self.report(node, _TENSORS_MESSAGE if form == "tensors" else None, evidence=evidence, fix=fix,
                    call=node, modern=modern)

    def _form(self, call: cst.Call) -> Optional[str]:
        """"tensors" (indices and values), "size", "empty", or None when it cannot be told."""
        positional = positional_args(call)
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if keywords - {"indices", "values", "size", "device"}:
            return None  # no form of the constructor takes it
        if keywords & {"indices", "values"}:
            return "tensors"
        if len(positional) < 2:
            # One argument binds only to the size form (torch refuses a list or a tensor there).
            return "size" if positional or "size" in keywords else "empty"
        if "size" in keywords or len(positional) == 3 and _is_shape(self.ctx, positional[2].value) \
                or any(self.ctx.tensor(arg.value) is not None for arg in positional[:2]):
            return "tensors"
        return "size" if all(looks_like_size(arg.value) for arg in positional) else None

    def _modern(self, call: cst.Call, form: str, name: str, cuda: bool, torch: str, text) -> str:
        if form == "tensors":
            # `device=` only checks the device type here (pytorch/pytorch#73832): not a move.
            kept = [arg for arg in call.args if arg.keyword is None or arg.keyword.value != "device"]
            return f"{torch}.sparse_coo_tensor({_arguments(kept, text)})"
        positional = positional_args(call)
        if form == "empty":
            size = "(0,)"
        elif len(positional) == 1:
            size = text(positional[0].value)
            size = f"({size},)" if isinstance(positional[0].value, cst.Integer) else size
        else:
            size = f"({', '.join(text(arg.value) for arg in positional)})"
        keywords = [f"{arg.keyword.value}={text(arg.value)}" for arg in call.args if arg.keyword is not None]
        dtype = torch_facts.fact(f"torch.{name}").legacy_dtype
        device = ['device="cuda"'] if cuda and not any(k.startswith("device=") for k in keywords) else []
        if keywords and keywords[0].startswith("size="):
            size, keywords = keywords[0], keywords[1:]
        return f"{torch}.sparse_coo_tensor({', '.join([size, f'dtype={torch}.{dtype}', *keywords, *device])})"

    def _applicability(self, call: cst.Call, form: str, cuda: bool) -> Applicability:
        if form == "tensors":
            # The arguments are kept as they are: comments inside them too.
            return Applicability.UNSAFE if cuda else Applicability.SAFE
        if self.ctx.comment_count(call) > 0:
            return Applicability.UNSAFE
        if not cuda and torch_api.DEFAULT_DEVICE_SETTING.search(self.ctx.text):
            return Applicability.UNSAFE
        return Applicability.SAFE

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return run.warned_or("torch.sparse.SparseTensor(", "torch gave no legacy sparse constructor warning here")


def _arguments(args: list[cst.Arg], text) -> str:
    return ", ".join(f"{arg.keyword.value}={text(arg.value)}" if arg.keyword is not None else text(arg.value)
                     for arg in args)


def _is_shape(ctx, node: cst.BaseExpression) -> bool:
    """A shape as one value: `(2, 3)`, `[2, 3]`, `torch.Size(..)`, `x.size()`, `x.shape`."""
    if isinstance(node, (cst.Tuple, cst.List)):
        return True
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    if isinstance(node, cst.Call):
        if ctx.qualname(node.func) == "torch.Size":
            return True
        return isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" and not node.args
    return False
