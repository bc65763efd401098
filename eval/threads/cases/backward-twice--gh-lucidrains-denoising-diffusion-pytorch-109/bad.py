# Training a small 1-D denoising diffusion model on signals that are first reshaped to the
# network's channel count with an nn.Conv1d, applied once before the training loop.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
timesteps, seq_len, channels = 100, 32, 4


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_embed = nn.Embedding(timesteps, channels)
        self.net = nn.Sequential(nn.Conv1d(channels, 16, 3, padding=1), nn.SiLU(), nn.Conv1d(16, channels, 3, padding=1))

    def forward(self, x, t):
        return self.net(x + self.time_embed(t)[:, :, None])


class GaussianDiffusion(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer("alphas_cumprod", torch.cumprod(1 - betas, dim=0))

    def forward(self, x_start):
        t = torch.randint(0, timesteps, (x_start.shape[0],))
        noise = torch.randn_like(x_start)
        a = self.alphas_cumprod[t][:, None, None]
        x_noisy = a.sqrt() * x_start + (1 - a).sqrt() * noise
        return F.mse_loss(self.model(x_noisy, t), noise)


raw_signals = torch.randn(64, 1, seq_len)
to_channels = nn.Conv1d(1, channels, kernel_size=1)
training_seq = to_channels(raw_signals)

diffusion = GaussianDiffusion(Denoiser())
opt = torch.optim.Adam(diffusion.parameters(), lr=1e-3)
for step in range(4):
    batch = training_seq[torch.randint(0, 64, (8,))]
    loss = diffusion(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
