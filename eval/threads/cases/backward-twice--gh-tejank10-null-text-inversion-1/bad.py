# Null-text inversion: for every denoising step, the unconditional ("null") embedding is optimized
# so that classifier-free guidance reproduces the DDIM inversion trajectory. The prompt's embedding
# comes from the text encoder once, before the optimization starts.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TextEncoder(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        return self.proj(self.tok(ids)).mean(dim=1)


class UNet(nn.Module):
    def __init__(self, dim=16, latent=8):
        super().__init__()
        self.inp = nn.Linear(latent + dim + 1, 32)
        self.out = nn.Linear(32, latent)

    def forward(self, latent, t, context):
        h = torch.cat([latent, context.expand(latent.shape[0], -1), t.expand(latent.shape[0], 1)], dim=1)
        return self.out(torch.tanh(self.inp(h)))


class NullInversion:
    def __init__(self, unet, text_encoder, guidance_scale=7.5, steps=4):
        self.unet = unet
        self.text_encoder = text_encoder
        self.guidance_scale = guidance_scale
        self.timesteps = torch.linspace(1.0, 0.1, steps)
        self.context = None

    def init_prompt(self, ids):
        uncond_embeddings = self.text_encoder(torch.zeros_like(ids))
        text_embeddings = self.text_encoder(ids)
        self.context = torch.cat([uncond_embeddings, text_embeddings])

    def prev_step(self, noise_pred, t, latent):
        return latent - 0.1 * t * noise_pred

    def null_optimization(self, latents, num_inner_steps=3):
        uncond_embeddings, cond_embeddings = self.context.chunk(2)
        uncond_list = []
        latent_cur = latents[-1]
        for i, t in enumerate(self.timesteps):
            uncond_embeddings = uncond_embeddings.clone().detach().requires_grad_(True)
            optimizer = torch.optim.Adam([uncond_embeddings], lr=1e-2)
            latent_prev = latents[len(latents) - i - 2]
            noise_pred_cond = self.unet(latent_cur, t, cond_embeddings)
            for j in range(num_inner_steps):
                noise_pred_uncond = self.unet(latent_cur, t, uncond_embeddings)
                noise_pred = noise_pred_uncond + self.guidance_scale * (noise_pred_cond - noise_pred_uncond)
                latents_prev_rec = self.prev_step(noise_pred, t, latent_cur)
                loss = F.mse_loss(latents_prev_rec, latent_prev)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            uncond_list.append(uncond_embeddings[:1].detach())
            with torch.no_grad():
                noise_u = self.unet(latent_cur, t, uncond_embeddings)
                noise_c = self.unet(latent_cur, t, cond_embeddings)
                noise_pred = noise_u + self.guidance_scale * (noise_c - noise_u)
                latent_cur = self.prev_step(noise_pred, t, latent_cur)
        return uncond_list


unet, text_encoder = UNet(), TextEncoder()
unet.requires_grad_(False)
inversion = NullInversion(unet, text_encoder)
inversion.init_prompt(torch.randint(1, 50, (1, 6)))
ddim_latents = [torch.randn(1, 8) for _ in range(5)]
embeddings = inversion.null_optimization(ddim_latents)
print("optimized", len(embeddings), "null embeddings")
