# Fine-tuning template (causal LM with accelerate + Ray Train): training_function builds the model,
# optimizer and linear warmup schedule, and per epoch keeps loss_sum = torch.tensor(0.0) on the
# accelerator's device, adds every step's loss to it, reports per-step metrics, and at the end of
# the epoch reports avg_train_loss_epoch = loss_sum.item() / (step + 1). Accelerator and
# train.report are stand-ins for accelerate's and Ray's; a tiny causal LM stands in for Llama-2 and
# random token blocks for the jsonl data.
import contextlib
import sys
import time
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)


class Accelerator:
    def __init__(self):
        self.device = torch.device("cpu")
        self.is_main_process = True

    @contextlib.contextmanager
    def accumulate(self, model):
        yield

    def backward(self, loss):
        loss.backward()

    def gather(self, t):
        return t

    def print(self, *args):
        print(*args)


class train:
    reported = []

    @staticmethod
    def report(metrics, checkpoint=None):
        train.reported.append(metrics)


class CausalLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        mask = nn.Transformer.generate_square_subsequent_mask(input_ids.size(1))
        logits = self.lm_head(self.block(self.embed(input_ids), src_mask=mask, is_causal=True))
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))
        return SimpleNamespace(loss=loss, logits=logits)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(step):
        if step < num_warmup_steps:
            return (step + 1) / num_warmup_steps
        return max(0.0, (num_training_steps - step) / max(1, num_training_steps - num_warmup_steps))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def training_function(kwargs: dict):
    config = kwargs["config"]
    accelerator = Accelerator()
    num_epochs = config["num_epochs"]
    batch_size = config["batch_size"]
    train_batches = [torch.randint(0, 64, (batch_size, 16)) for _ in range(config["train_ds_len"] // batch_size)]
    train_ds_len = len(train_batches) * batch_size

    model = CausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=2,
                                                   num_training_steps=num_epochs * len(train_batches))

    for epoch in range(num_epochs):
        fwd_time_sum, bwd_time_sum = 0, 0
        s_epoch = time.time()
        model.train()
        loss_sum = torch.tensor(0.0).to(accelerator.device)
        for step, tokens in enumerate(train_batches):
            batch = {"input_ids": tokens.to(accelerator.device), "labels": tokens.to(accelerator.device)}
            with accelerator.accumulate(model):
                s_fwd = time.time()
                outputs = model(**batch)
                loss = outputs.loss
                loss_sum += loss
                fwd_time = time.time() - s_fwd
                fwd_time_sum += fwd_time
                s_bwd = time.time()
                accelerator.backward(loss)
                bwd_time = time.time() - s_bwd
                bwd_time_sum += bwd_time
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            aggregated_loss = torch.mean(accelerator.gather(loss[None])).item()
            if step != (train_ds_len // batch_size - 1):
                train.report({"epoch": epoch, "iteration": step, "train_loss_batch": aggregated_loss,
                              "avg_train_loss_epoch": None, "fwd_time": fwd_time, "bwd_time": bwd_time,
                              "learning_rate": lr_scheduler.get_last_lr()[0]})
        e_epoch = time.time()
        metrics = {"epoch": epoch, "iteration": step, "train_loss_batch": aggregated_loss,
                   "avg_train_loss_epoch": loss_sum.item() / (step + 1), "num_iterations": step + 1,
                   "train_time_per_epoch": e_epoch - s_epoch, "avg_fwd_time_per_epoch": fwd_time_sum / (step + 1),
                   "avg_bwd_time_per_epoch": bwd_time_sum / (step + 1)}
        train.report(metrics)
        accelerator.print(f"epoch {epoch}: avg train loss {metrics['avg_train_loss_epoch']:.4f}")


config = {"lr": 5e-4, "num_epochs": 2, "batch_size": 4, "train_ds_len": 24}
training_function({"config": config})

# -- corpus check --
seen = {}


def _keep_locals(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "training_function":
        seen.update(frame.f_locals)


sys.setprofile(_keep_locals)
training_function({"config": dict(config, num_epochs=1)})
sys.setprofile(None)
if seen["loss_sum"].grad_fn is not None:
    print("BUG: loss_sum holds the autograd graph of every step of the epoch")
