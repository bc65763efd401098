# GANet (lane detection): the neck's transformer encoder (TransConvEncoderModule) applies
# position-attention layers to the deepest backbone feature, adding a sine position embedding
# to each layer's pre-conv output. A small ConvModule (conv, BN, ReLU) stands in for mmcv's;
# the FPN around it is cut down to a 1x1 head with an MSE loss on a random heat map, and a
# random feature map stands in for the ResNet output. The position embeddings are kept on the
# CPU here (the repository moves them with .cuda()).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, mask):
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=mask.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


def build_position_encoding(hidden_dim, shape):
    mask = torch.zeros(shape, dtype=torch.bool)
    pos_module = PositionEmbeddingSine(hidden_dim // 2)
    return pos_module(mask)


class AttentionLayer(nn.Module):
    """ Position attention module"""

    def __init__(self, in_dim, out_dim, ratio=4, stride=1):
        super(AttentionLayer, self).__init__()
        self.chanel_in = in_dim
        self.pre_conv = ConvModule(in_dim, out_dim, kernel_size=3, stride=stride, padding=1, inplace=False)
        self.query_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim // ratio, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim // ratio, kernel_size=1)
        self.value_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim, kernel_size=1)
        self.final_conv = ConvModule(out_dim, out_dim, kernel_size=3, padding=1)
        self.softmax = nn.Softmax(dim=-1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x, pos=None):
        x = self.pre_conv(x)
        m_batchsize, _, height, width = x.size()
        if pos is not None:
            x = x + pos
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        attention = attention.permute(0, 2, 1)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention)
        out = out.view(m_batchsize, -1, height, width)
        out_feat = self.gamma * out + x
        out_feat = self.final_conv(out_feat)
        return out_feat


class TransConvEncoderModule(nn.Module):
    def __init__(self, in_dim, attn_in_dims, attn_out_dims, strides, ratios, downscale=True, pos_shape=None):
        super(TransConvEncoderModule, self).__init__()
        attn_layers = []
        for dim1, dim2, stride, ratio in zip(attn_in_dims, attn_out_dims, strides, ratios):
            attn_layers.append(AttentionLayer(dim1, dim2, ratio, stride))
        self.attn_layers = nn.ModuleList(attn_layers)
        self.pos_shape = pos_shape
        self.pos_embeds = []
        for dim in attn_out_dims:
            self.pos_embeds.append(build_position_encoding(dim, pos_shape))

    def forward(self, src):
        for layer, pos in zip(self.attn_layers, self.pos_embeds):
            src = layer(src, pos.to(src.device))
        return src


trans_head = TransConvEncoderModule(in_dim=32, attn_in_dims=[32, 16], attn_out_dims=[16, 16], strides=[1, 1],
                                    ratios=[4, 4], pos_shape=[2, 5, 10])
head = nn.Conv2d(16, 1, 1)
optimizer = torch.optim.AdamW(list(trans_head.parameters()) + list(head.parameters()), lr=1e-3)
trans_head.train()
for it in range(2):
    feat = torch.randn(2, 32, 5, 10)       # the deepest backbone feature
    heat = torch.rand(2, 1, 5, 10)         # key-point heat map target
    pred = head(trans_head(feat)).sigmoid()
    loss = F.mse_loss(pred, heat)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
