# SECOND/VoxelNet-style voxel feature extractor for LiDAR detection: each voxel holds up to T
# points (zero-padded); VFE layers (linear + BN + ReLU, max over points, concatenate) run on the
# points, and a mask built from the number of points per voxel zeroes the padded ones.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def get_paddings_indicator(actual_num, max_num, axis=0):
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    return actual_num.int() > max_num


class VFELayer(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.units = out_channels // 2
        self.linear = nn.Linear(in_channels, self.units, bias=False)
        self.norm = nn.BatchNorm1d(self.units, eps=1e-3, momentum=0.01)

    def forward(self, inputs):
        voxel_count = inputs.shape[1]
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        pointwise = F.relu(x)
        aggregated = torch.max(pointwise, dim=1, keepdim=True)[0]
        repeated = aggregated.repeat(1, voxel_count, 1)
        return torch.cat([pointwise, repeated], dim=2)


class VoxelFeatureExtractor(nn.Module):
    def __init__(self, num_input_features=4, num_filters=(32, 128)):
        super().__init__()
        num_input_features += 3
        self.vfe1 = VFELayer(num_input_features, num_filters[0])
        self.vfe2 = VFELayer(num_filters[0], num_filters[1])
        self.linear = nn.Linear(num_filters[1], num_filters[1], bias=False)
        self.norm = nn.BatchNorm1d(num_filters[1], eps=1e-3, momentum=0.01)

    def forward(self, features, num_voxels):
        points_mean = features[:, :, :3].sum(dim=1, keepdim=True) / num_voxels.type_as(features).view(-1, 1, 1)
        features_relative = features[:, :, :3] - points_mean
        features = torch.cat([features, features_relative], dim=-1)
        voxel_count = features.shape[1]
        mask = get_paddings_indicator(num_voxels, voxel_count, axis=0)
        mask = torch.unsqueeze(mask, -1).type_as(features)
        x = self.vfe1(features)
        x = x * mask
        x = self.vfe2(x)
        x = x * mask
        x = self.linear(x)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = F.relu(x)
        x = x * mask
        voxelwise = torch.max(x, dim=1)[0]
        return voxelwise


class DetectionHead(nn.Module):
    def __init__(self, channels=128):
        super().__init__()
        self.cls = nn.Linear(channels, 2)
        self.box = nn.Linear(channels, 7)

    def forward(self, voxel_features):
        return self.cls(voxel_features), self.box(voxel_features)


vfe = VoxelFeatureExtractor()
head = DetectionHead()
optimizer = torch.optim.Adam(list(vfe.parameters()) + list(head.parameters()), lr=1e-3)
for it in range(2):
    num_voxels = torch.randint(1, 36, (64,))
    points = torch.randn(64, 35, 4)
    points = points * get_paddings_indicator(num_voxels, 35).unsqueeze(-1)
    cls_target = torch.randint(0, 2, (64,))
    box_target = torch.randn(64, 7)
    cls_pred, box_pred = head(vfe(points, num_voxels))
    loss = F.cross_entropy(cls_pred, cls_target) + F.smooth_l1_loss(box_pred, box_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
