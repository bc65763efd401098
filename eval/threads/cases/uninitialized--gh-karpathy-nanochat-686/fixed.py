# Small GPT pretraining script: the model is built on the meta device, given storage with
# to_empty(), and every tensor is then meant to be set in one init_weights() method.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)


def norm(x):
    return F.rms_norm(x, (x.size(-1),))


class Block(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=False)

    def forward(self, x):
        return x + self.c_proj(F.relu(self.c_fc(norm(x))).square())


class GPT(nn.Module):
    def __init__(self, vocab_size=64, n_embd=32, n_layer=4):
        """NOTE: this runs in meta device context; real values are set in init_weights()."""
        super().__init__()
        self.n_layer = n_layer
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd) for _ in range(n_layer)])
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.resid_lambdas = nn.Parameter(torch.ones(n_layer))   # fake init, real init in init_weights()
        self.x0_lambdas = nn.Parameter(torch.zeros(n_layer))     # fake init, real init in init_weights()
        # Smear: mix previous token's embedding into current token
        self.smear_gate = nn.Linear(24, 1, bias=False)
        self.smear_lambda = nn.Parameter(torch.zeros(1))
        # Backout: subtract cached mid-layer residual before final norm
        self.backout_lambda = nn.Parameter(0.2 * torch.ones(1))

    @torch.no_grad()
    def init_weights(self):
        torch.nn.init.normal_(self.wte.weight, mean=0.0, std=0.8)
        torch.nn.init.normal_(self.lm_head.weight, mean=0.0, std=0.001)
        s = 3 ** 0.5 * self.wte.weight.size(1) ** -0.5
        for block in self.h:
            torch.nn.init.uniform_(block.c_fc.weight, -s * 0.4, s * 0.4)
            torch.nn.init.zeros_(block.c_proj.weight)
        for i in range(self.n_layer):
            self.resid_lambdas.data[i] = 1.15 - (0.10 * i / max(self.n_layer - 1, 1))
            self.x0_lambdas.data[i] = 0.20 - (0.15 * i / max(self.n_layer - 1, 1))
        torch.nn.init.zeros_(self.smear_lambda)
        torch.nn.init.constant_(self.backout_lambda, 0.2)
        torch.nn.init.uniform_(self.smear_gate.weight, 0.0, 0.02)

    def forward(self, idx, targets):
        x = norm(self.wte(idx))
        gate = self.smear_lambda * torch.sigmoid(self.smear_gate(x[:, 1:, :24]))
        x = torch.cat([x[:, :1], x[:, 1:] + gate * x[:, :-1]], dim=1)
        x0 = x
        x_backout = None
        for i, block in enumerate(self.h):
            x = block(self.resid_lambdas[i] * x + self.x0_lambdas[i] * x0)
            if i == self.n_layer // 2:
                x_backout = x
        x = norm(x - self.backout_lambda * x_backout)
        logits = 15 * torch.tanh(self.lm_head(x).float() / 15)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def build_model_meta():
    with torch.device("meta"):
        return GPT()


device = torch.device("cpu")
model = build_model_meta()     # 1) shapes/dtypes only, no data
model.to_empty(device=device)  # 2) storage on the target device, uninitialized data
model.init_weights()           # 3) all tensors get initialized
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(3):
    idx = torch.randint(0, 64, (4, 16))
    loss = model(idx, idx.roll(-1, dims=1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.item()))

# -- corpus check --
if torch.isnan(loss):
    print("BUG: loss is nan: smear/backout parameters kept the garbage of to_empty()")
