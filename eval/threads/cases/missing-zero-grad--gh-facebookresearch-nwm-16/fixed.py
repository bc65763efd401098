# Navigation world model (a conditional diffusion transformer over image latents): the training
# loop has a float32 path and a bfloat16 autocast + GradScaler path, chosen by --bfloat16.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class CDiT(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3 * dim + 1, 64), nn.GELU(), nn.Linear(64, dim))

    def forward(self, x, t, x_cond, rel_t):
        return self.net(torch.cat([x, x_cond, rel_t, t[:, None].float() / 1000], dim=1))


class GaussianDiffusion:
    num_timesteps = 1000

    def training_losses(self, model, x_start, t, model_kwargs):
        noise = torch.randn_like(x_start)
        alpha = 1 - t[:, None].float() / self.num_timesteps
        x_t = alpha.sqrt() * x_start + (1 - alpha).sqrt() * noise
        return {"loss": F.mse_loss(model(x_t, t, **model_kwargs).float(), noise, reduction="none").mean(dim=1)}


@torch.no_grad()
def update_ema(ema_model, model, decay=0.9999):
    for ema_p, p in zip(ema_model.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p.data, alpha=1 - decay)


def train(args, model, ema, opt, scaler, diffusion, loader, num_cond=1):
    bfloat_enable = bool(hasattr(args, 'bfloat16') and args.bfloat16)
    model.train()
    running_loss = 0
    for x, y, rel_t in loader:
        x, y, rel_t = x.to(device), y.to(device), rel_t.to(device)
        with torch.amp.autocast('cpu', enabled=bfloat_enable, dtype=torch.bfloat16):
            x_start = x[:, num_cond:].flatten(0, 1)
            x_cond = x[:, :num_cond].flatten(0, 1)
            t = torch.randint(0, diffusion.num_timesteps, (x_start.shape[0],), device=device)
            model_kwargs = dict(x_cond=x_cond + y, rel_t=rel_t)
            loss_dict = diffusion.training_losses(model, x_start, t, model_kwargs)
            loss = loss_dict["loss"].mean()

        opt.zero_grad()
        if not bfloat_enable:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            if args.grad_clip_val > 0:
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.grad_clip_val)
            scaler.step(opt)
            scaler.update()
        update_ema(ema, model)
        running_loss += loss.detach().item()
    return running_loss / len(loader)


parser = argparse.ArgumentParser()
parser.add_argument("--bfloat16", type=int, default=1)
parser.add_argument("--grad-clip-val", type=float, default=10.0)
args = parser.parse_args([])

model = CDiT().to(device)
ema = CDiT().to(device).requires_grad_(False)
ema.load_state_dict(model.state_dict())
opt = torch.optim.AdamW(model.parameters(), lr=8e-5, weight_decay=0)
scaler = torch.amp.GradScaler('cpu', enabled=bool(args.bfloat16))
diffusion = GaussianDiffusion()
loader = [(torch.randn(4, 2, 16), torch.randn(4, 16), torch.rand(4, 16)) for _ in range(5)]
for epoch in range(2):
    print("epoch", epoch, "loss", train(args, model, ema, opt, scaler, diffusion, loader))

# -- corpus check --
for group in opt.param_groups:
    group["lr"] = 0.0
grads = []
for _ in range(2):
    torch.manual_seed(1)
    train(args, model, ema, opt, scaler, diffusion, loader[:1])
    grads.append(model.net[0].weight.grad.clone())
if not torch.allclose(grads[0], grads[1]):
    print("BUG: the same batch at the same weights left different .grad: earlier steps' gradients were never cleared")
