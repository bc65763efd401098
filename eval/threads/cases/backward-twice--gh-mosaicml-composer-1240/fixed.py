# A small trainer that supports models returning a tuple of losses: each loss of the tuple is
# scaled for the microbatch and then backpropagated on its own.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def ensure_tuple(x):
    return x if isinstance(x, tuple) else (x,)


class MultiHeadModel(nn.Module):
    """Returns (classification loss, auxiliary reconstruction loss) from one forward pass."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, 4)
        self.rec_head = nn.Linear(32, 16)

    def loss(self, batch):
        x, y = batch
        h = self.trunk(x)
        return F.cross_entropy(self.cls_head(h), y), F.mse_loss(self.rec_head(h), x)


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def _train_microbatch(self, microbatch, current_batch_size):
        microbatch_num_samples = microbatch[0].shape[0]
        losses = self.model.loss(microbatch)
        total_loss = 0.0
        for loss in ensure_tuple(losses):
            loss = loss * (microbatch_num_samples / current_batch_size)
            total_loss += loss
        total_loss.backward()
        return total_loss.item()

    def fit(self, batches, microbatch_size=4):
        for step, (x, y) in enumerate(batches):
            self.optimizer.zero_grad()
            total = 0.0
            for mx, my in zip(x.split(microbatch_size), y.split(microbatch_size)):
                total += self._train_microbatch((mx, my), x.shape[0])
            self.optimizer.step()
            print(f"step {step}: loss {total:.4f}")


model = MultiHeadModel()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
trainer.fit([(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(3)])
