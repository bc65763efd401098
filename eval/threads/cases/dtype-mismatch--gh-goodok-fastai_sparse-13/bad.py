# fastai_sparse (0.0.10): point clouds are converted to sparse voxels by a transform that floors the
# float32 point positions to int64 voxel coordinates and, with add_local_pos=True, appends each
# point's position relative to the centre of its voxel to the features; the collate function turns
# the features into tensors for the network's input layer. A per-voxel MLP stands in for the
# SparseConvNet and random point clouds for ScanNet.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.RandomState(0)


class SparseItem:
    def __init__(self, data):
        self.data = data


class PointsItem:
    def __init__(self, data):
        self.data = data


def _convert_labels_dtype(x):
    if np.issubdtype(x.dtype, np.integer):
        return x.astype(np.int64)
    return x


def _to_sparse_voxels(x: PointsItem, add_local_pos=False):
    d = x.data.copy()
    points = d['points']
    coords = np.floor(points).astype(np.int64)
    labels = _convert_labels_dtype(d['labels'])

    if add_local_pos is True:
        dxdydz = points - coords - 0.5
        d["features"] = np.hstack((d["features"], dxdydz))

    res = {'coords': coords, 'features': d['features'], 'labels': labels}
    return SparseItem(res)


def merge_fn(items):
    coords = torch.from_numpy(np.vstack([it.data['coords'] for it in items]))
    features = torch.from_numpy(np.vstack([it.data['features'] for it in items]))
    labels = torch.from_numpy(np.hstack([it.data['labels'] for it in items]))
    return {'coords': coords, 'features': features}, labels


def make_points_item(n=200):
    points = (rng.rand(n, 3) * 16).astype(np.float32)
    colors = rng.rand(n, 3).astype(np.float32)
    return PointsItem({'points': points, 'features': colors, 'labels': rng.randint(0, 4, n)})


class VoxelNet(nn.Module):
    def __init__(self, n_in, n_classes):
        super().__init__()
        self.input_layer = nn.Linear(n_in, 32)
        self.head = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.head(F.relu(self.input_layer(x['features'])))


items = [_to_sparse_voxels(make_points_item(), add_local_pos=True) for _ in range(8)]
model = VoxelNet(n_in=6, n_classes=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for i in range(0, 8, 4):
        x, y = merge_fn(items[i:i + 4])
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
