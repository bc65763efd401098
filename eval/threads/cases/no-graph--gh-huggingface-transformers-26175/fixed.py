# transformers.optimization.Adafactor (after #23417 decorated step() with @torch.no_grad()), used
# outside the Trainer: the user's loop passes a closure that runs the forward, the loss and
# backward() to optimizer.step(closure), as torch optimizers allow. The optimizer below follows
# Adafactor's update (factored second moment for matrices, relative step size, update clipping).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Adafactor(torch.optim.Optimizer):
    def __init__(self, params, lr=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=-0.8,
                 weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False):
        defaults = dict(lr=lr, eps=eps, clip_threshold=clip_threshold, decay_rate=decay_rate,
                        weight_decay=weight_decay, scale_parameter=scale_parameter,
                        relative_step=relative_step, warmup_init=warmup_init)
        super().__init__(params, defaults)

    @staticmethod
    def _get_lr(param_group, param_state):
        rel_step_sz = param_group["lr"]
        if param_group["relative_step"]:
            min_step = 1e-6 * param_state["step"] if param_group["warmup_init"] else 1e-2
            rel_step_sz = min(min_step, 1.0 / math.sqrt(param_state["step"]))
        param_scale = 1.0
        if param_group["scale_parameter"]:
            param_scale = max(param_group["eps"][1], param_state["RMS"])
        return param_scale * rel_step_sz

    @staticmethod
    def _rms(tensor):
        return tensor.norm(2) / (tensor.numel() ** 0.5)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                factored = grad.dim() >= 2
                if len(state) == 0:
                    state["step"] = 0
                    if factored:
                        state["exp_avg_sq_row"] = torch.zeros(grad.shape[:-1])
                        state["exp_avg_sq_col"] = torch.zeros(grad.shape[:-2] + grad.shape[-1:])
                    else:
                        state["exp_avg_sq"] = torch.zeros_like(grad)
                    state["RMS"] = 0
                state["step"] += 1
                state["RMS"] = self._rms(p)
                lr = self._get_lr(group, state)
                beta2t = 1.0 - math.pow(state["step"], group["decay_rate"])
                update = grad ** 2 + group["eps"][0]
                if factored:
                    state["exp_avg_sq_row"].mul_(beta2t).add_(update.mean(dim=-1), alpha=1.0 - beta2t)
                    state["exp_avg_sq_col"].mul_(beta2t).add_(update.mean(dim=-2), alpha=1.0 - beta2t)
                    r_factor = (state["exp_avg_sq_row"] / state["exp_avg_sq_row"].mean(dim=-1, keepdim=True)).rsqrt_()
                    c_factor = state["exp_avg_sq_col"].rsqrt()
                    update = torch.mul(r_factor.unsqueeze(-1), c_factor.unsqueeze(-2)) * grad
                else:
                    state["exp_avg_sq"].mul_(beta2t).add_(update, alpha=1.0 - beta2t)
                    update = state["exp_avg_sq"].rsqrt().mul_(grad)
                update.div_((self._rms(update) / group["clip_threshold"]).clamp_(min=1.0))
                update.mul_(lr)
                p.add_(-update)
        return loss


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = Adafactor(model.parameters(), scale_parameter=True, relative_step=True, warmup_init=True, lr=None)
inputs, targets = torch.randn(64, 16), torch.randint(0, 4, (64,))

for step in range(3):
    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        return loss

    loss = optimizer.step(closure)
    print(step, loss.item())
