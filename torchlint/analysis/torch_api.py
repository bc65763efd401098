"""What torch's API returns: the knowledge behind the tensor-ness inference.

Everything here is keyed by qualified names (``torch.nn.functional.relu``) or by
tensor method names, and answers "what does this call give back?".  The raw name
lists (``torch_names.py``) and the facts about each name (``torch_facts.py``: which
functions return tuples, which reductions give 0-dim results, which methods alias,
write in place or are not differentiable) come from torch itself, generated; what is
written out below is how calls use them, and what no generator can tell.
"""

from __future__ import annotations

import re
from typing import Optional

from torchlint.syntax import cst
from torchlint.syntax.nodes import is_true, keyword, positional_args
from torchlint.analysis import torch_facts, torch_names
from torchlint.analysis.values import NDARRAY, OTHER, Kind, Step, Value, sequence_of, tensor

# --- qualified names ---------------------------------------------------------------

_ALIASES = {
    "torch.autograd.variable.Variable": "torch.autograd.Variable",
    "torch.nn.parameter.Parameter": "torch.nn.Parameter",
    "torch.nn.parameter.Buffer": "torch.nn.Buffer",
    "torch.nn.modules.module.Module": "torch.nn.Module",
    "torch.optim.optimizer.Optimizer": "torch.optim.Optimizer",
    "torch.nn.utils.rnn.PackedSequence": "torch.nn.utils.rnn.PackedSequence",
    "torch._C._VariableFunctions": "torch",
}

VARIABLE = "torch.autograd.Variable"

# The softmax functions and modules whose `dim` torch guesses when it is not given
# (`_get_softmax_dim`, deprecated in 0.3), with the position `dim` takes by position.
IMPLICIT_DIM_SOFTMAX: dict[str, int] = {
    "torch.nn.functional.softmax": 1, "torch.nn.functional.log_softmax": 1, "torch.nn.functional.softmin": 1,
    "torch.nn.Softmax": 0, "torch.nn.LogSoftmax": 0, "torch.nn.Softmin": 0,
}

# Where the losses take the legacy `size_average` and `reduce` by position (read from torch
# 2.13's signatures; the order has not changed since the pair was added).
LEGACY_REDUCTION_POSITIONS: dict[str, tuple[int, Optional[int]]] = {
    "torch.nn.BCELoss": (1, 2), "torch.nn.BCEWithLogitsLoss": (1, 2), "torch.nn.CosineEmbeddingLoss": (1, 2),
    "torch.nn.CrossEntropyLoss": (1, 3), "torch.nn.HingeEmbeddingLoss": (1, 2), "torch.nn.KLDivLoss": (0, 1),
    "torch.nn.L1Loss": (0, 1), "torch.nn.MSELoss": (0, 1), "torch.nn.MarginRankingLoss": (1, 2),
    "torch.nn.MultiLabelMarginLoss": (0, 1), "torch.nn.MultiLabelSoftMarginLoss": (1, 2),
    "torch.nn.MultiMarginLoss": (3, 4), "torch.nn.NLLLoss": (1, 3), "torch.nn.NLLLoss2d": (1, 3),
    "torch.nn.PoissonNLLLoss": (2, 4), "torch.nn.SmoothL1Loss": (0, 1), "torch.nn.SoftMarginLoss": (0, 1),
    "torch.nn.TripletMarginLoss": (4, 5),
    "torch.nn.functional.binary_cross_entropy": (3, 4), "torch.nn.functional.binary_cross_entropy_with_logits": (3, 4),
    "torch.nn.functional.cosine_embedding_loss": (4, 5), "torch.nn.functional.cross_entropy": (3, 5),
    "torch.nn.functional.hinge_embedding_loss": (3, 4), "torch.nn.functional.kl_div": (2, 3),
    "torch.nn.functional.l1_loss": (2, 3), "torch.nn.functional.margin_ranking_loss": (4, 5),
    "torch.nn.functional.mse_loss": (2, 3), "torch.nn.functional.multi_margin_loss": (5, 6),
    "torch.nn.functional.multilabel_margin_loss": (2, 3), "torch.nn.functional.multilabel_soft_margin_loss": (3, 4),
    "torch.nn.functional.nll_loss": (3, 5), "torch.nn.functional.poisson_nll_loss": (4, 6),
    "torch.nn.functional.smooth_l1_loss": (2, 3), "torch.nn.functional.soft_margin_loss": (2, 3),
    "torch.nn.functional.triplet_margin_loss": (7, 8),
}

# Functions torch renamed, which still run but warn on every call: the old qualified name ->
# (the new function's name in the same module, the release that deprecated the old one,
# keyword arguments the new function needs to do what the old one did, as source text).
RENAMED_FUNCTIONS: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {
    **{f"torch.nn.init.{name}": (f"{name}_", "0.4", ()) for name in (
        "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
        "orthogonal", "sparse", "eye", "dirac")},
    "torch.nn.utils.clip_grad_norm": ("clip_grad_norm_", "0.4", ()),
    "torch.nn.utils.clip_grad.clip_grad_norm": ("clip_grad_norm_", "0.4", ()),
    "torch.nn.NLLLoss2d": ("NLLLoss", "0.4", ()),  # NLLLoss takes the same arguments and 2-D inputs
    "torch.nn.functional.upsample": ("interpolate", "0.4.1", ()),
    "torch.nn.functional.upsample_bilinear": ("interpolate", "0.4.1", (("mode", '"bilinear"'), ("align_corners", "True"))),
    "torch.nn.functional.upsample_nearest": ("interpolate", "0.4.1", (("mode", '"nearest"'),)),
}


def normalize(qualname: str) -> str:
    """One spelling per object: ``torch.nn.modules.linear.Linear`` -> ``torch.nn.Linear``."""
    alias = _ALIASES.get(qualname)
    if alias is not None:
        return alias
    if qualname.startswith("torch.nn.modules."):
        parts = qualname.split(".")
        if parts[-1] in torch_names.NN_MODULES:
            return "torch.nn." + parts[-1]
    if qualname.startswith("torch.optim.") and qualname.count(".") == 3:
        last = qualname.rsplit(".", 1)[1]
        if last in torch_names.OPTIMIZERS:
            return "torch.optim." + last
    return qualname


_STAR_EXPORTS = {
    "torch.autograd": frozenset({"Variable", "Function", "grad", "backward"}),
    "torch.autograd.variable": frozenset({"Variable"}),
    "torch.nn": torch_names.NN_MODULES | {"Parameter", "Module", "functional", "init"},
    "torch": frozenset(torch_names.TORCH_FUNCTIONS) | {"Tensor", "FloatTensor", "LongTensor"},
    "torch.nn.functional": torch_names.NN_FUNCTIONAL,
}


def star_exports(module: str) -> frozenset:
    return _STAR_EXPORTS.get(module, frozenset())


# --- torch functions ---------------------------------------------------------------

# Lower-case torch callables that do not return a tensor.
_NOT_TENSOR_PREFIXES = ("is_", "set_", "get_", "sym_", "are_", "use_", "autocast", "parse_",
                        "import_ir", "unify_", "merge_", "q_", "fbgemm_", "compiled_", "profiler_")
_NOT_TENSOR_FUNCTIONS = frozenset({
    "numel", "typename", "no_grad", "enable_grad", "inference_mode", "manual_seed", "seed",
    "initial_seed", "save", "result_type", "promote_types", "can_cast",
    "broadcast_shapes", "equal", "allclose", "device", "dtype", "finfo", "iinfo",
    "layout", "memory_format", "prepare_multiprocessing_environment",
    "init_num_threads", "thread_safe_generator", "qscheme",
    "cudnn_is_acceptable", "clear_autocast_cache", "to_dlpack",
})
# Whatever they return may be a tensor or hold tensors (`torch.load`): neither evidence
# for a tensor nor against one.
_ANY_RESULT_FUNCTIONS = frozenset({
    "load", "compile", "vmap", "cond", "while_loop", "wait", "fork", "classproperty", "from_dlpack",
})
# Always a tuple (or list) of tensors (torch_facts).
TUPLE_FUNCTIONS = torch_facts.functions(returns="tuple")
# A tuple when given a dimension, a 0-dim tensor when not: max, min, median, nanmedian.
REDUCTIONS_WITH_INDICES = torch_facts.methods(returns="depends", zero_dim="no_dim")
# Methods and torch functions whose result is 0-dim when called without a dimension
# (`x.sum()`), and those whose result always is (`a.dot(b)`, `torch.dist(a, b)`).
SCALAR_REDUCTIONS = torch_facts.methods(zero_dim="no_dim")
SCALAR_REDUCTION_FUNCTIONS = torch_facts.functions(zero_dim="no_dim")
ALWAYS_SCALAR_METHODS = torch_facts.methods(zero_dim="always")
ALWAYS_SCALAR_FUNCTIONS = torch_facts.functions(zero_dim="always")
# torch.linalg functions that return one tensor (torch_facts).
_LINALG_TENSOR = torch_facts.functions("torch.linalg", returns="tensor")
_LEGACY_TENSOR_TYPES = torch_facts.types()  # Tensor, FloatTensor, LongTensor...
# torch.nn.functional losses: a `reduction=` parameter (torch_facts).
LOSS_FUNCTIONS = torch_facts.functions("torch.nn.functional", loss=True)
# nn modules whose call returns a tuple: (output, hidden) and friends.
TUPLE_MODULES = torch_facts.module_classes(returns="tuple")
RECURRENT_MODULES = frozenset({"RNN", "LSTM", "GRU"})
# Parameters and buffers of torch.nn's own layers.
MODULE_TENSOR_ATTRIBUTES = frozenset({
    "weight", "bias", "running_mean", "running_var", "in_proj_weight", "in_proj_bias",
    "bias_k", "bias_v", "q_proj_weight", "k_proj_weight", "v_proj_weight", "pos_embed",
    "cls_token", "weight_orig", "weight_g", "weight_v",
})
_RNN_PARAMETER_PREFIXES = ("weight_ih_l", "weight_hh_l", "bias_ih_l", "bias_hh_l", "weight_hr_l")
# Where each torch.nn module that can work in place takes `inplace` among its positional
# arguments (`nn.ReLU(True)`, `nn.LeakyReLU(0.2, True)`); tests/test_torch_facts.py checks it
# against torch's signatures.
INPLACE_ARGUMENT_POSITION = {
    "AlphaDropout": 1, "CELU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "ELU": 1,
    "FeatureAlphaDropout": 1, "Hardsigmoid": 0, "Hardswish": 0, "Hardtanh": 2, "LeakyReLU": 1, "Mish": 0,
    "RReLU": 2, "ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Threshold": 2,
}
# The buffers among them: tensors of the module that do not require grad.
MODULE_BUFFER_ATTRIBUTES = frozenset({"running_mean", "running_var"})

