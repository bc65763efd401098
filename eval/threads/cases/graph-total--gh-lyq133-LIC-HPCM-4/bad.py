# Learned image compression training script: an analysis/synthesis transform with a hyperprior,
# a RateDistortionLoss module that returns a dict (loss, bpp_loss, mse_loss, psnr, y_bpp, z_bpp),
# and train_one_epoch, which makes one AverageMeter per statistic before the batch loop and
# updates each with the dict's entries after optimizer.step(). Random crops stand in for the
# training images; the GPU is left out (device comes from the model's parameters).
import math
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class HPCM(nn.Module):
    def __init__(self, N=16, M=24):
        super().__init__()
        self.g_a = nn.Sequential(nn.Conv2d(3, N, 5, 2, 2), nn.GELU(), nn.Conv2d(N, M, 5, 2, 2))
        self.g_s = nn.Sequential(nn.ConvTranspose2d(M, N, 5, 2, 2, 1), nn.GELU(), nn.ConvTranspose2d(N, 3, 5, 2, 2, 1))
        self.h_a = nn.Sequential(nn.Conv2d(M, N, 3, 2, 1), nn.GELU())
        self.h_s = nn.Sequential(nn.ConvTranspose2d(N, M, 3, 2, 1, 1), nn.Softplus())

    @staticmethod
    def likelihood(v, scale):
        upper = torch.sigmoid((v + 0.5) / scale)
        lower = torch.sigmoid((v - 0.5) / scale)
        return (upper - lower).clamp_min(1e-9)

    def forward(self, x):
        y = self.g_a(x)
        z = self.h_a(y)
        z_hat = z + torch.empty_like(z).uniform_(-0.5, 0.5)
        scales = self.h_s(z_hat) + 0.11
        y_hat = y + torch.empty_like(y).uniform_(-0.5, 0.5)
        x_hat = self.g_s(y_hat)
        return {"x_hat": x_hat, "likelihoods": {"y": self.likelihood(y_hat, scales),
                                                "z": self.likelihood(z_hat, torch.ones_like(z_hat))}}


class RateDistortionLoss(nn.Module):
    def __init__(self, lmbda=1e-2):
        super().__init__()
        self.mse = nn.MSELoss()
        self.lmbda = lmbda

    def forward(self, output, target):
        N, _, H, W = target.size()
        out = {}
        num_pixels = N * H * W
        out["bpp_loss"] = sum((torch.log(likelihoods).sum() / (-math.log(2) * num_pixels))
                              for likelihoods in output["likelihoods"].values())
        out["y_bpp"] = torch.log(output["likelihoods"]["y"]).sum() / (-math.log(2) * num_pixels)
        out["z_bpp"] = torch.log(output["likelihoods"]["z"]).sum() / (-math.log(2) * num_pixels)
        out["mse_loss"] = self.mse(output["x_hat"], target)
        out["loss"] = self.lmbda * 255 ** 2 * out["mse_loss"] + out["bpp_loss"]
        out["psnr"] = 10 * (torch.log(1 * 1 / out["mse_loss"]) / np.log(10))
        return out


class AverageMeter:
    """Compute running average."""

    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_one_epoch(model, criterion, train_dataloader, optimizer, epoch, global_step, clip_max_norm):
    model.train()
    device = next(model.parameters()).device
    loss = AverageMeter()
    bpp_loss = AverageMeter()
    mse_loss = AverageMeter()
    psnr = AverageMeter()
    y_bpp = AverageMeter()
    z_bpp = AverageMeter()
    for i, (d,) in enumerate(train_dataloader):
        global_step += 1
        d = d.to(device)
        optimizer.zero_grad()
        out_net = model(d)
        out_criterion = criterion(out_net, d)
        out_criterion["loss"].backward()
        if clip_max_norm > 0:
            total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)
            if total_norm.isnan() or total_norm.isinf():
                print("non-finite norm, skip this batch")
                continue
        optimizer.step()

        bpp_loss.update(out_criterion["bpp_loss"])
        loss.update(out_criterion["loss"])
        mse_loss.update(out_criterion["mse_loss"])
        psnr.update(out_criterion["psnr"])
        y_bpp.update(out_criterion["y_bpp"])
        z_bpp.update(out_criterion["z_bpp"])

        if i % 4 == 0:
            print(f"Train epoch {epoch}: [{i * len(d)}/{len(train_dataloader.dataset)}]"
                  f"\tLoss: {loss.avg:.4f} |\tMSE loss: {mse_loss.avg:.6f} |"
                  f"\tPSNR: {psnr.avg:.3f} |\tBpp loss: {bpp_loss.avg:.4f}")
    return global_step


model = HPCM()
criterion = RateDistortionLoss(lmbda=0.0035)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
train_dataloader = DataLoader(TensorDataset(torch.rand(32, 3, 32, 32)), batch_size=4, shuffle=True)
global_step = 0
for epoch in range(2):
    global_step = train_one_epoch(model, criterion, train_dataloader, optimizer, epoch, global_step, 1.0)

# -- corpus check --
seen = {}


def _keep_locals(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "train_one_epoch":
        seen.update(frame.f_locals)


sys.setprofile(_keep_locals)
train_one_epoch(model, criterion, train_dataloader, optimizer, 2, global_step, 1.0)
sys.setprofile(None)
if torch.is_tensor(seen["loss"].sum) and seen["loss"].sum.grad_fn is not None:
    print("BUG: the epoch's loss meter holds the autograd graph of every batch until the epoch ends")
