"""The one table of torch facts, and the queries the analyses ask of it.

The rows are in ``torch_facts_table.py``, read from torch by scripts/gen_torch_facts.py:
never edit them, change that script's OVERRIDES (each with its reason) and regenerate with
``.venv/bin/python scripts/gen_torch_facts.py``.  This module is written by hand.

One row per torch function, tensor method or property, ``torch.nn.functional`` and
``torch.nn.init`` function, ``torch.nn`` module class and legacy tensor type, keyed by its
qualified name (``torch.add``, ``torch.Tensor.add``, ``torch.nn.functional.relu``,
``torch.nn.LSTM``, ``torch.FloatTensor``).  Inference, aliasing, ``.data`` uses and rules
ask the queries below; none keeps a list of torch names of its own.

The rows are plain text (cheap to import: every worker loads them), read on the first
query; ``fact(name)`` gives one as a ``Fact``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Union

from torchlint.analysis.torch_facts_table import ROWS, TORCH_VERSION

__all__ = ["TORCH_VERSION", "Fact", "FIELDS", "Argument", "Dropout", "fact", "kept_outputs", "method", "methods",
           "properties",
           "functions", "types", "module_classes", "dropout", "dropouts", "mode_switched_dropouts"]


@dataclass(frozen=True)
class Fact:
    kind: str  # method | property | function | module_class | type
    returns: str  # tensor | tuple (of tensors) | depends (on arguments: max(dim=)) | other | ndarray | unknown
    zero_dim: str  # never | no_dim (0-dim when given no dim) | always | keeps (0-dim in, 0-dim out) | unknown
    # view (the result, or each tuple element, shares the input's storage) | maybe_view (a view
    # or a copy, depending on the input: reshape) | maybe_self (the input itself or a copy:
    # contiguous, to, float) | self (the in-place result) | copy | none (no tensor result)
    aliasing: str  # for a module class: maybe_self, view (its call may give its input, a view of it) or none
    in_place: str  # none | data (writes the elements) | metadata (shape, flags, storage pointer only)
    differentiable: Optional[bool]  # the result requires grad when an input does (None: unknown)
    tensor_only: bool  # no numpy array, memoryview, nn.Module, Optimizer or builtin has it
    loss: bool  # an nn loss class, or a functional with reduction=
    factory: bool  # makes a new tensor (a leaf unless requires_grad=True)
    legacy_dtype: Optional[str]  # torch.FloatTensor -> "float32"
    # What autograd saves for backward (scripts/gen_torch_facts.py, DEFAULTS' comment): with a
    # tensor argument, "o" the result, "i" an input requiring grad, "c" one that does not;
    # with none, "O" and "I"; "n" none of these; None: not probed. For a tuple result, digits:
    # the positions of its tensors that are kept (read them with ``kept_outputs``).
    saves: Optional[str]
    # What an integer tensor gives (scripts/gen_torch_facts.py, DEFAULTS' comment): "keeps" its dtype,
    # "int64" whatever the input, "indices" (tuples ending with int64 indices), None unknown.
    integer: Optional[str]
    parameters: Optional[bool]  # a module class with parameters of its own (None: not built, or not a module)
    # A function that zeroes elements at random (scripts/gen_torch_facts.py, DEFAULTS' comment):
    # "<rate>[,<switch>]", each "<name>@<position>[=<default>]"; read it with ``dropout(name)``.
    dropout: Optional[str]


_Allowed = Union[str, bool, None, frozenset, set, tuple]
FIELDS = tuple(Fact.__dataclass_fields__)
_VALUES = {"1": True, "0": False, "-": None}


@lru_cache(maxsize=None)
def _rows() -> tuple:
    rows = []
    for line in ROWS.splitlines()[1:]:
        cells = line.split()
        rows.append((cells[0], *cells[1:6], *(_VALUES[c] for c in cells[6:10]),
                     *(_VALUES.get(c, c) for c in cells[10:13]), _VALUES[cells[13]], _VALUES.get(cells[14], cells[14])))
    return tuple(rows)


@lru_cache(maxsize=None)
def _index() -> dict:
    return {row[0]: row for row in _rows()}


@lru_cache(maxsize=None)
def fact(name: str) -> Optional[Fact]:
    """The facts of the qualified name ``name`` (``torch.Tensor.view``), or None."""
    row = _index().get(name)
    return Fact(*row[1:]) if row is not None else None


def kept_outputs(found: Optional[Fact]) -> frozenset:
    """The positions of the tensors of its tuple result that the op ``found`` saves for
    backward (``torch.linalg.eigh``: 0 and 1; ``torch.sort``: 1, the indices); empty when it
    returns no tuple or saves none of it."""
    if found is None or not found.saves:
        return frozenset()
    return frozenset(int(letter) for letter in found.saves if letter.isdigit())


def method(name: str) -> Optional[Fact]:
    """The facts of the tensor method or property ``name`` (``view``, ``T``)."""
    return fact("torch.Tensor." + name)


@lru_cache(maxsize=None)
def _members(kind: str, prefix: str) -> tuple:
    """(short name, row) of every ``kind`` row directly under ``prefix``."""
    start = len(prefix)
    return tuple((row[0][start:], row) for row in _rows()
                 if row[1] == kind and row[0].startswith(prefix) and "." not in row[0][start:])


def _select(kind: str, prefix: str, where: dict) -> frozenset:
    tests = []
    for field, allowed in where.items():
        values = allowed if isinstance(allowed, (set, frozenset, tuple)) else (allowed,)
        tests.append((FIELDS.index(field) + 1, values))
    return frozenset(name for name, row in _members(kind, prefix)
                     if all(row[position] in values for position, values in tests))


def methods(**where: _Allowed) -> frozenset:
    """Names of tensor methods whose fields have the given values (a set: any of them):
    ``methods(aliasing={"view", "maybe_view"})``."""
    return _select("method", "torch.Tensor.", where)


def properties(**where: _Allowed) -> frozenset:
    """Names of tensor properties (``T``, ``data``, ``shape``) whose fields have the given values."""
    return _select("property", "torch.Tensor.", where)


def functions(module: str = "torch", **where: _Allowed) -> frozenset:
    """Names of the functions of ``module`` (``torch``, ``torch.nn.functional``...) whose fields
    have the given values."""
    return _select("function", module + ".", where)


def types(**where: _Allowed) -> frozenset:
    """Names of the legacy tensor types (``FloatTensor``, ``Tensor``) whose fields have the given values."""
    return _select("type", "torch.", where)


def module_classes(**where: _Allowed) -> frozenset:
    """Names of ``torch.nn`` module classes whose fields have the given values."""
    return _select("module_class", "torch.nn.", where)


@dataclass(frozen=True)
class Argument:
    """A parameter of a torch function: its name, its index among the positional parameters
    (None: keyword-only) and its default as the table writes it (``"0.5"``, ``"1"`` for True;
    None: it must be given)."""

    name: str
    position: Optional[int]
    default: Optional[str]


@dataclass(frozen=True)
class Dropout:
    """A function that zeroes elements at random: ``rate`` gives the probability, ``switch``
    (``training`` of ``F.dropout``, ``train`` of ``torch.dropout``) turns it on; a function
    without a switch (``F.scaled_dot_product_attention``'s ``dropout_p``) drops whenever its rate
    is above 0, whatever the module's mode."""

    rate: Argument
    switch: Optional[Argument]


def _argument(cell: str) -> Argument:
    head, _, default = cell.partition("=")
    name, _, position = head.partition("@")
    return Argument(name, None if position == "k" else int(position), default if default else None)


@lru_cache(maxsize=None)
def dropout(name: str) -> Optional[Dropout]:
    """How the function ``name`` (``torch.nn.functional.dropout``) drops at random, or None."""
    row = fact(name)
    if row is None or row.dropout is None:
        return None
    cells = row.dropout.split(",")
    return Dropout(_argument(cells[0]), _argument(cells[1]) if len(cells) > 1 else None)


@lru_cache(maxsize=None)
def dropouts() -> frozenset:
    """The qualified names of the functions that zero elements at random (``dropout``)."""
    return frozenset(row[0] for row in _rows() if row[-1] is not None)


@lru_cache(maxsize=None)
def mode_switched_dropouts() -> frozenset:
    """The dropouts a module's mode switches: those whose switch is ``training`` (a module's
    ``F.dropout(x, p, training=self.training)``)."""
    return frozenset(name for name in dropouts()
                     if (switch := dropout(name).switch) is not None and switch.name == "training"
                     and switch.position is not None)
