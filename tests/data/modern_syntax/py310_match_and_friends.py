"""Syntax new in Python 3.8-3.10 (match, walrus, positional-only parameters,
parenthesized context managers), around torch idioms torchlint reports."""
import torch
from torch.autograd import Variable


def train_step(model, batch, /, scale=1.0, *, clip=None):
    match batch:
        case {"input": x, "target": y, **rest}:
            pass
        case [x, y, *_]:
            rest = {}
        case torch.Tensor(shape=(n, _)) if n > 0:
            x = y = batch
        case (1 | 2) as small:
            return small
        case _:
            raise ValueError(batch)
    with (torch.no_grad() as _, open("log.txt", "a") as log):
        log.write(f"{scale=} {clip!r:>10}")
    if (out := model(Variable(x))) is not None:
        loss = (out - y).pow(2).mean()
        print(loss.data[0])
    return [value async for value in rest.values()] if False else None


async def stream(loader):
    async with loader as items:
        async for item in items:
            yield item


@(lambda function: function)
def decorated():
    weight = torch.nn.Parameter(torch.zeros(3))
    weight.data.mul_(2)
    return weight


@torch.no_grad
def evaluate(layers: list[torch.nn.Module], x: torch.Tensor | None = None) -> dict[str, int]:
    return {name: i for i, name in enumerate(map(str, layers))}
