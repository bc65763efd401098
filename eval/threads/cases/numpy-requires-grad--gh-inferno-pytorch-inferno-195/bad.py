# A VAE trained through a small Trainer with a tensorboard-style logger callback that logs the
# loss every iteration and, every iteration too, the input and predicted image batches.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.enc = nn.Linear(64, 2 * z_dim)
        self.dec = nn.Linear(z_dim, 64)

    def forward(self, x):
        mu, logvar = self.enc(x.flatten(1)).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        return torch.sigmoid(self.dec(z)).view_as(x), mu, logvar

    def loss_function(self):
        def criterion(output, target):
            recon, mu, logvar = output
            kld = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
            return F.binary_cross_entropy(recon, target) + kld
        return criterion


class TensorboardLogger:
    def __init__(self, log_scalars_every=1, log_images_every=1):
        self.log_scalars_every, self.log_images_every = log_scalars_every, log_images_every
        self.written = []

    def extract_images_from_batch(self, batch):
        batch = batch.float().numpy()
        batch = (batch - batch.min()) / max(batch.max() - batch.min(), 1e-8)
        return [image for image in batch]

    def end_of_training_iteration(self, trainer):
        if trainer.iteration_count % self.log_scalars_every == 0:
            self.written.append(("training_loss", trainer.last_loss.item()))
        if trainer.iteration_count % self.log_images_every == 0:
            for name in ("training_inputs", "training_prediction"):
                images = self.extract_images_from_batch(trainer.states[name])
                self.written.append((name, len(images)))


class Trainer:
    def __init__(self, model):
        self.model, self.logger, self.iteration_count, self.states = model, None, 0, {}

    def build_criterion(self, criterion):
        self.criterion = criterion
        return self

    def build_optimizer(self, name, **kwargs):
        self.optimizer = getattr(torch.optim, name)(self.model.parameters(), **kwargs)
        return self

    def build_logger(self, logger):
        self.logger = logger
        return self

    def fit(self, loader, epochs):
        for _ in range(epochs):
            for x in loader:
                output = self.model(x)
                loss = self.criterion(output, x)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.iteration_count += 1
                self.last_loss = loss
                self.states = {"training_inputs": x, "training_prediction": output[0]}
                if self.logger is not None:
                    self.logger.end_of_training_iteration(self)


vae = VAE()
loader = [torch.rand(8, 1, 8, 8) for _ in range(3)]
trainer = Trainer(vae)
trainer.build_criterion(vae.loss_function())
trainer.build_optimizer('Adam', lr=0.001)
trainer.build_logger(TensorboardLogger(log_scalars_every=1, log_images_every=1))
trainer.fit(loader, epochs=2)
print(trainer.logger.written[-3:])
