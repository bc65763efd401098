# MatGL's example notebook "Training a M3GNet Potential with PyTorch Lightning", with the person's
# added trainer.test(...): the Potential predicts the total energy and takes the forces as minus
# its gradient with respect to the atom positions (torch.autograd.grad), PotentialLightningModule's
# steps turn gradients on with torch.set_grad_enabled(True) and fit the energies and forces. Small
# stand-ins for M3GNet (a per-atom MLP), for the DGL graphs (position tensors) and for pl.Trainer
# (validation under no_grad, test under inference mode unless inference_mode=False, as Lightning
# 2.0 does); random structures stand in for the Materials Project data.
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad

torch.manual_seed(0)


class M3GNet(nn.Module):
    def __init__(self, element_types=("Mo", "S"), is_intensive=False):
        super().__init__()
        self.atom_mlp = nn.Sequential(nn.Linear(3, 16), nn.SiLU(), nn.Linear(16, 1))

    def forward(self, pos):
        return self.atom_mlp(pos).sum(dim=(-2, -1))


class Potential(nn.Module):
    def __init__(self, model, calc_forces=True):
        super().__init__()
        self.model = model
        self.calc_forces = calc_forces

    def forward(self, pos):
        if self.calc_forces:
            pos.requires_grad_(True)
        total_energies = self.model(pos)
        forces = torch.zeros(1)
        if self.calc_forces:
            grads = grad(total_energies, [pos], grad_outputs=torch.ones_like(total_energies),
                         create_graph=True, retain_graph=True)
            forces = -grads[0]
        return total_energies, forces


class PotentialLightningModule(nn.Module):
    def __init__(self, model, force_weight=1.0, lr=1e-3):
        super().__init__()
        self.model = Potential(model=model)
        self.force_weight = force_weight
        self.lr = lr

    def training_step(self, batch, batch_idx):
        torch.set_grad_enabled(True)
        return self.step(batch)

    def validation_step(self, batch, batch_idx):
        torch.set_grad_enabled(True)
        return self.step(batch)

    def test_step(self, batch, batch_idx):
        torch.set_grad_enabled(True)
        return self.step(batch)

    def step(self, batch):
        pos, energies, forces = batch
        e_pred, f_pred = self.model(pos)
        return F.mse_loss(e_pred, energies) + self.force_weight * F.mse_loss(f_pred, forces)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class Trainer:
    def __init__(self, max_epochs=1, accelerator="cpu", logger=None, inference_mode=True):
        self.max_epochs = max_epochs
        self.inference_mode = inference_mode

    def fit(self, model, train_dataloaders, val_dataloaders):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            model.train()
            for i, batch in enumerate(train_dataloaders):
                loss = model.training_step(batch, i)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                val_loss = sum(model.validation_step(batch, i).item() for i, batch in enumerate(val_dataloaders))
            print('epoch', epoch, 'val_loss', round(val_loss, 4))

    def test(self, model, dataloaders):
        model.eval()
        context = torch.inference_mode() if self.inference_mode else torch.no_grad()
        with context:
            losses = [model.test_step(batch, i).item() for i, batch in enumerate(dataloaders)]
        print('test_loss', round(sum(losses) / len(losses), 4))


def make_loader(n_batches, n_structures=4, n_atoms=6):
    return [(torch.randn(n_structures, n_atoms, 3), torch.randn(n_structures), torch.randn(n_structures, n_atoms, 3))
            for _ in range(n_batches)]


train_loader, val_loader, test_loader = make_loader(3), make_loader(1), make_loader(1)

model = M3GNet(element_types=("Mo", "S"), is_intensive=False)
lit_module = PotentialLightningModule(model=model)

# If you wish to disable GPU or MPS (M1 mac) training, use the accelerator="cpu" kwarg.
logger = None
trainer = Trainer(max_epochs=2, accelerator="cpu", logger=logger)
trainer.fit(model=lit_module, train_dataloaders=train_loader, val_dataloaders=val_loader)

trainer.test(model=lit_module, dataloaders=test_loader)
