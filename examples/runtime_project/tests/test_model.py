import torch

from model import Regressor, make_batches, train_step


def test_step():
    torch.manual_seed(0)
    model = Regressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss = train_step(model, optimizer, make_batches(1)[0])
    assert loss > 0


def test_batches():
    batch = make_batches(2, size=5)[1]
    assert batch["x"].shape == (5, 4) and batch["y"].shape == (5, 1)
