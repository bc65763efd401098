"""Syntax new in Python 3.13: defaults of type parameters (PEP 696)."""
import torch

type Maybe[T = torch.Tensor] = T | None


def pad[T = float, *Ts = *tuple[int, ...], **P = [int, str]](value: T) -> T:
    return value


class Cache[K = str, V = torch.Tensor]:
    def get(self, key: K) -> V:
        v = torch.autograd.Variable(torch.zeros(2), volatile=True)
        return v
