"""Syntax new in Python 3.12: PEP 695 type parameters and `type` statements,
PEP 701 f-strings (nested quotes, nested f-strings, comments, backslashes)."""
import torch

type Shape = tuple[int, ...]
type Pair[T] = tuple[T, T]
type Table[K: str, *Vs, **P] = dict[K, tuple[*Vs]]


def first[T: (torch.Tensor, float)](xs: list[T]) -> T:
    return xs[0]


class Buffer[T: torch.Tensor, *Shape, **Hooks](torch.nn.Module):
    def forward(self, x: T) -> T:
        y = self.weight.clone().detach()
        return y


stats = {"loss": 0.5, "acc": "0.9"}
line = f"{stats["loss"]:.3f} and {f"{stats["acc"]!s:>{6}}"} {'\n'.join(["a", "b"])}"
nested = f"{f"{f"{f"{1}"}"}"}"
spread = f"{
    stats["loss"]  # a comment inside the expression
    + 1
}"
weights = torch.Tensor(3)
print(f"{weights.data[0]}")
