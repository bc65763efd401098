# Diffusion-based motion planner: train_epoch() collects each batch's loss dict (ego planning,
# neighbor prediction, turn indicator terms) and averages them per key at the end of the epoch.
import copy

import torch
from torch import nn

torch.manual_seed(0)
T = 8


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(T * 4 + 16 + 1, 64), nn.SiLU(), nn.Linear(64, 2 * T * 4))
        self.turn_head = nn.Linear(16, 3)

    def forward(self, context, noisy, t):
        out = self.net(torch.cat([noisy.flatten(1), context, t[:, None]], dim=1))
        return out.view(-1, 2, T, 4), self.turn_head(context)


class EMA:
    def __init__(self, model, decay=0.999):
        self.shadow = copy.deepcopy(model).requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for s, p in zip(self.shadow.parameters(), model.parameters()):
            s.mul_(self.decay).add_(p, alpha=1 - self.decay)


def diffusion_loss_func(model, inputs, futures):
    ego_future, neighbors_future = futures
    target = torch.stack([ego_future, neighbors_future], dim=1)
    t = torch.rand(target.size(0))
    noise = torch.randn_like(target)
    noisy = (1 - t)[:, None, None, None] * target + t[:, None, None, None] * noise
    pred, turn_logits = model(inputs["context"], noisy[:, 0], t)
    turn = nn.functional.cross_entropy(turn_logits, inputs["turn_indicator"])
    return {
        "ego_planning_loss": ((pred[:, 0] - target[:, 0]) ** 2).mean(),
        "neighbor_prediction_loss": ((pred[:, 1] - target[:, 1]) ** 2).mean(),
        "turn_indicator_loss": turn,
        "turn_indicator_accuracy": (turn_logits.argmax(-1) == inputs["turn_indicator"]).float().mean(),
    }


def get_epoch_mean_loss(epoch_loss):
    keys = epoch_loss[0].keys()
    return {key: sum(loss[key] for loss in epoch_loss) / len(epoch_loss) for key in keys}


def train_epoch(data_loader, model, optimizer, alpha_planning_loss, ema):
    epoch_loss = []
    model.train()
    for inputs in data_loader:
        ego_future = inputs["ego_agent_future"]
        neighbors_future = inputs["neighbor_agents_future"]
        optimizer.zero_grad()
        loss = diffusion_loss_func(model, inputs, (ego_future, neighbors_future))
        loss["loss"] = (
            loss["neighbor_prediction_loss"]
            + alpha_planning_loss * loss["ego_planning_loss"]
            + loss["turn_indicator_loss"]
        )
        loss["loss"].backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5)
        optimizer.step()
        ema.update(model)
        epoch_loss.append(loss)

    epoch_mean_loss = get_epoch_mean_loss(epoch_loss)
    print(f"{float(epoch_mean_loss['loss'])=:.4f}")
    return epoch_mean_loss, epoch_mean_loss["loss"]


data_loader = [{"context": torch.randn(4, 16), "turn_indicator": torch.randint(0, 3, (4,)),
                "ego_agent_future": torch.randn(4, T, 4), "neighbor_agents_future": torch.randn(4, T, 4)}
               for _ in range(6)]
model = Denoiser()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
ema = EMA(model)
history = [train_epoch(data_loader, model, optimizer, 1.0, ema) for _ in range(2)]

# -- corpus check --
if any(torch.is_tensor(v) and v.grad_fn is not None for mean_loss, _ in history for v in mean_loss.values()):
    print("BUG: the epoch loss list kept every batch's loss tensors and autograd graphs until the epoch mean")
