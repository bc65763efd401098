# A network whose forward draws a random projection matrix with numpy on every call, passes it
# through a small "sensing" MLP and uses the result to weight the input before classifying.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)

num_p, num_s, num_outputs = 30, 60, 10
rank_el_se, num_hl_se, rank_ss, num_hl_class = 10, 10, 10, 10


class Net(nn.Module):
    def __init__(self, num_p, rank_el_se, num_hl_se, rank_ss, num_hl_class, num_outputs):
        super().__init__()
        self.se0 = nn.Linear(num_p, rank_el_se)
        self.se1 = nn.Linear(rank_el_se, num_hl_se)
        self.se2 = nn.Linear(num_hl_se, rank_ss)
        self.cl1 = nn.Linear(rank_ss, num_hl_class)
        self.cl2 = nn.Linear(num_hl_class, num_outputs)

    def forward(self, x):
        A = torch.from_numpy(np.random.rand(num_s, num_p))
        o = self.se0(A)
        o = torch.sigmoid(self.se1(o))
        o = torch.sigmoid(self.se2(o))
        o = o.mul(x)
        o = torch.sigmoid(self.cl1(o))
        return torch.sigmoid(self.cl2(o))


s_cl = Net(num_p, rank_el_se, num_hl_se, rank_ss, num_hl_class, num_outputs)
out = s_cl(torch.rand(num_s, rank_ss))
print("out", tuple(out.shape), out.dtype)
