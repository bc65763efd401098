# Exporting AdaBins (UnetAdaptiveBins) for deployment: the script builds the model with the
# classmethod UnetAdaptiveBins.build(), loads the KITTI checkpoint with model_io.load_checkpoint(),
# exports it with an example image, and compares the exported model's depth map with PyTorch's.
# The decoder's upsampling blocks use BatchNorm2d. torch.jit.trace stands in for torch.onnx.export
# (the onnx package is not installed here; the TorchScript-based ONNX exporter traces the model
# the same way, and bakes the training flag of each BatchNorm into the graph).
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_BINS, MIN_DEPTH, MAX_DEPTH_KITTI = 16, 1e-3, 80.0


class UpSampleBN(nn.Module):
    def __init__(self, skip_input, output_features):
        super().__init__()
        self._net = nn.Sequential(nn.Conv2d(skip_input, output_features, 3, 1, 1), nn.BatchNorm2d(output_features),
                                  nn.LeakyReLU(), nn.Conv2d(output_features, output_features, 3, 1, 1),
                                  nn.BatchNorm2d(output_features), nn.LeakyReLU())

    def forward(self, x, concat_with):
        up_x = F.interpolate(x, size=concat_with.shape[2:], mode='bilinear', align_corners=True)
        return self._net(torch.cat([up_x, concat_with], dim=1))


class UnetAdaptiveBins(nn.Module):
    def __init__(self, backend_channels=8, n_bins=100, min_val=0.1, max_val=10):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val
        self.encoder = nn.Sequential(nn.Conv2d(3, backend_channels, 3, 2, 1), nn.ReLU())
        self.decoder = UpSampleBN(backend_channels + 3, 8)
        self.bins = nn.Linear(8, n_bins)
        self.conv_out = nn.Conv2d(8, n_bins, 1)

    def forward(self, x):
        features = self.decoder(self.encoder(x), x)
        bin_widths = torch.softmax(self.bins(features.mean((2, 3))), dim=1) * (self.max_val - self.min_val)
        bin_edges = torch.cumsum(F.pad(bin_widths, (1, 0), value=self.min_val), dim=1)
        centers = 0.5 * (bin_edges[:, :-1] + bin_edges[:, 1:])
        pred = torch.sum(torch.softmax(self.conv_out(features), dim=1) * centers[:, :, None, None], dim=1, keepdim=True)
        return bin_edges, pred

    @classmethod
    def build(cls, n_bins, **kwargs):
        print('Building Encoder-Decoder model..', end='')
        m = cls(n_bins=n_bins, **kwargs)
        print('Done.')
        return m


def load_checkpoint(fpath, model, optimizer=None):
    ckpt = torch.load(fpath, map_location='cpu')
    model.load_state_dict(ckpt['model'])
    return model, optimizer, ckpt.get('epoch', 0)


with tempfile.TemporaryDirectory() as tmp:
    pretrained_path = os.path.join(tmp, 'AdaBins_kitti.pt')
    trained = UnetAdaptiveBins(n_bins=N_BINS, min_val=MIN_DEPTH, max_val=MAX_DEPTH_KITTI)
    with torch.no_grad():  # stands in for the released checkpoint: trained running statistics
        for bn in [m for m in trained.modules() if isinstance(m, nn.BatchNorm2d)]:
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    torch.save({'model': trained.state_dict(), 'epoch': 24}, pretrained_path)

    model = UnetAdaptiveBins.build(n_bins=N_BINS, min_val=MIN_DEPTH, max_val=MAX_DEPTH_KITTI)
    model, _, _ = load_checkpoint(pretrained_path, model)
    model.eval()

    dummy_input = torch.randn(1, 3, 16, 24)
    exported = torch.jit.trace(model, dummy_input, check_trace=False)  # torch.onnx.export(model, dummy_input, ...)
    exported.save(os.path.join(tmp, 'adabins.pt'))

    image = torch.randn(2, 3, 16, 24)
    deployed = torch.jit.load(os.path.join(tmp, 'adabins.pt'))
    with torch.no_grad():
        disparity_onnx = deployed(image)[1]

    # -- corpus check --
    reference = UnetAdaptiveBins(n_bins=N_BINS, min_val=MIN_DEPTH, max_val=MAX_DEPTH_KITTI)
    reference.load_state_dict(torch.load(pretrained_path)['model'])
    reference.eval()
    with torch.no_grad():
        disparity_torch = reference(image)[1]
    if not torch.allclose(disparity_onnx, disparity_torch, atol=1e-4):
        print("BUG: the model was exported in training mode: the deployed BatchNorm uses batch statistics")
