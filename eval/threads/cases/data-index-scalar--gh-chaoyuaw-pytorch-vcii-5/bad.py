# Video compression through image interpolation (VCII): an encoder, a binarizer and a decoder
# compress the residual of a frame in several iterations; each iteration's reconstruction error
# is a loss, and the training loop prints the mean loss of the batch.
import time

import torch
import torch.nn as nn
import torch.optim as optim
import torch.optim.lr_scheduler as LS

torch.manual_seed(0)


class Binarizer(nn.Module):
    def __init__(self, channels, bits):
        super().__init__()
        self.conv = nn.Conv2d(channels, bits, 1, bias=False)

    def forward(self, x):
        feat = torch.tanh(self.conv(x))
        return feat + (torch.sign(feat) - feat).detach()


encoder = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
binarizer = Binarizer(16, bits=8)
decoder = nn.Sequential(nn.ConvTranspose2d(8, 16, 4, stride=2, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
nets = [encoder, binarizer, decoder]
params = [{'params': net.parameters()} for net in nets]
solver = optim.Adam(params, lr=5e-4)
scheduler = LS.MultiStepLR(solver, milestones=[3, 4], gamma=0.5)
iterations, clip = 4, 0.5

for train_iter in range(1, 4):
    crops = torch.rand(2, 3, 16, 16) - 0.5
    batch_t0 = time.time()
    solver.zero_grad()
    res = crops
    losses = []
    bp_t0 = time.time()
    out_img = torch.zeros(1, 3, 16, 16) + 0.5
    for _ in range(iterations):
        encoded = encoder(res)
        codes = binarizer(encoded)
        output = decoder(codes)
        res = res - output
        out_img = out_img + output.data
        losses.append(res.abs().mean())
    bp_t1 = time.time()
    loss = sum(losses) / iterations
    loss.backward()
    for net in nets:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    solver.step()
    scheduler.step()
    batch_t1 = time.time()
    print('[TRAIN] Iter[{}]; LR: {}; Loss: {:.6f}; Backprop: {:.4f} sec; Batch: {:.4f} sec'.format(
        train_iter, scheduler.get_last_lr()[0], loss.data[0], bp_t1 - bp_t0, batch_t1 - batch_t0))
