# Genie-style video tokenizer trained with a reconstruction loss plus a perceptual loss. The
# perceptual loss runs a frozen feature network on randomly picked frames of the reconstructed and
# of the input video and reads the activations of a few layers through forward hooks (a recording
# probe). A small random conv net stands in for the pretrained VGG16, random clips for the videos.
from collections import defaultdict

import torch
import torch.nn as nn
from torch.nn.functional import mse_loss

torch.manual_seed(0)


class RecordingProbe:
    def __init__(self):
        self._data = defaultdict(list)

    @property
    def features(self):
        return {k: torch.cat(v) for k, v in self._data.items()}

    def __call__(self, module, inp, out):
        # Record the hidden activations of the hooked module
        name = module._get_name().lower() + str(id(module))
        feat = out.clone().detach()
        feat = feat.flatten(start_dim=1).contiguous()
        self._data[name].append(feat)

    def clean(self):
        self._data.clear()


def pick_frames(video, frames_idxs):
    b, c, t, h, w = video.shape
    per_video = len(frames_idxs) // b
    batch_idxs = torch.arange(b).repeat_interleave(per_video)
    return video.permute(0, 2, 1, 3, 4)[batch_idxs, frames_idxs]


class PerceptualLoss(nn.Module):
    def __init__(self, num_frames=2, feat_layers=("features.1", "features.3")):
        super().__init__()
        self.num_frames = num_frames
        self.percept_model = nn.Module()
        self.percept_model.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()
        )
        # Freeze the perceptual model
        self.percept_model.eval()
        for param in self.percept_model.parameters():
            param.requires_grad = False
        # Attach hooks to the model at desired locations
        self.probe = RecordingProbe()
        self.hook_handles = [
            module.register_forward_hook(self.probe)
            for name, module in self.percept_model.named_modules()
            if name in feat_layers
        ]

    def forward(self, rec_video, inp_video):
        b, c, t, h, w = inp_video.shape
        frames_idxs = torch.cat([torch.randperm(t)[: self.num_frames] for _ in range(b)])
        fake_frames = pick_frames(rec_video, frames_idxs)
        real_frames = pick_frames(inp_video, frames_idxs)

        _ = self.percept_model.features(fake_frames)
        fake_feat = self.probe.features
        self.probe.clean()

        _ = self.percept_model.features(real_frames)
        real_feat = self.probe.features
        self.probe.clean()

        return torch.stack([mse_loss(fake_feat[k], real_feat[k]) for k in fake_feat.keys()]).mean()


class VideoTokenizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv3d(3, 8, 3, padding=1), nn.GELU(), nn.Conv3d(8, 4, 1))
        self.dec = nn.Sequential(nn.Conv3d(4, 8, 3, padding=1), nn.GELU(), nn.Conv3d(8, 3, 1))

    def forward(self, video):
        return self.dec(self.enc(video))


tokenizer = VideoTokenizer()
perc_loss_fn = PerceptualLoss()
optimizer = torch.optim.Adam(tokenizer.parameters(), lr=1e-3)
videos = torch.rand(4, 2, 3, 4, 16, 16)  # batches of (b, c, t, h, w)
for step, video in enumerate(videos):
    rec_video = tokenizer(video)
    rec_loss = mse_loss(rec_video, video)
    perc_loss = perc_loss_fn(rec_video, video)
    loss = rec_loss + 0.1 * perc_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, "rec", round(rec_loss.item(), 4), "perc", round(perc_loss.item(), 4))

# -- corpus check --
if not perc_loss.requires_grad:
    print("BUG: the perceptual loss has no graph, the tokenizer gets no gradient from it")
