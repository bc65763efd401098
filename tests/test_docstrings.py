"""What a docstring declares about a parameter: the styles real code uses, and what declares nothing."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.analysis.docstrings import declared

DASH_LIST = """
    Args
    ----
    - x: a 4D Tensor of shape (B, H, W, C). The minibatch
      of images.
    - l: a 2D Tensor of shape (B, 2).
    - size: a scalar defining the size of the extracted patch.
    - boxes: list of tensors.
    - y: Tensor or ndarray
    - crop: 3D Tensor of shape (B, C, H, W)
"""
GOOGLE = """Run it.

Args:
    input_ids (`torch.LongTensor` of shape `(batch_size, sequence_length)`):
        Indices of input sequence tokens.
    mask (torch.Tensor, optional): the mask, of shape (B, T).
    n (int): how many.
    w (Tensor): weights of shape [C]
    v: a scalar tensor
    hidden (tuple): the state
    step: the step to take: any object
"""
NUMPY = """
Parameters
----------
points : torch.Tensor
    of shape (N, 3)
k : int
rest : Tensor of shape (..., 3)
"""
SPHINX = """:param torch.Tensor y: the values
:param k: a thing
:type k: float
:param x: input tensor of shape (a, b, c)
"""

CASES = [
    (DASH_LIST, "x", (True, 4)),
    (DASH_LIST, "l", (True, 2)),
    (DASH_LIST, "size", (False, None)),
    (DASH_LIST, "boxes", None),
    (DASH_LIST, "y", None),
    (DASH_LIST, "crop", None),  # 3D, yet four sizes: the docstring contradicts itself
    (DASH_LIST, "absent", None),
    (GOOGLE, "input_ids", (True, 2)),
    (GOOGLE, "mask", (True, 2)),
    (GOOGLE, "n", (False, None)),
    (GOOGLE, "w", (True, 1)),
    (GOOGLE, "v", (True, 0)),
    (GOOGLE, "hidden", None),
    (GOOGLE, "step", None),
    (NUMPY, "points", (True, 2)),
    (NUMPY, "k", (False, None)),
    (NUMPY, "rest", (True, None)),
    (SPHINX, "y", (True, None)),
    (SPHINX, "k", (False, None)),
    (SPHINX, "x", None),  # "input tensor": not the leading phrase of a type
]


@pytest.mark.parametrize("docstring, name, expected", CASES, ids=[f"{name}-{i}" for i, (_, name, _) in enumerate(CASES)])
def test_declared(docstring, name, expected) -> None:
    found = declared(textwrap.dedent(docstring), name)
    assert (None if found is None else (found.is_tensor, found.dims)) == expected


def test_a_name_in_prose_is_not_an_entry() -> None:
    assert declared("Note that x: a 2D Tensor is expected here.", "x") is None
