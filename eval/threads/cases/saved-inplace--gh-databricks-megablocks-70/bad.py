# A mixture-of-experts layer (MegaBlocks-style): a learned router scores the tokens, picks the
# top-k experts in a helper method and normalizes the chosen expert weights before the
# experts' outputs are combined with them.
from dataclasses import dataclass

import torch
import torch.nn.functional as F

torch.manual_seed(0)


@dataclass
class Arguments:
    hidden_size: int = 16
    ffn_hidden_size: int = 32
    moe_num_experts: int = 4
    moe_top_k: int = 2
    moe_jitter_eps: float = 0.01
    moe_normalize_expert_weights: float = 1.0
    uniform_expert_assignment: bool = False


class LearnedRouter(torch.nn.Module):
    def __init__(self, args: Arguments):
        super().__init__()
        self.args = args
        self.layer = torch.nn.Linear(args.hidden_size, args.moe_num_experts, bias=False)
        torch.nn.init.normal_(self.layer.weight, std=0.02)

    def jitter(self, x):
        low = 1.0 - self.args.moe_jitter_eps
        high = 1.0 + self.args.moe_jitter_eps
        noise = torch.rand(x.size(), dtype=x.dtype, device=x.device)
        return low + noise * (high - low)

    def _top_k(self, scores):
        if self.args.moe_top_k == 1:
            return scores.max(dim=-1)
        return torch.topk(scores, self.args.moe_top_k, dim=-1)

    def forward(self, x):
        if self.training and self.args.moe_jitter_eps is not None:
            x = x * self.jitter(x)

        scores = self.layer(x.view(-1, x.shape[-1])).softmax(dim=-1)
        expert_weights, expert_indices = self._top_k(scores)
        if self.args.moe_normalize_expert_weights:
            expert_weights /= torch.norm(
                expert_weights, p=self.args.moe_normalize_expert_weights, dim=-1, keepdim=True)
        return scores, expert_weights, expert_indices


class MLP(torch.nn.Module):
    def __init__(self, args: Arguments):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(args.moe_num_experts, args.hidden_size, args.ffn_hidden_size) * 0.05)
        self.w2 = torch.nn.Parameter(torch.randn(args.moe_num_experts, args.ffn_hidden_size, args.hidden_size) * 0.05)

    def forward(self, x, expert):
        return F.gelu(x @ self.w1[expert]) @ self.w2[expert]


class MoE(torch.nn.Module):
    def __init__(self, args: Arguments):
        super().__init__()
        self.args = args
        self.router = LearnedRouter(args)
        self.experts = MLP(args)

    def forward(self, x):
        in_shape = x.shape
        scores, expert_weights, top_experts = self.router(x)
        tokens = x.view(-1, in_shape[-1])
        out = torch.zeros_like(tokens)
        for k in range(self.args.moe_top_k):
            for e in range(self.args.moe_num_experts):
                idx = (top_experts[:, k] == e).nonzero(as_tuple=True)[0]
                if idx.numel() == 0:
                    continue
                expert_out = self.experts(tokens[idx], e)
                out = out.index_add(0, idx, expert_out * expert_weights[idx, k:k + 1])
        return out.view(in_shape), scores


args = Arguments()
moe = MoE(args)
lm_head = torch.nn.Linear(args.hidden_size, 10)
optimizer = torch.optim.AdamW(list(moe.parameters()) + list(lm_head.parameters()), lr=1e-3)
hidden = torch.randn(2, 8, args.hidden_size)
targets = torch.randint(0, 10, (2, 8))

moe.train()
for step in range(3):
    out, scores = moe(hidden)
    loss = F.cross_entropy(lm_head(out).view(-1, 10), targets.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
