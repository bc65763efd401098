# A training "unit" driven by a small loop, logging each step's loss to an in-memory logger; the
# logger normalizes every logged value with a scalar_to_float() utility.
from typing import Dict, List, Tuple, Union

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

Scalar = Union[torch.Tensor, np.ndarray, int, float]


def scalar_to_float(scalar: Scalar) -> float:
    if isinstance(scalar, (int, float)):
        return float(scalar)
    if isinstance(scalar, torch.Tensor):
        if scalar.numel() != 1:
            raise ValueError(f"Scalar tensor must contain a single item, {scalar.numel()} given.")
        scalar = scalar.detach().cpu().numpy()
    if isinstance(scalar, np.ndarray):
        if scalar.size != 1:
            raise ValueError(f"Scalar ndarray must contain a single item, {scalar.size} given.")
        return float(scalar.reshape(-1)[0])
    raise TypeError(f"Unsupported scalar type {type(scalar)}")


class InMemoryLogger:
    def __init__(self) -> None:
        self._log: Dict[int, Dict[str, float]] = {}

    def log(self, name: str, data: Scalar, step: int) -> None:
        self._log.setdefault(step, {})[name] = scalar_to_float(data)

    @property
    def log_buffer(self) -> Dict[int, Dict[str, float]]:
        return self._log


class MyTrainUnit:
    def __init__(self, module: nn.Module, logger: InMemoryLogger) -> None:
        self.module = module
        self.optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        self.loss_fn = nn.MSELoss()
        self.logger = logger
        self.step = 0

    def train_step(self, batch: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        inputs, targets = batch
        loss = self.loss_fn(self.module(inputs), targets)
        self.logger.log("loss", loss, self.step)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.step += 1
        return loss


def train(unit: MyTrainUnit, dataloader: List[Tuple[torch.Tensor, torch.Tensor]], max_epochs: int) -> None:
    for _ in range(max_epochs):
        for batch in dataloader:
            unit.train_step(batch)


logger = InMemoryLogger()
unit = MyTrainUnit(nn.Linear(4, 1), logger)
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(3)]
train(unit, data, max_epochs=2)
print(logger.log_buffer[5])
