# H3DNet (3D object detection from point clouds with hybrid geometric primitives): the
# refinement proposal module. A first proposal head runs on the aggregated vote features;
# surface and line primitive features are matched to each proposal, pooled, and a refinement
# head adds the first head's features back as a residual. Vote aggregation and primitive
# matching (PointNet++ set abstraction) are replaced by random features of the same layout;
# a squared-error loss on random targets stands in for the detection losses.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ProposalModuleRefine(nn.Module):
    def __init__(self, num_class=4, num_heading_bin=2, num_size_cluster=4, num_proposal=8, seed_feat_dim=32):
        super().__init__()
        self.num_class = num_class
        self.num_heading_bin = num_heading_bin
        self.num_size_cluster = num_size_cluster
        self.num_proposal = num_proposal
        out_dim = 2 + 3 + num_heading_bin * 2 + num_size_cluster * 4 + num_class

        self.conv1 = nn.Conv1d(seed_feat_dim, 32, 1)
        self.conv2 = nn.Conv1d(32, 32, 1)
        self.conv3 = nn.Conv1d(32, out_dim, 1)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(32)

        self.conv_surface1 = nn.Conv1d(seed_feat_dim, 16, 1)
        self.bn_surface1 = nn.BatchNorm1d(16)
        self.conv_line1 = nn.Conv1d(seed_feat_dim, 16, 1)
        self.bn_line1 = nn.BatchNorm1d(16)

        self.conv_refine1 = nn.Conv1d(32, 32, 1)
        self.conv_refine2 = nn.Conv1d(32, 32, 1)
        self.conv_refine3 = nn.Conv1d(32, 32, 1)
        self.conv_refine4 = nn.Conv1d(32, out_dim, 1)
        self.bn_refine1 = nn.BatchNorm1d(32)
        self.bn_refine2 = nn.BatchNorm1d(32)
        self.bn_refine3 = nn.BatchNorm1d(32)

    def forward(self, features, surface_features, line_features, end_points):
        batch_size = features.shape[0]
        object_proposal = features.shape[2]
        # --------- PROPOSAL GENERATION ---------
        net = F.relu(self.bn1(self.conv1(features)))
        net = F.relu(self.bn2(self.conv2(net)))
        original_feature = net
        net = self.conv3(net)
        end_points['scores' + 'center'] = net.transpose(2, 1)

        surface_features = F.relu(self.bn_surface1(self.conv_surface1(surface_features)))
        surface_features = surface_features.view(batch_size, -1, 6, object_proposal).contiguous()
        line_features = F.relu(self.bn_line1(self.conv_line1(line_features)))
        line_features = line_features.view(batch_size, -1, 12, object_proposal).contiguous()

        surface_pool_feature = F.max_pool2d(surface_features, (6, 1), stride=1).squeeze(2)
        line_pool_feature = F.max_pool2d(line_features, (12, 1), stride=1).squeeze(2)

        combine_feature = torch.cat((surface_pool_feature, line_pool_feature), dim=1)

        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net += original_feature  ### Residual feature
        net = F.relu(self.bn_refine2(self.conv_refine2(net)))
        net = F.relu(self.bn_refine3(self.conv_refine3(net)))
        net = self.conv_refine4(net)
        end_points['scores' + 'opt'] = net.transpose(2, 1)
        return end_points


model = ProposalModuleRefine()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
for it in range(2):
    features = torch.randn(2, 32, 8)              # aggregated vote features, one column per proposal
    surface_features = torch.randn(2, 32, 6 * 8)  # matched surface-centre features, 6 per proposal
    line_features = torch.randn(2, 32, 12 * 8)    # matched line-centre features, 12 per proposal
    end_points = model(features, surface_features, line_features, {})
    target = torch.randn_like(end_points['scores' + 'opt'])
    loss = F.mse_loss(end_points['scores' + 'center'], target) + F.mse_loss(end_points['scores' + 'opt'], target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
