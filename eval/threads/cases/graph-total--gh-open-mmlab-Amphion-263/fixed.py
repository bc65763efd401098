# A TTS trainer base class (VALL-E recipe): _train_epoch runs the batches through an accelerate-style
# Accelerator (gradient accumulation context, backward, logging), keeps an EMA of loss.item() for
# the log, and sums the step losses into epoch_sum_loss, which it returns averaged; train_loop
# calls it every epoch. The Accelerator class is a stand-in for accelerate's; random token batches
# stand in for LibriTTS.
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Accelerator:
    def __init__(self, gradient_accumulation_steps=1):
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.sync_gradients = True
        self.is_main_process = True
        self.logged = []

    @contextlib.contextmanager
    def accumulate(self, model):
        yield

    def backward(self, loss):
        (loss / self.gradient_accumulation_steps).backward()

    def clip_grad_norm_(self, params, max_norm):
        torch.nn.utils.clip_grad_norm_(params, max_norm)

    def log(self, values, step=None):
        self.logged.append(step)


class ValleAR(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.decoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True), 2)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        logits = self.head(self.decoder(self.emb(tokens[:, :-1])))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))


class BaseTrainer:
    def __init__(self, model, train_dataloader, epochs=2, gradient_accumulation_step=1):
        self.model = model
        self.train_dataloader = train_dataloader
        self.accelerator = Accelerator(gradient_accumulation_step)
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.gradient_accumulation_step = gradient_accumulation_step
        self.max_epoch = epochs
        self.epoch = 0
        self.step = 0
        self.batch_count = 0
        self.epoch_losses = []

    def get_lr(self, step):
        return 1e-4 * min(1.0, (step + 1) / 10)

    def _forward_step(self, batch):
        return self.model(batch["tokens"])

    def _train_step(self, batch):
        return self._forward_step(batch)

    def _train_epoch(self):
        self.model.train()
        epoch_sum_loss: float = 0.0
        ema_loss = None
        for batch in self.train_dataloader:
            lr = self.get_lr(self.step)
            for param_group in self.optimizer.param_groups:
                param_group["lr"] = lr
            with self.accelerator.accumulate(self.model):
                loss = self._train_step(batch)
                self.current_loss = loss.item()
                ema_loss = 0.99 * ema_loss + 0.01 * self.current_loss if ema_loss is not None else self.current_loss
                self.accelerator.backward(loss)
                if self.accelerator.sync_gradients:
                    self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.batch_count += 1
            if self.accelerator.sync_gradients:
                self.accelerator.log({"Step/Train Loss": loss, "Step/Learning Rate": lr}, step=self.step)
                epoch_sum_loss += loss.item()
                self.step += 1
        return epoch_sum_loss / len(self.train_dataloader) * self.gradient_accumulation_step

    def train_loop(self):
        while self.epoch < self.max_epoch:
            train_total_loss = self._train_epoch()
            self.epoch_losses.append(train_total_loss)
            print(f"  |- Train/Loss: {float(train_total_loss):.6f}")
            self.epoch += 1


train_dataloader = [{"tokens": torch.randint(0, 64, (4, 20))} for _ in range(5)]
trainer = BaseTrainer(ValleAR(), train_dataloader)
trainer.train_loop()

# -- corpus check --
if any(torch.is_tensor(v) and v.grad_fn is not None for v in trainer.epoch_losses):
    print("BUG: epoch_sum_loss keeps the autograd graph of every step of the epoch")
