"""What the inference knows about an expression, and why.

A ``Value`` says what kind of object an expression evaluates to (a tensor, a
torch.nn module, a numpy array...) and carries the evidence for it: a chain of
``Step``s from the expression back to the fact that settles it ("`w` = torch.randn(3)",
"`torch.randn(3)` returns a tensor").  Findings show that chain to the user.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from torchlint.syntax import cst


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"  # an nn.Module instance
    OPTIMIZER = "optimizer"
    PARAM_GROUP = "param group"  # one dict of optimizer.param_groups
    PACKED = "PackedSequence"
    NDARRAY = "numpy array"
    SEQUENCE = "sequence"  # an iterable whose elements are `element`
    TUPLE = "tuple"  # a fixed tuple of `items`
    DICT = "dict"  # a mapping whose values are `element`
    CLASS = "class"  # a class object defined in this file
    INSTANCE = "instance"  # an instance of a class defined in this file (not a module)
    FUNCTION = "function"  # a function defined in this file
    EXTERNAL = "external"  # something imported: a module, class or function, by `qualname`
    NONE = "None"
    OTHER = "other"  # known to be none of the above: numbers, strings, ...


@dataclass(frozen=True)
class Step:
    """One sentence of evidence; ``{code}`` in the text stands for the node's source."""

    node: cst.CSTNode
    text: str


@dataclass(frozen=True, eq=False)
class Value:
    kind: Kind
    why: tuple[Step, ...] = ()
    scalar: bool = False  # known to be 0-dimensional
    scalar_why: Optional[Step] = None
    # For tensors: at most this many dimensions, and the step that bounds them
    # (`x.t()` takes at most 2); indexing and iterating take one away each.
    dims_at_most: Optional[int] = None
    dims_why: Optional[Step] = None
    loss: bool = False  # a module or function whose result is a scalar loss
    element: Optional[Value] = None
    items: tuple[Optional[Value], ...] = ()
    cls: object = None  # ClassInfo for CLASS / INSTANCE / MODULE of a local class
    qualname: Optional[str] = None  # EXTERNAL, or the torch class of a MODULE
    # EXTERNAL without a qualname: the imported objects it is one of, when each is known
    # (`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`).
    alternatives: tuple[str, ...] = ()
    function: object = None  # FunctionInfo for FUNCTION
    # For tensors: is it part of an autograd graph (requires grad), and is it a leaf?
    # None means unknown.
    attached: Optional[bool] = None
    leaf: Optional[bool] = None

    def _but(self, **changes) -> "Value":
        """This value with ``changes``: what ``dataclasses.replace`` gives (every field is an
        argument of ``__init__``, which does nothing else), without going through ``__init__``
        field by field; the inference copies a value at every step of evidence it adds."""
        copied = object.__new__(self.__class__)
        copied.__dict__.update(self.__dict__, **changes)
        return copied

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    def because(self, step: Step) -> "Value":
        """This value, with ``step`` put in front of its evidence."""
        return self._but(why=(step,) + self.why)

    def in_graph(self, attached: Optional[bool], leaf: Optional[bool] = None) -> "Value":
        """This tensor with what is known of its place in the autograd graph."""
        if leaf is None and attached:
            leaf = False  # the result of an operation on a graph tensor
        return self._but(attached=attached, leaf=leaf)

    def with_scalar(self, step: Optional[Step]) -> "Value":
        return self._but(scalar=True, scalar_why=step or self.scalar_why)

    def without_scalar(self) -> "Value":
        if not self.scalar:
            return self
        return self._but(scalar=False, scalar_why=None, dims_at_most=None, dims_why=None)

    def with_dims_at_most(self, dims: int, step: Step) -> "Value":
        """This tensor, known to have at most ``dims`` dimensions; with none left, 0-dim."""
        if dims < 0:  # more indices than the bound allows: the bound says nothing here
            return self._but(dims_at_most=None, dims_why=None)
        if dims == 0:
            text = step.text + "; integer indices, iterations and reductions over one dimension took away each, leaving none"
            return self._but(scalar=True, scalar_why=Step(step.node, text), dims_at_most=0, dims_why=step)
        return self._but(dims_at_most=dims, dims_why=step)

    def keeping_dims_of(self, other: "Value") -> "Value":
        """This tensor, with as many dimensions as ``other`` (a shape-keeping operation of it)."""
        if other.dims_at_most is None or other.dims_why is None:
            return self
        return self.with_dims_at_most(other.dims_at_most, other.dims_why)

    def less_dims(self, removed: int) -> "Value":
        """A tensor taken out of this one by ``removed`` integer indices or iterations."""
        result = Value(Kind.TENSOR, self.why)
        if self.dims_at_most is None or self.dims_why is None:
            return result
        return result.with_dims_at_most(self.dims_at_most - removed, self.dims_why)


def tensor(step: Optional[Step] = None, *, scalar: bool = False, scalar_why: Optional[Step] = None) -> Value:
    return Value(Kind.TENSOR, (step,) if step else (), scalar=scalar, scalar_why=scalar_why)


def sequence_of(element: Optional[Value], why: tuple[Step, ...] = ()) -> Value:
    return Value(Kind.SEQUENCE, why, element=element)


OTHER = Value(Kind.OTHER)
NONE = Value(Kind.NONE)
NDARRAY = Value(Kind.NDARRAY)
