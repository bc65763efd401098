# Free-Form Video Inpainting's evaluate.py: the VFID score compares I3D activations of the
# inpainted and the ground-truth videos. init_i3d_model() builds the module-level i3d_model once
# and loads its ImageNet/Kinetics weights; get_i3d_activations() runs extract_features() with
# gradients disabled. The I3D units use BatchNorm3d, and the logits follow a Dropout. (A small I3D
# and weights written here stand in for i3d_rgb_imagenet.pt; random clips stand in for the videos.)
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
i3d_model = None
I3D_WEIGHTS = os.path.join(tempfile.mkdtemp(), 'i3d_rgb_imagenet.pt')


class Unit3D(nn.Module):
    def __init__(self, in_channels, output_channels, kernel_shape=(1, 1, 1), stride=(1, 1, 1)):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, output_channels, kernel_shape, stride, padding=0, bias=False)
        self.bn = nn.BatchNorm3d(output_channels, eps=0.001, momentum=0.01)

    def forward(self, x):
        return torch.relu(self.bn(self.conv3d(x)))


class InceptionI3d(nn.Module):
    VALID_ENDPOINTS = ('Conv3d_1a_7x7', 'Conv3d_2c_3x3', 'Mixed_5c', 'Logits')

    def __init__(self, num_classes=400, in_channels=3, final_endpoint='Logits'):
        super().__init__()
        self._final_endpoint = final_endpoint
        self.end_points = nn.ModuleDict({
            'Conv3d_1a_7x7': Unit3D(in_channels, 8, (3, 3, 3), (1, 2, 2)),
            'Conv3d_2c_3x3': Unit3D(8, 16, (1, 3, 3)),
            'Mixed_5c': Unit3D(16, 16),
        })
        self.dropout = nn.Dropout(0.5)
        self.logits = Unit3D(16, num_classes)

    def extract_features(self, x, target_endpoint='Logits'):
        for end_point in self.VALID_ENDPOINTS[:-1]:
            x = self.end_points[end_point](x)
            if end_point == target_endpoint:
                return x
        x = nn.functional.adaptive_avg_pool3d(x, 1)
        return self.logits(self.dropout(x))

    def forward(self, x):
        return self.extract_features(x).flatten(1)


def init_i3d_model():
    global i3d_model
    if i3d_model is not None:
        return
    print("Loading I3D model for FID score ..")
    i3d_model = InceptionI3d(400, in_channels=3, final_endpoint='Logits')
    i3d_model.load_state_dict(torch.load(I3D_WEIGHTS))
    i3d_model.eval()


def get_i3d_activations(batched_video, target_endpoint='Logits', flatten=True, grad_enabled=False):
    init_i3d_model()
    with torch.set_grad_enabled(grad_enabled):
        feat = i3d_model.extract_features(batched_video.transpose(1, 2), target_endpoint)
    if flatten:
        feat = feat.view(feat.size(0), -1)
    return feat


def get_fid_score(real_activations, fake_activations):
    mu1, mu2 = real_activations.mean(0), fake_activations.mean(0)
    return float(((mu1 - mu2) ** 2).sum() + (real_activations.var(0) - fake_activations.var(0)).abs().sum())


def evaluate_video_vfid(output_videos, gt_videos):
    output_activations = get_i3d_activations(output_videos).numpy()
    gt_activations = get_i3d_activations(gt_videos).numpy()
    return get_fid_score(torch.from_numpy(gt_activations), torch.from_numpy(output_activations)), output_activations


stand_in = InceptionI3d(400)
with torch.no_grad():  # stands in for the released weights: trained running statistics
    for bn in [m for m in stand_in.modules() if isinstance(m, nn.BatchNorm3d)]:
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
torch.save(stand_in.state_dict(), I3D_WEIGHTS)

gt_videos = torch.rand(4, 5, 3, 12, 12)   # batch x frames x channels x H x W
output_videos = (gt_videos + 0.1 * torch.randn_like(gt_videos)).clamp(0, 1)
vfid, activations = evaluate_video_vfid(output_videos, gt_videos)
print(f"VFID: {vfid:.4f}")

# -- corpus check --
reference = InceptionI3d(400)
reference.load_state_dict(torch.load(I3D_WEIGHTS))
reference.eval()
with torch.no_grad():
    expected = reference.extract_features(output_videos.transpose(1, 2)).view(4, -1).numpy()
if not np.allclose(activations, expected, atol=1e-5):
    print("BUG: the I3D activations for VFID were computed in training mode (batch statistics, dropout on)")
