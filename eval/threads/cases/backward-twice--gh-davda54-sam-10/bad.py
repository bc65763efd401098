# Multi-task classifier trained with SAM (two forward/backward passes per batch): the per-task
# losses are summed into `loss` in both passes, without starting the second sum from zero.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_tasks = 3


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups for p in g["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.heads = nn.Linear(32, num_tasks * 2)

    def forward(self, image):
        feat = self.backbone(image)
        return self.heads(feat).view(-1, num_tasks, 2), feat


def get_loss(output, target, t):
    loss_t = F.cross_entropy(output[:, t], target[:, t])
    acc_t = (output[:, t].argmax(1) == target[:, t]).float().mean()
    return loss_t, acc_t


model = MultiTaskNet()
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
loss_sum = [0.0] * num_tasks
acc_sum = [0.0] * num_tasks

for step in range(3):
    image = torch.randn(8, 10)
    target = torch.randint(0, 2, (8, num_tasks))

    output, logit_map = model(image)
    loss = 0
    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t)
        loss += loss_t
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()

    optimizer.zero_grad()
    loss.backward()
    optimizer.first_step(zero_grad=True)

    output, logit_map = model(image)
    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t)
        loss += loss_t
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()
    loss.backward()
    optimizer.second_step(zero_grad=True)
    print(f"step {step}: loss {loss.item():.4f}")
