"""Regenerate torchlint/analysis/torch_names.py from an installed torch.

The linter must never import torch, so the names it needs (tensor methods, torch
functions, torch.nn module classes...) are read from torch once, here, and
committed as plain data.  Run:  python scripts/gen_torch_names.py
"""

from __future__ import annotations

import inspect
import pathlib
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torch.nn  # noqa: E402
import torch.nn.functional  # noqa: E402
import torch.nn.init  # noqa: E402
import torch.optim  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "torchlint" / "analysis" / "torch_names.py"


def public(names):
    return sorted(n for n in names if not n.startswith("_"))


def callables(module):
    return public(n for n in dir(module) if callable(getattr(module, n, None)))


tensor_members = public(dir(torch.Tensor))
tensor_methods = [n for n in tensor_members if callable(getattr(torch.Tensor, n, None))]
tensor_properties = [n for n in tensor_members if n not in tensor_methods]
torch_functions = [n for n in callables(torch) if n[0].islower() and not inspect.ismodule(getattr(torch, n))]
nn_modules = [
    n for n in public(dir(torch.nn))
    if inspect.isclass(getattr(torch.nn, n)) and issubclass(getattr(torch.nn, n), torch.nn.Module)
]
functional = [n for n in callables(torch.nn.functional) if n[0].islower()
              and not inspect.ismodule(getattr(torch.nn.functional, n))]
init = [n for n in callables(torch.nn.init) if n[0].islower()]
optimizers = [
    n for n in public(dir(torch.optim))
    if inspect.isclass(getattr(torch.optim, n)) and issubclass(getattr(torch.optim, n), torch.optim.Optimizer)
]


def block(name, values, doc):
    body = "".join(f"    {v!r},\n" for v in values)
    return f"# {doc}\n{name} = frozenset({{\n{body}}})\n\n"


text = (
    f'"""Names read from torch {torch.__version__} by scripts/gen_torch_names.py. Do not edit."""\n\n'
    f"TORCH_VERSION = {torch.__version__.split('+')[0]!r}\n\n"
    + block("TENSOR_METHODS", tensor_methods, "Public methods of torch.Tensor.")
    + block("TENSOR_PROPERTIES", tensor_properties, "Public non-callable attributes of torch.Tensor.")
    + block("TORCH_FUNCTIONS", torch_functions, "Lower-case callables in the torch namespace.")
    + block("NN_MODULES", nn_modules, "torch.nn classes that are nn.Module subclasses.")
    + block("NN_FUNCTIONAL", functional, "Functions of torch.nn.functional.")
    + block("NN_INIT", init, "Functions of torch.nn.init.")
    + block("OPTIMIZERS", optimizers, "torch.optim.Optimizer subclasses.")
)
OUT.write_text(text.rstrip() + "\n", encoding="utf-8")
print(f"wrote {OUT} ({len(tensor_methods)} tensor methods, {len(torch_functions)} torch functions)")
