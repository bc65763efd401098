# FaceNet-style triplet training: embeddings for anchor/positive/negative are computed,
# hard triplets are selected with numpy, and the triplet loss is computed on them.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)
device = torch.device("cpu")


class FaceModel(nn.Module):
    def __init__(self, embedding_size=16):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 12 * 12, 32), nn.ReLU(), nn.Linear(32, embedding_size))

    def forward(self, x):
        return F.normalize(self.net(x), p=2, dim=1)


class TripletMarginLoss(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        d_p = F.pairwise_distance(anchor, positive, 2)
        d_n = F.pairwise_distance(anchor, negative, 2)
        return torch.clamp(self.margin + d_p - d_n, min=0.0).mean()


model = FaceModel().to(device)
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
l2_dist = nn.PairwiseDistance(2)
margin = 0.5

for batch_idx in range(3):
    data_a, data_p, data_n = (torch.rand(8, 3, 12, 12, device=device) for _ in range(3))
    out_a, out_p, out_n = model(data_a), model(data_p), model(data_n)

    # choose the hard negatives
    d_p = l2_dist(out_a, out_p)
    d_n = l2_dist(out_a, out_n)
    all = (d_n - d_p < margin).cpu().data.numpy().flatten()
    hard_triplets = np.where(all == 1)
    if len(hard_triplets[0]) == 0:
        continue
    out_selected_a = out_a[hard_triplets]
    out_selected_p = out_p[hard_triplets]
    out_selected_n = out_n[hard_triplets]

    triplet_loss = TripletMarginLoss(margin)(out_selected_a, out_selected_p, out_selected_n)
    optimizer.zero_grad()
    triplet_loss.backward()
    optimizer.step()
    print(batch_idx, len(hard_triplets[0]), triplet_loss.item())
