# Ultra-Fast-Lane-Detection (train.py, utils/loss.py, data/dataset.py): row anchors classify, for
# each lane and each anchor row, which grid cell the lane crosses. The person trained on Windows,
# where numpy's default integer (the grid labels built with np.zeros(..., dtype=int)) is int32;
# that dtype is spelled out here so that Linux builds the same labels. Random images and lane
# points stand in for TuSimple, a two-layer conv net for the ResNet backbone, and the logger
# is a print.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
np.random.seed(0)

GRIDING_NUM, NUM_ROWS, NUM_LANES = 20, 8, 2


class LaneClsDataset(Dataset):
    def __init__(self, n):
        self.images = np.random.rand(n, 3, 32, 64).astype(np.float32)
        self.lane_x = np.random.randint(0, GRIDING_NUM + 1, size=(n, NUM_ROWS, NUM_LANES))

    def _grid_pts(self, idx):
        # the cell each lane crosses on each anchor row; GRIDING_NUM means "no lane"
        cls_label = np.zeros((NUM_ROWS, NUM_LANES), dtype=np.int32)
        for r in range(NUM_ROWS):
            for lane in range(NUM_LANES):
                cls_label[r, lane] = self.lane_x[idx, r, lane]
        return cls_label

    def __getitem__(self, idx):
        img = torch.from_numpy(self.images[idx])
        cls_label = self._grid_pts(idx)
        return img, torch.from_numpy(cls_label)

    def __len__(self):
        return len(self.images)


class ParsingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d((4, 4)))
        self.cls = nn.Linear(8 * 16, (GRIDING_NUM + 1) * NUM_ROWS * NUM_LANES)

    def forward(self, x):
        fea = self.backbone(x).flatten(1)
        return self.cls(fea).view(-1, GRIDING_NUM + 1, NUM_ROWS, NUM_LANES)


class SoftmaxFocalLoss(nn.Module):
    def __init__(self, gamma, ignore_lb=255):
        super().__init__()
        self.gamma = gamma
        self.nll = nn.NLLLoss(ignore_index=ignore_lb)

    def forward(self, logits, labels):
        scores = F.softmax(logits, dim=1)
        factor = torch.pow(1. - scores, self.gamma)
        log_score = F.log_softmax(logits, dim=1)
        log_score = factor * log_score
        loss = self.nll(log_score, labels)
        return loss


def get_loss_dict():
    return {'name': ['cls_loss'], 'op': [SoftmaxFocalLoss(2)], 'weight': [1.0],
            'data_src': [('cls_out', 'cls_label')]}


def inference(net, data_label):
    img, cls_label = data_label
    cls_out = net(img)
    return {'cls_out': cls_out, 'cls_label': cls_label}


def calc_loss(loss_dict, results, global_step):
    loss = 0
    for i in range(len(loss_dict['name'])):
        data_src = loss_dict['data_src'][i]
        datas = [results[src] for src in data_src]
        loss_cur = loss_dict['op'][i](*datas)
        if global_step % 4 == 0:
            print('loss/' + loss_dict['name'][i], loss_cur.item())
        loss += loss_cur * loss_dict['weight'][i]
    return loss


def train(net, data_loader, loss_dict, optimizer, epoch):
    net.train()
    for b_idx, data_label in enumerate(data_loader):
        global_step = epoch * len(data_loader) + b_idx
        results = inference(net, data_label)
        loss = calc_loss(loss_dict, results, global_step)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train_loader = DataLoader(LaneClsDataset(32), batch_size=8, shuffle=True)
    net = ParsingNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=4e-4)
    loss_dict = get_loss_dict()
    for epoch in range(2):
        train(net, train_loader, loss_dict, optimizer, epoch)
