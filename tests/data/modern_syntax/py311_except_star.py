"""Syntax new in Python 3.11: except*, starred subscripts."""
import torch


def run(tensors: tuple[*tuple[torch.Tensor, ...]]):
    try:
        total = sum(t.sum() for t in tensors)
    except* ValueError as group:
        raise
    except* (TypeError, KeyError):
        pass
    else:
        x = torch.ones(3, requires_grad=True)
        x.data.add_(1)
    finally:
        pass
