# OAC-explore's SACTrainer (trainer/trainer.py): networks come from producer closures, a batch of
# numpy arrays from the replay buffer is converted with np_to_pytorch_batch, and
# train_from_torch() computes the alpha, policy and Q losses before the "Update networks" block
# steps the two Q optimizers and then the policy optimizer. Random transitions stand in for the
# MuJoCo replay buffer.
import numpy as np
import torch
import torch.optim as optim
from torch import nn as nn

torch.manual_seed(0)
np.random.seed(0)
OBS_DIM, ACT_DIM = 6, 2


def np_to_pytorch_batch(np_batch):
    return {k: torch.from_numpy(v).float() for k, v in np_batch.items()}


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_size, hidden), nn.ReLU(), nn.Linear(hidden, output_size))

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=32):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())
        self.last_fc = nn.Linear(hidden, action_dim)
        self.last_fc_log_std = nn.Linear(hidden, action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=False):
        h = self.fc(obs)
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        normal = torch.distributions.Normal(mean, log_std.exp())
        pre_tanh = normal.rsample() if reparameterize else normal.sample()
        action = torch.tanh(pre_tanh)
        log_prob = None
        if return_log_prob:
            log_prob = (normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)).sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob


def soft_update_from_to(source, target, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


class SACTrainer(object):
    def __init__(self, policy_producer, q_producer, action_dim, discount=0.99, reward_scale=1.0,
                 policy_lr=1e-3, qf_lr=1e-3, optimizer_class=optim.Adam, soft_target_tau=1e-2):
        self.target_entropy = -float(action_dim)
        self.soft_target_tau = soft_target_tau
        self.qf_criterion = nn.MSELoss()
        self.discount = discount
        self.reward_scale = reward_scale
        self.policy = policy_producer()
        self.qf1 = q_producer()
        self.qf2 = q_producer()
        self.target_qf1 = q_producer()
        self.target_qf2 = q_producer()
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = optimizer_class([self.log_alpha], lr=policy_lr)
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=qf_lr)

    def train(self, np_batch):
        batch = np_to_pytorch_batch(np_batch)
        return self.train_from_torch(batch)

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs, reparameterize=True, return_log_prob=True)
        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        alpha = self.log_alpha.exp()

        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs, reparameterize=True, return_log_prob=True)
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        """
        Update networks
        """
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        soft_update_from_to(self.qf1, self.target_qf1, self.soft_target_tau)
        soft_update_from_to(self.qf2, self.target_qf2, self.soft_target_tau)
        return qf1_loss.item(), policy_loss.item()


trainer = SACTrainer(
    policy_producer=lambda: TanhGaussianPolicy(OBS_DIM, ACT_DIM),
    q_producer=lambda: FlattenMlp(OBS_DIM + ACT_DIM, 1),
    action_dim=ACT_DIM,
)
for step in range(3):
    np_batch = {
        'observations': np.random.randn(16, OBS_DIM),
        'actions': np.random.uniform(-1, 1, size=(16, ACT_DIM)),
        'rewards': np.random.randn(16, 1),
        'terminals': np.zeros((16, 1)),
        'next_observations': np.random.randn(16, OBS_DIM),
    }
    print(step, trainer.train(np_batch))
