# nflows-style neural spline flow: a PiecewiseRationalQuadraticCouplingTransform splits the
# features by a mask, a transform net computes the spline parameters of the transformed half
# from the identity half, and _piecewise_cdf scales the bin widths/heights down by
# sqrt(hidden_features) before the spline. The user's transform net is their own MLP that ends
# with a ReLU. (The spline itself is simplified to a monotone piecewise-linear map on [0, 1].)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def rational_quadratic_spline(inputs, unnormalized_widths, unnormalized_heights, unnormalized_derivatives,
                              inverse=False, min_bin_width=1e-3, min_bin_height=1e-3, min_derivative=1e-3):
    num_bins = unnormalized_widths.shape[-1]
    widths = min_bin_width + (1 - min_bin_width * num_bins) * F.softmax(unnormalized_widths, dim=-1)
    heights = min_bin_height + (1 - min_bin_height * num_bins) * F.softmax(unnormalized_heights, dim=-1)
    cumwidths = F.pad(torch.cumsum(widths, dim=-1), (1, 0))
    cumheights = F.pad(torch.cumsum(heights, dim=-1), (1, 0))
    bin_idx = (torch.searchsorted(cumwidths[..., 1:].detach().contiguous(), inputs[..., None]).clamp(max=num_bins - 1))
    w = widths.gather(-1, bin_idx)[..., 0]
    h = heights.gather(-1, bin_idx)[..., 0]
    x0 = cumwidths.gather(-1, bin_idx)[..., 0]
    y0 = cumheights.gather(-1, bin_idx)[..., 0]
    outputs = y0 + (inputs - x0) * h / w
    logabsdet = torch.log(h) - torch.log(w)
    return outputs, logabsdet


class PiecewiseRationalQuadraticCouplingTransform(nn.Module):
    def __init__(self, mask, transform_net_create_fn, num_bins=10):
        super().__init__()
        self.num_bins = num_bins
        mask = torch.as_tensor(mask)
        self.register_buffer("identity_features", mask.le(0).nonzero().view(-1))
        self.register_buffer("transform_features", mask.gt(0).nonzero().view(-1))
        self.transform_net = transform_net_create_fn(
            len(self.identity_features), len(self.transform_features) * self._transform_dim_multiplier())

    def _transform_dim_multiplier(self):
        return self.num_bins * 3 + 1

    def forward(self, inputs):
        identity_split = inputs[:, self.identity_features]
        transform_split = inputs[:, self.transform_features]
        transform_params = self.transform_net(identity_split)
        b, d = transform_split.shape
        transform_params = transform_params.reshape(b, d, self._transform_dim_multiplier())
        transform_split, logabsdet = self._piecewise_cdf(transform_split, transform_params)
        outputs = torch.empty_like(inputs)
        outputs[:, self.identity_features] = identity_split
        outputs[:, self.transform_features] = transform_split
        return outputs, logabsdet.sum(-1)

    def _piecewise_cdf(self, inputs, transform_params, inverse=False):
        unnormalized_widths = transform_params[..., : self.num_bins]
        unnormalized_heights = transform_params[..., self.num_bins: 2 * self.num_bins]
        unnormalized_derivatives = transform_params[..., 2 * self.num_bins:]

        if hasattr(self.transform_net, "hidden_features"):
            unnormalized_widths = unnormalized_widths / np.sqrt(self.transform_net.hidden_features)
            unnormalized_heights = unnormalized_heights / np.sqrt(self.transform_net.hidden_features)

        return rational_quadratic_spline(
            inputs=inputs,
            unnormalized_widths=unnormalized_widths,
            unnormalized_heights=unnormalized_heights,
            unnormalized_derivatives=unnormalized_derivatives,
            inverse=inverse,
        )


class ConditionerMLP(nn.Module):
    """The user's transform net: hidden layers with ReLU, and a ReLU on the output as well."""

    def __init__(self, in_features, out_features, hidden_features=32):
        super().__init__()
        self.hidden_features = hidden_features
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden_features), nn.ReLU(),
            nn.Linear(hidden_features, out_features), nn.ReLU())

    def forward(self, x):
        return self.net(x)


flow = PiecewiseRationalQuadraticCouplingTransform(
    mask=[1, 0, 1, 0], transform_net_create_fn=lambda i, o: ConditionerMLP(i, o, hidden_features=32))
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
data = torch.rand(256, 4)

for it in range(3):
    optimizer.zero_grad()
    z, logabsdet = flow(data)
    log_prob = -((z - 0.5) ** 2).sum(-1) + logabsdet
    loss = -log_prob.mean()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
