# A transformer forecaster trained for one epoch on a toy multivariate series; train.py was then
# modified to call forecaster.predict() twice on the first test sample (context xc/yc, target xt).
import torch
import torch.nn as nn

torch.manual_seed(0)
d_x, d_y, d_model, ctx_len, tgt_len = 2, 20, 32, 12, 6


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(d_x + d_y, d_model)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model, 4, 64, dropout=0.2, batch_first=True), num_layers=2)
        self.dropout_emb = nn.Dropout(0.2)
        self.head = nn.Linear(d_model, d_y)

    def forward(self, xc, yc, xt):
        ctx = self.embed(torch.cat([xc, yc], dim=-1))
        tgt = self.embed(torch.cat([xt, torch.zeros(xt.size(0), xt.size(1), d_y)], dim=-1))
        h = self.encoder(self.dropout_emb(torch.cat([ctx, tgt], dim=1)))
        return self.head(h[:, -xt.size(1):])

    @torch.no_grad()
    def predict(self, xc, yc, xt):
        return self(xc, yc, xt)


def make_samples(n):
    t = torch.arange(ctx_len + tgt_len).float().expand(n, -1)
    x = torch.stack([torch.sin(t / 5), torch.cos(t / 5)], dim=-1)
    y = torch.sin(t.unsqueeze(-1) / 3 + torch.rand(n, 1, d_y) * 6) + 0.05 * torch.randn(n, ctx_len + tgt_len, d_y)
    return x[:, :ctx_len], y[:, :ctx_len], x[:, ctx_len:], y[:, ctx_len:]


forecaster = Forecaster()
opt = torch.optim.Adam(forecaster.parameters(), lr=1e-3)
train_samples = [make_samples(16) for _ in range(5)]
forecaster.train()
for xc, yc, xt, yt in train_samples:
    loss = nn.functional.mse_loss(forecaster(xc, yc, xt), yt)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("train loss", loss.item())

xc, yc, xt, _ = make_samples(1)
yt_pred1 = forecaster.predict(xc, yc, xt)
print("yt_pred 1[0][0]:")
print(yt_pred1[0][0][:5])
yt_pred2 = forecaster.predict(xc, yc, xt)
print("yt_pred 2[0][0]:")
print(yt_pred2[0][0][:5])

# -- corpus check --
if not torch.allclose(yt_pred1, yt_pred2):
    print("BUG: two predict() calls on the same input give different forecasts")
