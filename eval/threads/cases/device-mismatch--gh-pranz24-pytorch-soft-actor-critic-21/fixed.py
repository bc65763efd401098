# Soft Actor-Critic with the deterministic policy (--policy Deterministic), trained on the GPU (the
# meta device stands in for it here). The policy keeps its action rescaling and its exploration
# noise as plain tensor attributes and overrides to() to move them. A random replay memory stands
# in for the MuJoCo environment.
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

torch.manual_seed(0)
np.random.seed(0)
random.seed(0)


def weights_init_(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight, gain=1)
        torch.nn.init.constant_(m.bias, 0)


def hard_update(target, source):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(param.data)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(QNetwork, self).__init__()
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, 1)
        self.linear3 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear4 = nn.Linear(hidden_dim, 1)
        self.apply(weights_init_)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = self.linear2(F.relu(self.linear1(xu)))
        x2 = self.linear4(F.relu(self.linear3(xu)))
        return x1, x2


class DeterministicPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim, action_space=None):
        super(DeterministicPolicy, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)

        self.mean = nn.Linear(hidden_dim, num_actions)
        self.noise = torch.Tensor(num_actions)

        self.apply(weights_init_)

        # action rescaling
        if action_space is None:
            self.action_scale = 1.
            self.action_bias = 0.
        else:
            self.action_scale = torch.FloatTensor(
                (action_space.high - action_space.low) / 2.)
            self.action_bias = torch.FloatTensor(
                (action_space.high + action_space.low) / 2.)

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        mean = torch.tanh(self.mean(x)) * self.action_scale + self.action_bias
        return mean

    def sample(self, state):
        mean = self.forward(state)
        noise = self.noise.normal_(0., std=0.1)
        noise = noise.clamp(-0.25, 0.25)
        action = mean + noise
        return action, torch.tensor(0.), mean

    def to(self, device):
        self.action_scale = self.action_scale.to(device)
        self.action_bias = self.action_bias.to(device)
        self.noise = self.noise.to(device)
        return super(DeterministicPolicy, self).to(device)


class SAC(object):
    def __init__(self, num_inputs, action_space, args):
        self.gamma = args["gamma"]
        self.tau = args["tau"]
        self.alpha = args["alpha"]
        self.device = args["device"]  # torch.device("cuda" if args.cuda else "cpu")

        self.critic = QNetwork(num_inputs, action_space.shape[0], args["hidden_size"]).to(device=self.device)
        self.critic_optim = Adam(self.critic.parameters(), lr=args["lr"])
        self.critic_target = QNetwork(num_inputs, action_space.shape[0], args["hidden_size"]).to(self.device)
        hard_update(self.critic_target, self.critic)

        self.alpha = 0
        self.automatic_entropy_tuning = False
        self.policy = DeterministicPolicy(num_inputs, action_space.shape[0], args["hidden_size"], action_space).to(self.device)
        self.policy_optim = Adam(self.policy.parameters(), lr=args["lr"])

    def update_parameters(self, memory, batch_size, updates):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = memory.sample(batch_size=batch_size)

        state_batch = torch.FloatTensor(state_batch).to(self.device)
        next_state_batch = torch.FloatTensor(next_state_batch).to(self.device)
        action_batch = torch.FloatTensor(action_batch).to(self.device)
        reward_batch = torch.FloatTensor(reward_batch).to(self.device).unsqueeze(1)
        mask_batch = torch.FloatTensor(mask_batch).to(self.device).unsqueeze(1)

        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * (min_qf_next_target)

        qf1, qf2 = self.critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)

        self.critic_optim.zero_grad()
        (qf1_loss + qf2_loss).backward()
        self.critic_optim.step()

        pi, log_pi, _ = self.policy.sample(state_batch)
        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        return qf1_loss, qf2_loss, policy_loss


class ReplayMemory:
    def __init__(self, capacity):
        self.capacity = capacity
        self.buffer = []

    def push(self, state, action, reward, next_state, done):
        self.buffer.append((state, action, reward, next_state, done))

    def sample(self, batch_size):
        batch = random.sample(self.buffer, batch_size)
        state, action, reward, next_state, done = map(np.stack, zip(*batch))
        return state, action, reward, next_state, done


class Box:
    def __init__(self, low, high):
        self.low, self.high = low, high
        self.shape = low.shape


obs_dim, act_dim = 11, 3
action_space = Box(-np.ones(act_dim, dtype=np.float32), np.ones(act_dim, dtype=np.float32))
args = {"gamma": 0.99, "tau": 0.005, "alpha": 0.2, "lr": 3e-4, "hidden_size": 64, "device": torch.device("meta")}
agent = SAC(obs_dim, action_space, args)
memory = ReplayMemory(1000)
for _ in range(200):
    memory.push(np.random.randn(obs_dim), np.random.uniform(-1, 1, act_dim), np.random.randn(),
                np.random.randn(obs_dim), float(np.random.rand() > 0.05))
for updates in range(3):
    critic_1_loss, critic_2_loss, policy_loss = agent.update_parameters(memory, 32, updates)
print("updates done", critic_1_loss.shape, policy_loss.device)
