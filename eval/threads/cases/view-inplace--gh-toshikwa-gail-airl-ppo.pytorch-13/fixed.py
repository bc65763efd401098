# Training a SAC expert (before GAIL/AIRL): the state-dependent policy chunks the network
# output into means and log-stds, then clamps the log-stds in place.
import math

import torch
from torch import nn

torch.manual_seed(0)


def build_mlp(input_dim, output_dim, hidden_units=(32, 32)):
    layers, units = [], input_dim
    for next_units in hidden_units:
        layers += [nn.Linear(units, next_units), nn.ReLU()]
        units = next_units
    layers.append(nn.Linear(units, output_dim))
    return nn.Sequential(*layers)


def calculate_log_pi(log_stds, noises, actions):
    gaussian_log_probs = (-0.5 * noises.pow(2) - log_stds).sum(dim=-1, keepdim=True) \
        - 0.5 * math.log(2 * math.pi) * log_stds.size(-1)
    return gaussian_log_probs - torch.log(1 - actions.pow(2) + 1e-6).sum(dim=-1, keepdim=True)


def reparameterize(means, log_stds):
    noises = torch.randn_like(means)
    us = means + noises * log_stds.exp()
    actions = torch.tanh(us)
    return actions, calculate_log_pi(log_stds, noises, actions)


class StateDependentPolicy(nn.Module):
    def __init__(self, state_shape, action_shape):
        super().__init__()
        self.net = build_mlp(state_shape[0], 2 * action_shape[0])

    def sample(self, states):
        means, log_stds = self.net(states).chunk(2, dim=-1)
        return reparameterize(means, log_stds.clamp(-20, 2))


state_shape, action_shape = (6,), (2,)
actor = StateDependentPolicy(state_shape, action_shape)
critic = build_mlp(state_shape[0] + action_shape[0], 1)
optim_actor = torch.optim.Adam(actor.parameters(), lr=3e-4)
alpha = 0.2
states = torch.randn(16, *state_shape)

for step in range(3):
    actions, log_pis = actor.sample(states)
    qs = critic(torch.cat([states, actions], dim=-1))
    loss_actor = (alpha * log_pis - qs).mean()
    optim_actor.zero_grad()
    loss_actor.backward()
    optim_actor.step()
    print(step, loss_actor.item())
