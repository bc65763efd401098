"""Regenerate torchlint/analysis/torch_facts_table.py, the rows of the one table of torch facts
(torchlint/analysis/torch_facts.py: its fields and queries), from an installed torch.

The linter never imports torch: what it knows about torch's functions and methods (what they
return, whether they alias, write in place, are differentiable, are tensor-only) is read from
torch here, once, and committed as data.  Run (with the torch the table is for):

    .venv/bin/python scripts/gen_torch_facts.py [OUT]

The output is deterministic (seeded probes, sorted rows): running it twice gives the same file.

What is derived from torch, and how (field by field, see ``Fact`` in the generated module):

- names: ``dir(torch.Tensor)`` (methods / properties), ``torch`` (lower-case callables),
  ``torch.nn.functional``, ``torch.nn.init``, ``torch.nn`` Module subclasses, legacy types;
  ``torch.linalg``, ``torch.special`` and ``torch.fft`` (lower-case callables), each derived as the
  ``torch`` functions are, from its aten op ``<namespace>_<name>`` (``torch.linalg.norm`` is
  ``aten::linalg_norm``) and probes that also try a square matrix (``inv``, ``det``, ``cholesky``);
- returns / aliasing / in_place / out_variant: the aten schemas ``torch.ops.aten.<name>.<overload>._schema``
  (alias annotations ``Tensor(a)`` = aliases an input, ``Tensor(a!)`` = written; ``Tensor(a)[]`` =
  tuple of aliases; more than one return = tuple; Tag.inplace_view = in place on metadata only;
  Tag.out = an ``out=`` overload; Tag.reduction);
- view, maybe_view or maybe_self: an alias-annotated op (reshape, contiguous, flatten, to...) is
  probed on a contiguous and a transposed input: a copy on one and a view on another is
  ``maybe_view`` (reshape); a copy on one and the receiver itself on another is ``maybe_self``
  (contiguous, to); else ``view``;
- zero_dim ('no_dim': 0-dim when called without a dim; 'always'): probing ``x.m()`` on a 2-d tensor
  and ``a.m(b)`` on 1-d/2-d tensors;
- differentiable: probing on a ``requires_grad`` float tensor (False when the result does not require
  grad: integer/boolean results, ``detach``, ``new_*``);
- tensor_only: not an attribute of numpy arrays/scalars, memoryview, nn.Module, Optimizer or builtins;
- nn: loss classes (subclasses of ``_Loss``), functional losses (a ``reduction`` parameter),
  functional in-place (an ``inplace`` parameter);
- legacy types: ``torch.FloatTensor.dtype``...;
- saves (what autograd keeps for backward, which an in-place write must not change before
  ``backward()``): calling the op under ``torch.autograd.graph.saved_tensors_hooks`` and
  matching what is packed against the inputs and the result (``saves_of``).
- integer (what an integer tensor gives): calling the method or function on an ``int64`` and on a
  ``float32`` input with the same integer arguments (``integer_of``); functions without a tensor
  input, with integers only.
- dropout (a function that zeroes elements at random, and the arguments that give the rate and
  switch it on): the signature (or aten schema) names the candidates, calls decide (``dropout_of``).

What cannot be derived is in OVERRIDES below, each with its reason.
"""

from __future__ import annotations

import inspect
import pathlib
import sys
import warnings
from collections import Counter

warnings.filterwarnings("ignore")

import numpy  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch.nn.init  # noqa: E402
import torch.optim  # noqa: E402

torch.manual_seed(0)
OUT = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
    pathlib.Path(__file__).resolve().parent.parent / "torchlint" / "analysis" / "torch_facts_table.py"

# --- the record --------------------------------------------------------------------------------
# kind:        method | property | function | module_class | type
# returns:     tensor | tuple (of tensors) | depends (on arguments: max(dim=) / unique(return_counts=))
#              | other (a Python value: int, bool, list, dtype, None...) | ndarray | module | self | unknown
# zero_dim:    never | no_dim (0-dim when given no dim) | always | keeps (0-dim in, 0-dim out) | unknown
# aliasing:    view (the result, or each tuple element, shares the input's storage)
#              | maybe_view (a view or a copy, depending on the input: reshape)
#              | maybe_self (the input itself or a copy, depending on the input: contiguous, to)
#              | copy | none (no tensor result)
# in_place:    none | data (writes the receiver / first argument's elements) | metadata (shape, flags, storage pointer)
# differentiable: True | False | None (unknown)
# saves:       what autograd saves for backward, as letters: with tensor arguments (``x * t``), ``o`` the
#              result, ``i`` an input that requires grad, ``c`` an input that does not (saved because
#              another input does: ``w * t`` keeps ``t``); with no tensor argument but the receiver or
#              first input (``x * 2``, ``x.exp()``), ``O`` the result, ``I`` that input.  ``n``: nothing
#              of these; ``-``: not probed (in place, not differentiable, or no call that worked).
#              For a tuple result, the digits are the positions of the tensors of it that are kept
#              (``01O``: `linalg.eigh` keeps its eigenvalues and eigenvectors; ``1O``: `sort` its indices).
# integer:     keeps (an int64 input gives an int64 result, a float one a float: views, `clone`, `cuda`)
#              | always (an integer result from a float input too: `argmax`, `nonzero`, `long`, `int`,
#              `multinomial`; a function without tensor input given integers: `randperm(3)`,
#              `arange(3)`) | indices (tuples end with int64 indices, their other elements keep
#              the dtype: `topk`, `sort`, `max(dim)`) | - (other, or no call that worked)
# parameters:  a module class built with simple arguments has parameters of its own (None: not built,
#              or no module class); its aliasing says whether its call may give its input itself
#              (maybe_self: `Identity`, `ReLU(inplace=True)`, `Dropout` in eval mode) or a view of it
# dropout:     a function that zeroes elements at random (`F.dropout`, `torch.dropout`, the attention
#              `F.scaled_dot_product_attention` drops weights of): ``<rate>`` or ``<rate>,<switch>``, each
#              ``<name>@<position>`` with ``=<default>`` where it has one (``1``/``0`` for True/False;
#              position among the positional parameters, ``k`` when keyword-only): ``p@1=0.5,training@2=1``.
#              The switch is the bool that turns the dropping on (a module passes `self.training`); a
#              function without one drops whenever its rate is above 0.  ``-``: no such function.
DEFAULTS = dict(returns="tensor", zero_dim="never", aliasing="copy", in_place="none", out_variant=False,
                differentiable=None, tensor_only=False, reduction=False, loss=False, legacy_dtype=None,
                removed=False, factory=False, saves="-", integer="-", parameters=None, dropout=None,
                source="schema")
FIELDS = ("kind",) + tuple(DEFAULTS)

# --- names -------------------------------------------------------------------------------------


def public(names):
    return sorted(n for n in names if not n.startswith("_"))


