# A diffusion model trained with accelerate, in the improved-diffusion layout: a GaussianDiffusion
# holding its schedule as numpy arrays, a UniformSampler that draws timesteps and importance
# weights with numpy, and a TrainLoop whose forward_backward() samples t for the batch, computes
# the per-sample losses and weights them. The batch is on the accelerator's device (the GPU in the
# thread, the meta device stands in for it here); a small conv net and random images stand in for
# the UNet and the dataset.
import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)
np.random.seed(0)


def _extract_into_tensor(arr, timesteps, broadcast_shape):
    res = th.from_numpy(arr).to(device=timesteps.device)[timesteps].float()
    while len(res.shape) < len(broadcast_shape):
        res = res[..., None]
    return res.expand(broadcast_shape)


class GaussianDiffusion:
    def __init__(self, num_timesteps=100):
        betas = np.linspace(1e-4, 0.02, num_timesteps, dtype=np.float64)
        self.num_timesteps = num_timesteps
        alphas_cumprod = np.cumprod(1.0 - betas)
        self.sqrt_alphas_cumprod = np.sqrt(alphas_cumprod)
        self.sqrt_one_minus_alphas_cumprod = np.sqrt(1.0 - alphas_cumprod)

    def q_sample(self, x_start, t, noise):
        return (_extract_into_tensor(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start
                + _extract_into_tensor(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def training_losses(self, model, x_start, t):
        noise = th.randn_like(x_start)
        x_t = self.q_sample(x_start, t, noise)
        model_output = model(x_t, t)
        return {"loss": ((noise - model_output) ** 2).mean(dim=(1, 2, 3))}


class UniformSampler:
    def __init__(self, diffusion):
        self._weights = np.ones([diffusion.num_timesteps])

    def weights(self):
        return self._weights

    def sample(self, batch_size, device=th.device("cpu")):
        w = self.weights()
        p = w / np.sum(w)
        indices_np = np.random.choice(len(p), size=(batch_size,), p=p)
        indices = th.from_numpy(indices_np).long().to(device)
        weights_np = 1 / (len(p) * p[indices_np])
        weights = th.from_numpy(weights_np).float().to(device)
        return indices, weights


class TinyUNet(nn.Module):
    def __init__(self, ch=16, num_timesteps=100):
        super().__init__()
        self.time_embed = nn.Embedding(num_timesteps, ch)
        self.conv_in = nn.Conv2d(3, ch, 3, padding=1)
        self.conv_out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x, t):
        h = self.conv_in(x) + self.time_embed(t)[:, :, None, None]
        return self.conv_out(F.silu(h))


class TrainLoop:
    def __init__(self, model, diffusion, data, lr, device):
        self.model = model
        self.diffusion = diffusion
        self.data = data
        self.device = device
        self.schedule_sampler = UniformSampler(diffusion)
        self.opt = th.optim.AdamW(self.model.parameters(), lr=lr)

    def run_loop(self):
        for batch in self.data:
            batch = batch.to(self.device)
            self.forward_backward(batch)
            self.opt.step()

    def forward_backward(self, batch):
        self.opt.zero_grad()
        t, weights = self.schedule_sampler.sample(batch.shape[0])
        t.to(batch.device)
        weights.to(batch.device)
        losses = self.diffusion.training_losses(self.model, batch, t)
        loss = (losses["loss"] * weights).mean()
        loss.backward()  # accelerator.backward(loss)


device = th.device("meta")  # accelerator.device
model = TinyUNet().to(device)
diffusion = GaussianDiffusion()
data = [th.randn(4, 3, 16, 16) for _ in range(3)]
TrainLoop(model, diffusion, data, lr=1e-4, device=device).run_loop()
print("trained", len(data), "steps")