# The torch.nn layers whose forward depends on the module's `training` flag (what
# `model.train()` / `model.eval()` change): Dropout draws a new mask each call, BatchNorm
# normalizes with the batch's statistics and updates its running ones.  For each, the
# argument that turns the difference off or on (its name, its position, and whether the
# default leaves it on): `nn.Dropout(0)` and `nn.BatchNorm1d(n, track_running_stats=False)`
# behave the same in both modes, `nn.MultiheadAttention(d, h)` has no dropout unless given
# one.  Read from torch 2.13's signatures and forwards; tests/test_train_mode.py checks the
# positions against the signatures.
TRAIN_MODE_LAYERS: dict[str, tuple[str, Optional[int], bool]] = {
    **{f"torch.nn.{name}": ("p", 0, True) for name in (
        "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")},
    **{f"torch.nn.{name}": ("track_running_stats", 4, True) for name in (
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")},
    **{f"torch.nn.{name}": ("track_running_stats", 3, True) for name in (
        "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d")},
    "torch.nn.TransformerEncoderLayer": ("dropout", 3, True),
    "torch.nn.TransformerDecoderLayer": ("dropout", 3, True),
    "torch.nn.Transformer": ("dropout", 5, True),
    "torch.nn.MultiheadAttention": ("dropout", 2, False),
    **{f"torch.nn.{name}": ("dropout", None, False) for name in ("RNN", "LSTM", "GRU")},
}
# The layers that hold an int64 buffer (`num_batches_tracked`) in their `state_dict()` while
# `track_running_stats` (the argument TRAIN_MODE_LAYERS names) is on, as it is by default.
INT64_BUFFER_LAYERS = frozenset(name for name, (argument, _, _) in TRAIN_MODE_LAYERS.items()
                                if argument == "track_running_stats")
# In-place arithmetic methods: the result must fit the tensor's own dtype ("result type Float
# can't be cast to the desired output type Long" for an int64 tensor and a float operand).
INPLACE_ARITHMETIC_METHODS = frozenset({"mul_", "add_", "sub_", "div_"})
# In-place methods whose result is the type promotion of the tensor with their operands (the
# bounds of `clamp_`), written back into the tensor: a floating operand (or a true division)
# into an integer tensor raises "result type Float can't be cast to the desired output type
# Long". The keywords that name an operand.
INPLACE_PROMOTING_METHODS = frozenset({"add_", "sub_", "subtract_", "mul_", "multiply_", "div_", "divide_",
                                       "true_divide_", "clamp_", "clip_", "clamp_min_", "clamp_max_"})
INPLACE_OPERAND_KEYWORDS = frozenset({"other", "min", "max"})
# The in-place methods that divide: a true division, floating whatever the operands, unless a
# `rounding_mode` is given.
INPLACE_DIVIDING_METHODS = frozenset({"div_", "divide_", "true_divide_"})
# Containers of torch.nn whose mode is that of the layers they are built from (the
# data-parallel wrappers: of the module they wrap, which `train()`/`eval()` reach).
TRAIN_MODE_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
                                   "torch.nn.TransformerEncoder", "torch.nn.TransformerDecoder",
                                   "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                   "torch.nn.parallel.DistributedDataParallel"})
# The functionals that behave like those layers when given `training=self.training`: the
# position of `training`.
TRAIN_MODE_FUNCTIONS: dict[str, int] = {
    **{name: torch_facts.dropout(name).switch.position for name in sorted(torch_facts.mode_switched_dropouts())},
    "torch.nn.functional.batch_norm": 5,
}
# The data-parallel wrappers: a wrapper built around a module is in its mode, and its
# weights are the module's (`nn.DataParallel(model)` after `model.load_state_dict(..)`).
# (`torch.compile(model)`: a wrapper whose `training` is the original module's.)
MODE_SHARING_WRAPPERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                   "torch.nn.parallel.DistributedDataParallel", "torch.compile"})
# Calls that give back the tensor they are given, on its device and of its dtype:
# `Variable(x)` has been `x` itself since PyTorch 0.4 (written so in much training code).
SAME_TENSOR_WRAPPERS = frozenset({"torch.autograd.Variable"})
# Functions that take a prediction out of a model's output (the class it picks).
READ_OUT_FUNCTIONS = frozenset({"torch.argmax", "torch.max"})
# Functions that run the module they are given and record its forward as it runs then:
# a trace (or an exported program) keeps each Dropout/BatchNorm as it behaved in the mode
# the module was in, whatever mode the traced module is later put in.
MODE_RECORDING_FUNCTIONS = frozenset({"torch.jit.trace", "torch.jit.trace_module", "torch.export.export"})
# torch's tensor namespaces: their functions compute on tensors and numbers, and none calls
# `train()`/`eval()` on what it is handed (`torch.zeros(n, self.core.hidden_size)`), except
# these top-level ones, which take a module.
_TENSOR_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                                "torch.nn.init"})
_MODULE_TAKING = frozenset({"torch.compile", "torch.save", "torch.load"})


def switches_no_module(qualname: Optional[str]) -> bool:
    """``qualname`` is a function of torch's tensor namespaces: whatever it is handed keeps its mode."""
    if qualname is None or qualname in _MODULE_TAKING:
        return False
    return qualname.rpartition(".")[0] in _TENSOR_NAMESPACES


# Functions that copy the module they are given with its `training` flags.
MODE_COPYING_FUNCTIONS = frozenset({"copy.deepcopy", "copy.copy"})
# Functions that do not switch the module they are given (`print(model)` shows the
# architecture, `torch.save(model, path)` pickles it as it is), the copies among them.
MODE_KEEPING_FUNCTIONS = MODE_COPYING_FUNCTIONS | frozenset({
    "builtins.print", "builtins.repr", "builtins.str", "builtins.len", "builtins.isinstance", "builtins.id",
    "builtins.hash", "builtins.type", "builtins.format", "torch.save"})
# Decorators whose function gets the arguments its callers pass, as they pass them (beside
# the grad modes: `@torch.no_grad()`); under any other decorator (`@pytorch_wrap` turning
# tensors into arrays, `@click.command()`), a call of the name calls a wrapper.
ARGUMENT_KEEPING_DECORATORS = frozenset({
    "builtins.staticmethod", "builtins.classmethod", "builtins.property", "abc.abstractmethod",
    "functools.lru_cache", "functools.cache", "functools.cached_property", "typing.overload",
    "typing_extensions.overload", "contextlib.contextmanager", "torch.jit.script", "torch.jit.ignore",
    "torch.jit.unused", "torch.jit.export", "torch.compile", "torch.compiler.disable"})
# What draws random noise: a forward of noise samples from a generator (a GAN's, a VAE's
# decoder), where batch statistics in training mode are the convention, not a prediction.
NOISE_FACTORIES = frozenset({"torch.randn", "torch.rand", "torch.randn_like", "torch.rand_like", "torch.normal"})
NOISE_FILLS = frozenset({"normal_", "uniform_"})
# Calls that hand back the tensor they are given, moved or reshaped (`Variable(noise)`,
# `noise.cuda()`, `noise.view(b, -1, 1, 1)`).
SAME_TENSOR_METHODS = frozenset({"cuda", "cpu", "to", "float", "double", "half", "view", "reshape", "unsqueeze",
                                 "squeeze", "detach", "requires_grad_", "type_as", "contiguous"})


# Methods and properties that mark `x.data` as a tensor: those only tensors have (no numpy
# array, as a CIFAR dataset's `.data` is, nor the memoryview of `ndarray.data`, nor a builtin
# has them), and the conversions `cpu`, `cuda`, `float`... that nn.Module also has, which has
# no `.data`.
TENSOR_ONLY_USES = torch_facts.methods(tensor_only=True) | torch_facts.properties(tensor_only=True)
DATA_TENSOR_USES = TENSOR_ONLY_USES | {"cpu", "cuda", "double", "float", "half"}
# Objects whose `.data` is a field of their own, named the way such objects usually are.
_FIELD_OWNER = re.compile(
    r"(?i)(data_?set|trainset|testset|valset|loader|packed|response|args|config|cfg|options|opts)$"
)


# In-place methods that change only a tensor object's own metadata (shape, strides, storage,
# flags): on `x.data`, a new object each time since PyTorch 0.4, they leave `x` as it was.
# (`share_memory_` is left out: it moves the storage, which `x` shares.)
METADATA_ONLY_INPLACE = torch_facts.methods(in_place="metadata") - {"share_memory_", "detach_"}


def is_field_owner(name: str) -> bool:
    """``args``, ``config``, ``train_loader``: named the way objects with a ``.data`` field of their own are."""
    return _FIELD_OWNER.search(name) is not None


# The overloads that take the scalar multiplier first, deprecated in PyTorch 1.5, as torch
# lists them in torchgen/packaged/autograd/deprecated.yaml (tests/test_torch_facts.py reads
# it): the positional parameters of the function form; the method form drops `self`.
# Today's signatures take the scalars (SCALAR_PARAMETERS) by keyword only.
_ADD = (("self", "alpha", "other"),)
_ADDC = (("self", "value", "tensor1", "tensor2"),)
SCALAR_FIRST_OVERLOADS = {
    **{name: _ADD for name in ("add", "add_", "sub", "sub_")},
    **{name: _ADDC for name in ("addcmul", "addcmul_", "addcdiv", "addcdiv_")},
    **{name: (("beta", "self", "alpha", first, second), ("beta", "self", first, second))
       for names, (first, second) in (
           (("addmm", "addmm_", "sspaddmm"), ("mat1", "mat2")), (("addmv", "addmv_"), ("mat", "vec")),
           (("addr", "addr_"), ("vec1", "vec2")), (("addbmm", "addbmm_", "baddbmm", "baddbmm_"), ("batch1", "batch2")))
       for name in names},
}
SCALAR_PARAMETERS = frozenset({"alpha", "beta", "value"})


def is_module_tensor_attribute(name: str) -> bool:
    return name in MODULE_TENSOR_ATTRIBUTES or name.startswith(_RNN_PARAMETER_PREFIXES)


def is_module_class(qualname: str) -> bool:
    if qualname.startswith("torch.nn."):
        last = qualname.rsplit(".", 1)[1]
        return last in torch_names.NN_MODULES
    return False


def is_loss_module_class(qualname: str) -> bool:
    """A subclass of torch.nn's `_Loss` (`CrossEntropyLoss`, `NLLLoss2d`)."""
    fact = torch_facts.fact(qualname) if qualname.startswith("torch.nn.") else None
    return fact is not None and fact.kind == "module_class" and fact.loss


def is_optimizer_class(qualname: str) -> bool:
    return qualname.startswith("torch.optim.") and qualname.rsplit(".", 1)[1] in torch_names.OPTIMIZERS


AUTOGRAD_FUNCTION_CLASSES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                                       "torch.autograd.function.InplaceFunction"})


def is_cpu_tensor_type(qualname: str) -> bool:
    """A legacy tensor type of the CPU: ``torch.FloatTensor(data)``, ``torch.Tensor(data)`` of
    Python data or an array make a tensor on the CPU (``torch.cuda.FloatTensor`` is the GPU's;
    ``torch.Tensor`` of a tensor keeps its device: callers check what the data is)."""
    parts = qualname.split(".")
    return len(parts) == 2 and parts[0] == "torch" and parts[1] in LEGACY_TYPE_DTYPES


def is_tensor_type(qualname: str) -> bool:
    """``torch.Tensor``, ``torch.FloatTensor``, ``torch.cuda.LongTensor``, ``nn.Parameter``..."""
    if qualname in (VARIABLE, "torch.nn.Parameter", "torch.nn.Buffer"):
        return True
    parts = qualname.split(".")
    if len(parts) == 2 and parts[0] == "torch":
        return parts[1] in _LEGACY_TENSOR_TYPES
    if len(parts) == 3 and parts[:2] == ["torch", "cuda"]:
        return parts[2] in _LEGACY_TENSOR_TYPES
    return False


_FROM_SIZES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})


def creates_from_sizes(qualname: str) -> bool:
    """``torch.zeros(3, 4)``, ``torch.FloatTensor(3, 4)``: sizes given one per argument."""
    return qualname in _FROM_SIZES or (
        is_tensor_type(qualname) and qualname not in (VARIABLE, "torch.nn.Parameter", "torch.nn.Buffer"))


def reduces_to_scalar(call: cst.Call, positional_before_dim: int) -> bool:
    """True when a reduction call passes no dimension (so its result is 0-dim)."""
    if any(arg.star for arg in call.args):
        return False
    if keyword(call, "dim") is not None or keyword(call, "axis") is not None:
        return False
    return len(positional_args(call)) <= positional_before_dim


def loss_reduces(call: cst.Call) -> bool:
    """False for ``reduction='none'`` / ``reduce=False``, whose result keeps a batch dimension."""
    reduction = keyword(call, "reduction")
    if isinstance(reduction, cst.SimpleString) and reduction.evaluated_value == "none":
        return False
    reduce = keyword(call, "reduce")
    if isinstance(reduce, cst.Name) and reduce.value == "False":
        return False
    return True


# torch functions named like tensor methods that accept what is not a tensor too.
_TAKING_NON_TENSORS = frozenset({"tensor", "as_tensor", "asarray", "from_numpy", "is_tensor", "is_storage",
                                 "numel", "save", "load", "result_type", "can_cast", "promote_types"})
# torch.nn.functional's helpers that are not operations on a tensor.
_FUNCTIONAL_HELPERS = ("has_", "handle_", "assert_", "boolean_")


def tensor_positions(qualname: str) -> tuple[int, ...]:
    """The positional arguments of the torch function ``qualname`` that must be tensors
    (a numpy array, a list or a number there raises TypeError): the input of a
    ``torch.nn.functional`` operation (and the target of a loss), the ``self`` of a torch
    function that is also a tensor method (``torch.dist(x, y)``); () for anything else,
    such as ``torch.tensor`` or ``torch.from_numpy``."""
    module, _, name = qualname.rpartition(".")
    if module == "torch.nn.functional":
        found = torch_facts.fact(qualname)
        if found is None or found.kind != "function" or name.startswith(_FUNCTIONAL_HELPERS):
            return ()
        return (0, 1) if name in LOSS_FUNCTIONS else (0,)
    if module != "torch" or name in _TAKING_NON_TENSORS:
        return ()
    mirrored, found = torch_facts.method(name), torch_facts.fact(qualname)
    if mirrored is None or mirrored.kind != "method" or found is None or found.kind != "function" or found.factory:
        return ()
    return (0,)