tensor_members = public(dir(torch.Tensor))
tensor_methods = [n for n in tensor_members if callable(getattr(torch.Tensor, n, None))]
tensor_properties = [n for n in tensor_members if n not in tensor_methods]
torch_functions = [n for n in public(dir(torch)) if callable(getattr(torch, n, None)) and n[0].islower()
                   and not inspect.ismodule(getattr(torch, n))]
functional = [n for n in public(dir(F)) if callable(getattr(F, n)) and n[0].islower()
              and not inspect.ismodule(getattr(F, n))]
init = [n for n in public(dir(torch.nn.init)) if callable(getattr(torch.nn.init, n)) and n[0].islower()]
nn_modules = [n for n in public(dir(nn)) if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module)]
LEGACY_TYPES = ["Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]

# --- aten schemas ------------------------------------------------------------------------------


def overloads(name):
    """The aten overloads named ``name`` that take or give tensors (not the TorchScript int/str ones)."""
    try:
        packet = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return []
    found = []
    for overload in packet.overloads():
        op = getattr(packet, overload)
        schema = op._schema
        types = [str(a.type) for a in schema.arguments] + [str(r.type) for r in schema.returns]
        if not schema.returns and not (schema.arguments and str(schema.arguments[0].type) == "Tensor"):
            continue  # TorchScript list ops: sort.int(int[](a!) self)
        if any("Tensor" in t for t in types):
            found.append((op, schema))
    return found


def _is_tensor(t):
    return str(t) in ("Tensor", "Optional[Tensor]", "Tensor?")


def _composite_implicit(schema):
    qualified = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd")
    except RuntimeError:
        return False


def schema_facts(name, method):
    """returns / aliasing / in_place / out_variant / reduction from the schemas, or None."""
    ops = overloads(name)
    if method:  # a method's overloads take a tensor `self` first
        ops = [(op, s) for op, s in ops if s.arguments and str(s.arguments[0].type) == "Tensor"]
    if not ops:
        return None
    out_variant = any(torch.Tag.out in op.tags for op, _ in ops)
    main = [(op, s) for op, s in ops if torch.Tag.out not in op.tags
            and not any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in s.arguments)]
    if not main:
        return None
    returns, aliasing, in_place = set(), set(), set()
    pointwise = any(torch.Tag.pointwise in op.tags for op, _ in main)
    factory = any({"layout", "pin_memory"} <= {a.name for a in s.arguments} for _, s in main)
    view_copy = any(torch.Tag.view_copy in op.tags for op, _ in overloads(name + "_copy"))
    reduction = any(torch.Tag.reduction in op.tags for op, _ in main)
    for op, s in main:
        rets = s.returns
        if len(rets) == 1 and _is_tensor(rets[0].type):
            returns.add("tensor")
        elif len(rets) > 1 and all(_is_tensor(r.type) or str(r.type) == "List[Tensor]" for r in rets) or len(rets) == 1 and str(rets[0].type) == "List[Tensor]":
            returns.add("tuple")
        elif not rets:
            returns.add("other")
        else:
            returns.add("other")
        first = s.arguments[0] if s.arguments else None
        writes_first = first is not None and first.alias_info is not None and first.alias_info.is_write
        if writes_first:
            in_place.add("metadata" if torch.Tag.inplace_view in op.tags else "data")
        else:
            in_place.add("none")
        ret_alias = [r.alias_info for r in rets if r.alias_info is not None]
        if writes_first:
            aliasing.add("self")
        elif ret_alias and not any(a.is_write for a in ret_alias):
            aliasing.add("alias")
        elif returns & {"tensor", "tuple"}:
            aliasing.add("copy")
        else:
            aliasing.add("none")
    ret = returns.pop() if len(returns) == 1 else ("depends" if returns <= {"tensor", "tuple"} else "unknown")
    ci = any(_composite_implicit(s) for _, s in main)
    return dict(returns=ret, aliasing=aliasing, in_place=in_place, out_variant=out_variant,
                reduction=reduction, composite_implicit=ci, pointwise=pointwise, factory=factory, view_copy=view_copy)


# --- probing -----------------------------------------------------------------------------------

NEVER_PROBE = {  # side effects, devices we do not have, or needs arguments we cannot guess
    "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad", "cuda", "ipu", "xpu",
    "mtia", "hpu", "pin_memory", "share_memory_", "record_stream", "apply_", "map_", "map2_", "set_",
    "storage", "untyped_storage", "module_load", "new", "resize_", "resize_as_", "is_pinned",
    "to_dlpack", "numpy", "tolist", "item", "__dlpack__",
}


def shares(a, b):
    try:
        if a.numel() == 0:
            return None  # an empty piece says nothing
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    except Exception:
        return None


