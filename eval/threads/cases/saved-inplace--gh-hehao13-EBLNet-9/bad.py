# EBLNet's contour point GCN (GloRe-style): the features of the most uncertain boundary points are
# gathered, reasoned over by a simple GCN with a residual "Laplacian smoothing" step, and scattered
# back into the body feature map.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GCN(nn.Module):
    def __init__(self, node_num, node_fea):
        super().__init__()
        self.conv_adj = nn.Conv1d(node_num, node_num, kernel_size=1, bias=False)
        self.bn_adj = nn.BatchNorm1d(node_num)
        self.conv_wg = nn.Conv1d(node_fea, node_fea, kernel_size=1, bias=False)
        self.bn_wg = nn.BatchNorm1d(node_fea)
        self.relu = nn.ReLU()

    def forward(self, x):
        z = self.conv_adj(x)
        z = self.bn_adj(z)
        z = self.relu(z)

        # Laplacian smoothing
        z += x
        z = z.transpose(1, 2).contiguous()
        z = self.conv_wg(z)
        z = self.bn_wg(z)
        z = self.relu(z)
        return z.transpose(1, 2).contiguous()


class ContourPointGCN(nn.Module):
    def __init__(self, inplance, num_points):
        super().__init__()
        self.num_points = num_points
        self.gcn = GCN(num_points, inplance)

    def forward(self, x, edge):
        B, C, H, W = x.size()
        edge_index = torch.topk(edge.view(B, H * W), k=self.num_points, dim=1)[1]
        index = edge_index.unsqueeze(1).expand(-1, C, -1)
        gcn_features = x.flatten(start_dim=2).gather(dim=2, index=index).permute(0, 2, 1)
        reasoned = self.gcn(gcn_features).permute(0, 2, 1)
        return x.reshape(B, C, H * W).scatter(2, index, reasoned).view(B, C, H, W)


body = nn.Conv2d(3, 16, 3, padding=1)
edge_head = nn.Conv2d(16, 1, 1)
refine = ContourPointGCN(16, num_points=24)
params = list(body.parameters()) + list(edge_head.parameters()) + list(refine.parameters())
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
for it in range(2):
    images, masks = torch.randn(2, 3, 16, 16), torch.randint(0, 2, (2, 16, 16)).float()
    x = body(images)
    edge = torch.sigmoid(edge_head(x))
    out = refine(x, edge.detach())
    main_loss = nn.functional.binary_cross_entropy_with_logits(out.mean(1), masks)
    optimizer.zero_grad()
    main_loss.backward()
    optimizer.step()
    print(it, main_loss.item())
