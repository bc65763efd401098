# SAC trainer (rlkit style): the Q-function and policy losses are all built first, then the
# networks are updated Q1, Q2, policy; the policy loss went through qf1/qf2 before their step().
import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)
obs_dim, action_dim = 6, 2


class ConcatMlp(nn.Module):
    def __init__(self, input_size, output_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_size, 64), nn.ReLU(), nn.Linear(64, output_size))

    def forward(self, *inputs):
        return self.net(torch.cat(inputs, dim=1))


class TanhGaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 2 * action_dim))

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        mean, log_std = self.net(obs).chunk(2, dim=-1)
        std = log_std.clamp(-20, 2).exp()
        pre_tanh = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh)
        log_prob = torch.distributions.Normal(mean, std).log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)
        return action, mean, log_std, log_prob.sum(dim=1, keepdim=True)


class SACTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99, reward_scale=1.0):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.discount, self.reward_scale = discount, reward_scale
        self.target_entropy = -float(action_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = optim.Adam([self.log_alpha], lr=3e-4)
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = optim.Adam(self.policy.parameters(), lr=3e-4)
        self.qf1_optimizer = optim.Adam(self.qf1.parameters(), lr=3e-4)
        self.qf2_optimizer = optim.Adam(self.qf2.parameters(), lr=3e-4)

    def train_from_torch(self, batch):
        rewards, terminals = batch["rewards"], batch["terminals"]
        obs, actions, next_obs = batch["observations"], batch["actions"], batch["next_observations"]

        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, _ = self.policy(next_obs)

        """
        QF Loss
        """
        target_q_values = torch.min(self.target_qf1(next_obs, new_next_actions),
                                    self.target_qf2(next_obs, new_next_actions))
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(obs)
        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.alpha_optimizer.step()
        alpha = self.log_alpha.exp()

        q_new_actions = torch.min(self.qf1(obs, new_obs_actions), self.qf2(obs, new_obs_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()

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
        return qf1_loss.item(), policy_loss.item()


trainer = SACTrainer(TanhGaussianPolicy(), ConcatMlp(obs_dim + action_dim, 1), ConcatMlp(obs_dim + action_dim, 1),
                     ConcatMlp(obs_dim + action_dim, 1), ConcatMlp(obs_dim + action_dim, 1))
for step in range(3):
    batch = {"observations": torch.randn(32, obs_dim), "actions": torch.rand(32, action_dim) * 2 - 1,
             "rewards": torch.randn(32, 1), "terminals": torch.zeros(32, 1),
             "next_observations": torch.randn(32, obs_dim)}
    print(step, trainer.train_from_torch(batch))