def call(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return True, fn(*args)
    except Exception:
        return False, None


def _saved_during(run):
    """The tensors autograd packs for backward while ``run()`` runs, and its result."""
    packed = []

    def pack(tensor):
        packed.append(tensor)
        return tensor

    with warnings.catch_warnings(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        warnings.simplefilter("ignore")
        result = run()
    return packed, result


def _same_tensor(a, b):
    if not isinstance(a, torch.Tensor) or a.layout != torch.strided or b.layout != torch.strided:
        return False
    try:
        return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype
    except RuntimeError:  # no storage (a tensor subclass, a meta tensor)
        return False


def saves_of(call_with, templates):
    """What the op saves for backward (``DEFAULTS``' ``saves`` letters, for one argument pattern):
    ``call_with(tensors)`` calls it with fresh copies of the float ``templates`` (receiver or first
    input first).  All inputs requiring grad: which inputs, and is the result, packed?  Then each
    input alone not requiring grad (the others do): is it still packed?"""
    letters = set()

    def attempt(requiring):
        tensors = [t.detach().clone().requires_grad_(r) for t, r in zip(templates, requiring)]
        try:
            packed, result = _saved_during(lambda: call_with(tensors))
        except Exception:
            return None
        outputs = [r for r in (result if isinstance(result, (tuple, list)) else (result,))
                   if isinstance(r, torch.Tensor)]
        if not outputs or not any(o.requires_grad for o in outputs):
            return None
        return packed, tensors, outputs

    ran = attempt([True] * len(templates))
    if ran is None:
        return None
    packed, tensors, outputs = ran
    if any(_same_tensor(saved, output) for saved in packed for output in outputs):
        letters.add("o")
        if len(outputs) > 1:  # a tuple: which of its tensors are kept (`eigh` both, `sort` the indices)
            letters.update(str(index) for index, output in enumerate(outputs)
                           if any(_same_tensor(saved, output) for saved in packed))
    if any(_same_tensor(saved, tensor) for saved in packed for tensor in tensors):
        letters.add("i")
    for index in range(len(templates) if len(templates) > 1 else 0):
        ran = attempt([position != index for position in range(len(templates))])
        if ran is not None and any(_same_tensor(saved, ran[1][index]) for saved in ran[0]):
            letters.add("c")
    return letters


def saves_letters(with_tensors, alone):
    """The ``saves`` cell from the letters of a tensor-argument probe and of a probe with the
    receiver / first input alone (None: that call did not work)."""
    if with_tensors is None and alone is None:
        return "-"
    cell = "".join(sorted(with_tensors or ())) + "".join(sorted(letter.upper() for letter in alone or ()))
    return cell or "n"


METHOD_TENSOR_PATTERNS = [(torch.randn(3, 4),), (torch.randn(4, 3),), (torch.randn(4),), (torch.randn(3, 4), torch.randn(3, 4))]
METHOD_ALONE_PATTERNS = [(), (2,), (1,), (0,), (-1,), ([12],), (2, 0), (0, 1), ([3, 4], 1.0)]


def method_saves(name):
    if name in NEVER_PROBE or name.endswith("_") or name.startswith("_"):
        return "-"
    x = torch.randn(3, 4).abs() + 0.5  # positive: log, sqrt, pow... are defined

    def first(patterns, with_tensors):
        for extra in patterns:
            tensors = [e for e in extra if isinstance(e, torch.Tensor)]
            if with_tensors != bool(tensors):
                continue

            def call_with(fresh, extra=extra):
                rest = iter(fresh[1:])
                return getattr(fresh[0], name)(*(next(rest) if isinstance(e, torch.Tensor) else e for e in extra))

            found = saves_of(call_with, [x, *tensors])
            if found is not None:
                return found
        return None

    return saves_letters(first(METHOD_TENSOR_PATTERNS, True), first(METHOD_ALONE_PATTERNS, False))


def function_saves(fn, patterns):
    """``saves`` of a function, from the first argument pattern of each kind that works."""
    with_tensors = alone = None
    for pattern in patterns:
        tensors = [a for a in pattern if isinstance(a, torch.Tensor)]
        if (len(tensors) > 1 and with_tensors is not None) or (len(tensors) == 1 and alone is not None):
            continue

        def call_with(fresh, pattern=pattern):
            rest = iter(fresh)
            return fn(*(next(rest) if isinstance(a, torch.Tensor) else a for a in pattern))

        found = saves_of(call_with, tensors)
        if found is None:
            continue
        if len(tensors) > 1:
            with_tensors = found
        else:
            alone = found
    return saves_letters(with_tensors, alone)


def _positive(*shape):
    return torch.randn(*shape).abs() + 0.5


FUNCTION_PATTERNS = [(_positive(3, 4), _positive(3, 4)), (_positive(3, 4), _positive(4, 5)), (_positive(3, 4),),
                     (_positive(3, 4), 2), (_positive(3, 4), 1), (_positive(3, 4), 0)]
FUNCTIONAL_PATTERNS = [(_positive(3, 4), _positive(5, 4), _positive(5)), (_positive(1, 2, 5, 5), _positive(3, 2, 3, 3)),
                       (_positive(1, 2, 5), _positive(3, 2, 3)), (_positive(3, 4), _positive(3, 4)),
                       (_positive(3, 4), _positive(5, 4)), (_positive(3, 4),), (_positive(1, 2, 5, 5),),
                       (_positive(1, 2, 5, 5), 2), (_positive(3, 4), 1)]
MODULE_BUILDS = [((), (_positive(3, 4),)), ((4, 5), (_positive(3, 4),)), ((2, 3, 3), (_positive(1, 2, 5, 5),)),
                 ((2,), (_positive(3, 2, 5, 5),)), ((2,), (_positive(3, 2, 5),)), ((4,), (_positive(3, 4),)),
                 ((1,), (_positive(3, 4),)), ((2,), (_positive(1, 2, 5, 5),)),
                 # 1-d and 3-d layers (`Conv1d`, `Conv3d`, `BatchNorm3d`): what they save decides
                 # whether an in-place write to their input breaks the backward
                 ((2, 3, 3), (_positive(1, 2, 5),)), ((2, 3, 3), (_positive(1, 2, 5, 5, 5),)),
                 ((2,), (_positive(1, 2, 5, 5, 5),))]


def module_saves(cls):
    """``saves`` of a module's forward on an input: ``i``/``c`` the input (requiring grad or not:
    the module's parameters, when it has some, require grad), ``o`` the output."""
    if getattr(cls, "__module__", "").startswith(("torch.nn.modules.lazy", "torch.ao")) or "Lazy" in cls.__name__:
        return "-"
    for arguments, inputs in MODULE_BUILDS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = cls(*arguments)
        except Exception:
            continue
        has_parameters = any(True for _ in module.parameters())
        letters = saves_of(lambda fresh: module(*fresh), list(inputs))
        if letters is None:
            continue
        if has_parameters:  # the input alone not requiring grad: saved for the weights' gradients?
            tensor = inputs[0].detach().clone()
            try:
                packed, _ = _saved_during(lambda: module(tensor))
            except Exception:
                packed = []
            if any(_same_tensor(saved, tensor) for saved in packed):
                letters.add("c")
        return "".join(sorted(letters)) or "n"
    return "-"


# `Unflatten(1, (2, 2))`, `MultiheadAttention(4, 2)`, `AdaptiveLogSoftmaxWithLoss(4, 10, [2])`
MODULE_INPUT_BUILDS = [*MODULE_BUILDS, ((1, (2, 2)), (_positive(3, 4),)), ((4, 2), (_positive(3, 4),)),
                       ((4, 10, [2]), (_positive(3, 4),))]
# What a container's call gives depends on the modules put in it (an empty `Sequential` gives its input).
CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)


def module_facts(cls):
    """(parameters, aliasing) of a module class, built as ``MODULE_INPUT_BUILDS`` build it (with
    ``inplace=True`` too): whether it has parameters of its own, and whether its call may give
    its input itself ("maybe_self": `Identity`, `ReLU(inplace=True)`, `Dropout` in eval mode) or
    a view of it ("view": `Unflatten`), in training or eval mode; (None, "none") unbuilt."""
    if getattr(cls, "__module__", "").startswith(("torch.nn.modules.lazy", "torch.ao")) or "Lazy" in cls.__name__ \
            or issubclass(cls, CONTAINERS):
        return None, "none"
    parameters, found = None, set()
    for arguments, inputs in MODULE_INPUT_BUILDS:
        for keywords in ({}, {"inplace": True}):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    module = cls(*arguments, **keywords)
            except Exception:
                continue
            parameters = parameters or any(True for _ in module.parameters())
            for training in (True, False):
                x = inputs[0].clone()
                module.train(training)
                ok, result = call(module, x)
                if ok and result is x:
                    found.add("maybe_self")
                elif ok and isinstance(result, torch.Tensor) and shares(result, x):
                    found.add("view")
    return parameters, "maybe_self" if "maybe_self" in found else "view" if found else "none"


INTEGER_PATTERNS = [(), (0,), (1,), (2,), (-1,), ([12],), ([4, 3],), (0, 1), (1, 0), (torch.zeros(3, 4),)]
NO_TENSOR_PATTERNS = [(3,), (5, (3,)), (0, 5, (3,))]


def _dtypes(result):
    """For a tensor result, or each element of a tuple of tensors: "i" an integer dtype, "f" float32,
    "o" any other; None for anything else."""
    def letter(tensor):
        if tensor.dtype == torch.float32:
            return "f"
        return "i" if not (tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool) else "o"
    if isinstance(result, torch.Tensor):
        return letter(result)
    if isinstance(result, (tuple, list)) and len(result) > 1 and all(isinstance(e, torch.Tensor) for e in result):
        return "".join(map(letter, result))
    return None


def integer_of(fn_on):
    """``integer`` of ``fn_on(x)(*args)``: the first argument pattern that works on both an int64 and a
    float32 input decides, except that a pattern giving a tuple of indices (``max(0)`` after ``max()``)
    makes it "indices"."""
    found = []
    for args in INTEGER_PATTERNS:
        ok_int, on_int = call(lambda: fn_on(torch.arange(12).reshape(3, 4))(*args))
        ok_float, on_float = call(lambda: fn_on(torch.randn(3, 4))(*args))
        from_int, from_float = _dtypes(on_int) if ok_int else None, _dtypes(on_float) if ok_float else None
        if from_float is None:
            continue
        if from_float == "i" and from_int in ("i", None):  # `multinomial` takes floats only
            found.append("always")
        elif from_int is None:
            continue
        elif from_int == "i" * len(from_int) and from_float == "f" * (len(from_float) - 1) + "i" and len(from_float) > 1:
            found.append("indices")
        elif from_int == "i" and from_float == "f":
            found.append("keeps")
        else:
            found.append("-")
    if not found:
        return "-"
    return "indices" if "indices" in found and found[0] in ("keeps", "indices") else found[0]


def integer_without_tensors(fn):
    """``integer`` of a function that takes no tensor, called with integers only (``randperm(3)``)."""
    for args in NO_TENSOR_PATTERNS:
        ok, result = call(fn, *args)
        if ok:
            return "always" if isinstance(result, torch.Tensor) and _dtypes(result) == "i" else "-"
    return "-"


def probe_method(name):
    """What calling ``x.name(...)`` does on a few float tensors."""
    if name in NEVER_PROBE or name.endswith("_"):
        return {}
    facts = {}
    # 0-dim whatever the shapes: a.m(b) on 1-d operands, and on 2-d ones unless it refuses them
    ok1, r1 = call(lambda: getattr(torch.randn(3), name)(torch.randn(3)))
    ok2, r2 = call(lambda: getattr(torch.randn(3, 3), name)(torch.randn(3, 3)))
    if ok1 and isinstance(r1, torch.Tensor) and r1.dim() == 0 and (not ok2 or isinstance(r2, torch.Tensor) and r2.dim() == 0):
        facts["always_0dim"] = True
    patterns = [(), (0,), (1,), ([4, 3],), ([12],), (torch.randn(4, 3),), (torch.randn(12),), (2, 0), (0, 1),
                (3, 4), (0, 0, 1), (torch.float32,), ([3, 4], 1.0), (torch.randn(3, 4),)]
    results = []
    for args in patterns:  # every pattern that works: aliasing may differ by argument (reshape)
        for x in (torch.randn(3, 4), torch.randn(4, 3).t()):  # contiguous, then not
            ok, result = call(getattr(x, name), *args)
            if ok:
                results.append((args, x, result))
    if not results:
        return facts
    args0, x0, r0 = results[0]
    if isinstance(r0, torch.Tensor):
        facts["returns"] = "tensor"
    elif isinstance(r0, (tuple, list)) and r0 and all(isinstance(e, torch.Tensor) for e in r0):
        facts["returns"] = "tuple"
    elif isinstance(r0, numpy.ndarray):
        facts["returns"] = "ndarray"
    else:
        facts["returns"] = "other"
    sharing = []
    for args, x, r in results:
        elements = r if isinstance(r, (tuple, list)) else (r,)
        for e in elements:
            if isinstance(e, torch.Tensor):
                same = shares(e, x)
                if e is x:
                    sharing.append("self")
                elif same is not None:
                    sharing.append("view" if same else "copy")
    facts["sharing"] = set(sharing)
    if args0 == () and isinstance(r0, torch.Tensor):
        facts["no_arg_0dim"] = r0.dim() == 0
    if isinstance(r0, torch.Tensor) and not (r0.is_floating_point() or r0.is_complex()):
        facts["differentiable"] = False  # integer / boolean results never require grad
    # differentiable: the result of a requires-grad input requires grad
    g = torch.randn(3, 4, requires_grad=True)
    ok, r = call(getattr(g, name), *args0) if "differentiable" not in facts and not any(isinstance(a, torch.Tensor) for a in args0) else (False, None)
    if ok:
        first = r[0] if isinstance(r, (tuple, list)) and r and isinstance(r[0], torch.Tensor) else r
        if isinstance(first, torch.Tensor):
            facts["differentiable"] = bool(first.requires_grad)
    # 0-dim in, 0-dim out (SHAPE_PRESERVING_METHODS)
    ok, r = call(getattr(torch.tensor(2.0), name), *args0) if args0 in ((), (torch.float32,)) else (False, None)
    if ok and isinstance(r, torch.Tensor):
        facts["keeps_0dim"] = r.dim() == 0
    return facts


def _spd(n):
    a = torch.randn(n, n)
    return a @ a.T + n * torch.eye(n)


def probe_function(fn, shapes=((3, 4),)):
    """``fn(x)`` on 2-d float tensors: 0-dim? the input itself, a view or a copy?  ``x`` has the
    first of ``shapes`` that ``fn`` takes (linear algebra wants square matrices, symmetric positive
    definite ones here: ``inv``, ``det``, ``cholesky``)."""
    def matrix(rows, columns):
        return _spd(rows) if rows == columns else torch.randn(rows, columns)

    rows, columns = next((shape for shape in shapes if call(fn, matrix(*shape))[0]), shapes[0])
    facts = {"sharing": set()}
    for x in (matrix(rows, columns), matrix(columns, rows).t()):  # contiguous, then not
        ok, result = call(fn, x)
        for e in (result if isinstance(result, (tuple, list)) else (result,)) if ok else ():
            if isinstance(e, torch.Tensor):
                same = shares(e, x)
                if e is x:
                    facts["sharing"].add("self")
                elif same is not None:
                    facts["sharing"].add("view" if same else "copy")
    ok, r = call(fn, matrix(rows, columns))
    if ok and isinstance(r, torch.Tensor):
        facts["no_arg_0dim"] = r.dim() == 0
        g = matrix(rows, columns).requires_grad_()
        ok, rg = call(fn, g)
        if ok and isinstance(rg, torch.Tensor):
            facts["differentiable"] = bool(rg.requires_grad)
    ok1, r1 = call(fn, torch.randn(3), torch.randn(3))
    ok2, r2 = call(fn, torch.randn(3, 3), torch.randn(3, 3))
    if ok1 and isinstance(r1, torch.Tensor) and r1.dim() == 0 and (not ok2 or isinstance(r2, torch.Tensor) and r2.dim() == 0):
        facts["always_0dim"] = True
    return facts


# --- tensor_only -------------------------------------------------------------------------------

OTHER_TYPES = (numpy.ndarray, numpy.generic, numpy.float64, memoryview, nn.Module, torch.optim.Optimizer,
               list, dict, tuple, set, str, bytes, int, float, complex, bool, object)
# Names other types also have.  A method call is tensor evidence unless the other type's attribute
# is callable too (memoryview.contiguous and ndarray.size are not); any attribute use counts for properties.
NON_TENSOR_NAMES = set().union(*(dir(t) for t in OTHER_TYPES))
NON_TENSOR_CALLABLES = {n for t in OTHER_TYPES for n in dir(t) if callable(getattr(t, n, None))}

# --- overrides: what torch cannot tell us ------------------------------------------------------
# key -> (fields, reason)
OVERRIDES = {
    # Python-level methods without an aten op of their own (torch/_tensor.py, torch/functional.py)
    "torch.Tensor.split": (dict(returns="tuple", aliasing="view"), "Python wrapper of aten::split / split_with_sizes"),
    "torch.Tensor.unique": (dict(returns="depends", aliasing="copy"), "tuple with return_inverse/return_counts"),
    "torch.Tensor.unique_consecutive": (dict(returns="depends", aliasing="copy"), "tuple with return_inverse/return_counts"),
    "torch.unique": (dict(returns="depends", aliasing="copy"), "tuple with return_inverse/return_counts"),
    "torch.unique_consecutive": (dict(returns="depends", aliasing="copy"), "tuple with return_inverse/return_counts"),
    "torch.Tensor.nonzero": (dict(returns="depends"), "tuple with as_tuple=True"),
    "torch.nonzero": (dict(returns="depends"), "tuple with as_tuple=True"),
    "torch.Tensor.norm": (dict(zero_dim="no_dim", reduction=True), "Python wrapper of aten::norm"),
    "torch.norm": (dict(zero_dim="no_dim", reduction=True), "Python wrapper of aten::norm"),
    "torch.Tensor.lu": (dict(returns="tuple"), "Python method"),
    "torch.lu": (dict(returns="tuple"), "Python function"),
    "torch.lu_unpack": (dict(returns="tuple"), "(P, L, U); the schema's returns are not seen as one tuple"),
    "torch.meshgrid": (dict(returns="tuple", aliasing="view"), "Python function: expanded views of 1-d inputs"),
    "torch.lobpcg": (dict(returns="tuple"), "Python function"),
    "torch.pca_lowrank": (dict(returns="tuple"), "Python function"),
    "torch.svd_lowrank": (dict(returns="tuple"), "Python function"),
    "torch.atleast_1d": (dict(returns="depends"), "a tuple for several arguments"),
    "torch.atleast_2d": (dict(returns="depends"), "a tuple for several arguments"),
    "torch.atleast_3d": (dict(returns="depends"), "a tuple for several arguments"),
    "torch.Tensor.stft": (dict(returns="tensor"), "Python method"),
    "torch.Tensor.numpy": (dict(returns="ndarray", aliasing="view", differentiable=False), "shares memory (CPU)"),
    "torch.Tensor.tolist": (dict(returns="other", aliasing="none"), "Python lists, not probed"),
    "torch.Tensor.item": (dict(returns="other", aliasing="none"), "a Python number, not probed"),
    "torch.Tensor.backward": (dict(returns="other", aliasing="none"), "returns None"),
    "torch.Tensor.register_hook": (dict(returns="other", aliasing="none"), "a handle"),
    "torch.Tensor.register_post_accumulate_grad_hook": (dict(returns="other", aliasing="none"), "a handle"),
    "torch.Tensor.storage": (dict(returns="other", aliasing="view"), "a TypedStorage of the same memory"),
    "torch.Tensor.untyped_storage": (dict(returns="other", aliasing="view"), "an UntypedStorage of the same memory"),
    "torch.Tensor.is_pinned": (dict(returns="other", aliasing="none"), "a bool; not probed (needs CUDA)"),
    "torch.Tensor.cuda": (dict(returns="tensor", aliasing="maybe_self", differentiable=True, zero_dim="keeps",
                               integer="keeps"), "self when already there; not probed (no CUDA here)"),
    # always shares: the input itself for a real tensor, a view of a complex one (probes see only the first)
    "torch.Tensor.conj": (dict(aliasing="view"), "self for a real tensor, a lazy conjugate view of a complex one"),
    "torch.conj": (dict(aliasing="view"), "self for a real tensor, a lazy conjugate view of a complex one"),
    "torch.real": (dict(aliasing="view"), "self for a real tensor, a view of a complex one"),
    "torch.Tensor.pin_memory": (dict(aliasing="maybe_self"), "self when already pinned, else a pinned copy; not probed"),
    "torch.Tensor.coalesce": (dict(aliasing="maybe_self"), "self when already coalesced, else a copy; sparse only, not probed"),
    "torch.Tensor.new": (dict(returns="tensor", differentiable=False), "legacy constructor"),
    # dtype / device conversions: the tensor itself when nothing changes, else a copy (no aten op of their own)
    **{f"torch.Tensor.{n}": (dict(aliasing="maybe_self", zero_dim="keeps"), "self when dtype/device already match")
       for n in ("bfloat16", "bool", "byte", "char", "double", "half", "int", "long", "short", "float",
                 "cfloat", "cdouble", "chalf", "type_as")},
    "torch.Tensor.type": (dict(returns="depends", aliasing="maybe_self", zero_dim="keeps"), "a str without arguments"),
    "torch.Tensor.det": (dict(zero_dim="no_dim"), "0-dim for one (unbatched) matrix"),
    "torch.det": (dict(zero_dim="no_dim"), "0-dim for one (unbatched) matrix"),
    "torch.Tensor.logdet": (dict(zero_dim="no_dim"), "0-dim for one (unbatched) matrix"),
    "torch.logdet": (dict(zero_dim="no_dim"), "0-dim for one (unbatched) matrix"),
    "torch.Tensor.dsplit": (dict(returns="tuple", aliasing="view"), "like hsplit/vsplit (needs a 3-d input to probe)"),
    "torch.Tensor.bincount": (dict(differentiable=False), "integer input and output"),
    "torch.Tensor.index": (dict(returns="unknown", aliasing="none"), "Python-level, not an aten op"),
    "torch.Tensor.record_stream": (dict(returns="other", in_place="none", aliasing="none"), "schema says Tensor(a!): CUDA allocator bookkeeping"),
    "torch.Tensor.retain_grad": (dict(returns="other", in_place="none", aliasing="none"), "returns None; schema says Tensor(a!): a flag"),
    # in place, but not on the elements: the linter must not call these "writes"
    "torch.Tensor.requires_grad_": (dict(in_place="metadata", aliasing="self", zero_dim="keeps"),
                                   "sets a flag, returns self; schema says Tensor(a!)"),
    "torch.Tensor.detach_": (dict(in_place="metadata", aliasing="self", differentiable=False, zero_dim="keeps"),
                             "cuts the graph, returns self; schema says Tensor(a!)"),
    "torch.Tensor.set_": (dict(in_place="metadata", aliasing="self"), "points the tensor at other storage; old storage untouched"),
    "torch.Tensor.share_memory_": (dict(returns="tensor", in_place="metadata", aliasing="self"), "moves storage to shared memory; values unchanged"),
    "torch.Tensor.resize_": (dict(in_place="data", aliasing="self"), "may reallocate; new elements uninitialized"),
    "torch.Tensor.resize_as_": (dict(in_place="data", aliasing="self"), "like resize_ (schema tags it inplace_view)"),
    "torch.Tensor.apply_": (dict(in_place="data", aliasing="self"), "Python-level, CPU only"),
    "torch.Tensor.map_": (dict(in_place="data", aliasing="self"), "Python-level, CPU only"),
    "torch.Tensor.map2_": (dict(in_place="data", aliasing="self"), "Python-level, CPU only"),
    # Python-bound constructors (torch/_tensor_new.py, no TensorOptions in a schema): a new tensor, a leaf
    **{f"torch.{n}": (dict(returns="tensor", factory=True, differentiable=False), "Python-bound constructor: a new leaf")
       for n in ("tensor", "as_tensor", "asarray", "frombuffer")},
    "torch.from_numpy": (dict(returns="tensor", aliasing="view", factory=True, differentiable=False),
                         "shares the array's memory; a new leaf"),
    # removed from torch but still linted (old code): names exist and raise
    "torch.eig": (dict(returns="tuple", removed=True), "removed in 1.13/2.0, raises"),
    "torch.symeig": (dict(returns="tuple", removed=True), "removed, raises"),
    "torch.lstsq": (dict(returns="tuple", removed=True), "removed, raises"),
    "torch.Tensor.eig": (dict(returns="tuple", removed=True), "removed, raises"),
    "torch.Tensor.symeig": (dict(returns="tuple", removed=True), "removed, raises"),
    "torch.Tensor.lstsq": (dict(returns="tuple", removed=True), "removed, raises"),
    # nn modules whose call returns a tuple (forward has no return annotation for RNN/LSTM/GRU)
    "torch.nn.RNN": (dict(returns="tuple"), "(output, h_n)"),
    "torch.nn.LSTM": (dict(returns="tuple"), "(output, (h_n, c_n))"),
    # built from a layer (`TransformerEncoder(layer, num_layers)`): the parameters of the layers it stacks
    "torch.nn.TransformerEncoder": (dict(parameters=True), "the stacked layers' parameters"),
    "torch.nn.TransformerDecoder": (dict(parameters=True), "the stacked layers' parameters"),
    "torch.nn.GRU": (dict(returns="tuple"), "(output, h_n)"),
    "torch.nn.AdaptiveLogSoftmaxWithLoss": (dict(returns="tuple"), "_ASMoutput(output, loss)"),
}
# properties: aliasing of the attribute's value
PROPERTY_ALIASING = {"data": "view", "T": "view", "mT": "view", "H": "view", "mH": "view", "real": "view",
                     "imag": "view", "grad": "copy"}


# --- build -------------------------------------------------------------------------------------

facts = {}


def add(key, kind, **fields):
    record = dict(DEFAULTS, kind=kind)
    record.update(fields)
    facts[key] = record


def aliasing_of(sf, probe):
    kinds = sf["aliasing"] if sf else set()
    sharing = probe.get("sharing", set())
    if kinds == {"alias"}:
        # a view: torch has a <name>_copy twin (Tag.view_copy), or every probe shared storage;
        # otherwise (reshape, contiguous, to, pin_memory...) the input itself, a view or a copy
        if sharing & {"copy", "self"}:
            return "maybe_self" if "self" in sharing and "view" not in sharing else "maybe_view"
        if sf["view_copy"] or sharing == {"view"}:
            return "view"
        return "maybe_view"
    if kinds == {"self"}:
        return "self"
    if "alias" in kinds:
        return "maybe_view"  # some overloads alias, some not
    if "copy" in kinds and sharing & {"view", "self"}:
        # no alias annotation, but the probes saw the input come back: unsafe_split/unsafe_chunk
        # (views autograd does not track), atleast_1d, sum_to_size, to_dense (the input itself
        # when nothing needs changing), broadcast_tensors (the input, or expanded views)
        if sharing == {"view"}:
            return "view"
        return "maybe_self" if "self" in sharing and "view" not in sharing else "maybe_view"
    if kinds & {"copy"} or (sf and sf["returns"] in ("tensor", "tuple", "depends")):
        return "copy"
    if probe.get("returns") in ("tensor", "tuple"):
        # no schema: what probing saw
        if sharing == {"view"}:
            return "view"
        if sharing and sharing <= {"view", "self", "copy"} and sharing & {"view", "self"}:
            return "maybe_self" if "self" in sharing and "view" not in sharing else "maybe_view"
        return "copy"
    return "none"


def zero_dim_of(sf, probe, returns):
    if probe.get("always_0dim"):
        return "always"
    if probe.get("no_arg_0dim"):
        return "no_dim"
    if (probe.get("keeps_0dim") or sf and sf["pointwise"]) and returns == "tensor":
        return "keeps"
    return "never" if returns in ("tensor", "tuple", "depends") else "unknown"


for name in tensor_methods:
    sf = schema_facts(name, method=True)
    probe = probe_method(name)
    returns = (sf["returns"] if sf and sf["returns"] != "unknown" else probe.get("returns", "unknown"))
    in_place = "none"
    if sf:
        in_place = "data" if "data" in sf["in_place"] else "metadata" if "metadata" in sf["in_place"] else "none"
    aliasing = aliasing_of(sf, probe)
    if returns == "other":
        aliasing = "none"
    differentiable = probe.get("differentiable")
    if differentiable is None and (returns == "other" or in_place != "none"):
        differentiable = None
    add(f"torch.Tensor.{name}", "method", returns=returns, aliasing=aliasing, in_place=in_place,
        out_variant=bool(sf and sf["out_variant"]), reduction=bool(sf and sf["reduction"]),
        zero_dim=zero_dim_of(sf, probe, returns), differentiable=differentiable,
        saves=method_saves(name) if differentiable is not False and returns != "other" and in_place == "none" else "-",
        tensor_only=name not in NON_TENSOR_CALLABLES, source="schema+probe" if sf else ("probe" if probe else "none"),
        integer=integer_of(lambda x, name=name: getattr(x, name))
        if returns in ("tensor", "tuple", "depends") and in_place == "none" and name not in NEVER_PROBE else "-")

for name in tensor_properties:
    x = torch.randn(3, 4, requires_grad=True)
    ok, value = call(lambda: getattr(x, name))
    returns = "tensor" if isinstance(value, torch.Tensor) or name in ("grad", "real", "imag", "data") else "other"
    add(f"torch.Tensor.{name}", "property", returns=returns,
        aliasing=PROPERTY_ALIASING.get(name, "none" if returns == "other" else "copy"),
        differentiable=(name not in ("data", "grad")) if returns == "tensor" else None,
        zero_dim="keeps" if name in ("data", "grad", "real", "imag") else ("never" if returns == "tensor" else "unknown"),
        tensor_only=name not in NON_TENSOR_NAMES, source="probe",
        integer=integer_of(lambda x, name=name: lambda: getattr(x, name)) if returns == "tensor" else "-")

FUNCTION_NEVER_PROBE = ("set_", "use_", "manual_seed", "seed", "save", "load", "compile", "cond", "while_loop",
                        "vmap", "fork", "wait", "export", "from_file", "is_", "get_", "init_", "_")
for name in torch_functions:
    sf = schema_facts(name, method=False)
    probe = probe_function(getattr(torch, name)) if sf and not name.startswith(FUNCTION_NEVER_PROBE) else {}
    returns = sf["returns"] if sf else "unknown"
    in_place = "none"
    if sf:
        in_place = "data" if "data" in sf["in_place"] else "metadata" if "metadata" in sf["in_place"] else "none"
    aliasing = aliasing_of(sf, probe) if sf else "none"
    # a function's maybe-view: use the method's probe when there is one
    method = facts.get(f"torch.Tensor.{name}")
    if method is not None and aliasing in ("view", "copy") and method["aliasing"] in ("view", "maybe_view", "maybe_self"):
        aliasing = method["aliasing"]
    no_tensor_input = sf is not None and not any(
        "Tensor" in str(a.type) for op, s in overloads(name) for a in s.arguments if not a.kwarg_only)
    add(f"torch.{name}", "function", returns=returns, aliasing=aliasing if returns != "other" else "none",
        in_place=in_place, out_variant=bool(sf and sf["out_variant"]), reduction=bool(sf and sf["reduction"]),
        zero_dim=zero_dim_of(sf, probe, returns), differentiable=probe.get("differentiable",
                                                                           False if no_tensor_input else None),
        factory=bool(sf and sf["factory"]),
        saves=function_saves(getattr(torch, name), FUNCTION_PATTERNS)
        if sf and probe.get("differentiable") is not False and returns != "other" and in_place == "none"
        and not name.startswith(FUNCTION_NEVER_PROBE) else "-",
        integer=("-" if not sf or returns not in ("tensor", "tuple", "depends") or in_place != "none"
                 or name.startswith(FUNCTION_NEVER_PROBE)
                 else integer_without_tensors(getattr(torch, name)) if no_tensor_input
                 else integer_of(lambda x, name=name: lambda *args: getattr(torch, name)(x, *args))),
        source="schema+probe" if sf else "none")

for name in functional:
    fn = getattr(F, name)
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    loss = "reduction" in params
    in_place = "data" if name.endswith("_") else "none"
    add(f"torch.nn.functional.{name}", "function",
        returns="depends" if "return_indices" in params or name.endswith("_with_indices") else "tensor",
        in_place=in_place, loss=loss, zero_dim="no_dim" if loss else "never",
        saves=function_saves(fn, FUNCTIONAL_PATTERNS) if in_place == "none" else "-",
        source="signature" + (" inplace=" if "inplace" in params else ""))

for name in init:
    add(f"torch.nn.init.{name}", "function", returns="tensor" if name != "calculate_gain" else "other",
        in_place="data" if name.endswith("_") or name in ("uniform", "normal", "constant", "xavier_uniform",
                                                            "xavier_normal", "kaiming_uniform", "kaiming_normal",
                                                            "orthogonal", "sparse", "eye", "dirac") else "none",
        aliasing="self" if name != "calculate_gain" else "none", source="names")

for name in nn_modules:
    cls = getattr(nn, name)
    try:
        annotation = str(inspect.signature(cls.forward).return_annotation)
    except (TypeError, ValueError):
        annotation = ""
    returns = "tuple" if annotation.lower().startswith("tuple") else "tensor"
    parameters, aliasing = module_facts(cls)
    add(f"torch.nn.{name}", "module_class", returns=returns, aliasing=aliasing, parameters=parameters,
        loss=issubclass(cls, nn.modules.loss._Loss), saves=module_saves(cls), source="class")

for name in LEGACY_TYPES:
    dtype = torch.get_default_dtype() if name == "Tensor" else getattr(torch, name).dtype
    add(f"torch.{name}" if name != "Tensor" else "torch.Tensor", "type", returns="tensor",
        legacy_dtype=str(dtype).replace("torch.", ""), tensor_only=True, source="type")

# torch.linalg / torch.special / torch.fft: each function is an aten op named ``<namespace>_<name>``
# (torch.linalg.norm is aten::linalg_norm), derived as the torch.* functions are; the probes also
# try a square (symmetric positive definite) matrix, which inv, det, cholesky, eigh... need.
NAMESPACES = {"linalg": torch.linalg, "special": torch.special, "fft": torch.fft}

SQUARE_PATTERNS = [(_spd(4), _spd(4)), (_spd(4),), (_spd(4), 2)]
for namespace, module in NAMESPACES.items():
    for name in public(dir(module)):
        fn = getattr(module, name)
        if not callable(fn) or not name[0].islower() or inspect.ismodule(fn):
            continue
        aten = f"{namespace}_{name}"
        sf = schema_facts(aten, method=False)
        assert sf is not None, f"torch.{namespace}.{name}: no aten op {aten}"
        probe = probe_function(fn, shapes=((3, 4), (4, 4)))
        returns = sf["returns"]
        in_place = "data" if "data" in sf["in_place"] else "metadata" if "metadata" in sf["in_place"] else "none"
        add(f"torch.{namespace}.{name}", "function", returns=returns,
            aliasing=aliasing_of(sf, probe) if returns != "other" else "none", in_place=in_place,
            out_variant=sf["out_variant"], reduction=sf["reduction"], zero_dim=zero_dim_of(sf, probe, returns),
            differentiable=probe.get("differentiable"), factory=sf["factory"],
            saves=function_saves(fn, FUNCTION_PATTERNS + SQUARE_PATTERNS)
            if probe.get("differentiable") is not False and returns != "other" and in_place == "none" else "-",
            integer=integer_of(lambda x, fn=fn: lambda *args: fn(x, *args))
            if returns in ("tensor", "tuple", "depends") and in_place == "none" else "-",
            source="schema+probe")

# --- random dropping ---------------------------------------------------------------------------
# What names a candidate: a float parameter named for a drop probability, and a bool one named for
# the training switch; what makes it a fact: the calls below (``dropout_of``).
RATE_PARAMETERS = ("p", "dropout_p")
SWITCH_PARAMETERS = ("training", "train")
DROPOUT_SHAPES = [(2, 4, 8, 8), (2, 4, 16), (2, 4, 4, 8, 8)]


def parameters_of(fn, name):
    """(name, positional index or None when keyword-only, has a default, the default) of each
    parameter: the Python signature, else the aten schema of the main overload."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        params = None
    if params is not None:
        found, index = [], 0
        for param in params:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                return None
            keyword_only = param.kind is param.KEYWORD_ONLY
            found.append((param.name, None if keyword_only else index, param.default is not param.empty,
                          None if param.default is param.empty else param.default))
            index += not keyword_only
        return found
    main = [s for op, s in overloads(name) if torch.Tag.out not in op.tags]
    if not main:
        return None
    found, index = [], 0
    for argument in main[0].arguments:
        has_default = argument.has_default_value()
        found.append((argument.name, None if argument.kwarg_only else index, has_default,
                      argument.default_value if has_default else None))
        index += not argument.kwarg_only
    return found


def _argument_cell(name, position, has_default, default):
    cell = f"{name}@{'k' if position is None else position}"
    if has_default:
        cell += "=" + ("1" if default is True else "0" if default is False else repr(float(default)))
    return cell


def dropout_of(fn, name):
    """The ``dropout`` cell of a function (``DEFAULTS``' comment), or None.  A candidate (a rate
    parameter, maybe a switch) is one when calls show it: at rate 0 the result depends on the
    input and is the same from call to call; at rate 0.5 (switched on) two calls differ, and
    neither is the rate-0 result; switched off, rate 0.5 gives the rate-0 result; and left out,
    the switch does what its default says."""
    params = parameters_of(fn, name)
    if not params:
        return None
    names = [param[0] for param in params]
    rate = next((param for param in params if param[0] in RATE_PARAMETERS), None)
    switch = next((param for param in params if param[0] in SWITCH_PARAMETERS), None)
    if rate is None:
        return None
    # The tensors it needs: its parameters before the rate that have no default.
    needed = [param for param in params[:names.index(rate[0])] if not param[2]]
    if any(param[1] is None for param in needed):
        return None

    def run(shape, seed, offset, **arguments):
        torch.manual_seed(seed)
        generator = torch.Generator().manual_seed(offset)
        tensors = [torch.rand(shape, generator=generator) + 1 + offset for _ in needed]
        ok, result = call(lambda: fn(*tensors, **arguments))
        if ok and isinstance(result, (tuple, list)) and result and isinstance(result[0], torch.Tensor):
            result = result[0]  # `native_dropout`: (the result, the mask)
        return result if ok and isinstance(result, torch.Tensor) and result.is_floating_point() else None

    def same(a, b):
        return a is not None and b is not None and a.shape == b.shape and torch.equal(a, b)

    with torch.random.fork_rng():
        for shape in DROPOUT_SHAPES:
            on = {switch[0]: True} if switch else {}
            kept = run(shape, 1, 0, **{rate[0]: 0.0}, **on)
            if kept is None:
                continue
            again, other_input = run(shape, 2, 0, **{rate[0]: 0.0}, **on), run(shape, 1, 1, **{rate[0]: 0.0}, **on)
            if not same(kept, again) or same(kept, other_input):
                return None  # not the same from call to call, or the input does not matter (`bernoulli`)
            first, second = run(shape, 1, 0, **{rate[0]: 0.5}, **on), run(shape, 2, 0, **{rate[0]: 0.5}, **on)
            if first is None or second is None or same(first, second) or same(first, kept):
                return None  # nothing drawn at random (`normalize(x, p)`)
            cell = _argument_cell(*rate)
            if switch is None:
                return cell
            if not same(run(shape, 1, 0, **{rate[0]: 0.5, switch[0]: False}), kept):
                return None
            if switch[2]:  # left out: does what its default says
                left_out = [run(shape, seed, 0, **{rate[0]: 0.5}) for seed in (1, 2)]
                random = not same(*left_out)
                assert random is (switch[3] is True), f"{name}: the default of `{switch[0]}` is not what it does"
            return f"{cell},{_argument_cell(*switch)}"
    return None


for name in functional:
    cell = dropout_of(getattr(F, name), name)
    if cell is not None:
        facts[f"torch.nn.functional.{name}"]["dropout"] = cell
for name in torch_functions:
    if name.startswith(FUNCTION_NEVER_PROBE):
        continue
    cell = dropout_of(getattr(torch, name), name)
    if cell is not None:
        facts[f"torch.{name}"]["dropout"] = cell


for key, (fields, reason) in OVERRIDES.items():
    if key not in facts:
        assert fields.get("removed"), f"override of {key}, which torch {torch.__version__} does not have"
        kind = "module_class" if key.startswith("torch.nn.") and key.split(".")[2][:1].isupper() else \
            "method" if key.startswith("torch.Tensor.") else "function"
        add(key, kind)
    facts[key].update(fields)
    facts[key]["source"] = "override"

# --- write -------------------------------------------------------------------------------------

# The fields the linter reads, in the order of a row (the others above only help derive these):
# torch_facts.Fact's.
EMITTED = ("kind", "returns", "zero_dim", "aliasing", "in_place", "differentiable", "tensor_only", "loss",
           "factory", "legacy_dtype", "saves", "integer", "parameters", "dropout")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from torchlint.analysis.torch_facts import FIELDS  # noqa: E402

assert EMITTED == FIELDS, f"torch_facts.Fact has the fields {FIELDS}, this script writes {EMITTED}"

MODULE = '''"""The rows of the one table of torch facts, read from torch {version} by
scripts/gen_torch_facts.py.  Generated: do not edit (torch_facts.py says how to change it).

One row per name, its fields in the order of ``torch_facts.Fact`` separated by spaces:
``1``/``0`` for True/False, ``-`` for None.  (One string, not tuples: where bytecode is
not cached the module is compiled on every import, and one string compiles in no time,
18,000 constants in a fifth of a second.)
"""

TORCH_VERSION = {version!r}

ROWS = """
{rows}"""
'''


def cell(value):
    return {True: "1", False: "0", None: "-"}.get(value, value) if not isinstance(value, str) else value


CELLS = {key: [key] + [cell(facts[key][f]) for f in EMITTED] for key in facts}
WIDTHS = [max(len(cells[i]) for cells in CELLS.values()) for i in range(len(EMITTED) + 1)]
assert all(c and not set(c) & set(" \\\"'") for cells in CELLS.values() for c in cells)


def row(key):
    return " ".join(c.ljust(w) for c, w in zip(CELLS[key], WIDTHS)).rstrip() + "\n"


version = torch.__version__.split("+")[0]
text = MODULE.format(version=version, rows="".join(row(k) for k in sorted(facts)))
OUT.write_text(text, encoding="utf-8")
print(f"wrote {OUT}: {len(facts)} facts", sorted(Counter(r["kind"] for r in facts.values()).items()))
