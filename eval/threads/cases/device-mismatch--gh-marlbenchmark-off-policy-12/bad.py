# A multi-agent DDPG critic (MADDPG with several Q heads) from an off-policy MARL benchmark: the
# critic takes the device in its constructor, moves itself there with self.to(device) at the end
# of __init__, and converts its numpy inputs with .to(**self.tpdv). Training runs on the GPU
# (the meta device stands in for it here); a small random replay batch stands in for the MPE
# environment's transitions.
import argparse

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


def init(module, weight_init, bias_init, gain=1):
    weight_init(module.weight.data, gain=gain)
    bias_init(module.bias.data)
    return module


def to_torch(input):
    return torch.from_numpy(input) if type(input) is np.ndarray else input


class MLPBase(nn.Module):
    def __init__(self, args, input_dim):
        super().__init__()
        self.fc1 = nn.Sequential(nn.Linear(input_dim, args.hidden_size), nn.ReLU())
        self.fc2 = nn.Sequential(nn.Linear(args.hidden_size, args.hidden_size), nn.ReLU())

    def forward(self, x):
        return self.fc2(self.fc1(x))


class MDDPG_Critic(nn.Module):
    def __init__(self, args, central_obs_dim, central_act_dim, device, num_q_outs):
        super().__init__()
        self._use_orthogonal = args.use_orthogonal
        self.hidden_size = args.hidden_size
        self.device = device
        self.tpdv = dict(dtype=torch.float32, device=device)

        input_dim = central_obs_dim + central_act_dim
        self.mlp = MLPBase(args, input_dim)

        init_method = [nn.init.xavier_uniform_, nn.init.orthogonal_][self._use_orthogonal]

        def init_(m):
            return init(m, init_method, lambda x: nn.init.constant_(x, 0))
        self.q_outs = [init_(nn.Linear(self.hidden_size, 1)) for _ in range(num_q_outs)]

        self.to(device)

    def forward(self, central_obs, central_act):
        central_obs = to_torch(central_obs).to(**self.tpdv)
        central_act = to_torch(central_act).to(**self.tpdv)

        x = torch.cat([central_obs, central_act], dim=1)
        x = self.mlp(x)
        q_values = [q_out(x) for q_out in self.q_outs]
        return q_values


args = argparse.Namespace(use_orthogonal=True, hidden_size=32, critic_lr=1e-3)
device = torch.device("meta")  # torch.device("cuda:0")
critic = MDDPG_Critic(args, central_obs_dim=12, central_act_dim=4, device=device, num_q_outs=2)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=args.critic_lr)

for step in range(2):
    cent_obs = np.random.randn(8, 12).astype(np.float32)
    cent_act = np.random.randn(8, 4).astype(np.float32)
    target_q = torch.randn(8, 1).to(device)
    q_values = critic(cent_obs, cent_act)
    critic_loss = sum(((q - target_q) ** 2).mean() for q in q_values)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    print(step, tuple(critic_loss.shape), critic_loss.device.type)