# torchvision.models functions that are not model builders.
_TORCHVISION_MODEL_HELPERS = frozenset({"get_weight", "get_model_weights", "list_models"})


def builds_model_with_parameters(qualname: Optional[str]) -> bool:
    """``qualname`` is a model zoo's builder whose model has trainable parameters and returns a
    tensor (or tensors) computed by them: a classification builder of ``torchvision.models``
    (``resnet18``, ``vit_b_16``, ``get_model``; not the detection, segmentation or video ones,
    whose outputs are dicts or lists holding integer labels too, nor the ``*_Weights`` enums),
    and ``timm.create_model``.  Their parameters require grad unless the code freezes them."""
    if qualname is None:
        return False
    parts = normalize(qualname).split(".")
    if parts[:2] == ["torchvision", "models"] and len(parts) == 3:
        return not parts[2].endswith("_Weights") and parts[2] not in _TORCHVISION_MODEL_HELPERS
    return qualname == "timm.create_model" or loads_pretrained_transformer(qualname)


def loads_pretrained_transformer(qualname: Optional[str]) -> bool:
    """``transformers.<ModelClass>.from_pretrained``: a Hugging Face model (``AutoModel``,
    ``BertForSequenceClassification``, ``GPT2LMHeadModel``; not a tokenizer, config or
    processor): an ``nn.Module`` whose parameters require grad (loaded in eval mode)."""
    if qualname is None:
        return False
    parts = qualname.split(".")
    return len(parts) == 3 and parts[0] == "transformers" and parts[2] == "from_pretrained" and \
        re.fullmatch(r"[A-Z]\w*(?:Model|For[A-Z]\w*)", parts[1]) is not None and \
        re.search(r"Tokenizer|Config|Processor|Extractor", parts[1]) is None


# Fields of a model's output object (a Hugging Face ``ModelOutput``) that hold tensors it
# computed: ``model(**inputs).last_hidden_state``, ``outputs.logits``.
MODEL_OUTPUT_FIELDS = frozenset({"logits", "last_hidden_state", "pooler_output", "hidden_states",
                                 "image_embeds", "text_embeds", "prediction_logits", "start_logits",
                                 "end_logits"})


# Constructors that build a module whose parameters do not require grad unless told: the
# keyword that says so, and its default. `nn.Embedding.from_pretrained(w)` is frozen
# (`freeze=True` is the default: "Equivalent to embedding.weight.requires_grad = False").
FREEZING_CONSTRUCTORS = {
    "torch.nn.Embedding.from_pretrained": "freeze",
    "torch.nn.EmbeddingBag.from_pretrained": "freeze",
}


def external_call(qualname: str, call: cst.Call) -> Optional[Value]:
    """The value of calling the imported object ``qualname``; None when unknown."""
    qualname = normalize(qualname)
    parts = qualname.split(".")
    root = parts[0]
    if root in ("numpy", "np"):
        return NDARRAY
    if root != "torch":
        if root == "torchvision" and len(parts) >= 3 and parts[1] == "models":
            return Value(Kind.MODULE, (Step(call, "`{code}` builds a torchvision model"),), qualname=qualname)
        if qualname == "timm.create_model":
            return Value(Kind.MODULE, (Step(call, "`{code}` builds a timm model"),), qualname=qualname)
        if loads_pretrained_transformer(qualname):
            return Value(Kind.MODULE, (Step(call, "`{code}` loads a Hugging Face model"),), qualname=qualname)
        return None
    requires_grad = is_true(keyword(call, "requires_grad"))
    if qualname == VARIABLE:
        return tensor(Step(call, "`{code}` creates a Variable (a tensor since PyTorch 0.4)")).in_graph(requires_grad, True)
    if qualname == "torch.nn.Parameter":
        return tensor(Step(call, "`{code}` creates an nn.Parameter (a tensor)")).in_graph(True, True)
    if qualname == "torch.nn.Buffer":
        return tensor(Step(call, "`{code}` creates an nn.Buffer (a tensor)")).in_graph(False, True)
    if is_tensor_type(qualname):
        return tensor(Step(call, "`{code}` constructs a tensor")).in_graph(False, True)
    if qualname.startswith("torch.nn.utils.rnn."):
        name = parts[-1]
        if name in ("pack_padded_sequence", "pack_sequence", "PackedSequence"):
            return Value(Kind.PACKED, (Step(call, "`{code}` is a PackedSequence"),))
        if name == "pad_packed_sequence":
            return Value(Kind.TUPLE, items=(tensor(Step(call, "`{code}` returns padded tensors")), OTHER))
        if name == "pad_sequence":
            return tensor(Step(call, "`{code}` returns a tensor"))
        return None
    if parts[-1] == "from_pretrained" and is_module_class(qualname.rsplit(".", 1)[0]):
        # `nn.Embedding.from_pretrained(w)`: the classmethod builds the module of its class
        return Value(Kind.MODULE, (Step(call, f"`{{code}}` builds a torch.nn.{parts[-2]} module"),),
                     qualname=qualname.rsplit(".", 1)[0])
    if is_module_class(qualname):
        if qualname.rsplit(".", 1)[1] in ("Module", "Sequential", "ModuleList", "ModuleDict"):
            why = (Step(call, "`{code}` is a torch.nn module"),)
        else:
            why = (Step(call, f"`{{code}}` is a torch.nn.{parts[-1]} module"),)
        return Value(Kind.MODULE, why, qualname=qualname,
                     loss=is_loss_module_class(qualname) and loss_reduces(call))
    if is_optimizer_class(qualname):
        return Value(Kind.OPTIMIZER, (Step(call, "`{code}` is a torch optimizer"),), qualname=qualname)
    if len(parts) == 3 and parts[1] == "nn" and parts[2] in ("functional", "init"):
        return None  # calling the module object itself: not a thing
    if len(parts) == 4 and parts[1:3] == ["nn", "functional"]:
        name = parts[3]
        if name not in torch_names.NN_FUNCTIONAL:
            return None
        step = Step(call, f"`{{code}}` returns a tensor (torch.nn.functional.{name})")
        if name in LOSS_FUNCTIONS:
            scalar = loss_reduces(call)
            return tensor(step, scalar=scalar, scalar_why=Step(call, "`{code}` is a reduced loss, 0-dimensional") if scalar else None)
        if is_true(keyword(call, "return_indices")) or name.endswith("_with_indices"):
            return sequence_of(tensor(step))
        if name in ("multi_head_attention_forward",):
            return sequence_of(tensor(step))
        return tensor(step)
    if len(parts) == 4 and parts[1:3] == ["nn", "init"]:
        if parts[3] in torch_names.NN_INIT:
            return tensor(Step(call, "`{code}` returns the tensor it initialized"))
        return None
    if len(parts) == 3 and parts[1] in ("fft", "special"):
        return tensor(Step(call, "`{code}` returns a tensor"))
    if len(parts) == 3 and parts[1] == "linalg":
        if parts[2] in _LINALG_TENSOR:
            return tensor(Step(call, "`{code}` returns a tensor"))
        return None
    if len(parts) == 2:
        name = parts[1]
        if name not in torch_names.TORCH_FUNCTIONS:
            return OTHER if name[:1].isupper() else None
        if name in _ANY_RESULT_FUNCTIONS:
            return None
        if name in _NOT_TENSOR_FUNCTIONS or name.startswith(_NOT_TENSOR_PREFIXES):
            return OTHER
        step = Step(call, "`{code}` returns a tensor")
        if name in TUPLE_FUNCTIONS:
            return sequence_of(tensor(step))
        if name in ("unique", "unique_consecutive") \
                and (is_true(keyword(call, "return_inverse")) or is_true(keyword(call, "return_counts"))):
            return sequence_of(tensor(step))
        if name == "nonzero" and is_true(keyword(call, "as_tuple")):
            return sequence_of(tensor(step))
        if name in REDUCTIONS_WITH_INDICES and not reduces_to_scalar(call, 1):
            # (values, indices); torch.max(a, b) with a tensor b is elementwise, but
            # either way indexing or unpacking the result gives tensors.
            return sequence_of(tensor(step))
        if name in ALWAYS_SCALAR_FUNCTIONS:
            return tensor(step, scalar=True, scalar_why=Step(call, "`{code}` is always 0-dimensional"))
        if name in SCALAR_REDUCTION_FUNCTIONS and reduces_to_scalar(call, 1):
            return tensor(step, scalar=True, scalar_why=Step(call, "`{code}` reduces over all elements, so it is 0-dimensional"))
        if name in LOSS_FUNCTIONS:
            scalar = loss_reduces(call)
            return tensor(step, scalar=scalar, scalar_why=Step(call, "`{code}` is a reduced loss, 0-dimensional") if scalar else None)
        if name in CREATION_FUNCTIONS:
            return tensor(step).in_graph(requires_grad, True)
        return tensor(step)
    return None


# --- tensor methods and attributes -------------------------------------------------

# Methods giving a Python value (`item`, `size`, `is_contiguous`) or nothing, and methods
# giving a tuple of tensors (torch_facts).
NOT_TENSOR_METHODS = torch_facts.methods(returns="other")
TUPLE_METHODS = torch_facts.methods(returns="tuple")
# Methods (and torch functions) returning `(values, indices)`: `indices`, item 1, are integers
# no gradient flows through (max/min/median given a dimension; the others always).
VALUES_AND_INDICES = frozenset({"max", "min", "median", "nanmedian", "sort", "topk", "kthvalue", "mode",
                                "cummax", "cummin"})
VALUES_AND_INDICES_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
# Methods that keep a 0-dim tensor 0-dim (torch_facts: elementwise, conversions, `clone`,
# `detach`, `squeeze`, in-place arithmetic, `requires_grad_`).
SHAPE_PRESERVING_METHODS = torch_facts.methods(zero_dim="keeps")
# Attributes holding a tensor: `data`, `grad`, `T`, `mT`, `H`, `mH`, `real`, `imag`.
TENSOR_ATTRIBUTES = torch_facts.properties(returns="tensor")
# A write into the result may reach the receiver's storage (torch_facts): views (`view`,
# `t`, `split`'s tuple of views), results that are a view or a copy (`reshape`), and results
# that are the receiver itself or a copy (`contiguous`, `to`, `float`).
VIEW_METHODS = torch_facts.methods(aliasing={"view", "maybe_view", "maybe_self"}, returns={"tensor", "tuple"})
# Methods (and `torch.` functions) whose tuple of views autograd marks as made by one call
# with several outputs: an in-place write to one of them, where the input requires grad,
# raises "Output 0 of SplitBackward0 is a view and is being modified inplace" (measured on
# torch 2.13; `tensor_split`, `hsplit`, `vsplit`, `dsplit` slice instead and allow the write,
# `unsafe_split`/`unsafe_chunk` exist to allow it).
MULTI_OUTPUT_VIEW_METHODS = frozenset({"chunk", "split", "split_with_sizes", "unbind"})
MULTI_OUTPUT_VIEW_FUNCTIONS = frozenset("torch." + name for name in MULTI_OUTPUT_VIEW_METHODS)
# Attributes that are the receiver's storage: `data`, `T`, `mT`, `H`, `mH`, `real`, `imag`.
VIEW_ATTRIBUTES = torch_facts.properties(aliasing="view")
# Methods and attributes whose result is one view of the receiver that autograd tracks (not
# `.detach()`, `.data`: writes through those are the aliasing rules').
TRACKED_VIEW_METHODS = torch_facts.methods(aliasing="view", returns="tensor") - {"detach"}
TRACKED_VIEW_ATTRIBUTES = VIEW_ATTRIBUTES - {"data"}


