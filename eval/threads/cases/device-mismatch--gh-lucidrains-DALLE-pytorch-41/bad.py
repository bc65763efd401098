# DALLE-pytorch's DiscreteVAE (release 0.1.4, the commit that added the KL term): a conv encoder to
# token logits, gumbel-softmax over a codebook, a conv decoder, and forward(img, return_loss=True)
# returning the reconstruction loss plus the KL divergence to a uniform prior over the tokens. The
# person's train_VAE.py trains it on the GPU (the meta device stands in for it here); random images
# stand in for the dataset, and einops' rearrange is written out with flatten/transpose.
from math import log2

import torch
from torch import nn, einsum
import torch.nn.functional as F

torch.manual_seed(0)


class DiscreteVAE(nn.Module):
    def __init__(self, image_size=256, num_tokens=512, codebook_dim=512, num_layers=3, hidden_dim=64,
                 channels=3, temperature=0.9, straight_through=False, kl_div_loss_weight=1.):
        super().__init__()
        assert log2(image_size).is_integer(), 'image size must be a power of 2'
        self.image_size = image_size
        self.num_tokens = num_tokens
        self.num_layers = num_layers
        self.temperature = temperature
        self.straight_through = straight_through
        self.codebook = nn.Embedding(num_tokens, codebook_dim)

        enc_chans = [hidden_dim] * num_layers
        dec_chans = list(reversed(enc_chans))
        enc_chans = [channels, *enc_chans]
        dec_chans = [codebook_dim, *dec_chans]
        enc_chans_io, dec_chans_io = map(lambda t: list(zip(t[:-1], t[1:])), (enc_chans, dec_chans))

        enc_layers = []
        dec_layers = []
        for (enc_in, enc_out), (dec_in, dec_out) in zip(enc_chans_io, dec_chans_io):
            enc_layers.append(nn.Sequential(nn.Conv2d(enc_in, enc_out, 4, stride=2, padding=1), nn.ReLU()))
            dec_layers.append(nn.Sequential(nn.ConvTranspose2d(dec_in, dec_out, 4, stride=2, padding=1), nn.ReLU()))
        enc_layers.append(nn.Conv2d(enc_chans[-1], num_tokens, 1))
        dec_layers.append(nn.Conv2d(dec_chans[-1], channels, 1))
        self.encoder = nn.Sequential(*enc_layers)
        self.decoder = nn.Sequential(*dec_layers)
        self.kl_div_loss_weight = kl_div_loss_weight

    def forward(self, img, return_loss=False, return_logits=False):
        num_tokens, kl_div_loss_weight = self.num_tokens, self.kl_div_loss_weight

        logits = self.encoder(img)
        if return_logits:
            return logits

        soft_one_hot = F.gumbel_softmax(logits, tau=self.temperature, dim=1, hard=self.straight_through)
        sampled = einsum('b n h w, n d -> b d h w', soft_one_hot, self.codebook.weight)
        out = self.decoder(sampled)

        if not return_loss:
            return out

        # reconstruction loss
        recon_loss = F.mse_loss(img, out)

        # kl divergence
        logits = logits.flatten(2).transpose(1, 2)  # rearrange(logits, 'b n h w -> b (h w) n')
        qy = F.softmax(logits, dim=-1)
        log_qy = torch.log(qy + 1e-20)
        g = torch.log(torch.Tensor([1. / num_tokens]))
        kl_div = (qy * (log_qy - g)).sum(dim=(1, 2)).mean()

        return recon_loss + (kl_div * kl_div_loss_weight)


device = torch.device("meta")  # torch.device("cuda")
vae = DiscreteVAE(image_size=32, num_tokens=64, codebook_dim=32, num_layers=2, hidden_dim=16).to(device)
optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)


def get_loss(images):
    recons = vae(images)
    loss = F.smooth_l1_loss(images, recons) + vae(images, return_loss=True)
    return loss


for step in range(3):
    images = torch.rand(4, 3, 32, 32).to(device)
    loss = get_loss(images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("trained", step + 1, "steps")
