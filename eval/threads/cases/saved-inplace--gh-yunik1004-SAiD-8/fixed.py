# SAiD's blendshape-coefficient VAE (script/train_vae.py): a conv encoder, a decoder ending in
# ReLU + Tanh whose output is transposed back to (batch, seq, channels), an ELBO helper that
# reweights the prediction and the answer by the per-channel std of the coefficients, and
# train_epoch() driving it. Random coefficients stand in for BlendVOCA.
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn
from torch.utils.data import DataLoader

torch.manual_seed(0)
SEQ_LEN, CHANNELS, Z_DIM = 24, 8, 16


@dataclass
class BCVAEOutput:
    mean: torch.FloatTensor
    log_var: torch.FloatTensor
    latent: torch.FloatTensor
    coeffs_reconst: torch.FloatTensor


@dataclass
class LossStepOutput:
    reconst: torch.FloatTensor
    regularize: torch.FloatTensor
    velocity: torch.FloatTensor


@dataclass
class DataBatch:
    blendshape_coeffs: torch.FloatTensor


class BCEncoder(nn.Module):
    def __init__(self, in_channels=CHANNELS, z_dim=Z_DIM):
        super().__init__()
        self.conv_layers = nn.Sequential(
            nn.Conv1d(in_channels, 16, kernel_size=3), nn.BatchNorm1d(16), nn.LeakyReLU(0.2, True),
            nn.Conv1d(16, 16, kernel_size=4, stride=2), nn.BatchNorm1d(16), nn.LeakyReLU(0.2, True),
            nn.Flatten(),
        )
        self.fc_layers = nn.Sequential(nn.Linear(16 * 10, 32), nn.LeakyReLU(inplace=True), nn.Linear(32, z_dim))
        self.fc_mu = nn.Linear(z_dim, z_dim)
        self.fc_logvar = nn.Linear(z_dim, z_dim)

    def forward(self, coeffs):
        latent = self.fc_layers(self.conv_layers(coeffs.transpose(1, 2)))
        return self.fc_mu(latent), self.fc_logvar(latent)


class BCDecoder(nn.Module):
    def __init__(self, out_channels=CHANNELS, seq_len=SEQ_LEN, z_dim=Z_DIM):
        super().__init__()
        self.fc_layers = nn.Sequential(
            nn.Linear(z_dim, 2 * seq_len), nn.BatchNorm1d(2 * seq_len), nn.LeakyReLU(inplace=True),
            nn.Linear(2 * seq_len, 4 * seq_len), nn.Unflatten(1, (4, seq_len)),
        )
        self.conv_layers = nn.Sequential(
            nn.ConvTranspose1d(4, 16, 3), nn.BatchNorm1d(16), nn.LeakyReLU(0.2, True),
            nn.Conv1d(16, 16, 3), nn.Conv1d(16, out_channels, 1),
            nn.ReLU(),
            nn.Tanh(),
        )

    def forward(self, latent):
        out = self.fc_layers(latent)
        return self.conv_layers(out).transpose(1, 2)


class BCVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = BCEncoder()
        self.decoder = BCDecoder()

    def forward(self, coeffs):
        mean, log_var = self.encoder(coeffs)
        latent = mean + torch.exp(0.5 * log_var) * torch.randn_like(mean)
        return BCVAEOutput(mean=mean, log_var=log_var, latent=latent, coeffs_reconst=self.decoder(latent))


def elbo_loss(said_vae: BCVAE, data: torch.FloatTensor, std: Optional[torch.FloatTensor], device) -> LossStepOutput:
    blendshape_coeffs = data.to(device)
    output = said_vae(blendshape_coeffs)
    batch_size = blendshape_coeffs.shape[0]

    criterion_reconst = nn.MSELoss(reduction="sum")
    criterion_velocity = nn.MSELoss(reduction="sum")

    answer_reweight = blendshape_coeffs
    pred_reweight = output.coeffs_reconst
    if std is not None:
        answer_reweight = answer_reweight / std.view(1, 1, -1)
        pred_reweight = pred_reweight / std.view(1, 1, -1)

    loss_reconst = 0.5 * criterion_reconst(answer_reweight, pred_reweight) / batch_size
    loss_kld = 0.5 * torch.mean(torch.sum(torch.pow(output.mean, 2) + torch.exp(output.log_var) - output.log_var - 1, dim=1))
    answer_diff = answer_reweight[:, 1:, :] - answer_reweight[:, :-1, :]
    pred_diff = pred_reweight[:, 1:, :] - pred_reweight[:, :-1, :]
    loss_vel = 0.5 * criterion_velocity(pred_diff, answer_diff) / batch_size
    return LossStepOutput(reconst=loss_reconst, regularize=loss_kld, velocity=loss_vel)


def train_epoch(said_vae, train_dataloader, optimizer, beta, std, weight_vel, device=torch.device("cpu")):
    said_vae.train()
    train_total_loss, train_total_num = 0, 0
    for data in train_dataloader:
        coeffs = data.blendshape_coeffs
        curr_batch_size = coeffs.shape[0]
        losses = elbo_loss(said_vae, coeffs, std, device)
        loss = losses.reconst + beta * losses.regularize + weight_vel * losses.velocity
        loss.backward()
        torch.nn.utils.clip_grad_norm_(said_vae.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        train_total_num += curr_batch_size
        train_total_loss += loss.item() * curr_batch_size
    return train_total_loss / train_total_num


coeffs_all = torch.rand(32, SEQ_LEN, CHANNELS)
std = coeffs_all.reshape(-1, CHANNELS).std(dim=0, keepdim=True)
train_dataloader = DataLoader(list(coeffs_all), batch_size=8, shuffle=True,
                              collate_fn=lambda items: DataBatch(blendshape_coeffs=torch.stack(items)))
said_vae = BCVAE()
optimizer = torch.optim.AdamW(said_vae.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_epoch(said_vae, train_dataloader, optimizer, beta=0.01, std=std, weight_vel=1.0))