def literal_view_index(element: cst.SubscriptElement) -> bool:
    """An index that gives a view whatever the tensor: a slice, an integer literal, ``...``,
    ``None`` (a name, a mask or a list may copy)."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return True
    value = index.value
    return isinstance(value, (cst.Integer, cst.Ellipsis)) or (isinstance(value, cst.Name) and value.value == "None") \
        or isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer)


# Methods and torch functions that write the elements of their receiver (first argument) in
# place: not `requires_grad_`, `detach_`, `squeeze_`, `t_`, `set_`..., which change only metadata.
DATA_WRITING_METHODS = torch_facts.methods(in_place="data")
DATA_WRITING_FUNCTIONS = torch_facts.functions(in_place="data")
DATA_WRITING_INIT = torch_facts.functions("torch.nn.init", in_place="data")  # all but calculate_gain
DATA_WRITING_FUNCTIONAL = torch_facts.functions("torch.nn.functional", in_place="data")  # relu_, elu_...
# Methods that change the shape or strides of their receiver in place (`squeeze_`, `t_`,
# `transpose_`...): autograd counts them as in-place operations on the tensor (its version
# counter moves, and a view made by a function that returns several views, or under
# `no_grad`, refuses them), though they write no element. Not `detach_`, `requires_grad_`,
# `share_memory_` (no geometry change) nor `set_` (swaps the storage).
SHAPE_CHANGING_METHODS = torch_facts.methods(in_place="metadata") - {
    "detach_", "requires_grad_", "share_memory_", "set_"}
# Methods and torch functions that write nothing in place and return new tensors (copies).
COPYING_METHODS = torch_facts.methods(in_place="none", aliasing="copy", returns={"tensor", "tuple", "depends"})
COPYING_FUNCTIONS = torch_facts.functions(in_place="none", aliasing="copy", returns={"tensor", "tuple", "depends"})


# Functions that make a new tensor (torch_facts' factories): not in any graph unless
# requires_grad=True.  Not `torch.normal(mean, std)`, differentiable in its tensor arguments.
CREATION_FUNCTIONS = torch_facts.functions(factory=True, differentiable={False, None})
# Methods whose result never requires grad (integers, booleans, `detach()`, `new_*`): not
# `sign`, `floor_divide` or `unique`, whose results are in the graph (with zero gradients).
NOT_DIFFERENTIABLE_METHODS = torch_facts.methods(differentiable=False)
# Of those, the ones that compute a result no gradient flows through (indices, comparisons,
# integer conversions), as opposed to detaching or making a new tensor on purpose.
GRADIENT_STOPPING_METHODS = frozenset(
    name for name in NOT_DIFFERENTIABLE_METHODS if name not in ("detach", "detach_", "numpy")
    and not name.startswith("new"))


def is_inplace_method(name: str) -> bool:
    """``add_``, ``zero_``, ``copy_``...: methods that write into the elements of the tensor
    they are called on (``requires_grad_``, ``squeeze_``... change only its metadata)."""
    return name in DATA_WRITING_METHODS


def tensor_method_result(receiver: Value, method: str, call: cst.Call) -> Optional[Value]:
    """The value of ``receiver.method(...)`` where the receiver is a tensor."""
    if method.startswith("_"):
        return None
    if method == "numpy":
        return NDARRAY
    if method in NOT_TENSOR_METHODS:
        return OTHER
    if method == "type" and not call.args:
        return OTHER  # x.type() is the type's name
    result = Value(Kind.TENSOR, receiver.why)
    if method in NOT_DIFFERENTIABLE_METHODS:
        result = result.in_graph(False, True)
    elif method == "requires_grad_":
        result = result.in_graph(True, receiver.leaf if receiver.attached else True)
    elif receiver.attached is not None:
        result = result.in_graph(receiver.attached, None if receiver.attached else True)
    if method in TUPLE_METHODS:
        return sequence_of(result)
    if method in REDUCTIONS_WITH_INDICES and not reduces_to_scalar(call, 0):
        return sequence_of(result)
    if method == "nonzero" and is_true(keyword(call, "as_tuple")):
        return sequence_of(result)
    if method in ("unique", "unique_consecutive") \
            and (is_true(keyword(call, "return_inverse")) or is_true(keyword(call, "return_counts"))):
        return sequence_of(result)
    if method in SCALAR_REDUCTIONS and reduces_to_scalar(call, 0):
        return result.with_scalar(Step(call, "`{code}` reduces over all elements, so it is 0-dimensional"))
    if method in ALWAYS_SCALAR_METHODS:
        return result.with_scalar(Step(call, "`{code}` is always 0-dimensional"))
    if receiver.scalar and method in SHAPE_PRESERVING_METHODS:
        return result.with_scalar(receiver.scalar_why)
    if method in torch_names.TENSOR_METHODS:
        return result
    return None


def tensor_attribute(receiver: Value, attribute: str) -> Optional[Value]:
    """The value of ``receiver.attribute`` where the receiver is a tensor."""
    if attribute in TENSOR_ATTRIBUTES:
        value = Value(Kind.TENSOR, receiver.why)
        if attribute in ("data", "grad"):
            value = value.in_graph(False, True)
        elif receiver.attached is not None:
            value = value.in_graph(receiver.attached)
        if receiver.scalar and attribute in ("data", "grad", "real", "imag"):
            value = value.with_scalar(receiver.scalar_why)
        elif attribute in ("data", "grad", "real", "imag", "T"):
            value = value.keeping_dims_of(receiver)
        return value
    if attribute in torch_names.TENSOR_PROPERTIES or attribute in torch_names.TENSOR_METHODS:
        return OTHER
    return None


# --- removed and deprecated functions (TL501-TL504) ----------------------------------
# TorchFix's deprecated_symbols.yaml, and the linear-algebra names of 2017-2020 code that
# torch 2.13 no longer has (checked with hasattr on the installed torch).  A version is
# the release that deprecated (or removed) the name, where the release notes, the pull
# request or torch's own warning establish it; None where they do not.

# qualname -> (deprecated in, removed in, what to use instead, reference)
REMOVED_FUNCTIONS: dict[str, tuple[Optional[str], Optional[str], str, str]] = {
    # Deprecated in 1.9; torch still has a stub that raises "This function was deprecated
    # since version 1.9 and is now removed" (RuntimeError) on every call.
    "torch.solve": ("1.9", None, "torch.linalg.solve(A, B) (arguments reversed, no LU returned)",
                    "https://github.com/pytorch/pytorch/pull/70986"),
    "torch.symeig": ("1.9", None, "torch.linalg.eigh(A) (or torch.linalg.eigvalsh; it reads the lower triangle)",
                     "https://github.com/pytorch/pytorch/pull/70988"),
    "torch.matrix_rank": ("1.9", None, "torch.linalg.matrix_rank(A) (`symmetric=` is now `hermitian=`)",
                          "https://github.com/pytorch/pytorch/pull/70981"),
    "torch.lstsq": ("1.9", None, "torch.linalg.lstsq(A, B) (arguments reversed)",
                    "https://github.com/pytorch/pytorch/pull/70980"),
    "torch.eig": ("1.9", None, "torch.linalg.eig(A) or torch.linalg.eigvals(A) (complex results)",
                  "https://github.com/pytorch/pytorch/pull/70982"),
    # The LAPACK-named functions of PyTorch 0.x: gone from the torch module (AttributeError).
    "torch.gels": ("1.2", "1.3", "torch.linalg.lstsq(A, B) (arguments reversed)",
                   "https://github.com/pytorch/pytorch/pull/26480"),
    "torch.gesv": ("1.1", None, "torch.linalg.solve(A, B) (arguments reversed, no LU returned)",
                   "https://pytorch.org/docs/stable/generated/torch.linalg.solve.html"),
    "torch.potrf": ("1.0", None, "torch.linalg.cholesky(A) (potrf returned the upper factor by default: "
                    "torch.linalg.cholesky(A).mH)", "https://github.com/pyro-ppl/pyro/pull/1529"),
    "torch.potrs": ("1.1", None, "torch.cholesky_solve(B, U, upper=True)",
                    "https://pytorch.org/docs/stable/generated/torch.cholesky_solve.html"),
    "torch.potri": ("1.1", None, "torch.cholesky_inverse(U, upper=True)",
                    "https://pytorch.org/docs/stable/generated/torch.cholesky_inverse.html"),
    "torch.trtrs": ("1.1", None, "torch.linalg.solve_triangular(A, B, upper=...) (arguments reversed)",
                    "https://github.com/pytorch/pytorch/pull/18213"),
    "torch.pstrf": ("1.1", None, "torch.linalg.cholesky(A) (no pivoted Cholesky in torch any more)",
                    "https://pytorch.org/docs/stable/generated/torch.linalg.cholesky.html"),
    "torch.btrifact": ("1.2", None, "torch.linalg.lu_factor(A)",
                       "https://pytorch.org/docs/stable/generated/torch.linalg.lu_factor.html"),
    "torch.btrifact_with_info": ("1.2", None, "torch.linalg.lu_factor_ex(A)",
                                 "https://pytorch.org/docs/stable/generated/torch.linalg.lu_factor_ex.html"),
    "torch.btrisolve": ("1.2", None, "torch.linalg.lu_solve(LU, pivots, B) (arguments reordered)",
                        "https://pytorch.org/docs/stable/generated/torch.linalg.lu_solve.html"),
    "torch.btriunpack": ("1.2", None, "torch.lu_unpack(LU, pivots)",
                         "https://pytorch.org/docs/stable/generated/torch.lu_unpack.html"),
}

# The per-device autocast state functions, one function with a device argument since 2.4.
_AUTOCAST_STATE: dict[str, tuple[str, str]] = {
    **{f"torch.{verb}_autocast_{device}_dtype": (f"torch.{verb}_autocast_dtype", "cuda" if device == "gpu" else device)
       for verb in ("get", "set") for device in ("gpu", "cpu", "ipu", "xla")},
    **{f"torch.{verb}_autocast_{device}_enabled": (f"torch.{verb}_autocast_enabled", device)
       for verb in ("is", "set") for device in ("cpu", "ipu", "xla")},
}

# qualname -> (deprecated in, what to use instead, reference, whether torch 2.13 warns when it is called)
DEPRECATED_FUNCTIONS: dict[str, tuple[Optional[str], str, str, bool]] = {
    "torch.qr": ("1.9", "torch.linalg.qr(A) (`some=False` is `mode=\"complete\"`)",
                 "https://github.com/pytorch/pytorch/pull/57745", True),
    "torch.chain_matmul": ("1.9", "torch.linalg.multi_dot([a, b, c])",
                           "https://github.com/pytorch/pytorch/pull/57735", True),
    "torch.cholesky": ("1.9", "torch.linalg.cholesky(A) (`upper=True`: torch.linalg.cholesky(A).mH)",
                       "https://github.com/pytorch/pytorch/pull/57725", True),
    "torch.ger": (None, "torch.outer", "https://pytorch.org/docs/stable/generated/torch.ger.html", False),
    "torch.lu_solve": ("1.13", "torch.linalg.lu_solve(LU, pivots, B) (arguments reordered)",
                       "https://github.com/pytorch/pytorch/pull/77637", True),
    "torch.norm": ("1.9", "torch.linalg.vector_norm, torch.linalg.matrix_norm or torch.linalg.norm",
                   "https://github.com/pytorch/pytorch/pull/57986", False),
    "torch.range": (None, "torch.arange (its end is excluded)",
                    "https://pytorch.org/docs/stable/generated/torch.range.html", True),
    "torch.svd": ("1.9", "torch.linalg.svd(A, full_matrices=False) (returns Vh, not V)",
                  "https://pytorch.org/docs/stable/generated/torch.svd.html", False),
    "torch.triangular_solve": ("1.11", "torch.linalg.solve_triangular(A, B, upper=...) (arguments reversed)",
                               "https://github.com/pytorch/pytorch/pull/63570", True),
    "torch.lu": ("1.13", "torch.linalg.lu_factor(A) or torch.linalg.lu_factor_ex(A)",
                 "https://github.com/pytorch/pytorch/pull/73804", True),
    "torch.nn.UpsamplingNearest2d": (None, "torch.nn.Upsample(..., mode=\"nearest\")",
                                     "https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingNearest2d.html",
                                     False),
    "torch.nn.UpsamplingBilinear2d": (None, "torch.nn.Upsample(..., mode=\"bilinear\", align_corners=True)",
                                      "https://pytorch.org/docs/stable/generated/torch.nn.UpsamplingBilinear2d.html",
                                      False),
    "torch.testing.assert_allclose": ("1.12", "torch.testing.assert_close",
                                      "https://pytorch.org/docs/stable/testing.html", True),
    "torch.nn.utils.weight_norm": ("2.1", "torch.nn.utils.parametrizations.weight_norm",
                                   "https://github.com/pytorch/pytorch/pull/103001", True),
    "torch.utils._pytree._register_pytree_node": ("2.2", "torch.utils._pytree.register_pytree_node",
                                                  "https://github.com/pytorch/pytorch/pull/112111", True),
    "torch.backends.cuda.sdp_kernel": (None, "torch.nn.attention.sdpa_kernel",
                                       "https://github.com/pytorch/pytorch/pull/114689", True),
    "torch.cuda.amp.autocast": ("2.4", "torch.amp.autocast(\"cuda\", ...)",
                                "https://pytorch.org/docs/stable/amp.html", True),
    "torch.cuda.amp.custom_fwd": ("2.4", "torch.amp.custom_fwd(..., device_type=\"cuda\")",
                                  "https://pytorch.org/docs/stable/amp.html", True),
    "torch.cuda.amp.custom_bwd": ("2.4", "torch.amp.custom_bwd(..., device_type=\"cuda\")",
                                  "https://pytorch.org/docs/stable/amp.html", True),
    "torch.cpu.amp.autocast": ("2.4", "torch.amp.autocast(\"cpu\", ...)",
                               "https://pytorch.org/docs/stable/amp.html", True),
    **{f"functorch.{name}": ("2.0", f"torch.func.{name}",
                             "https://pytorch.org/docs/stable/func.migrating.html", True)
       for name in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")},
    "torch.cuda.amp.GradScaler": ("2.4", "torch.amp.GradScaler(\"cuda\", ...)",
                                  "https://pytorch.org/docs/stable/amp.html#gradient-scaling", True),
    **{old: ("2.4", f"{new}(\"{device}\"{', ...' if '.set_' in old else ''})", "https://pytorch.org/docs/stable/amp.html",
             True)
       for old, (new, device) in _AUTOCAST_STATE.items()},
    "torch.cuda.memory_cached": ("1.4", "torch.cuda.memory_reserved",
                                 "https://pytorch.org/docs/stable/generated/torch.cuda.memory_reserved.html", True),
    "torch.cuda.max_memory_cached": ("1.4", "torch.cuda.max_memory_reserved",
                                     "https://pytorch.org/docs/stable/generated/torch.cuda.max_memory_reserved.html", True),
}

# The deprecated functions that became one function taking the device first: old -> (the
# new function, its first argument).
DEVICE_ARGUMENT_REPLACEMENTS: dict[str, tuple[str, str]] = {
    "torch.cuda.amp.GradScaler": ("torch.amp.GradScaler", "cuda"),
    **_AUTOCAST_STATE,
}
# Deprecated names with a drop-in replacement, old -> new: the same arguments, the same
# result (`torch.utils._pytree._register_pytree_node` differs after its third positional
# argument, see TL503).
DROP_IN_REPLACEMENTS: dict[str, str] = {
    "torch.ger": "torch.outer",
    "torch.cuda.memory_cached": "torch.cuda.memory_reserved",
    "torch.cuda.max_memory_cached": "torch.cuda.max_memory_reserved",
    "torch.utils._pytree._register_pytree_node": "torch.utils._pytree.register_pytree_node",
    **{f"functorch.{name}": f"torch.func.{name}"
       for name in ("vmap", "grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")},
}


def inplace_argument(call: cst.Call, qualname: str) -> Optional[cst.Arg]:
    """The argument that builds the torch.nn module ``qualname`` in place (``inplace=True``,
    or ``True`` at its position: ``nn.ReLU(True)``), if ``call`` passes one that is true."""
    position = INPLACE_ARGUMENT_POSITION.get(qualname.rsplit(".", 1)[-1]) if qualname.startswith("torch.nn.") else None
    if position is None:
        return None
    positional = [arg for arg in call.args if arg.keyword is None]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return arg if is_true(arg.value) else None
    if len(positional) > position and not positional[position].star and is_true(positional[position].value):
        return positional[position]
    return None


# --- dtypes and devices (the placement analysis: TL413, TL416) ----------------------
# Measured on torch 2.13 / numpy 2 (tests/test_placement.py runs each): what dtype a call
# gives, and which operations raise on a dtype they do not take.

# torch's names of dtypes (`torch.float`, `torch.double`...) -> the dtype.
TORCH_DTYPES: dict[str, str] = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "int64": "int64", "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8", "bool": "bool",
}
# What numpy's type promotion makes of arithmetic between an array of a floating dtype and one of
# an integer dtype (`points - coords` of float32 points and int64 voxel coordinates: float64):
# the float must hold every value of the integer type.
NUMPY_FLOAT_INT_PROMOTION: dict[tuple[str, str], str] = {
    **{("float32", integer): "float64" for integer in ("int64", "int32")},
    **{("float32", integer): "float32" for integer in ("int16", "int8", "uint8", "bool")},
    **{("float16", integer): "float64" for integer in ("int64", "int32")},
    ("float16", "int16"): "float32",
    **{("float16", integer): "float16" for integer in ("int8", "uint8", "bool")},
}
# Python's number types given as a torch dtype (`torch.randn(n, dtype=float)`, `x.to(int)`): torch
# reads `float` as float64, `int` as int64 and `bool` as bool (not the default float32).
PYTHON_TYPE_DTYPES: dict[str, str] = {"float": "float64", "int": "int64", "bool": "bool"}
# numpy's names of dtypes, as `np.<name>` or a string given to `astype`/`dtype=`.
NUMPY_DTYPES: dict[str, str] = {
    "float32": "float32", "single": "float32", "float64": "float64", "double": "float64", "float_": "float64",
    "float": "float64", "float16": "float16", "half": "float16",
    "int64": "int64", "int_": "int64", "int": "int64", "int32": "int32", "int16": "int16", "int8": "int8",
    "uint8": "uint8", "bool": "bool", "bool_": "bool",
}
# Tensor methods that convert to one dtype.
DTYPE_METHODS: dict[str, str] = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
    "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
}
# The legacy tensor types and the dtype they make (`torch.DoubleTensor(..)`, `.type(torch.DoubleTensor)`).
LEGACY_TYPE_DTYPES: dict[str, str] = {
    "Tensor": "float32", "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "BoolTensor": "bool",
}
# numpy functions that convert their argument with ``Tensor.__array__``, which calls
# ``.numpy()`` (and raises on a tensor that requires grad).
NUMPY_TENSOR_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray"})
# numpy functions that convert every tensor of the sequence they are given that way.
NUMPY_SEQUENCE_CONVERSIONS = NUMPY_TENSOR_CONVERSIONS | frozenset({
    "numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.mean", "numpy.sum", "numpy.std",
    "numpy.var", "numpy.median", "numpy.average", "numpy.max", "numpy.min", "numpy.amax", "numpy.amin",
    "numpy.nanmean", "numpy.cumsum",
})
# Functions that convert each tensor given to them as an argument (positional or by keyword:
# `minimize(f, x0=t)`, `scatter(x, y, c=t)`) that way (measured on torch 2.13 / numpy 2,
# scikit-learn 1.7, matplotlib 3.10, pandas 2.3, scipy 1.17 by tests/test_array_conversions.py;
# scipy's optimizers convert their starting point `x0`/`p0` and data). Of the numpy functions that first try a method of the same
# name on their argument, the ones whose call of the tensor's method fails on numpy's
# arguments (`out=`) and that then convert it are in (`np.argmax(t, axis=1)`, `np.round`,
# `np.clip`); `np.mean(t)`, `np.sum(t)`, `np.max(t)` are left out: torch's method raises a
# TypeError first.
ARRAY_CONVERTING_FUNCTIONS = frozenset({
    "numpy.dot", "numpy.matmul", "numpy.inner", "numpy.outer", "numpy.einsum", "numpy.exp", "numpy.log",
    "numpy.log1p", "numpy.sqrt", "numpy.square", "numpy.abs", "numpy.absolute", "numpy.sign", "numpy.floor",
    "numpy.ceil", "numpy.tanh", "numpy.sin", "numpy.cos", "numpy.maximum", "numpy.minimum", "numpy.add",
    "numpy.subtract", "numpy.multiply", "numpy.divide", "numpy.power", "numpy.where", "numpy.isnan",
    "numpy.isclose", "numpy.allclose", "numpy.unique", "numpy.histogram", "numpy.percentile", "numpy.quantile",
    "numpy.corrcoef", "numpy.cov", "numpy.diag", "numpy.copy", "numpy.expand_dims", "numpy.tile",
    "numpy.nanmax", "numpy.nanmin", "numpy.nansum", "numpy.float32", "numpy.linalg.norm", "numpy.save",
    "numpy.savetxt", "numpy.log10", "numpy.log2", "numpy.argmax", "numpy.argmin", "numpy.round", "numpy.around",
    "numpy.clip", "numpy.argsort", "numpy.sort", "numpy.reshape", "numpy.ptp",
    "scipy.stats.pearsonr", "scipy.stats.spearmanr", "scipy.stats.kendalltau",
    "scipy.optimize.minimize", "scipy.optimize.least_squares", "scipy.optimize.root", "scipy.optimize.fsolve",
    "scipy.optimize.curve_fit",
    "sklearn.metrics.mean_absolute_percentage_error", "sklearn.metrics.explained_variance_score",
    "sklearn.metrics.auc", "sklearn.metrics.brier_score_loss", "sklearn.metrics.hamming_loss",
    "sklearn.metrics.roc_auc_score", "sklearn.metrics.average_precision_score", "sklearn.metrics.roc_curve",
    "sklearn.metrics.precision_recall_curve", "sklearn.metrics.mean_squared_error",
    "sklearn.metrics.mean_absolute_error", "sklearn.metrics.r2_score", "sklearn.metrics.log_loss",
    "sklearn.metrics.accuracy_score", "sklearn.metrics.f1_score", "sklearn.metrics.precision_score",
    "sklearn.metrics.recall_score", "sklearn.metrics.confusion_matrix", "sklearn.metrics.classification_report",
    "sklearn.metrics.balanced_accuracy_score", "sklearn.metrics.matthews_corrcoef",
    "sklearn.metrics.cohen_kappa_score", "sklearn.metrics.pairwise.cosine_similarity",
    "sklearn.metrics.pairwise.euclidean_distances", "sklearn.metrics.pairwise_distances",
    "matplotlib.pyplot.plot", "matplotlib.pyplot.scatter", "matplotlib.pyplot.hist", "matplotlib.pyplot.imshow",
    "matplotlib.pyplot.bar", "matplotlib.pyplot.semilogy", "matplotlib.pyplot.errorbar",
    "matplotlib.pyplot.fill_between", "matplotlib.pyplot.matshow", "matplotlib.pyplot.pcolormesh",
    "matplotlib.pyplot.contourf", "matplotlib.pyplot.boxplot", "matplotlib.pyplot.stem", "matplotlib.pyplot.loglog",
    "matplotlib.pyplot.step", "matplotlib.pyplot.semilogx",
    "pandas.DataFrame", "pandas.Series",
})
# Methods of a matplotlib ``Axes`` that convert each tensor given as a positional argument
# that way (`pyplot.plot` is `gca().plot`; measured on matplotlib 3.10 / torch 2.13 by
# tests/test_i_s9.py), and the calls that make the Axes: the ones of pyplot (with the
# item of their result that holds the Axes: `fig, axs = plt.subplots(2, 2)`), and the
# methods of a Figure (`fig.add_subplot(111)`), a Figure coming from `plt.figure()` or item 0
# of `plt.subplots()`.
AXES_ARRAY_METHODS = frozenset({
    "plot", "scatter", "hist", "imshow", "bar", "semilogy", "loglog", "step", "errorbar", "fill_between",
    "semilogx", "stem", "boxplot", "matshow", "pcolormesh", "contourf",
})
AXES_FUNCTIONS: dict[str, Optional[int]] = {
    "matplotlib.pyplot.subplots": 1, "matplotlib.pyplot.subplot": None, "matplotlib.pyplot.gca": None,
    "matplotlib.pyplot.axes": None, "matplotlib.pyplot.subplot2grid": None,
}
FIGURE_FUNCTIONS: dict[str, Optional[int]] = {"matplotlib.pyplot.figure": None, "matplotlib.pyplot.subplots": 0}
FIGURE_AXES_METHODS = frozenset({"add_subplot", "subplots", "gca", "add_axes"})
# numpy functions whose result is float64 when no `dtype=` is given: random floats, files of
# numbers and grids whatever their arguments; the statistics (`mean`, `std`, `var`, `average`)
# of a float64 or integer array only, as they keep a float32 array's dtype (numpy 2.4), so
# placement reads their argument's dtype before it says float64.
NUMPY_FLOAT64_FUNCTIONS = frozenset({
    "numpy.random.rand", "numpy.random.randn", "numpy.random.random", "numpy.random.random_sample",
    "numpy.random.uniform", "numpy.random.normal", "numpy.random.standard_normal", "numpy.random.sample",
    "numpy.random.beta", "numpy.random.exponential", "numpy.random.gamma", "numpy.random.laplace",
    "numpy.loadtxt", "numpy.genfromtxt", "numpy.linspace", "numpy.logspace",
    "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.identity",
    "numpy.mean", "numpy.std", "numpy.var", "numpy.average",
})
# numpy's random generators (`rng = np.random.default_rng(0)`) and what their methods return
# without `dtype=`: float64 samples, int64 integers.
NUMPY_GENERATORS = frozenset({"numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"})
NUMPY_GENERATOR_FLOAT64_METHODS = frozenset({
    "normal", "standard_normal", "random", "uniform", "exponential", "gamma", "beta", "laplace", "lognormal",
    "rand", "randn", "random_sample", "standard_exponential", "standard_gamma", "multivariate_normal", "dirichlet",
})
NUMPY_GENERATOR_INT64_METHODS = frozenset({"integers", "randint", "poisson", "binomial", "multinomial"})
# Functions of array libraries (not numpy) whose result is a float64 numpy array, measured on
# scikit-learn 1.9 by tests/test_placement_s7.py: the class weights people compute for a loss.
ARRAY_FLOAT64_FUNCTIONS = frozenset({
    "sklearn.utils.class_weight.compute_class_weight", "sklearn.utils.compute_class_weight",
    "sklearn.utils.class_weight.compute_sample_weight", "sklearn.utils.compute_sample_weight",
})
# Functions that split arrays into (train, test) pairs, each keeping its array's dtype: the
# item at position k of the result comes from the array at position k // 2.
ARRAY_SPLITTING_FUNCTIONS = frozenset({"sklearn.model_selection.train_test_split"})
# pandas readers of text formats: without `dtype=`, the numbers of a column are float64, or
# int64 when every one is whole (measured with pandas 3.1 by tests/test_placement_s7.py): never
# float32, so a float32 layer never takes them as read.
PANDAS_TEXT_READERS = frozenset({"pandas.read_csv", "pandas.read_table", "pandas.read_fwf"})
PANDAS_FRAMES = frozenset({"pandas.DataFrame", "pandas.Series"})
# DataFrame methods and accessors whose result holds the same columns' values (a selection).
FRAME_KEEPING_METHODS = frozenset({
    "drop", "dropna", "fillna", "head", "tail", "sample", "copy", "reset_index", "sort_values", "query",
    "sort_index", "filter",
})
FRAME_INDEXERS = frozenset({"iloc", "loc"})
# What turns a DataFrame's selection into a numpy array of its values.
FRAME_TO_ARRAY = frozenset({"values", "to_numpy"})
# Python and numpy constants that are Python floats (float64 in numpy arithmetic).
FLOAT_CONSTANTS = frozenset({"numpy.pi", "numpy.e", "math.pi", "math.e", "math.tau"})
# Builtins whose result is a Python int.
INT_BUILTINS = frozenset({"builtins.len", "builtins.int"})
# Functions whose result is a Python float, whatever number they are given.
FLOAT_BUILTINS = frozenset({
    "builtins.float", "math.sin", "math.cos", "math.tan", "math.asin", "math.acos", "math.atan", "math.atan2",
    "math.sinh", "math.cosh", "math.tanh", "math.exp", "math.log", "math.log2", "math.log10", "math.sqrt",
    "math.radians", "math.degrees", "math.hypot", "math.pow", "math.fabs",
})
# numpy functions whose result is int64 (on the platforms torch supports).
NUMPY_INT64_FUNCTIONS = frozenset({
    "numpy.random.randint", "numpy.random.choice", "numpy.random.permutation", "numpy.bincount", "numpy.argmax",
    "numpy.argmin", "numpy.argsort", "numpy.arange",
    # the counts numpy.random draws (checked with numpy 2.4: int64)
    "numpy.random.poisson", "numpy.random.binomial", "numpy.random.geometric", "numpy.random.negative_binomial",
    "numpy.random.hypergeometric",
})
# numpy functions whose result has the dtype of their arrays (promoted between them).
NUMPY_DTYPE_KEEPING_FUNCTIONS = frozenset({
    "numpy.cumsum", "numpy.cumprod", "numpy.abs", "numpy.maximum", "numpy.minimum", "numpy.clip", "numpy.sum",
    "numpy.triu", "numpy.tril", "numpy.concatenate", "numpy.stack", "numpy.vstack", "numpy.hstack",
    "numpy.transpose", "numpy.reshape", "numpy.squeeze", "numpy.expand_dims", "numpy.asarray", "numpy.array",
    "numpy.copy", "numpy.where", "numpy.max", "numpy.min",
    "numpy.floor", "numpy.ceil", "numpy.round", "numpy.around", "numpy.trunc",  # numpy 2: ints stay ints
})
# numpy functions that are float64 on integer arrays and keep the dtype of float arrays.
NUMPY_FLOATING_FUNCTIONS = frozenset({"numpy.exp", "numpy.log", "numpy.sqrt", "numpy.sin", "numpy.cos",
                                      "numpy.tanh", "numpy.log1p", "numpy.median"})
# Array methods: those that keep the dtype, and the statistics (float64 on integer arrays).
ARRAY_DTYPE_KEEPING_METHODS = frozenset({
    "sum", "max", "min", "cumsum", "copy", "reshape", "transpose", "squeeze", "flatten", "ravel", "clip",
    "repeat", "take",
})
ARRAY_FLOATING_METHODS = frozenset({"mean", "std", "var"})
# Tensor methods that keep the dtype of the tensor they are called on.
TENSOR_DTYPE_KEEPING_METHODS = frozenset({
    "view", "reshape", "squeeze", "unsqueeze", "flatten", "transpose", "permute", "contiguous", "clone", "detach",
    "cpu", "cuda", "expand", "repeat", "t", "narrow", "select", "index_select", "requires_grad_", "pin_memory",
    "sum", "clamp", "abs", "neg", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "pow", "max", "min",
    "softmax", "log_softmax", "masked_fill",
})
# torch functions that join a sequence of tensors into one, of their (promoted) dtype; every tensor
# joined must be on one device (`torch.cat([a, b])`).
TENSOR_JOINING_FUNCTIONS = frozenset({"torch.cat", "torch.stack", "torch.concat", "torch.concatenate",
                                      "torch.vstack", "torch.hstack", "torch.dstack", "torch.row_stack",
                                      "torch.column_stack"})
# torch functions outside the facts table that pad a sequence of tensors into one batch, on the
# device of the tensors given (`pad_sequence([torch.tensor(ids) for ids in batch])` is on the CPU).
SEQUENCE_PADDING_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pad_sequence"})
# Sums and products of a bool or integer tensor are int64, whatever its width (torch 2.13:
# `(x > 0).sum(0)` counts).
INT64_SUMS = frozenset({"sum", "prod", "cumsum", "cumprod", "nansum"})
# Tensor methods whose result may be on another device than the tensor (or is no tensor):
# every other method returning a tensor keeps its device.
DEVICE_CHANGING_METHODS = frozenset({"to", "cpu", "cuda", "type", "mps", "xpu", "pin_memory", "numpy", "tolist",
                                     "item"})
# Tensor methods that return a copy on another device and leave the tensor where it was
# (a module's `.to`/`.cuda` moves the module itself).
TENSOR_MOVING_COPIES = frozenset({"to", "cuda", "mps", "xpu"})
# torch functions whose result has the dtype of their (floating) first argument.
TORCH_DTYPE_KEEPING_FUNCTIONS = frozenset({
    "torch.relu", "torch.sigmoid", "torch.tanh", "torch.exp", "torch.log", "torch.abs", "torch.sqrt",
    "torch.nn.functional.relu", "torch.nn.functional.gelu", "torch.nn.functional.leaky_relu",
    "torch.nn.functional.dropout", "torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
    "torch.nn.Parameter", "torch.nn.parameter.Parameter",
})
# torch functions that read a tensor or array and keep its dtype when given no `dtype=`.
TORCH_CONVERTERS = frozenset({"torch.from_numpy", "torch.tensor", "torch.as_tensor", "torch.asarray"})
# Converters that take no `device=`: the tensor they make is moved with `.to(device)`.
DEVICELESS_CONVERTERS = frozenset({"torch.from_numpy"})
# torchvision transforms that turn a PIL image or array into a tensor, always on the CPU (the
# torchvision docs of ToTensor, PILToTensor and v2.ToImage): a `Compose` holding one of them
# gives a CPU tensor; and the functions that do the same.
TENSOR_MAKING_TRANSFORMS = frozenset({
    "torchvision.transforms.ToTensor", "torchvision.transforms.PILToTensor", "torchvision.transforms.v2.ToImage",
    "torchvision.transforms.v2.PILToTensor", "torchvision.transforms.v2.ToTensor",
})
TENSOR_MAKING_TRANSFORM_FUNCTIONS = frozenset({
    "torchvision.transforms.functional.to_tensor", "torchvision.transforms.functional.pil_to_tensor",
    "torchvision.transforms.v2.functional.to_image", "torchvision.transforms.v2.functional.pil_to_tensor",
})
TRANSFORM_COMPOSITIONS = frozenset({"torchvision.transforms.Compose", "torchvision.transforms.v2.Compose"})
# torch factories whose result is float32 (the default dtype) unless `dtype=` says otherwise;
# and those whose default is int64.
TORCH_FLOAT_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn",
                                   "torch.eye", "torch.linspace", "torch.normal"})
TORCH_INT64_FACTORIES = frozenset({"torch.randint", "torch.randperm"})
# Factories that take the dtype of their fill value (`torch.full((n,), 1)` is int64) or of
# their bounds (`torch.arange(5)` is int64, `torch.arange(0., 1., .1)` float32).
TORCH_VALUE_TYPED_FACTORIES: dict[str, tuple[int, ...]] = {"torch.full": (1,), "torch.arange": (0, 1, 2)}
# Factories that make a tensor of a given size on the default device (CPU) without `device=`.
TORCH_SIZED_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn",
                                   "torch.full", "torch.arange", "torch.eye", "torch.randint", "torch.linspace",
                                   "torch.randperm",
                                   # also from sizes (the `factory` facts that read no tensor): windows, indices
                                   "torch.logspace", "torch.empty_strided", "torch.tril_indices",
                                   "torch.triu_indices", "torch.hann_window", "torch.hamming_window",
                                   "torch.blackman_window", "torch.bartlett_window", "torch.kaiser_window"})

# Loading data: a `DataLoader` (without `collate_fn=`) yields its dataset's items collated by
# `default_collate`: tensors and numpy arrays stacked with their dtype, Python floats as a
# float64 tensor, Python ints as int64; a `TensorDataset`'s items are rows of its tensors.
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
# Datasets whose items are the items of the dataset they are given first (`Subset(ds, idx)`).
DATASET_VIEWS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})

# Layers whose weights are float32 when built: an input of another dtype raises
# ("mat1 and mat2 must have the same dtype", "Input type (double) and bias type (float)
# should be the same", "RNN input dtype (torch.float64) does not match weight dtype").
FLOAT32_WEIGHT_LAYERS = frozenset({
    "torch.nn.Linear", "torch.nn.Bilinear", "torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d",
    "torch.nn.ConvTranspose1d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d",
    "torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNNCell", "torch.nn.LSTMCell", "torch.nn.GRUCell",
    # measured on torch 2.13 (float64 or int64 input): "mixed dtype (CPU): all inputs must share same
    # datatype" from the affine norms, "expected m1 and m2 to have the same dtype" from attention
    "torch.nn.LayerNorm", "torch.nn.GroupNorm", "torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d",
    "torch.nn.BatchNorm3d", "torch.nn.MultiheadAttention", "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerEncoder", "torch.nn.TransformerDecoderLayer", "torch.nn.TransformerDecoder",
    "torch.nn.Transformer",
})
# Losses whose class weights must have the dtype of the input ("expected scalar type Float
# but found Double"): where `weight` goes by position (the module's constructor, the function).
WEIGHT_MATCHING_LOSSES: dict[str, int] = {
    "torch.nn.CrossEntropyLoss": 0, "torch.nn.NLLLoss": 0,
    "torch.nn.functional.cross_entropy": 2, "torch.nn.functional.nll_loss": 2,
}
# Losses whose target must be floating ("Found dtype Long but expected Float", "result type
# Float can't be cast to the desired output type Long"), with the target's position in the
# call of the module or function; the value says whether a float64 target raises too
# (binary_cross_entropy: "Found dtype Double but expected Float").
FLOAT_TARGET_LOSSES: dict[str, tuple[int, bool]] = {
    "torch.nn.BCELoss": (1, True), "torch.nn.BCEWithLogitsLoss": (1, False),
    "torch.nn.functional.binary_cross_entropy": (1, True),
    "torch.nn.functional.binary_cross_entropy_with_logits": (1, False),
}
# Layers and functions whose input holds indices and must be an integer tensor ("Expected tensor
# for argument #1 'indices' to have one of the following scalar types: Long, Int"; one_hot: "only
# applicable to index tensor of type LongTensor"), with the position of the indices; measured on
# torch 2.13 by tests/test_placement.py.
INDEX_INPUTS: dict[str, int] = {
    "torch.nn.Embedding": 0, "torch.nn.EmbeddingBag": 0, "torch.nn.functional.embedding": 0,
    "torch.nn.functional.one_hot": 0,
}
# Losses whose target, when it holds class indices (not per-class probabilities of the input's
# shape), must be an integer tensor ("expected target dtype to be Long or Byte, but got Float"),
# with the position of the target; measured on torch 2.13 by tests/test_bugs_as_written.py.
INDEX_TARGET_LOSSES: dict[str, int] = {
    "torch.nn.CrossEntropyLoss": 1, "torch.nn.NLLLoss": 1,
    "torch.nn.functional.cross_entropy": 1, "torch.nn.functional.nll_loss": 1,
}
# Those of them that take no per-class probabilities: a floating target raises whatever its
# shape (torch 2.13: "expected target dtype to be Long or Byte, but got Float", "multi-target
# not supported").
INDEX_ONLY_TARGET_LOSSES = frozenset({"torch.nn.NLLLoss", "torch.nn.functional.nll_loss"})
# The integer dtypes those losses take as class indices (torch 2.13: "expected target dtype to
# be Long or Byte, but got Int" for int32, and likewise for int16, int8 and bool).
CLASS_INDEX_DTYPES = frozenset({"int64", "uint8"})
# Matrix products whose operands must have one dtype ("expected m1 and m2 to have the same dtype").
SAME_DTYPE_PRODUCTS = frozenset({"torch.mm", "torch.bmm", "torch.matmul"})
# The other products that do not promote, with the positions of the operands that must share
# one dtype (measured on torch 2.13: "self and mat2 must have the same dtype" from `addmm`,
# "expected scalar type Float but found Double" from `einsum` and `baddbmm`, "dot : expected
# both vectors to have same dtype", "addmv input tensors must have the same dtype"); None for
# every positional argument after the first (the operands of `einsum`).
SAME_DTYPE_OPERANDS: dict[str, Optional[tuple[int, ...]]] = {
    "torch.mm": (0, 1), "torch.bmm": (0, 1), "torch.matmul": (0, 1), "torch.dot": (0, 1), "torch.mv": (0, 1),
    "torch.addmm": (1, 2), "torch.baddbmm": (1, 2), "torch.addbmm": (1, 2), "torch.addmv": (1, 2),
    "torch.einsum": None,
}
# Their tensor methods (`a.mm(b)`, `q.bmm(k)`): the receiver and the first argument.
SAME_DTYPE_PRODUCT_METHODS = frozenset({"mm", "bmm", "matmul", "dot", "mv"})
# The functional layers: their input and weight (the first two arguments) must have one dtype
# (torch 2.13: "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same").
FUNCTIONAL_WEIGHTED = frozenset({
    "torch.nn.functional.conv1d", "torch.nn.functional.conv2d", "torch.nn.functional.conv3d",
    "torch.nn.functional.conv_transpose1d", "torch.nn.functional.conv_transpose2d",
    "torch.nn.functional.conv_transpose3d", "torch.nn.functional.linear",
})
# numpy functions that return a tuple of arrays of their arguments' dtype.
NUMPY_DTYPE_KEEPING_SPLITS = frozenset({"numpy.meshgrid", "numpy.broadcast_arrays"})
# Tensor methods and torch functions that take an index tensor, with its position: it must be
# an integer tensor (torch 2.13: "scatter(): Expected dtype int32/int64 for index",
# "gather(): ..", "index_select(): ..", "Expected a long tensor for index").
INDEX_ARGUMENT_METHODS: dict[str, int] = {
    "scatter": 1, "scatter_": 1, "scatter_add": 1, "scatter_add_": 1, "scatter_reduce": 1, "scatter_reduce_": 1,
    "gather": 1, "index_select": 1, "index_add": 1, "index_add_": 1, "index_fill": 1, "index_fill_": 1,
    "index_copy": 1, "index_copy_": 1, "take_along_dim": 0,
}
INDEX_ARGUMENT_FUNCTIONS: dict[str, int] = {
    "torch.gather": 2, "torch.scatter": 2, "torch.scatter_add": 2, "torch.index_select": 2,
    "torch.take_along_dim": 1, "torch.index_add": 2,
}
# Recurrent layers: their initial hidden state (the second argument, a tensor or an LSTM's
# `(h0, c0)`) must have the dtype of their weights.
RECURRENT_LAYERS = frozenset({"torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNNCell",
                              "torch.nn.LSTMCell", "torch.nn.GRUCell"})
# Functions that change the default dtype of the process: after them, factories are not float32.
DEFAULT_DTYPE_SETTERS = frozenset({"torch.set_default_dtype", "torch.set_default_tensor_type"})
# What reading a tensor for its metadata or moving it is (not a computation with it).
# Arguments torch wants on the CPU whatever the device of the rest: `lengths` of
# `pack_padded_sequence` (position, keyword).
CPU_ARGUMENTS = {"torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths")}
PLACEMENT_NEUTRAL_USES = frozenset({"to", "cuda", "cpu", "type_as", "device", "shape", "size", "dtype", "dim",
                                    "numel", "ndim", "is_cuda", "data_ptr", "new_zeros", "new_ones", "new_empty",
                                    "new_full", "new_tensor"})


# --- where the autograd graph is kept or cut (analysis.no_graph, analysis.grad_flow) ---------

# Methods that may return their receiver itself (`w.to(device)` when it is there already):
# under no_grad they compute nothing, and a parameter stays one.
MAYBE_SELF_METHODS = torch_facts.methods(aliasing="maybe_self") | {"requires_grad_", "view_as", "expand_as",
                                                                   "reshape_as"}
# Methods whose arguments are sizes, dimensions, dtypes or devices, never a tensor whose
# graph the result would join (`x.view(b, -1)`, `x.sum(dim)`, `x.to(other)`, `x.type_as(y)`).
SHAPE_ARGUMENT_METHODS = frozenset({
    "view", "reshape", "permute", "transpose", "t", "to", "cuda", "cpu", "float", "double", "half", "bfloat16",
    "long", "int", "bool", "type", "type_as", "contiguous", "sum", "mean", "amax", "amin", "prod",
    "std", "var", "logsumexp", "norm", "softmax", "log_softmax", "squeeze", "unsqueeze", "flatten", "expand",
    "expand_as", "view_as", "reshape_as", "repeat", "narrow", "select", "clone", "abs", "exp", "log", "sqrt",
    "sigmoid", "tanh", "relu", "neg", "cumsum", "flip", "roll", "square",
})
# Keyword arguments of torch functions and methods that never carry a gradient.
PLAIN_KEYWORDS = frozenset({
    "dim", "keepdim", "dtype", "device", "reduction", "ignore_index", "size_average", "reduce", "inplace", "p",
    "training", "non_blocking", "memory_format", "layout", "pin_memory", "copy", "label_smoothing", "eps",
    "beta", "delta", "log_target", "full", "margin", "out",
})
# Views: made under no_grad, they still reach the graph of the tensor they view.
VIEWING_METHODS = torch_facts.methods(aliasing={"view", "maybe_view"})
VIEWING_FUNCTIONS = torch_facts.functions(aliasing={"view", "maybe_view", "maybe_self"})
# torch functions that may return their (tensor) argument itself.
ARGUMENT_RETURNING_FUNCTIONS = frozenset({
    "torch.as_tensor", "torch.asarray", "torch.nn.functional.dropout", "torch.nn.functional.dropout1d",
    "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout",
    "torch.nn.functional.feature_alpha_dropout", "torch.dropout", "torch.nn.functional.threshold",
})
# torch.nn modules that may return their input itself or a view of it (in eval mode, with
# inplace=True, or always).
INPUT_RETURNING_MODULES = frozenset("torch.nn." + name
                                    for name in torch_facts.module_classes(aliasing={"maybe_self", "view"}))
# Methods that turn a tensor into plain Python values or numpy: a tensor made from them is cut.
TO_PLAIN_METHODS = frozenset({"item", "tolist", "numpy"})
# Modules of torch.nn with parameters of their own.
PARAMETER_MODULES = frozenset("torch.nn." + name for name in torch_facts.module_classes(parameters=True))
# torch functions that make a new tensor from values: a new leaf (unless requires_grad=True).
NEW_LEAF_FUNCTIONS = frozenset({"torch.tensor", "torch.from_numpy", "torch.as_tensor", "torch.asarray",
                                "torch.autograd.Variable"})
# The parameters every torch.nn layer with weights names so (`model.fc.weight`).
LAYER_PARAMETERS = frozenset({"weight", "bias"})


def is_distribution_class(qualname: str) -> bool:
    """``torch.distributions.Normal``: a distribution, whose tensors are its parameters (as
    given, or made from Python numbers on the default device), and its samples there too."""
    parts = qualname.split(".")
    return len(parts) in (3, 4) and parts[:2] == ["torch", "distributions"] and parts[-1][:1].isupper() \
        and not {"transforms", "constraints", "constraint_registry"} & set(parts)


# Methods of a torch.distributions object whose result is differentiable in its parameters.
DISTRIBUTION_METHODS = frozenset({"log_prob", "entropy", "rsample", "cdf", "icdf"})
# `torch.autograd.backward(tensors)` and `torch.autograd.grad(outputs, inputs)`: the keyword
# of the tensors whose graph they walk.
AUTOGRAD_ENTRY_POINTS = {"torch.autograd.backward": "tensors", "torch.autograd.grad": "outputs"}
# Objects of training libraries whose method back-propagates the loss given first
# (`accelerator.backward(loss)` runs `loss.backward()`): class -> method.
LIBRARY_BACKWARDS = {"accelerate.Accelerator": "backward", "lightning.fabric.Fabric": "backward",
                     "lightning.Fabric": "backward"}


# --- values leaving torch (analysis.graph_exits) ----------------------------------------------

# Methods that move or convert a tensor and keep its values (and its graph): stripped from
# `h.detach().cpu().numpy()` down to the tensor whose values are taken, `h`.
VALUE_KEEPING_MOVES = frozenset({
    "cpu", "cuda", "to", "float", "double", "half", "bfloat16", "clone",
    "contiguous", "squeeze", "unsqueeze", "flatten", "view", "reshape", "type", "type_as", "view_as", "t",
})
# Methods that keep a value's values (a numpy array's, a Python number's, a new tensor's):
# what they give still carries what the cut took.
VALUE_CARRYING_METHODS = frozenset({
    "astype", "float", "double", "half", "to", "cuda", "cpu", "reshape", "view", "view_as", "unsqueeze",
    "squeeze", "transpose", "permute", "copy", "clone", "contiguous", "expand", "expand_as", "repeat", "type",
    "type_as", "flatten", "ravel", "mean", "sum", "prod", "exp", "log", "sqrt", "tanh", "sigmoid", "clip",
    "clamp", "abs", "neg", "mul", "add", "sub", "div", "pow", "requires_grad_", "float_", "unsqueeze_",
    "squeeze_", "T",
})
# Tensor methods whose tensor arguments are values the result is computed from.
ARITHMETIC_METHODS = frozenset({
    "add", "sub", "mul", "div", "true_divide", "pow", "matmul", "mm", "bmm", "add_", "sub_", "mul_", "div_",
    "pow_", "lerp", "lerp_", "addcmul", "addcdiv", "where", "new_tensor",
})
# Tensor methods comparing the tensor with their argument, element by element.
COMPARISON_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "equal", "allclose", "isclose"})
# Tensor methods whose tensor arguments must be on the tensor's device (a 0-dim CPU tensor aside).
SAME_DEVICE_METHODS = (ARITHMETIC_METHODS - {"new_tensor"}) | COMPARISON_METHODS | frozenset({
    "gather", "masked_fill", "masked_fill_", "masked_select", "index_select", "scatter", "scatter_", "scatter_add",
    "scatter_add_", "dot", "mv", "cross", "maximum", "minimum",
})
# torch and numpy functions whose every positional argument is a value of the result.
ARITHMETIC_FUNCTION_NAMES = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "power", "matmul",
    "mm", "bmm", "dot", "where", "maximum", "minimum", "fmax", "fmin", "lerp", "addcmul", "addcdiv",
})
# torch and numpy functions that make a tensor from sizes (`torch.zeros(n)`, `np.arange(k)`):
# a value passed there is a size, not something the result is computed from.
SIZE_FUNCTION_NAMES = frozenset({
    "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint",
    "randperm", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "tril_indices", "triu_indices", "identity", "indices",
})
# Libraries computing on numpy arrays: what they give is computed from their first argument.
ARRAY_LIBRARIES = frozenset({"scipy", "skimage", "cv2", "sklearn", "PIL"})
# Builtins whose result is computed from the value they are given.
VALUE_BUILTINS = frozenset({"float", "abs", "max", "min", "sum", "complex"})
# Step functions, integer conversions and indices: their gradient is zero (or none) in torch
# too, so a value that goes through one loses nothing by leaving torch (`int(t)`,
# `a.astype(int)`, `np.round(a)`, `h.argmax()`). The tensor methods whose result is an integer
# tensor whatever the input (`argmax`, `long`, `nonzero`) come from the torch facts.
STEP_FUNCTION_NAMES = frozenset({
    "round", "around", "rint", "floor", "ceil", "trunc", "fix", "sign", "signbit", "digitize", "searchsorted",
    "bucketize", "flatnonzero", "unique", "bincount", "histogram", "histc", "multinomial", "bernoulli", "poisson",
    "bool", "floor_divide", "isclose", "isnan", "isinf", "isfinite", "all", "any",
}) | torch_facts.methods(integer="always")
# Of the results of these, item 1 holds indices: `h.max(1)[1]`, `_, idx = h.topk(k)`.
WITH_INDICES_METHODS = torch_facts.methods(integer="indices")
INTEGER_DTYPE = re.compile(r"\b(?:u?int\d*|long|short|bool\w*|byte)\b")

# --- names the rules ask about --------------------------------------------------------
# Tables that one rule reads, kept here with the rest of what torchlint knows of torch so
# that no rule module holds names of its own (tests/test_rule_modules.py checks it).

# In-place tensor methods that can clear a gradient they are called on (`p.grad.zero_()`,
# `p.grad.data.mul_(0)`, `p.grad.detach_()`, `p.grad.set_()`); clipping ones (`clamp_`) keep
# it (TL407, framework/gradient_clearing.py).
GRADIENT_CLEARING_METHODS = frozenset({"zero_", "fill_", "mul_", "detach_", "copy_", "set_", "resize_"})
# Tensor constructors and methods whose names hold "zero" but that clear no gradient: a
# call named so is not taken for a gradient-clearing helper (TL407).
ZERO_NAMED_NON_CLEARING = frozenset({"zeros", "zeros_like", "new_zeros", "zero_"})

# The tensor methods whose `async=` argument PyTorch 0.4 renamed `non_blocking=` (async_argument).
NON_BLOCKING_METHODS = frozenset({"cuda", "to", "copy_", "type"})
# The spellings of `torch.autograd.backward` (backward_gradient_shape).
AUTOGRAD_BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.backward.backward"})
# Factories that make a tensor from data (a list, a number) (backward_gradient_shape).
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})
# Factories whose positional arguments are the shape of the tensor they make (backward_gradient_shape).
SHAPE_FACTORIES = frozenset({"torch.ones", "torch.zeros", "torch.empty", "torch.rand", "torch.randn"})
# Keywords of a constructor that leave its shape as its positional arguments give it (backward_gradient_shape).
SHAPELESS_FACTORY_KEYWORDS = frozenset({"dtype", "device", "requires_grad"})
# Methods whose result has the shape of their receiver (backward_gradient_shape).
SHAPE_KEEPING_METHODS = frozenset({"cuda", "cpu", "to", "float", "double", "half", "type", "detach", "clone",
                                   "fill_", "requires_grad_", "neg", "mul", "div", "contiguous", "pin_memory"})
# Methods whose first argument (or `mask=`) is a mask (byte_mask).
MASKING_METHODS = frozenset({"masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_"})
# torch functions and the position of their mask (byte_mask).
MASKING_FUNCTIONS = {"torch.masked_select": 1, "torch.masked_fill": 1, "torch.masked_scatter": 1, "torch.where": 0}
# The legacy tensor types of dtype uint8 (byte_mask).
UINT8_TENSOR_TYPES = frozenset({"torch.ByteTensor", "torch.cuda.ByteTensor"})
# Factories that take a `dtype` (byte_mask).
DTYPE_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.zeros", "torch.ones", "torch.empty",
                             "torch.full", "torch.zeros_like", "torch.ones_like", "torch.empty_like",
                             "torch.full_like", "torch.randint"})
# Methods that give a tensor of their receiver's dtype (byte_mask).
MASK_DTYPE_KEEPING_METHODS = frozenset({"cuda", "cpu", "detach", "clone", "contiguous", "view", "view_as", "reshape",
                                        "reshape_as", "unsqueeze", "squeeze", "expand", "expand_as", "t", "transpose",
                                        "permute", "repeat", "flatten", "pin_memory"})
# Methods registering a hook autograd runs during backward, with gradients disabled unless the
# backward creates a graph (a module's backward hook, a tensor's hook) (no_graph).
BACKWARD_HOOK_REGISTRATIONS = frozenset({"register_full_backward_hook", "register_backward_hook", "register_hook"})
# The activation checkpointing functions, by qualified name and short name (checkpoint_reentrant).
CHECKPOINT_FUNCTIONS = {
    "torch.utils.checkpoint.checkpoint": "checkpoint",
    "torch.utils.checkpoint.checkpoint_sequential": "checkpoint_sequential",
}
# Tensor methods whose result requires grad when the tensor does (and keeps the layer's values)
# (clone_detach_order).
GRAD_KEEPING_METHODS = frozenset({"index_select", "narrow", "view", "reshape", "t", "transpose", "contiguous",
                                  "to", "float", "half", "double", "squeeze", "unsqueeze", "flatten"})
# Element-wise methods that keep the shape, and the dtype of a floating-point tensor (data_assign).
ELEMENTWISE_METHODS = frozenset({
    "clamp", "clamp_min", "clamp_max", "clip", "abs", "neg", "exp", "expm1", "log", "log1p",
    "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "sign", "sgn", "sin", "cos", "floor", "ceil",
    "round", "trunc", "frac", "reciprocal", "square", "pow", "mul", "add", "sub", "div", "fmod",
    "remainder", "erf", "nan_to_num",
})
# Copies of the receiver, for any dtype (data_assign).
PLAIN_COPY_METHODS = frozenset({"clone", "detach", "contiguous"})
# The `*_like` factories: a tensor of the shape of their first argument (data_assign).
LIKE_FACTORIES = frozenset({"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.rand_like",
                            "torch.randn_like", "torch.full_like"})
# What a Python number has too: `x.data[0].real` says nothing of `x`'s dimensions (data_read).
NUMBER_ATTRIBUTES = frozenset({"real", "imag", "conjugate", "is_integer", "hex", "as_integer_ratio",
                               "bit_length", "numerator", "denominator", "item", "tolist"})
# The spellings of `torch.utils.data.DataLoader` (dataloader_next).
DATALOADER_CLASSES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# The deprecated per-device autocasts, with the device `torch.amp.autocast` takes (deprecated_function).
DEVICE_AUTOCASTS = {"torch.cuda.amp.autocast": "cuda", "torch.cpu.amp.autocast": "cpu"}
# The deprecated `torch.cuda.amp` custom autograd decorators, with their `torch.amp` names (deprecated_function).
DEVICE_CUSTOM_AUTOGRAD_DECORATORS = {"torch.cuda.amp.custom_fwd": "custom_fwd",
                                     "torch.cuda.amp.custom_bwd": "custom_bwd"}
# The grad-mode context managers, each a class that must be called to be one (grad_mode_not_called).
GRAD_MODE_CONTEXTS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.inference_mode",
    "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad",
    "torch.autograd.grad_mode.inference_mode", "torch.autograd.grad_mode.set_grad_enabled",
})
# Where an index tensor goes (position of the index argument, or `index=`): methods, then
# torch functions; a float tensor there raises (integer_division).
INDEX_TAKING_METHODS = {"index_select": 1, "gather": 1, "scatter": 1, "scatter_": 1, "scatter_add": 1,
                        "scatter_add_": 1, "scatter_reduce": 1, "scatter_reduce_": 1, "index_add": 1, "index_add_": 1,
                        "index_copy": 1, "index_copy_": 1, "index_fill": 1, "index_fill_": 1, "take": 0,
                        "take_along_dim": 0, "put": 0, "put_": 0}
# torch functions that take an index tensor, with its position (integer_division).
INDEX_TAKING_FUNCTIONS = {"torch.index_select": 2, "torch.gather": 2, "torch.scatter": 2, "torch.scatter_add": 2,
                          "torch.index_add": 2, "torch.index_copy": 2, "torch.index_fill": 2, "torch.take": 1,
                          "torch.take_along_dim": 1, "torch.nn.functional.embedding": 0,
                          "torch.nn.functional.one_hot": 0}
# The integer dtypes, by qualified name (integer_division).
INTEGER_DTYPE_NAMES = frozenset({"torch.long", "torch.int64", "torch.int", "torch.int32", "torch.int16", "torch.short",
                                 "torch.int8", "torch.uint8"})
# The legacy sparse types (torch.sparse.Tensor is the dense torch.Tensor: not one of them) (sparse_constructor).
_SPARSE_TYPE_NAMES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
                      "ShortTensor", "IntTensor", "LongTensor")
# The legacy sparse types: qualified name -> (type name, on CUDA) (sparse_constructor).
LEGACY_SPARSE_TYPES = {f"{module}.{name}": (name, module == "torch.cuda.sparse")
                       for module in ("torch.sparse", "torch.cuda.sparse") for name in _SPARSE_TYPE_NAMES}
# A file that makes the factories allocate elsewhere than the CPU, which the legacy CPU types
# ignore (sparse_constructor).
DEFAULT_DEVICE_SETTING = re.compile(r"set_default_device|set_default_tensor_type|with\s+[\w.]*device\(")
# Keyword arguments of `torch.tensor` that `.to()`/`.requires_grad_()` apply to an existing tensor (tensor_from_tensor).
TENSOR_CONVERSION_KEYWORDS = ("dtype", "device", "requires_grad")
# Elementwise methods whose result takes the memory layout of their receiver (TensorIterator,
# since PyTorch 1.7), and the comparison operators that are the same operations (transposed_view).
LAYOUT_KEEPING_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "float", "double", "half", "long", "int",
                                    "byte", "bool", "type_as", "logical_not", "abs", "neg", "mul", "add", "sub", "div"})
# The dtypes of the legacy typed storages, `torch.FloatStorage`... (typed_storage).
_STORAGE_DTYPES = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool",
                   "ComplexFloat", "ComplexDouble")
# The quantized ones, CPU only (typed_storage).
_QUANTIZED_STORAGE_DTYPES = ("QInt8", "QUInt8", "QInt32", "QUInt4x2", "QUInt2x4")
# Every class whose instances are typed storages; `torch.Storage` is `torch.FloatStorage` (typed_storage).
TYPED_STORAGE_CLASSES = frozenset(
    {f"torch.{dtype}Storage" for dtype in _STORAGE_DTYPES + _QUANTIZED_STORAGE_DTYPES}
    | {f"torch.cuda.{dtype}Storage" for dtype in _STORAGE_DTYPES}
    | {"torch.Storage", "torch.TypedStorage", "torch.storage.TypedStorage"}
)
# Their class methods that build a typed storage (calling the class does too) (typed_storage).
STORAGE_BUILDERS = frozenset({"from_buffer", "from_file", "_new_shared"})
# What a typed storage and the untyped one under it give alike: numbers of bytes or flags,
# never a count or an index of elements (typed_storage).
STORAGE_BYTE_METHODS = frozenset({"data_ptr", "nbytes", "is_shared", "is_pinned"})
STORAGE_BYTE_PROPERTIES = frozenset({"device", "is_cuda"})
# Methods that return a new tensor that does not require grad, whatever their receiver (variable_wrap).
NEW_TENSOR_METHODS = frozenset({"detach", "new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
# Methods whose result requires grad only if their receiver does (not `long`, `int`, `byte`,
# `bool`: integer and boolean results never do) (variable_wrap).
VARIABLE_SHAPING_METHODS = frozenset({
    "fill_", "zero_", "resize_", "resize_as_", "view", "view_as", "reshape", "expand", "expand_as", "contiguous",
    "squeeze", "unsqueeze", "t", "transpose", "permute", "clone", "float", "double", "half", "cuda", "cpu", "to",
    "type", "type_as",
})
# Of the scalar-first overloads, the names whose receiver may be taken for a tensor without
# other evidence in a torch file: in-place methods and names no other common library uses
# (`add`/`sub` are too common) (scalar_first_overload).
TORCH_ONLY_SCALAR_FIRST_OVERLOADS = frozenset(name for name in SCALAR_FIRST_OVERLOADS if name not in ("add", "sub"))
