# Supervised fine-tuning recipe: train() loops over batches and calls train_step(), which runs
# forward_backward() and steps the optimizer and LR scheduler containers.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CROSS_ENTROPY_IGNORE_IDX = -100


class OptimizersContainer:
    def __init__(self, model_parts, lr):
        self.optimizers = [torch.optim.AdamW(m.parameters(), lr=lr) for m in model_parts]

    def step(self):
        for opt in self.optimizers:
            opt.step()

    def zero_grad(self):
        for opt in self.optimizers:
            opt.zero_grad()


class LRSchedulersContainer:
    def __init__(self, optimizers, warmup_steps):
        self.schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lambda s: min(1.0, (s + 1) / warmup_steps))
                           for o in optimizers.optimizers]

    def step(self):
        for s in self.schedulers:
            s.step()


class TinyDecoder(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.block = nn.Sequential(nn.Linear(dim, 64), nn.GELU(), nn.Linear(64, dim))
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.tok(tokens)
        return self.out(h + self.block(h))


class ForgeSFTRecipe:
    def __init__(self, num_training_steps=6):
        self.model_parts = [TinyDecoder()]
        self.optimizers = OptimizersContainer(self.model_parts, lr=2e-5)
        self.lr_schedulers = LRSchedulersContainer(self.optimizers, warmup_steps=2)
        self.num_training_steps = num_training_steps
        self.current_step = 0
        self.train_dataloader = [self.make_batch() for _ in range(num_training_steps)]

    @staticmethod
    def make_batch():
        tokens = torch.randint(0, 64, (4, 16))
        labels = tokens.roll(-1, dims=1)
        labels[:, -1] = CROSS_ENTROPY_IGNORE_IDX
        return {"tokens": tokens, "labels": labels}

    def loss_fn(self, pred, labels):
        return F.cross_entropy(pred.flatten(0, 1), labels.flatten(), ignore_index=CROSS_ENTROPY_IGNORE_IDX)

    def forward_backward(self, input_dict, labels, do_backward=True):
        inputs = input_dict["tokens"]
        pred = self.model_parts[0](inputs)
        loss = self.loss_fn(pred, labels)
        del pred
        if do_backward:
            loss.backward()
        return loss

    def train_step(self, batch) -> None:
        labels = batch.pop("labels")
        loss = self.forward_backward(batch, labels)
        print(f"{self.current_step}|Loss: {loss.item():.4f}")

        self.optimizers.step()
        self.lr_schedulers.step()

    def train(self) -> None:
        dataloader = iter(self.train_dataloader)
        self.optimizers.zero_grad()
        while self.current_step < self.num_training_steps:
            batch = next(dataloader)
            self.train_step(batch)
            self.current_step += 1


recipe = ForgeSFTRecipe()
recipe.train()

# -- corpus check --
opt = recipe.optimizers.optimizers[0]
weight = recipe.model_parts[0].out.weight
seen = []
opt.register_step_pre_hook(lambda optimizer, args, kwargs: seen.append(weight.grad.clone()))
for group in opt.param_groups:
    group["lr"] = 0.0
batch = ForgeSFTRecipe.make_batch()
for _ in range(2):
    recipe.train_step(dict(batch))
if not torch.allclose(seen[0], seen[1]):
    print("BUG: the optimizer stepped on gradients summed over earlier steps: they are never zeroed")
