# torch-sim's FairChemModel wrapper relaxing structures: forward(state) splits the batched SimState
# per system, turns each system's positions, atomic numbers, pbc and cell into numpy to build an
# ASE Atoms object and then fairchem AtomicData, batches them and runs the predictor, which
# returns energies and autograd forces; a relaxation loop moves the positions along the forces.
# A small pair potential stands in for the UMA predictor, a dict for ase.Atoms, and a plain
# steepest-descent step for ts.optimize's optimizer.
from dataclasses import dataclass

import numpy as np
import torch

torch.manual_seed(0)


@dataclass
class SimState:
    positions: torch.Tensor
    atomic_numbers: torch.Tensor
    system_idx: torch.Tensor
    row_vector_cell: torch.Tensor
    pbc: torch.Tensor
    charge: torch.Tensor
    spin: torch.Tensor


def atoms_to_atomic_data(atoms):  # AtomicData.from_ase(atoms, r_data_keys=["charge", "spin"])
    return {"pos": torch.tensor(atoms["positions"], dtype=torch.float32),
            "atomic_numbers": torch.tensor(atoms["numbers"]), "cell": torch.tensor(atoms["cell"])}


def atomicdata_list_to_batch(atomic_data_list):
    return {"pos": torch.cat([d["pos"] for d in atomic_data_list]),
            "batch": torch.cat([torch.full((len(d["pos"]),), i) for i, d in enumerate(atomic_data_list)])}


class PairPotential(torch.nn.Module):  # stands in for the UMA model behind the predict unit
    def __init__(self):
        super().__init__()
        self.sigma = torch.nn.Parameter(torch.tensor(1.0))
        self.epsilon = torch.nn.Parameter(torch.tensor(0.5))

    def predict(self, batch):
        pos = batch["pos"].requires_grad_(True)
        energies = []
        for b in batch["batch"].unique():
            p = pos[batch["batch"] == b]
            d = torch.cdist(p, p) + torch.eye(len(p))
            sr6 = (self.sigma / d) ** 6
            energies.append((4 * self.epsilon * (sr6 ** 2 - sr6) * (1 - torch.eye(len(p)))).sum() / 2)
        energy = torch.stack(energies)
        forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
        return {"energy": energy, "forces": forces}


class FairChemModel:
    def __init__(self, predictor, device=torch.device("cpu"), dtype=torch.float32):
        self.predictor = predictor
        self._device = device
        self._dtype = dtype

    def forward(self, state: SimState) -> dict:
        sim_state = state
        n_atoms = torch.bincount(sim_state.system_idx)
        atomic_data_list = []
        for idx, (n, c) in enumerate(zip(n_atoms, torch.cumsum(n_atoms, dim=0), strict=False)):
            positions = sim_state.positions[c - n : c].detach().cpu().numpy()
            atomic_nums = sim_state.atomic_numbers[c - n : c].detach().cpu().numpy()
            pbc = sim_state.pbc.detach().cpu().numpy()
            cell = sim_state.row_vector_cell[idx].detach().cpu().numpy() if sim_state.row_vector_cell is not None else None
            atoms = {"numbers": atomic_nums, "positions": positions, "cell": cell,
                     "pbc": pbc if cell is not None else False,
                     "info": {"charge": sim_state.charge[idx].item(), "spin": sim_state.spin[idx].item()}}
            atomic_data_list.append(atoms_to_atomic_data(atoms))
        batch = atomicdata_list_to_batch(atomic_data_list)
        predictions = self.predictor.predict(batch)
        results = {"energy": predictions["energy"].to(dtype=self._dtype),
                   "forces": predictions["forces"].to(dtype=self._dtype)}
        return results

    __call__ = forward


def relax(model, state, n_steps=5, step_size=0.01):  # ts.optimize(system=state, model=model, optimizer=...)
    for step in range(n_steps):
        results = model(state)
        state.positions = state.positions + step_size * results["forces"]
        print("step", step, "energy", [round(e, 4) for e in results["energy"].tolist()])
    return state


grid = torch.stack(torch.meshgrid(torch.arange(2.0), torch.arange(2.0), torch.arange(2.0), indexing="ij"), -1)
positions = torch.cat([grid.reshape(-1, 3) * 1.15, grid.reshape(-1, 3) * 1.2 + 0.05])
state = SimState(positions=positions, atomic_numbers=torch.full((16,), 18), system_idx=torch.repeat_interleave(torch.arange(2), 8),
                 row_vector_cell=torch.eye(3).repeat(2, 1, 1) * 5.0, pbc=torch.tensor([False, False, False]),
                 charge=torch.zeros(2), spin=torch.zeros(2))
model = FairChemModel(PairPotential())
relax(model, state)
