# A recurrent (step-by-step) linear-attention transformer layer, as used for autoregressive
# generation: each call takes the current token's query/key/value and the running state
# (Si, Zi) returned by the previous call. Here the recurrent layer is trained end to end by
# chaining its outputs into a prediction head over a short sequence.
import torch
from torch.nn import Module
import torch.nn as nn

torch.manual_seed(0)


def elu_feature_map(x):
    return torch.nn.functional.elu(x) + 1


class RecurrentLinearAttention(Module):
    def __init__(self, feature_map=None, eps=1e-6):
        super(RecurrentLinearAttention, self).__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, memory=None):
        Q = self.feature_map(query)
        K = self.feature_map(key)
        N, H, D = Q.shape
        _, _, M = value.shape

        if memory is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = memory

        if len(Si) != N:
            raise ValueError("The batch size changed during iteration")

        # Update the internal state
        Zi = Zi + K
        Si = Si + torch.einsum("nhd,nhm->nhdm", K, value)

        # Compute the output
        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)
        return V, [Si, Zi]


class RecurrentAttentionLayer(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.query_projection = nn.Linear(d_model, d_model)
        self.key_projection = nn.Linear(d_model, d_model)
        self.value_projection = nn.Linear(d_model, d_model)
        self.out_projection = nn.Linear(d_model, d_model)
        self.inner_attention = RecurrentLinearAttention()

    def forward(self, x, state=None):
        N, E = x.shape
        H = self.n_heads
        q = self.query_projection(x).view(N, H, -1)
        k = self.key_projection(x).view(N, H, -1)
        v = self.value_projection(x).view(N, H, -1)
        new_value, state = self.inner_attention(q, k, v, state)
        return self.out_projection(new_value.view(N, -1)), state


layer = RecurrentAttentionLayer(d_model=16, n_heads=2)
head = nn.Linear(16, 4)
optimizer = torch.optim.Adam(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
for it in range(2):
    sequence = torch.randn(5, 3, 16)
    targets = torch.randint(0, 4, (5, 3))
    state = None
    losses = []
    for t in range(sequence.shape[0]):
        out, state = layer(sequence[t], state)
        losses.append(nn.functional.cross_entropy(head(out), targets[t]))
    loss = torch.stack(losses).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
