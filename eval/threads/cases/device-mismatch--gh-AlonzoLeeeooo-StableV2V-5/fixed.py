# StableV2V's depth completion step: a completion network fills the depth maps inside the
# edited region (mask) guided by the shape of the new object, and the runner pastes the
# prediction back into the original depth outside the mask. The network runs on the GPU
# (the meta device stands in for it); random arrays stand in for the frames read from disk,
# and a tiny encoder-decoder stands in for the completion network.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("meta")  # "cuda:0"


class CompletionNet(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, hidden, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(hidden, hidden, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(hidden, 1, 3, padding=1)

    def forward(self, depth, mask, shape):
        feats = self.encoder(torch.cat([depth * (1 - mask), mask, shape], dim=1))
        return torch.sigmoid(self.head(feats)), feats


def load_frames(n_frames, size):
    depth_maps = np.random.rand(n_frames, 1, size, size).astype(np.float32)
    masks = (np.random.rand(n_frames, 1, size, size) > 0.7).astype(np.float32)
    shapes = (np.random.rand(n_frames, 1, size, size) > 0.5).astype(np.float32)
    return depth_maps, masks, shapes


def depth_completion_net_inference_runner(completion_net, n_frames=4, size=32):
    # 1. Load inputs
    depth_maps, masks, shapes = load_frames(n_frames, size)
    # 2. Convert to tensors
    depth_maps_tensor = torch.from_numpy(depth_maps)
    mask_tensor = torch.from_numpy(masks)
    shape_tensor = torch.from_numpy(shapes)
    # 3. Forward
    mask_tensor = mask_tensor.to(device)
    depth_maps_tensor = depth_maps_tensor.to(device)
    with torch.no_grad():
        pred_depth_maps, _ = completion_net(depth_maps_tensor, mask_tensor, shape_tensor.to(device))
    pred_depth_maps = (1 - mask_tensor) * depth_maps_tensor + mask_tensor * pred_depth_maps
    return pred_depth_maps


completion_net = CompletionNet().to(device)
completion_net.eval()
completed = depth_completion_net_inference_runner(completion_net)
print(f"completed depth maps {tuple(completed.shape)} on {completed.device.type}")
