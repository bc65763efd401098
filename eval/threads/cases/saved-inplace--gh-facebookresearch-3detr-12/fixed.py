# A 3D detection transformer (DETR-style encoder over point features): the feed-forward
# part applies an in-place Dropout to the output of the ReLU activation.
import torch
from torch import nn

torch.manual_seed(0)

ACTIVATION_DICT = {"relu": nn.ReLU, "gelu": nn.GELU}


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead=4, dim_feedforward=64, dropout=0.1, activation="relu"):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout, inplace=False)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout, inplace=True)
        self.dropout2 = nn.Dropout(dropout, inplace=True)
        self.activation = ACTIVATION_DICT[activation]()

    def forward(self, src, pos=None):
        src2 = self.norm1(src)
        q = k = src2 if pos is None else src2 + pos
        src2 = self.self_attn(q, k, value=src2)[0]
        src = src + self.dropout1(src2)
        src2 = self.norm2(src)
        src2 = self.linear2(self.dropout(self.activation(self.linear1(src2))))
        src = src + self.dropout2(src2)
        return src


class TransformerEncoder(nn.Module):
    def __init__(self, d_model, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([TransformerEncoderLayer(d_model) for _ in range(num_layers)])

    def forward(self, src, pos=None):
        output = src
        for layer in self.layers:
            output = layer(output, pos=pos)
        return output


encoder = TransformerEncoder(d_model=32, num_layers=2)
box_head = nn.Linear(32, 7)
params = list(encoder.parameters()) + list(box_head.parameters())
optimizer = torch.optim.AdamW(params, lr=1e-4)

points = torch.randn(20, 2, 32)   # npoints x batch x channel
pos = torch.randn(20, 2, 32)
gt_boxes = torch.randn(20, 2, 7)

encoder.train()
for it in range(2):
    enc = encoder(points, pos=pos)
    loss = nn.functional.smooth_l1_loss(box_head(enc), gt_boxes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
