# VRCNet-style variational point cloud completion: during training the partial cloud and a
# sample of the complete cloud are encoded in one batch; the global feature is chunked into the
# two halves, which go through residual MLP blocks that infer the posterior and the prior.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PCN_encoder(nn.Module):
    def __init__(self, output_size=64):
        super(PCN_encoder, self).__init__()
        self.conv1 = nn.Conv1d(3, 32, 1)
        self.conv2 = nn.Conv1d(32, output_size, 1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.conv2(x)
        return torch.max(x, dim=2)[0]


class Linear_ResBlock(nn.Module):
    def __init__(self, input_size=64, output_size=32):
        super(Linear_ResBlock, self).__init__()
        self.conv1 = nn.Linear(input_size, input_size)
        self.conv2 = nn.Linear(input_size, output_size)
        self.conv_res = nn.Linear(input_size, output_size)

        self.af = nn.ReLU(inplace=False)

    def forward(self, feature):
        return self.conv2(self.af(self.conv1(self.af(feature)))) + self.conv_res(feature)


class Model(nn.Module):
    def __init__(self, size_z=16, global_feature_size=64, num_points=32):
        super(Model, self).__init__()
        self.size_z = size_z
        self.num_points = num_points
        self.encoder = PCN_encoder(output_size=global_feature_size)
        self.posterior_infer1 = Linear_ResBlock(input_size=global_feature_size, output_size=global_feature_size)
        self.posterior_infer2 = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.prior_infer = Linear_ResBlock(input_size=global_feature_size, output_size=size_z * 2)
        self.generator = Linear_ResBlock(input_size=size_z, output_size=global_feature_size)
        self.decoder = nn.Linear(global_feature_size * 2, num_points * 3)

    def forward(self, x, gt, is_training=True):
        if is_training:
            points = torch.cat([x, gt], dim=0)
        else:
            points = x
        feat = self.encoder(points)

        if is_training:
            feat_x, feat_y = feat.chunk(2)
            o_x = self.posterior_infer2(self.posterior_infer1(feat_x))
            q_mu, q_std = torch.split(o_x, self.size_z, dim=1)
            o_y = self.prior_infer(feat_y)
            p_mu, p_std = torch.split(o_y, self.size_z, dim=1)
            q_distribution = torch.distributions.Normal(q_mu, F.softplus(q_std))
            p_distribution = torch.distributions.Normal(p_mu, F.softplus(p_std))
            z = q_distribution.rsample()
            dl = torch.distributions.kl_divergence(q_distribution, p_distribution).mean()
            feat = feat_x
        else:
            o_x = self.posterior_infer2(self.posterior_infer1(feat))
            q_mu, q_std = torch.split(o_x, self.size_z, dim=1)
            z = q_mu
            dl = torch.zeros(())
        fine = self.decoder(torch.cat([feat, self.generator(z)], dim=1)).view(-1, 3, self.num_points)
        return fine, dl


def chamfer(a, b):
    d = torch.cdist(a.transpose(1, 2), b.transpose(1, 2))
    return d.min(dim=2)[0].mean() + d.min(dim=1)[0].mean()


net = Model()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
net.train()
for i in range(2):
    gt = torch.randn(4, 3, 32)
    inputs = gt[:, :, :16].repeat(1, 1, 2)
    fine, net_loss = net(inputs, gt, is_training=True)
    loss = chamfer(fine, gt) + 0.1 * net_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.item())
