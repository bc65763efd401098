# Modyn's RHO-LOSS remote downsampler: during a trigger's training the trainer informs the
# downsampler of every batch (sample ids, model output, target); it keeps the reducible loss
# (per-sample training loss minus the irreducible loss from a holdout-trained IL model) in
# self.rho_loss, and select_points() keeps the samples with the largest values. Training runs on
# the trainer's device (a GPU in the report, the meta device stands in for it here); random
# features stand in for the dataset and a small linear model for the IL model loaded from storage.
from typing import Optional, Union

import torch

torch.manual_seed(0)


class IrreducibleLossProducer:
    def __init__(self, per_sample_loss, il_model, device):
        self.per_sample_loss_fct = per_sample_loss
        self.model = il_model.to(device)
        self.device = device

    @torch.no_grad()
    def get_irreducible_loss(self, sample_ids, forward_input, target):
        return self.per_sample_loss_fct(self.model(forward_input), target)


class RemoteRHOLossDownsampling:
    def __init__(self, batch_size: int, params_from_selector: dict, per_sample_loss, il_model, device: str) -> None:
        self.batch_size = batch_size
        self.downsampling_ratio = params_from_selector["downsampling_ratio"]
        self.per_sample_loss_fct = per_sample_loss
        self.irreducible_loss_producer = IrreducibleLossProducer(per_sample_loss, il_model, device)
        self.rho_loss: torch.Tensor = torch.tensor([])
        self.number_of_points_seen = 0

    def init_downsampler(self) -> None:
        self.index_sampleid_map: list[int] = []
        self.rho_loss = torch.tensor([])
        self.number_of_points_seen = 0

    def inform_samples(self, sample_ids: list[int], forward_input: Union[dict[str, torch.Tensor], torch.Tensor],
                       forward_output: torch.Tensor, target: torch.Tensor,
                       embedding: Optional[torch.Tensor] = None) -> None:
        training_loss = self.per_sample_loss_fct(forward_output, target).detach()
        self.index_sampleid_map += sample_ids
        irreducible_loss = self.irreducible_loss_producer.get_irreducible_loss(sample_ids, forward_input, target)
        self.rho_loss = torch.cat([self.rho_loss, training_loss - irreducible_loss]).to(training_loss.dtype)
        self.number_of_points_seen += forward_output.shape[0]

    def select_points(self) -> tuple[list[int], torch.Tensor]:
        target_size = max(int(self.downsampling_ratio * self.number_of_points_seen / 100), 1)
        selected_indices = torch.topk(self.rho_loss, target_size).indices
        selected_sample_ids = [self.index_sampleid_map[i] for i in sorted(selected_indices)]
        selected_weights = torch.ones(target_size)
        return selected_sample_ids, selected_weights


device = "meta"  # the trainer's "cuda:0"
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = torch.nn.CrossEntropyLoss()
downsampler = RemoteRHOLossDownsampling(8, {"downsampling_ratio": 50}, torch.nn.CrossEntropyLoss(reduction="none"),
                                        torch.nn.Linear(16, 4), device)

X, y = torch.randn(48, 16), torch.randint(0, 4, (48,))
for trigger in range(2):
    downsampler.init_downsampler()
    model.train()
    for start in range(0, 48, 8):
        sample_ids = list(range(start, start + 8))
        data, target = X[start:start + 8].to(device), y[start:start + 8].to(device)
        output = model(data)
        downsampler.inform_samples(sample_ids, data, output, target)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if device != "meta":  # the selected ids need the values, which the meta device does not hold
        selected_ids, weights = downsampler.select_points()
    print("trigger", trigger, "points seen", downsampler.number_of_points_seen)
