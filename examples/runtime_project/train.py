"""Train the regressor on synthetic data: python train.py --epochs 3"""
import argparse

import torch

from model import Regressor, make_batches, train_step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = Regressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    batches = make_batches(8)
    for epoch in range(args.epochs):
        losses = [train_step(model, optimizer, batch) for batch in batches]
        print(f"epoch {epoch}: loss {sum(losses) / len(losses):.4f}")


if __name__ == "__main__":
    main()
