# LiDAR human pose distillation training, in the shape of train_dis.py and dataset/LIP_dataset.py:
# Dataset_dis groups frames into sequences and __getitem__ returns a dict of numpy arrays (the
# point clouds after centering and farthest point sampling, the ground-truth rotations+joints);
# train_one_epoch() moves the batch to the device and feeds the point-net + GRU model. Random
# point clouds in a list of dicts stand in for the pickled LIPD frames.
import numpy as np
import torch
import torch.nn as nn
import torch.utils.data

torch.manual_seed(0)
np.random.seed(0)


def farthest_point_sample(xyz, npoint):
    ndataset = xyz.shape[0]
    centroids = np.zeros(npoint)
    distance = np.ones(ndataset) * 1e10
    farthest = np.random.randint(0, ndataset)
    for i in range(npoint):
        centroids[i] = farthest
        centroid = xyz[int(farthest)]
        dist = np.sum((xyz - centroid) ** 2, 1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = np.argmax(distance)
    return xyz[np.int32(centroids)]


class Dataset_dis(torch.utils.data.Dataset):
    def __init__(self, datas, frames, num_points):
        self.num_points = num_points
        self.dataset = [datas[k:k + frames] for k in range(0, len(datas) - frames + 1, frames)]

    def __getitem__(self, index):
        example_seq = self.dataset[index]
        seq_pc = []
        seq_gt = []
        for example in example_seq:
            pc_data = example['pc']
            pc_data = pc_data - pc_data.mean(0)
            pc_data = farthest_point_sample(pc_data, self.num_points)
            seq_pc.append(pc_data)
            gt = np.concatenate((example['gt_r'], example['gt_joint'].reshape(-1)))
            seq_gt.append(gt)
        return {'data': np.array(seq_pc), 'gt': np.array(seq_gt)}

    def __len__(self):
        return len(self.dataset)


class PP_distil(nn.Module):
    def __init__(self, k, channel=3):
        super().__init__()
        self.feat = nn.Sequential(nn.Conv1d(channel, 32, 1), nn.ReLU(), nn.Conv1d(32, 64, 1))
        self.gru = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, k)

    def forward(self, x, device):
        B, T, N, C = x.shape
        f = self.feat(x.reshape(B * T, N, C).transpose(1, 2)).max(2)[0]
        out, _ = self.gru(f.reshape(B, T, -1))
        return self.head(out), f


def train_one_epoch(model, device, train_loader, optimizer):
    model.train()
    train_loss1 = 0.0
    loss_fn = torch.nn.MSELoss(reduction='sum')
    count = 0
    for _, data in enumerate(train_loader):
        seq_pc = data['data']
        B, T = seq_pc.shape[0], seq_pc.shape[1]
        seq_gt = data['gt']
        seq_pc = seq_pc.to(device).float()
        seq_gt = seq_gt.to(device).float()
        out, _ = model(seq_pc, device)
        loss = loss_fn(out.reshape(B, T, -1).float(), seq_gt.reshape(B, T, -1).float())

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss1 += loss.item()
        count += 1
    return float(train_loss1) / count


def main():
    device = torch.device("cpu")
    frames = [{'pc': np.random.randn(60, 3), 'gt_r': np.random.randn(6), 'gt_joint': np.random.randn(24, 3)}
              for _ in range(16)]
    train_dataset = Dataset_dis(frames, frames=4, num_points=32)
    train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=2, shuffle=True, drop_last=True)
    model = PP_distil(k=24 * 3 + 6, channel=3)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(.9, .999), weight_decay=1e-4)
    for epoch in range(2):
        train_loss = train_one_epoch(model, device, train_loader, optimizer)
        print('Epoch: %d, Train Loss: %f' % (epoch + 1, train_loss))


if __name__ == "__main__":
    main()
