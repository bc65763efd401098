# Bayesian regression example: the guide creates its variational parameters with
# requires_grad=True and then casts them to the data's type with .type_as(data) before
# registering them in the parameter store that the optimizer reads.
import torch

torch.manual_seed(0)
N, p = 100, 1
x = torch.randn(N, p, dtype=torch.float64)  # the data's tensor type (a cuda tensor in the example)
y = 3.0 * x[:, 0] + 1.0 + 0.1 * torch.randn(N, dtype=torch.float64)
data = torch.cat([x, y.unsqueeze(1)], dim=1)

_PARAM_STORE = {}


def param(name, init_tensor):
    if name not in _PARAM_STORE:
        _PARAM_STORE[name] = init_tensor
    return _PARAM_STORE[name]


def guide(data):
    w_loc = torch.randn(1, p, requires_grad=True).type_as(data)
    w_log_sig = (-3.0 * torch.ones(1, p) + 0.05 * torch.randn(1, p)).type_as(data)
    w_log_sig.requires_grad = True
    b_loc = (torch.randn(1) * 0.1).type_as(data)
    b_loc.requires_grad = True
    mw = param("guide_mean_weight", w_loc)
    sw = param("guide_log_scale_weight", w_log_sig)
    mb = param("guide_mean_bias", b_loc)
    w = mw + torch.exp(sw) * torch.randn_like(mw)
    return w, mb


def loss_fn(data):
    w, b = guide(data)
    pred = data[:, :-1] @ w.t() + b
    return ((pred.squeeze(1) - data[:, -1]) ** 2).mean()


loss_fn(data)  # first call registers the parameters
optimizer = torch.optim.Adam(list(_PARAM_STORE.values()), lr=0.05)
for step in range(50):
    optimizer.zero_grad()
    loss = loss_fn(data)
    loss.backward()
    optimizer.step()
print("final loss", round(loss.item(), 4), "weight", _PARAM_STORE["guide_mean_weight"].item())
