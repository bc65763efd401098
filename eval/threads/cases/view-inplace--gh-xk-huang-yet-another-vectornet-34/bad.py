# yet-another-vectornet (a VectorNet reimplementation) trained in a notebook: each scene's polylines
# are encoded by the subgraph, the global graph is one self-attention layer whose scores go through
# masked_softmax (modeling/selfatten.py) so that padded polylines get no attention, and the
# trajectory head regresses the future positions. Small stand-ins for the model and random
# polylines stand in for the Argoverse scenes (torch_geometric batches).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def masked_softmax(X, valid_len):
    """
    masked softmax for attention scores
    args:
        X: 3-D tensor, valid_len: 1-D or 2-D tensor
    """
    if valid_len is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_len.dim() == 1:
            valid_len = torch.repeat_interleave(
                valid_len, repeats=shape[1], dim=0)
        else:
            valid_len = valid_len.reshape(-1)
        # Fill masked elements with a large negative, whose exp is 0
        X = X.reshape(-1, shape[-1])
        for count, row in enumerate(X):
            row[int(valid_len[count]):] = -1e6
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class SelfAttentionLayer(nn.Module):
    def __init__(self, in_channels, global_graph_width, need_scale=False):
        super(SelfAttentionLayer, self).__init__()
        self.in_channels = in_channels
        self.q_lin = nn.Linear(in_channels, global_graph_width)
        self.k_lin = nn.Linear(in_channels, global_graph_width)
        self.v_lin = nn.Linear(in_channels, global_graph_width)
        self.scale_factor_d = 1 + int(need_scale) * (global_graph_width ** 0.5 - 1)

    def forward(self, x, valid_len):
        query = self.q_lin(x)
        key = self.k_lin(x)
        value = self.v_lin(x)
        scores = torch.bmm(query, key.transpose(1, 2))
        attention_weights = masked_softmax(scores, valid_len)
        return torch.bmm(attention_weights, value)


class HGNN(nn.Module):
    def __init__(self, in_channels, out_channels, subgraph_width=16, global_graph_width=16):
        super(HGNN, self).__init__()
        self.subgraph = nn.Sequential(nn.Linear(in_channels, subgraph_width), nn.ReLU(),
                                      nn.Linear(subgraph_width, subgraph_width))
        self.self_atten_layer = SelfAttentionLayer(subgraph_width, global_graph_width, need_scale=False)
        self.traj_pred_mlp = nn.Sequential(nn.Linear(global_graph_width, 32), nn.ReLU(), nn.Linear(32, out_channels))

    def forward(self, polylines, valid_lens):
        sub_graph_out = self.subgraph(polylines).max(dim=2).values  # [batch, polylines, width]
        global_graph_out = self.self_atten_layer(sub_graph_out, valid_lens)
        return self.traj_pred_mlp(global_graph_out[:, 0])  # the agent's polyline


batch_size, max_polylines, points, in_channels, out_channels = 4, 6, 5, 8, 60
model = HGNN(in_channels, out_channels)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
for epoch in range(2):
    for it in range(3):
        data = torch.randn(batch_size, max_polylines, points, in_channels)
        valid_len = torch.randint(2, max_polylines + 1, (batch_size,))
        y = torch.randn(batch_size, out_channels)
        optimizer.zero_grad()
        out = model(data, valid_len)
        loss = F.mse_loss(out, y)
        loss.backward()
        optimizer.step()
    print('epoch', epoch, 'loss', round(loss.item(), 4))
