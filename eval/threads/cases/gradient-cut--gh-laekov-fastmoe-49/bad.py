# Megatron-style MoE training step that adds a load-balance loss collected from every
# layer's gate; the per-layer balance losses are combined with torch.tensor(loss_list).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NaiveGate(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.gate = nn.Linear(d_model, num_expert)
        self.loss = None

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)
        top1 = probs.argmax(dim=-1)
        # switch-style balance loss: routed fraction times mean probability per expert
        frac = F.one_hot(top1, probs.size(-1)).float().mean(0)
        self.loss = (frac * probs.mean(0)).sum() * probs.size(-1)
        return top1

    def get_loss(self, clear=True):
        loss = self.loss
        if clear:
            self.loss = None
        return loss


class MoEMLP(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.gate = NaiveGate(d_model, num_expert)
        self.experts = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(num_expert))

    def forward(self, x):
        top1 = self.gate(x)
        out = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            mask = top1 == i
            if mask.any():
                out[mask] = expert(x[mask])
        return out


class Layer(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.mlp = MoEMLP(d_model, num_expert)

    def forward(self, x):
        return x + self.mlp(x)


class Model(nn.Module):
    def __init__(self, d_model=16, num_expert=4, num_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(Layer(d_model, num_expert) for _ in range(num_layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def forward_step(model, batch):
    x, y = batch
    return F.mse_loss(model(x), y)


def forward_step_with_balance_loss(model, batch, balance_loss_weight=0.1):
    loss = forward_step(model, batch)
    loss_list = [layer.mlp.gate.get_loss(clear=False) for layer in model.layers]
    bal_loss = torch.tensor(loss_list).mean() * balance_loss_weight
    loss = loss + bal_loss
    return loss, bal_loss


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(32, 16), torch.randn(32, 16)) for _ in range(3)]

for step, batch in enumerate(batches):
    optimizer.zero_grad()
    loss, bal_loss = forward_step_with_balance_loss(model, batch)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f} balance {bal_loss.item():.4f}")

# -- corpus check --
gate_weight = model.layers[0].mlp.gate.gate.weight
if gate_weight.grad is None:
    print("BUG: the gate never received a gradient from the balance loss")
