# Soft actor-critic agent: critic and policy losses are computed first, then the two Q networks
# are updated, then the policy, whose loss went through the Q networks before their step().
import torch
import torch.nn as nn
from torch.optim import Adam

torch.manual_seed(0)
state_dim, action_dim, batch_size = 5, 2, 32


def update_params(optim, network, loss, grad_clip=None, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_clip is not None:
        for p in network.parameters():
            torch.nn.utils.clip_grad_norm_(p, grad_clip)
    optim.step()


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q = nn.Sequential(nn.Linear(state_dim + action_dim, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, states, actions):
        return self.Q(torch.cat([states, actions], dim=1))


class TwinnedQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q1 = QNetwork()
        self.Q2 = QNetwork()

    def forward(self, states, actions):
        return self.Q1(states, actions), self.Q2(states, actions)


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(state_dim, 64), nn.ReLU(), nn.Linear(64, 2 * action_dim))

    def sample(self, states):
        mean, log_std = self.policy(states).chunk(2, dim=-1)
        normal = torch.distributions.Normal(mean, log_std.clamp(-20, 2).exp())
        xs = normal.rsample()
        actions = torch.tanh(xs)
        log_probs = normal.log_prob(xs) - torch.log(1 - actions.pow(2) + 1e-6)
        return actions, -log_probs.sum(dim=1, keepdim=True), torch.tanh(mean)


class SacAgent:
    def __init__(self):
        self.policy = GaussianPolicy()
        self.critic = TwinnedQNetwork()
        self.critic_target = TwinnedQNetwork()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy_optim = Adam(self.policy.parameters(), lr=3e-4)
        self.q1_optim = Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp().detach()
        self.alpha_optim = Adam([self.log_alpha], lr=3e-4)
        self.target_entropy = -float(action_dim)
        self.gamma, self.grad_clip = 0.99, 5.0

    def calc_critic_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        curr_q1, curr_q2 = self.critic(states, actions)
        with torch.no_grad():
            next_actions, next_entropies, _ = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
            target_q = rewards + (1.0 - dones) * self.gamma * next_q
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss

    def calc_policy_loss(self, batch, weights):
        states = batch[0]
        sampled_action, entropy, _ = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)
        policy_loss = torch.mean((-q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def learn(self, batch):
        weights = 1.0
        q1_loss, q2_loss = self.calc_critic_loss(batch, weights)

        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)
        policy_loss, entropies = self.calc_policy_loss(batch, weights)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)

        entropy_loss = -torch.mean(self.log_alpha * (self.target_entropy - entropies).detach())
        update_params(self.alpha_optim, nn.ParameterList([self.log_alpha]), entropy_loss)
        self.alpha = self.log_alpha.exp().detach()
        return q1_loss.item(), policy_loss.item()


agent = SacAgent()
for step in range(3):
    batch = (torch.randn(batch_size, state_dim), torch.rand(batch_size, action_dim) * 2 - 1,
             torch.randn(batch_size, 1), torch.randn(batch_size, state_dim), torch.zeros(batch_size, 1))
    print(step, agent.learn(batch))
