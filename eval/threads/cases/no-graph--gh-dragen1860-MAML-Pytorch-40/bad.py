# MAML (Meta learner): for every task, one gradient step on the support set gives fast weights, the
# query loss is recorded after each inner step, and the meta update backpropagates the last query
# loss. The reporter runs it with update_step = 1, so the only query loss after an update is the one
# recorded under torch.no_grad(). Random few-shot tasks stand in for miniImagenet.
from argparse import Namespace

import numpy as np
import torch
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(0)


class Learner(nn.Module):
    def __init__(self, in_dim, n_way):
        super().__init__()
        self.vars = nn.ParameterList([nn.Parameter(torch.randn(32, in_dim) * 0.1), nn.Parameter(torch.zeros(32)),
                                      nn.Parameter(torch.randn(n_way, 32) * 0.1), nn.Parameter(torch.zeros(n_way))])

    def forward(self, x, vars=None, bn_training=True):
        if vars is None:
            vars = self.vars
        w1, b1, w2, b2 = vars
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)

    def parameters(self, recurse=True):
        return self.vars


class Meta(nn.Module):
    def __init__(self, args):
        super(Meta, self).__init__()
        self.update_lr = args.update_lr
        self.meta_lr = args.meta_lr
        self.update_step = args.update_step
        self.net = Learner(args.in_dim, args.n_way)
        self.meta_optim = optim.Adam(self.net.parameters(), lr=self.meta_lr)

    def forward(self, x_spt, y_spt, x_qry, y_qry):
        task_num = x_spt.size(0)
        querysz = x_qry.size(1)
        losses_q = [0 for _ in range(self.update_step + 1)]
        corrects = [0 for _ in range(self.update_step + 1)]

        for i in range(task_num):
            logits = self.net(x_spt[i], vars=None, bn_training=True)
            loss = F.cross_entropy(logits, y_spt[i])
            grad = torch.autograd.grad(loss, self.net.parameters())
            fast_weights = list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, self.net.parameters())))

            # this is the loss and accuracy before first update
            with torch.no_grad():
                logits_q = self.net(x_qry[i], self.net.parameters(), bn_training=True)
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[0] += loss_q
                pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
                corrects[0] = corrects[0] + torch.eq(pred_q, y_qry[i]).sum().item()

            # this is the loss and accuracy after the first update
            with torch.no_grad():
                logits_q = self.net(x_qry[i], fast_weights, bn_training=True)
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[1] += loss_q
                pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
                corrects[1] = corrects[1] + torch.eq(pred_q, y_qry[i]).sum().item()

            for k in range(1, self.update_step):
                logits = self.net(x_spt[i], fast_weights, bn_training=True)
                loss = F.cross_entropy(logits, y_spt[i])
                grad = torch.autograd.grad(loss, fast_weights)
                fast_weights = list(map(lambda p: p[1] - self.update_lr * p[0], zip(grad, fast_weights)))
                logits_q = self.net(x_qry[i], fast_weights, bn_training=True)
                loss_q = F.cross_entropy(logits_q, y_qry[i])
                losses_q[k + 1] += loss_q
                with torch.no_grad():
                    pred_q = F.softmax(logits_q, dim=1).argmax(dim=1)
                    corrects[k + 1] = corrects[k + 1] + torch.eq(pred_q, y_qry[i]).sum().item()

        # sum over all losses on query set across all tasks
        loss_q = losses_q[-1] / task_num
        self.meta_optim.zero_grad()
        loss_q.backward()
        self.meta_optim.step()
        return np.array(corrects) / (querysz * task_num)


args = Namespace(update_lr=0.4, meta_lr=1e-3, n_way=5, k_spt=1, k_qry=3, task_num=2, update_step=1, in_dim=20)
maml = Meta(args)
for step in range(3):
    x_spt = torch.randn(args.task_num, args.n_way * args.k_spt, args.in_dim)
    y_spt = torch.arange(args.n_way).repeat(args.task_num, args.k_spt)
    x_qry = torch.randn(args.task_num, args.n_way * args.k_qry, args.in_dim)
    y_qry = torch.arange(args.n_way).repeat_interleave(args.k_qry).repeat(args.task_num, 1)
    accs = maml(x_spt, y_spt, x_qry, y_qry)
    print(step, accs)
